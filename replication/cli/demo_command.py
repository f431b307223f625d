"""``hbrep demo``: the embedded default end to end (same as ``make demo``)."""

from __future__ import annotations

import click


@click.command()
@click.option("--rows", type=click.IntRange(100), default=3000, show_default=True, help="Rows to write.")
@click.option("--state", type=click.Path(file_okay=False), default=None, help="Folder for all state.")
def demo(rows: int, state: str | None) -> None:
    """ZooKeeper + two clusters, a load, a killed region server, the DAGs, verify, report, stop."""
    from replication.devstack.demo import main

    code = main(["--rows", str(rows), *(["--state", state] if state else [])])
    if code:
        raise click.exceptions.Exit(code)
