"""``make fuzz``: every target under atheris for ``--seconds`` each, corpus seeded from real files.

Prints a Markdown table row per target (inputs run, time, crashes) for RELIABILITY.md; crash inputs
are kept in ``<work>/<target>/`` and the exit status is non-zero when any target crashed.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import time
from pathlib import Path

from targets import TARGETS, seeds

HERE = Path(__file__).resolve().parent


def run(target: str, seconds: int, work: Path) -> tuple[int, float, list[Path]]:
    """Fuzz ``target`` for ``seconds``; (inputs executed, wall time, crash files)."""
    folder = work / target
    corpus = folder / "corpus"
    corpus.mkdir(parents=True, exist_ok=True)
    for index, seed in enumerate(seeds(target)):
        (corpus / f"seed-{index}").write_bytes(seed)
    started = time.monotonic()
    proc = subprocess.run(
        [sys.executable, str(HERE / "atheris_main.py"), target, f"-max_total_time={seconds}", "-timeout=10",
         "-rss_limit_mb=2048", "-print_final_stats=1", f"-artifact_prefix={folder}/", "-max_len=65536",
         str(corpus)],
        capture_output=True, text=True, cwd=folder,
    )  # fmt: skip
    elapsed = time.monotonic() - started
    units = re.findall(r"stat::number_of_executed_units:\s*(\d+)", proc.stderr)
    done = re.findall(r"#(\d+)\s+(?:DONE|pulse|NEW|REDUCE|INITED)", proc.stderr)
    count = int(units[-1]) if units else int(done[-1]) if done else 0
    crashes = sorted(folder.glob("crash-*")) + sorted(folder.glob("timeout-*")) + sorted(folder.glob("oom-*"))
    if proc.returncode != 0 and not crashes:
        crashes = [folder / "exit"]
        (folder / "exit").write_text(proc.stderr[-5000:])
    if crashes:
        (folder / "stderr.txt").write_text(proc.stderr)
    return count, elapsed, crashes


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=int, default=300, help="per target")
    parser.add_argument("--work", type=Path, default=Path("build/fuzz"))
    parser.add_argument("targets", nargs="*", default=sorted(TARGETS))
    args = parser.parse_args(argv)
    print("| target | inputs run | time | crashes |")
    print("|---|---:|---:|---:|")
    failed = False
    for target in args.targets:
        count, elapsed, crashes = run(target, args.seconds, args.work.resolve())
        failed |= bool(crashes)
        note = ", ".join(str(c) for c in crashes) if crashes else "0"
        print(f"| {target} | {count:,} | {elapsed:.0f} s | {note} |", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
