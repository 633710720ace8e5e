"""Differential tests: the same scenario against the reference Kafka and against kemu, observations compared
after the one normalisation in normalise.py, every difference either fixed or listed in
known_differences.json with its reason."""
