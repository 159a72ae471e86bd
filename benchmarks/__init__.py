"""Benchmarks and the calibration fit (run with ``python -m benchmarks.<name>``)."""
