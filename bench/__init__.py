"""Signoff's benchmarks: `python -m bench.benchmark` from the repository root (bench/README.md)."""
