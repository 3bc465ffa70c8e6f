"""The benchmark harness: `make bench` (`python -m bench`) writes bench/results.json and docs/BENCHMARKS.md."""
