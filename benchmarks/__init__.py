"""Benchmarks of kemu against its peers (Apache Kafka, kfake, Tansu, the librdkafka mock), reported as ratios.

`python -m benchmarks.run` is the command; it is never a test gate and nothing here runs under pytest.
"""
