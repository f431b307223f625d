"""``hbrep conf [--json]``: the effective configuration and where each value came from, like HBase's
configuration dump (``/conf`` servlet: every key, its value and the resource that set it)."""

from __future__ import annotations

import click

from replication.cli.common import CliContext, emit_json, json_option, pass_context
from replication.config import HBASE_ONLY_KEYS, Config

# values never printed (docs/security.md: no password or token in output); shown as set or not
SECRET_MARKERS = ("auth", "token", "password", "secret")
HIDDEN = "<set, not shown>"


def origin_of(conf: Config, key: str, override_origins: dict[str, tuple[str, str]]) -> tuple[str, str]:
    """(kind, detail) of ``key``'s value: ``default``; ``file`` and its path; ``env`` and the variable;
    ``flag`` (or ``env``) and the global option that set it (``override_origins``)."""
    source = conf.source_of(key)
    if source == "defaults":
        return "default", ""
    if source.startswith("environment "):
        return "env", source.removeprefix("environment ")
    if source == "overrides":
        return override_origins.get(key, ("flag", ""))
    return "file", source


def shown_value(key: str, value: str) -> str:
    """The value as printed: a secret's value is never shown, only whether it is set."""
    if value and any(marker in key.lower() for marker in SECRET_MARKERS):
        return HIDDEN
    return value


@click.command("conf")
@json_option
@pass_context
def conf(ctx: CliContext, as_json: bool) -> None:
    """The effective configuration: every key, its value and where it came from (default, file, env, flag).

    Keys hbrep lists for a real HBase but does not act on itself are marked "HBase's only"."""
    rows = []
    for key in sorted(ctx.conf):
        kind, detail = origin_of(ctx.conf, key, ctx.override_origins)
        row = {"key": key, "value": shown_value(key, ctx.conf[key]), "source": kind, "from": detail}
        if key in HBASE_ONLY_KEYS:  # listed for a real HBase; hbrep does not act on it
            row["hbase_only"] = HBASE_ONLY_KEYS[key]
        rows.append(row)
    if as_json:
        emit_json(rows)
        return
    width = max(len(r["key"]) for r in rows)
    for row in rows:
        origin = row["source"] + (f" {row['from']}" if row["from"] else "")
        marker = "  [HBase's only: hbrep does not act on it]" if "hbase_only" in row else ""
        click.echo(f"{row['key']:<{width}}  {row['value']!s:<30}  ({origin}){marker}")
