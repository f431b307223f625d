"""``make fuzz``: every target under atheris for ``--seconds`` each, corpus seeded from real files.

Prints a Markdown table row per target (inputs run, time, crashes) and, with ``--report``, writes it
as the "Bad inputs tried" section of RELIABILITY.md (after the reliability suite's marker, which that
suite keeps). Crash inputs are kept in ``<work>/<target>/``; the exit status is non-zero when any
target crashed.
"""

from __future__ import annotations

import argparse
import datetime
import platform
import re
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(1, str(Path(__file__).resolve().parents[1]))  # tests/: shared_fixtures, which targets imports
from targets import TARGETS, seeds

HERE = Path(__file__).resolve().parent
KEPT_MARKER = "<!-- kept below: written by other suites -->"  # tests/reliability/conftest.py
FIXED = [
    "journal entry with a non-numeric `rs` count: ValueError → BadZNodeData (hypothesis, then atheris for `rs --…-1`)",
    "cluster id protobuf whose string is not UTF-8: TypeError → BadZNodeData (hypothesis)",
    "peer protobuf with a table or namespace name that is not UTF-8: UnicodeDecodeError → BadZNodeData (atheris)",
    "WAL whose header length varint is longer than 10 bytes: ValueError → CorruptWALError (atheris)",
]


def write_report(report: Path, rows: list[str], seconds: int) -> None:
    """Replace (or add) the "Bad inputs tried" section at the end of ``report``."""
    text = report.read_text() if report.exists() else ""
    head = text[: text.index(KEPT_MARKER)] if KEPT_MARKER in text else text
    when = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    section = [
        KEPT_MARKER,
        "",
        "## Bad inputs tried",
        "",
        f"`make fuzz` (atheris {_atheris_version()}, libFuzzer, {seconds} s per target, `-timeout=10` per input,",
        f"`-rss_limit_mb=2048`), last run {when}, Python {platform.python_version()}. Every input must end in a",
        "result or an `HbrepError`; corpora start from real files (HBase 0.94 HLogs in shared/fixtures, WALs",
        "and znode values as hbrep/HBase write them, the shipped hbase-site.xml). `make test` runs the same",
        "targets under hypothesis, 2,000 inputs each (`tests/fuzz/`).",
        "",
        "| target | inputs run | time | crashes |",
        "|---|---:|---:|---:|",
        *rows,
        "",
        "Crashes found and fixed by earlier runs (hypothesis in make test; atheris at 20–60 s per target), before",
        "the run above; each input is a regression test in `tests/fuzz/test_fuzz_parsers.py`:",
        "",
        *[f"- {line}" for line in FIXED],
    ]
    report.write_text(head.rstrip("\n") + "\n\n" + "\n".join(section) + "\n")


def _atheris_version() -> str:
    from importlib.metadata import version

    return version("atheris")


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
    parser.add_argument("--report", type=Path, default=None, help="RELIABILITY.md to write the table into")
    parser.add_argument("targets", nargs="*", default=sorted(TARGETS))
    args = parser.parse_args(argv)
    print("| target | inputs run | time | crashes |")
    print("|---|---:|---:|---:|")
    failed = False
    rows = []
    for target in args.targets:
        count, elapsed, crashes = run(target, args.seconds, args.work.resolve())
        failed |= bool(crashes)
        note = ", ".join(str(c) for c in crashes) if crashes else "0"
        rows.append(f"| {target} | {count:,} | {elapsed:.0f} s | {note} |")
        print(rows[-1], flush=True)
    if args.report is not None:
        write_report(args.report, rows, args.seconds)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
