"""Entry point of `make bench`: runs every registered benchmark in one process, in one run."""

from __future__ import annotations

import argparse
import sys


def main() -> int:
    parser = argparse.ArgumentParser(prog="bench")
    parser.add_argument("--quick", action="store_true", help="a short pass (about 2 minutes)")
    parser.add_argument("--only", action="append", default=[], help="run only these benchmarks")
    args = parser.parse_args()
    from bench.registry import run_all

    return run_all(quick=args.quick, only=args.only)


if __name__ == "__main__":
    sys.exit(main())
