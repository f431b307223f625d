"""What every command shares: the resolved configuration, the cluster key, output helpers."""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, TypeVar

import click

from replication.config import Config
from replication.zk.cluster_key import ClusterKey

F = TypeVar("F", bound=Callable[..., Any])


@dataclass
class CliContext:
    """Options given before the command name, resolved lazily."""

    cluster_key: str | None = None
    conf_file: str | None = None
    zk_auth: str | None = None
    verbose: bool = False
    # where each override of the configuration came from: key -> (flag|env, option or variable)
    override_origins: dict[str, tuple[str, str]] = field(default_factory=dict)
    _closers: list[Callable[[], None]] = field(default_factory=list)

    def __post_init__(self) -> None:
        logging.basicConfig(
            level=logging.INFO if self.verbose else logging.WARNING,
            stream=sys.stderr,
            format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        )
        if not self.verbose:
            logging.getLogger("kazoo").setLevel(logging.ERROR)

    @cached_property
    def conf(self) -> Config:
        """The configuration (defaults ← hbase-site.xml ← HBREP__ env overrides)."""
        overrides = {"hbrep.zk.auth": self.zk_auth} if self.zk_auth else None
        return Config.load(self.conf_file, overrides=overrides)

    @cached_property
    def cluster(self) -> ClusterKey:
        """The source cluster key: --cluster / HBREP_CLUSTER, else the local default from config."""
        if self.cluster_key:
            return ClusterKey.parse(self.cluster_key)
        quorum = self.conf.get_str("hbase.zookeeper.quorum")
        port = self.conf.get_int("hbase.zookeeper.property.clientPort")
        return ClusterKey.parse(f"{quorum}:{port}:{self.conf.get_str('zookeeper.znode.parent')}")

    def spark(self, app_name: str, master: str | None = None, roots: Iterable[str] = ()) -> Any:
        """A local SparkSession (``replication.spark.spark_session``) on ``master`` (default
        ``hbrep.spark.master``) whose JVMs are the configured Kerberos identity to Hadoop, when there is one
        (``replication.kerberos.spark_login_conf``), and, on a standalone master, hold delegation tokens for the
        Hadoop file systems of ``roots``, the clusters' roots the command reads table files of through Spark
        (``replication.tables.spark_views.token_filesystems_conf``)."""
        from replication.kerberos import kerberos_identity, spark_login_conf
        from replication.spark import spark_session
        from replication.tables.spark_views import token_filesystems_conf

        identity = kerberos_identity(self.conf)
        conf = spark_login_conf(identity) | (token_filesystems_conf(roots) if identity is not None else {})
        return spark_session(app_name, master=master or self.conf.get_str("hbrep.spark.master"), conf=conf)

    @property
    def state_dir(self) -> Path:
        """hbrep's local state folder (``hbrep.state.dir``, default ``.hbrep``)."""
        return Path(self.conf.get_str("hbrep.state.dir"))


pass_context = click.make_pass_decorator(CliContext)


def json_option(func: F) -> F:
    """Add ``--json`` (machine-readable output) to a command."""
    return click.option("--json", "as_json", is_flag=True, help="Print JSON for programs.")(func)


def emit_json(value: Any) -> None:
    """Print ``value`` as one JSON document on stdout (bytes shown as text, sets as sorted lists)."""
    click.echo(json.dumps(value, sort_keys=True, default=_json_default))


def _json_default(value: Any) -> Any:
    if isinstance(value, bytes):
        return value.decode("utf-8", "backslashreplace")
    if isinstance(value, (set, frozenset)):
        return sorted(value)
    if hasattr(value, "as_dict"):
        return value.as_dict()
    return str(value)
