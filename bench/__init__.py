"""Signoff's benchmarks; run `python bench/benchmark.py` (see bench/README.md)."""
