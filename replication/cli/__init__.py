"""The ``hbrep`` command line. Names follow the HBase shell (docs/cli.md, the command contract).

Every command takes ``--cluster CLUSTER_KEY`` (default: ``HBREP_CLUSTER``, else the local default
``127.0.0.1:<hbase.zookeeper.property.clientPort>:<zookeeper.znode.parent>``) and ``--conf FILE``.
Bad input exits non-zero with one ``hbrep: error: ...`` line.

Each command group lives in its own module below (they import only ``cli.common`` from here, never
this file) and is added to ``cli`` at the bottom of this file.
Heavy imports (Spark, GX) happen inside the commands, so ``hbrep --help`` stays fast.
"""

from __future__ import annotations

import sys

import click
import cloup

from replication.cli import (
    cluster_commands,
    conf_command,
    consistency_commands,
    data_commands,
    demo_command,
    hbase_commands,
    hdfs_commands,
    lag_commands,
    maintenance_commands,
    metrics_commands,
    peer_commands,
    peer_config_commands,
    repair_commands,
    seed_commands,
    ship_commands,
    spark_commands,
    syncup_command,
    verify_commands,
    wal_commands,
    zk_commands,
)
from replication.cli.common import CliContext, pass_context
from replication.errors import HbrepError

__all__ = ["CliContext", "main", "pass_context"]


@cloup.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 110})
@click.option(
    "--cluster",
    "cluster_key",
    envvar="HBREP_CLUSTER",
    metavar="CLUSTER_KEY",
    help="Source cluster key quorum:port:/parent (env HBREP_CLUSTER).",
)
@click.option(
    "--conf",
    "conf_file",
    envvar="HBREP_CONF",
    type=click.Path(dir_okay=False),
    help="An hbase-site.xml to read (env HBREP_CONF).",
)
@click.option(
    "--zk-auth",
    envvar="HBREP_ZK_AUTH",
    metavar="USER:PASSWORD",
    help="ZooKeeper digest credentials (env HBREP_ZK_AUTH); znodes then get creator-only ACLs.",
)
@click.option("-v", "--verbose", is_flag=True, help="Log at INFO level to stderr.")
@click.version_option(package_name="hbrep", prog_name="hbrep")
@click.pass_context
def cli(ctx: click.Context, cluster_key: str | None, conf_file: str | None, zk_auth: str | None, verbose: bool) -> None:
    """hbrep: HBase-style cluster replication, run as batch."""
    origins = {}
    if zk_auth:
        from_env = ctx.get_parameter_source("zk_auth") == click.core.ParameterSource.ENVIRONMENT
        origins["hbrep.zk.auth"] = ("env", "HBREP_ZK_AUTH") if from_env else ("flag", "--zk-auth")
    ctx.obj = CliContext(
        cluster_key=cluster_key, conf_file=conf_file, zk_auth=zk_auth, verbose=verbose, override_origins=origins
    )


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; HbrepError becomes one ``hbrep: error:`` line on stderr and its exit code."""
    try:
        result = cli.main(args=argv, prog_name="hbrep", standalone_mode=False)
    except HbrepError as exc:
        click.echo(f"hbrep: error: {exc}", err=True)
        return exc.exit_code
    except click.exceptions.Abort:
        click.echo("hbrep: aborted", err=True)
        return 130
    except click.ClickException as exc:
        exc.show()
        return exc.exit_code
    except click.exceptions.Exit as exc:
        return exc.exit_code
    # With standalone_mode=False click returns the code of a click.exceptions.Exit.
    return result if isinstance(result, int) else 0


# ``hbrep --help`` lists the commands in the HBase shell's groups (replication, table, data, tools), then
# hbrep's own (shipping and failover runs, the components of a dev stack); cloup draws the sections.
SECTIONS = (
    (
        "Replication (HBase shell)",
        (
            peer_commands.add_peer, peer_commands.remove_peer, peer_commands.enable_peer,
            peer_commands.disable_peer, peer_commands.list_peers, peer_commands.peer_modification_enabled,
            peer_commands.peer_modification_switch, peer_commands.hbase_peer_doctor, peer_commands.queues,
            ship_commands.status,
            *peer_config_commands.COMMANDS, *peer_config_commands.TABLE_COMMANDS,
            *consistency_commands.COMMANDS, *lag_commands.COMMANDS, *verify_commands.COMMANDS,
            *repair_commands.COMMANDS, *seed_commands.COMMANDS,
        ),
    ),
    (
        "Table (HBase shell)",
        (
            cluster_commands.create_table, cluster_commands.alter, cluster_commands.disable, cluster_commands.enable,
            cluster_commands.is_enabled, cluster_commands.describe, cluster_commands.list_tables,
            cluster_commands.exists, cluster_commands.drop, cluster_commands.truncate, cluster_commands.flush,
            cluster_commands.compact, cluster_commands.major_compact,
        ),
    ),
    (
        "Data (HBase shell)",
        (cluster_commands.put, cluster_commands.delete, cluster_commands.deleteall, *data_commands.COMMANDS,
         cluster_commands.load),
    ),
    ("Tools", (wal_commands.wal, syncup_command.syncup, conf_command.conf, metrics_commands.metrics)),
    ("Shipping and failover (hbrep)", (ship_commands.ship, peer_commands.failover, maintenance_commands.clean)),
    (
        "Components (hbrep)",
        (
            zk_commands.zk, cluster_commands.cluster, cluster_commands.rs, hbase_commands.hbase,
            hdfs_commands.hdfs, spark_commands.spark, demo_command.demo,
        ),
    ),
)  # fmt: skip


def _register() -> None:
    """Add every command to ``cli``, in its help section."""
    for title, commands in SECTIONS:
        cli.add_section(cloup.Section(title, commands))


_register()

if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
