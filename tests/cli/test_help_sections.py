"""``hbrep --help`` groups the commands as the HBase shell does (replication, table, data, tools), then
hbrep's own; every command is in exactly one section and still answers by its name."""

from __future__ import annotations

import subprocess
import sys

from replication.cli import SECTIONS, cli


def test_every_command_is_in_one_section():
    listed = [command.name for _, commands in SECTIONS for command in commands]
    assert len(listed) == len(set(listed))
    assert set(listed) == set(cli.commands)


def test_help_shows_the_shells_groups_in_order():
    done = subprocess.run([sys.executable, "-m", "replication.cli", "--help"], capture_output=True, text=True,
                          timeout=60)  # fmt: skip
    assert done.returncode == 0, done.stderr
    headings = [line.rstrip(":") for line in done.stdout.splitlines() if line and not line.startswith(" ")]
    sections = [h for h in headings if h in {title for title, _ in SECTIONS}]
    assert sections == [title for title, _ in SECTIONS]
    replication = done.stdout.split("Replication (HBase shell):")[1].split("Table (HBase shell):")[0]
    assert "add_peer" in replication and "scan" not in replication
    data = done.stdout.split("Data (HBase shell):")[1].split("Tools:")[0]
    assert all(f"  {name} " in data for name in ("put", "delete", "get", "scan", "count"))
    sub = subprocess.run([sys.executable, "-m", "replication.cli", "list_peers", "--help"], capture_output=True,
                         text=True, timeout=60)  # fmt: skip
    assert sub.returncode == 0 and "Usage: hbrep list_peers" in sub.stdout
