"""Benchmarks of kemu against two peers (Tansu and the librdkafka mock cluster), reported as ratios.

`python -m benchmarks.run` is the command; it is never a test gate and nothing here runs under pytest.
"""
