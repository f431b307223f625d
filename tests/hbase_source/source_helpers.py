"""What the tests of tests/hbase_source/ share: a write load for AdminTool, the CLI in this process, cells."""

from __future__ import annotations

import json
from collections.abc import Sequence

from click.testing import CliRunner

from replication.cli import cli

VERSIONS = 5


def lines_for(prefix: str, rows: int) -> list[dict]:
    """AdminTool ``mutate`` lines: versions, several families, and each kind of delete."""
    out: list[dict] = []
    for i in range(rows):
        row = f"{prefix}-{i:03d}"
        out += [
            {"op": "put", "row": row, "family": "a", "qualifier": "q", "ts": 1000 + i, "value": f"v1-{i}"},
            {"op": "put", "row": row, "family": "a", "qualifier": "q", "ts": 2000 + i, "value": f"v2-{i}"},
            {"op": "multi_put", "row": row, "cells": [
                {"family": "a", "qualifier": "x", "value": f"ax{i}"},
                {"family": "b", "qualifier": "y", "value": f"by{i}"},
            ]},
        ]  # fmt: skip
        if i % 4 == 1:
            out.append({"op": "delete_version", "row": row, "family": "a", "qualifier": "q", "ts": 1000 + i})
        if i % 4 == 2:
            out.append({"op": "delete_family", "row": row, "family": "b"})
        if i % 4 == 3:
            out.append({"op": "delete_row", "row": row})
    return out


def mutate(hbase, table: str, lines: list[dict]) -> None:
    assert hbase.admin("mutate", table, stdin="\n".join(json.dumps(line) for line in lines)) == {"applied": len(lines)}


def run_cli(*args: str, cluster: str) -> str:
    """``hbrep --cluster CLUSTER ARGS`` in this process (its Spark jobs on the session's Spark): its stdout."""
    result = CliRunner().invoke(cli, ["--cluster", cluster, *args], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.stdout


def cells(cluster: str, table: str, raw: bool = True, scan_args: Sequence[str] = ()) -> set[str]:
    """Every cell of ``table`` (raw: delete markers too), through ``hbrep scan --json`` (either kind of cluster);
    ``scan_args`` narrow the scan (``--start-row``, ``--limit``, ``--columns``)."""
    args = ["scan", table, "--versions", str(VERSIONS), "--json", *scan_args] + (["--raw"] if raw else [])
    rows = json.loads(run_cli(*args, cluster=cluster))["rows"]
    return {json.dumps({"row": row["row"], **cell}, sort_keys=True) for row in rows for cell in row["cells"]}
