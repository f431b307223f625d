"""The list of benchmarks and the writer of BENCHMARKS.md.

A benchmark is a module in bench/ with ``NAME`` and ``run(quick: bool) -> dict``; the dict holds
``figures`` (name → value with unit in the name) and ``ratios``, plus a ``command`` string. Results
go to ``bench/results/<NAME>.json`` and are merged into BENCHMARKS.md.
"""

from __future__ import annotations

import datetime as dt
import importlib
import json
import platform
import subprocess
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
RESULTS = BENCH_DIR / "results"
REPORT = BENCH_DIR.parent / "BENCHMARKS.md"

# Module names under bench/, in the order they run.
BENCHMARKS: list[str] = ["zk_claim", "zk_snapshot", "ingest", "wal_reader", "verify"]


def machine() -> str:
    """One line naming this machine: cores, memory, Python, Java."""
    import os

    mem_gib = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    java = subprocess.run(["java", "-version"], capture_output=True, text=True).stderr.splitlines()[0]
    return f"{os.cpu_count()} cores, {mem_gib:.0f} GiB, Python {platform.python_version()}, {java}"


def run_all(quick: bool, only: list[str]) -> int:
    """Run the benchmarks (all, or ``only``), save each result, and rewrite BENCHMARKS.md."""
    RESULTS.mkdir(parents=True, exist_ok=True)
    for name in BENCHMARKS:
        if only and name not in only:
            continue
        module = importlib.import_module(f"bench.{name}")
        print(f"[bench] {name} ...", flush=True)
        result = module.run(quick=quick)
        result.update(name=name, quick=quick, machine=machine(), date=dt.datetime.now(dt.UTC).isoformat())
        (RESULTS / f"{name}.json").write_text(json.dumps(result, indent=2, sort_keys=True) + "\n")
    write_report()
    return 0


def write_report() -> None:
    """Rewrite BENCHMARKS.md from every saved result in bench/results/."""
    lines = [
        "# Benchmarks",
        "",
        "Written by `make bench` (bench/registry.py) from bench/results/*.json.",
        "Figures within one section come from one run; compare ratios, not absolute numbers,",
        "since these 2-core machines are noisy.",
        "",
    ]
    for path in sorted(RESULTS.glob("*.json")):
        result = json.loads(path.read_text())
        lines += [
            f"## {result.get('title', result['name'])}",
            "",
            f"- command: `{result.get('command', 'make bench')}`",
            f"- machine: {result['machine']}",
            f"- date: {result['date']}" + (" (quick pass)" if result.get("quick") else ""),
            "",
        ]
        lines += ["| figure | value |", "|---|---|"]
        for key, value in result.get("figures", {}).items():
            lines.append(f"| {key} | {_fmt(value)} |")
        for key, value in result.get("ratios", {}).items():
            lines.append(f"| **{key}** | {_fmt(value)} |")
        for note in result.get("notes", []):
            lines += ["", note]
        lines.append("")
    REPORT.write_text("\n".join(lines))


def _fmt(value: object) -> str:
    if isinstance(value, float):
        return f"{value:,.3f}" if abs(value) < 100 else f"{value:,.0f}"
    return str(value)
