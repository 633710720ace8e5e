"""Fuzzing a running `kemu serve` (issue 16, item 3): `python -m compat_tests.fuzz --frames 1000000`."""
