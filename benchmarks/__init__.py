"""The benchmarks (see README.md here): run each from the repository root as ``python -m benchmarks.<name>``."""
