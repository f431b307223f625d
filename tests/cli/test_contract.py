"""docs/cli.md's contract block names commands that `hbrep` has: every command a user or script may
rely on exists, and the few the contract plans but hbrep lacks are listed here, each with its issue."""

from __future__ import annotations

import re
from pathlib import Path

import click

from replication.cli import cli

CONTRACT = Path(__file__).resolve().parents[2] / "docs" / "cli.md"

# in the contract, not implemented yet (each stays listed only while it is missing)
PLANNED: dict[str, str] = {}
PLANNED_SUBCOMMANDS: dict[tuple[str, str], str] = {}


def contract_commands() -> dict[str, list[str]]:
    """Each command line of the contract block: the top-level command and the subcommands it names."""
    block = CONTRACT.read_text().split("## The contract", 1)[1].split("```", 2)[1]
    commands: dict[str, list[str]] = {}
    for line in block.splitlines():
        line = line.split("#", 1)[0].strip()
        if not line.startswith("hbrep"):
            continue
        group = None  # `cluster start NAME ... | stop NAME`: later parts name more subcommands of the group
        for part in line.removeprefix("hbrep").split(" | "):
            words = [w for w in part.split() if not w.startswith("[")]
            if not words or not re.fullmatch(r"[a-z_A-Z]+", words[0]):
                continue
            if group is not None and words[0] != group:
                commands[group].append(words[0])
                continue
            subs = [w for w in words[1].split("|") if re.fullmatch(r"[a-z]+", w)] if len(words) > 1 else []
            commands.setdefault(words[0], []).extend(subs)
            if subs and group is None:
                group = words[0]
    return commands


def test_the_contract_names_many_commands():
    assert {"add_peer", "status", "verify", "wal", "zk"} <= set(contract_commands())


def test_every_command_of_the_contract_exists_except_the_planned_ones():
    ctx = click.Context(cli)
    have = set(cli.list_commands(ctx))
    missing = {name for name in contract_commands() if name not in have}
    assert missing == set(PLANNED), (
        f"missing: {sorted(missing - set(PLANNED))}; implemented now: {sorted(set(PLANNED) - missing)}"
    )


def test_the_subcommands_the_contract_names_exist():
    ctx = click.Context(cli)
    for name, subs in contract_commands().items():
        group = cli.get_command(ctx, name)
        if not isinstance(group, click.Group) or not subs:
            continue
        missing = set(subs) - set(group.list_commands(ctx))
        assert missing == {sub for (top, sub) in PLANNED_SUBCOMMANDS if top == name}, (name, sorted(missing))
