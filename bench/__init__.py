"""hbrep benchmarks: `make bench` (or `make bench QUICK=1`) runs them and writes BENCHMARKS.md."""
