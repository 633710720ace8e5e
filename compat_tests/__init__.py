"""Stock Kafka clients driven against a real `kemu serve` process."""
