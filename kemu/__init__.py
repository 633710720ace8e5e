"""kemu: a Kafka-wire-compatible broker emulator for tests."""

__version__ = "0.1.0"
