"""Apache Kafka itself as the reference broker of the differential tests, the conformance corpus and the
benchmarks: `ReferenceKafka` (kafka.py), its pytest fixtures (fixtures.py), `python -m compat_tests.reference`."""
