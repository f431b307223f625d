"""Configuration with HBase's key names and defaults (spec §9).

Layers, later wins: built-in defaults, then an ``hbase-site.xml`` (given as ``--conf`` or the
``HBREP_CONF`` environment variable), then environment overrides ``HBREP__<key>`` where ``__`` stands
for ``.`` (``HBREP__replication__source__ratio=0.25``), then explicit overrides passed in code.

Unknown keys are kept (HBase passes them through too); values of known keys are checked when the
configuration is built, and a bad one is rejected with the key and the source named.
"""

from __future__ import annotations

import math
import os
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from replication.defaults import CLEANER_INTERVAL_MS, LAG_ALERT_MS
from replication.errors import ConfigError

ENV_CONF_FILE = "HBREP_CONF"
ENV_OVERRIDE_PREFIX = "HBREP__"
ENV_CLUSTER = "HBREP_CLUSTER"

# Key → default, as HBase ships them ([2.5] hbase-default.xml and the classes named in spec §9).
# Keys prefixed "hbrep." are ours; every other key is HBase's own name.
DEFAULTS: dict[str, str] = {
    # the reference guide's switch (HConstants.REPLICATION_ENABLE_KEY in 0.94-1.x; 2.x removed it and
    # always replicates): false = region servers register no queues, ship and failover do nothing
    "hbase.replication": "true",
    # source side (ReplicationSource, ReplicationSourceWALReader, ReplicationSourceShipper)
    "replication.source.size.capacity": "67108864",
    "replication.source.nb.capacity": "25000",
    "replication.source.nb.batches": "1",
    "replication.source.sleepforretries": "1000",
    "replication.source.maxretriesmultiplier": "300",
    "replication.source.shipedits.timeout": "60000",
    "replication.source.eof.autorecovery": "false",
    "replication.source.log.queue.warn": "2",
    "replication.source.per.peer.node.bandwidth": "0",
    "replication.source.ratio": "0.5",
    "replication.bad.sink.threshold": "3",
    "replication.sleep.before.failover": "30000",
    "replication.executor.workers": "1",
    "replication.sink.client.ops.timeout": "10000",
    "hbase.replication.source.maxthreads": "10",
    "hbase.replication.rpc.codec": "org.apache.hadoop.hbase.codec.KeyValueCodecWithTags",
    "hbase.replication.drop.on.deleted.table": "false",
    "hbase.replication.drop.on.deleted.columnfamily": "false",
    "hbase.replication.bulkload.enabled": "false",
    "hbase.regionserver.replication.handler.count": "3",
    "hbase.rpc.timeout": "60000",
    "hbase.ipc.max.request.size": "268435456",
    # ZooKeeper layout (ZNodePaths, ZKReplicationStorageBase)
    "zookeeper.znode.parent": "/hbase",
    "zookeeper.znode.replication": "replication",
    "zookeeper.znode.replication.peers": "peers",
    "zookeeper.znode.replication.peers.state": "peer-state",
    "zookeeper.znode.replication.rs": "rs",
    "zookeeper.znode.replication.hfile.refs": "hfile-refs",
    "zookeeper.znode.replication.regions": "regions",
    "zookeeper.znode.rs": "rs",
    "zookeeper.znode.clusterId": "hbaseid",
    "hbase.zookeeper.quorum": "127.0.0.1",
    "hbase.zookeeper.property.clientPort": "2181",
    "zookeeper.session.timeout": "90000",
    # WAL (AbstractFSWAL, WALUtil, ProtobufLogWriter)
    "hbase.wal.provider": "filesystem",
    "hbase.regionserver.logroll.period": "3600000",
    "hbase.regionserver.logroll.multiplier": "0.5",
    "hbase.regionserver.hlog.blocksize": "268435456",
    "hbase.regionserver.maxlogs": "32",
    "hbase.regionserver.wal.enablecompression": "false",
    "hbase.separate.oldlogdir.by.regionserver": "false",
    "hbase.hregion.memstore.flush.size": "134217728",
    "hbase.regionserver.optionalcacheflushinterval": "3600000",
    # region server RPC: bind address, advertised host name, port (0 = any free port, the embedded default;
    # a deliberate difference from HBase's 16020, tests/interop/test_config_with_hbase.py: several embedded
    # region servers share one machine)
    "hbase.regionserver.ipc.address": "127.0.0.1",
    "hbase.regionserver.hostname": "",
    "hbase.regionserver.port": "0",
    # master chores
    "hbase.master.logcleaner.ttl": "600000",
    "hbase.master.cleaner.interval": str(CLEANER_INTERVAL_MS),
    # hbrep's own keys
    "hbrep.state.dir": ".hbrep",
    "hbrep.spark.master": "local[2]",
    # the ship job's engine: a long-lived Spark Connect server, or spark-submit per run (batch-only clusters)
    "hbrep.spark.mode": "submit",
    "hbrep.spark.connect.url": "",  # sc://host:port; empty = the server `hbrep spark start` runs
    "hbrep.spark.connect.port": "15002",  # `hbrep spark start`'s gRPC port (Spark Connect's own default)
    "hbrep.spark.connect.driver.memory.mb": "1024",
    "hbrep.spark.connect.session": "hbrep",  # name of the server-side session the ship clients share
    "hbrep.spark.connect.ship.package": "true",  # send the replication package as a session artifact
    "hbrep.spark.connect.retries": "4",  # client retries before a gone server fails the job
    # a ship run keeps doing passes (snapshot -> job -> commit) for up to this long; 0 = one pass
    "hbrep.ship.window.ms": "0",
    "hbrep.lag.alert.ms": str(LAG_ALERT_MS),
    # hbrep's own znodes (leases, dead marks, journal, tokens): empty = <zookeeper.znode.parent>/hbrep; an
    # absolute path elsewhere must be one per cluster (replication/zk/layout.py)
    "hbrep.zookeeper.znode.root": "",
    "hbrep.cluster.token": "",
    "hbrep.zk.auth": "",
    # Kerberos (replication/kerberos.py), HBase's keys: kerberos = SASL GSSAPI to ZooKeeper as this identity
    "hbase.security.authentication": "simple",
    "hbase.client.kerberos.principal": "",
    "hbase.client.keytab.file": "",
    # the realm's configuration for every hbrep process, Spark's Python workers included, whose environment the
    # driver does not choose: MIT's KRB5_CONFIG (HBase has no key: Java's -Djava.security.krb5.conf); empty = the
    # process's own KRB5_CONFIG, else /etc/krb5.conf
    "hbrep.kerberos.krb5.conf": "",
    # Kerberos on hbrep's HBase RPC client (replication/cluster/hbase_rpc/rpc_kerberos.py), HBase's keys: the
    # servers' principals (_HOST = the host connected to), the SASL protection, SIMPLE servers accepted or not
    "hbase.master.kerberos.principal": "",
    "hbase.regionserver.kerberos.principal": "",
    "hbase.rpc.protection": "authentication",
    "hbase.ipc.client.fallback-to-simple-auth-allowed": "false",
    "hbase.unsafe.client.kerberos.hostname.disable.reversedns": "false",
    # Kerberos on hbrep's HBase RPC listener (replication/cluster/hbase_rpc/gssapi_server.py), HBase's server keys:
    # it accepts as hbase.regionserver.kerberos.principal (_HOST = its advertised host) with this keytab, offers
    # the layers of hbase.rpc.protection, and serves SIMPLE clients too only when fallback is allowed
    "hbase.regionserver.keytab.file": "",
    "hbase.ipc.server.fallback-to-simple-auth-allowed": "false",
    # with hbase.rpc.protection=privacy, AES (HBase's CryptoAES) instead of the GSS wrap after the ConnectionHeader
    "hbase.rpc.crypto.encryption.aes.enabled": "false",
    # HBase's RPC TLS on hbrep's HBase RPC client (replication/cluster/hbase_rpc/tls.py), HBase's keys
    "hbase.client.netty.tls.enabled": "false",
    "hbase.client.netty.tls.verify.server.hostname": "true",
    "hbase.rpc.tls.truststore.location": "",
    "hbase.rpc.tls.truststore.type": "",
    "hbase.rpc.tls.truststore.password": "",
    "hbase.rpc.tls.keystore.location": "",
    "hbase.rpc.tls.keystore.type": "",
    "hbase.rpc.tls.keystore.password": "",
    # ... and on the HBase RPC listener of hbrep's region servers (what a real HBase ships into), HBase's server keys
    "hbase.server.netty.tls.enabled": "false",
    "hbase.server.netty.tls.supportplaintext": "true",
    "hbase.server.netty.tls.client.auth.mode": "NEED",
    "hbrep.source.ship.max.attempts": "10",
    # true: a peer's bandwidth is shared by its queues of the cycle (the whole cluster stays under it);
    # false (HBase's behaviour): every queue's source gets the peer's whole bandwidth
    "hbrep.source.bandwidth.split": "false",
    "hbrep.ship.lease.ms": "900000",
    "hbrep.consistency.token.ttl.ms": "86400000",  # how long a consistency token is kept (24 h)
    # replicated_through.py: a caught-up table counts as replicated until the queues were read less this
    "hbrep.replicated.through.margin.ms": "200",
    # TLS (replication/tls.py): region-server RPC and ZooKeeper client sessions; PEM file paths
    "hbrep.rpc.tls.enabled": "false",
    "hbrep.rpc.tls.cert": "",
    "hbrep.rpc.tls.key": "",
    "hbrep.rpc.tls.ca": "",
    "hbrep.rpc.tls.client.auth": "false",
    "hbrep.zk.tls.enabled": "false",
    "hbrep.zk.tls.cert": "",
    "hbrep.zk.tls.key": "",
    "hbrep.zk.tls.ca": "",
    # each region server's HBase RPC listener (ReplicateWALEntry from a real HBase source; see
    # replication/cluster/hbase_registry.py): auto = on unless hbrep.rpc.tls.enabled, or Kerberos without
    # hbase.regionserver.keytab.file; port 0 = a free port
    "hbrep.regionserver.hbase.rpc.enabled": "auto",
    "hbrep.regionserver.hbase.rpc.port": "0",
    # region-server processes: CPython gc thresholds gen0,gen1,gen2 (see replication/cluster/gc_tuning.py)
    "hbrep.regionserver.gc.thresholds": "20000,20,10",
    # who moves a dead region server's queues (replication/failover.py): hbrep, hbase (a real HBase
    # source's master does it), or auto = hbase for a source registered by add_peer --shadow
    "hbrep.failover.mode": "auto",
}

Validator = Callable[[str], object]


def _int(minimum: int | None = None, maximum: int | None = None) -> Validator:
    def check(raw: str) -> int:
        try:
            value = int(raw.strip())
        except ValueError:
            raise ValueError(f"{raw!r} is not an integer") from None
        if minimum is not None and value < minimum:
            raise ValueError(f"{value} is below the minimum {minimum}")
        if maximum is not None and value > maximum:
            raise ValueError(f"{value} is above the maximum {maximum}")
        return value

    return check


def _float(low: float, high: float, low_open: bool = False) -> Validator:
    def check(raw: str) -> float:
        try:
            value = float(raw.strip())
        except ValueError:
            raise ValueError(f"{raw!r} is not a number") from None
        if math.isnan(value) or value > high or value < low or (low_open and value == low):
            bracket = "(" if low_open else "["
            raise ValueError(f"{value} is outside {bracket}{low}, {high}]")
        return value

    return check


def _bool(raw: str) -> bool:
    lowered = raw.strip().lower()
    if lowered in ("true", "1", "yes", "on"):
        return True
    if lowered in ("false", "0", "no", "off"):
        return False
    raise ValueError(f"{raw!r} is not a boolean (true/false)")


def _znode_parent(raw: str) -> str:
    if not raw.startswith("/") or (len(raw) > 1 and raw.endswith("/")):
        raise ValueError(f"{raw!r} must start with '/' and not end with '/'")
    return raw


def _optional_znode_path(raw: str) -> str:
    return raw if raw == "" else _znode_parent(raw)


def _digest_auth(raw: str) -> str:
    # The message never repeats the value: it holds a password.
    user, sep, password = raw.partition(":")
    if raw and (not sep or not user.strip() or not password):
        raise ValueError("must be empty or user:password with a non-empty user and password (value not shown)")
    return raw


def _pem_file(raw: str) -> str:
    # Empty (not used), or a readable regular file: a TLS certificate, key or CA bundle.
    path = raw.strip()
    if path and not os.path.isfile(path):
        raise ValueError(f"{path!r} is not a file")
    if path and not os.access(path, os.R_OK):
        raise ValueError(f"{path!r} is not readable")
    return path


def _store_type(raw: str) -> str:
    # HBase's KeyStoreFileType names, any case; empty = from the file's extension
    value = raw.strip().upper()
    if value not in ("", "PEM", "PKCS12", "JKS", "BCFKS"):
        raise ValueError(f"{raw!r} is not one of PEM | PKCS12 | JKS | BCFKS")
    return value


def parse_gc_thresholds(raw: str) -> tuple[int, int, int]:
    """``"20000,20,10"`` → (20000, 20, 10); ValueError naming what is wrong otherwise."""
    parts = [p.strip() for p in raw.split(",")]
    message = f"{raw!r} must be three comma-separated non-negative integers (gen0,gen1,gen2 thresholds)"
    if len(parts) != 3 or not all(p.isdigit() for p in parts):
        raise ValueError(message)
    first, second, third = (int(p) for p in parts)
    return first, second, third


def _choice(*allowed: str) -> Validator:
    def check(raw: str) -> str:
        if raw.strip() not in allowed:
            raise ValueError(f"{raw!r} is not one of {' | '.join(allowed)}")
        return raw.strip()

    return check


def _authentication(raw: str) -> str:
    # HBase compares hbase.security.authentication ignoring case (User.isHBaseSecurityEnabled)
    return _choice("simple", "kerberos")(raw.strip().lower())


def _protection(raw: str) -> str:
    # SaslUtil.getQop: authentication, integrity, privacy (comma-separated), or SASL's auth/auth-int/auth-conf
    for part in (p.strip().lower() for p in raw.split(",")):
        if part and part not in ("authentication", "integrity", "privacy", "auth", "auth-int", "auth-conf"):
            raise ValueError(f"{part!r} is not one of authentication, integrity, privacy")
    return raw


def _connect_url(raw: str) -> str:
    if raw and not raw.startswith("sc://"):
        raise ValueError(f"{raw!r} is not a Spark Connect URL (sc://host:port)")
    return raw


def _name(raw: str) -> str:
    if not raw or "/" in raw:
        raise ValueError(f"{raw!r} must be a non-empty znode name without '/'")
    return raw


# HBase keys hbrep does not declare because no hbrep code has a use for them (issue 23: every declared
# key changes what hbrep does; tests/test_config_keys_behaviour.py). Set in an hbase-site.xml they are kept and ignored.
NOT_USED_HBASE_KEYS: dict[str, str] = {
    "replication.total.buffer.quota": (
        "HBase's cap on the WAL entries all sources of one region server hold in memory; a ship task here "
        "holds one queue's batches (replication.source.size.capacity, nb.batches), so there is no shared "
        "buffer to cap"
    ),
    "replication.source.maxterminationmultiplier": (
        "how long a terminating HBase source waits for its threads; a ship task ends with its Spark task"
    ),
    "replication.source.getEntries.timeout": (
        "the shipper's poll of its reader thread in HBase; hbrep's shipper blocks on the read-ahead queue, "
        "which the reader always ends (source/read_ahead.py)"
    ),
    "replication.source.regionserver.abort": (
        "whether an unexpected source error aborts the region server; hbrep's sources run in ship tasks, not "
        "in region servers, and fail the queue instead"
    ),
    "replication.replicationsource.implementation": ("HBase's pluggable ReplicationSource class; hbrep has one source"),
    "replication.sink.client.retries.number": (
        "the sink connection's retries in HBase; hbrep's sink writes a share whose owner does not answer "
        "locally at once (cluster/sink.py), so there is nothing to retry"
    ),
    "replication.stats.thread.period.seconds": (
        "HBase's periodic stats log line; hbrep reports per cycle (metrics store, hbrep status)"
    ),
    "hbase.replication.wait.on.endpoint.seconds": (
        "how long a terminating HBase source waits for its endpoint; a ship task ends with its Spark task"
    ),
    "hbase.rpc.rows.warning.threshold": (
        "HBase warns on multi() calls over this many rows; hbrep's region servers serve no multi()"
    ),
    "hbase.regionserver.waltrailer.warn.size": (
        "HBase warns when a WAL trailer is larger; hbrep's writer writes an empty trailer"
    ),
}

# Keys `hbrep conf` lists that hbrep itself does not act on: HBase's own, passed to a real HBase (the dev
# stack writes them into its hbase-site.xml). `hbrep conf` marks them "HBase's only" with the reason.
HBASE_ONLY_KEYS: dict[str, str] = {
    "hbase.wal.provider": (
        "a real HBase's WAL provider (the dev stack's hbase-site.xml); hbrep's region servers write one WAL "
        "group each, and hbrep reads the WALs of every provider"
    ),
}

VALIDATORS: dict[str, Validator] = {
    "hbase.replication": _bool,
    "replication.source.size.capacity": _int(1),
    "replication.source.nb.capacity": _int(1),
    "replication.source.nb.batches": _int(1),
    "replication.source.sleepforretries": _int(0),
    "replication.source.maxretriesmultiplier": _int(1),
    "replication.source.shipedits.timeout": _int(1),
    "replication.source.eof.autorecovery": _bool,
    "replication.source.log.queue.warn": _int(0),
    "replication.source.per.peer.node.bandwidth": _int(0),
    "replication.source.ratio": _float(0.0, 1.0, low_open=True),
    "replication.bad.sink.threshold": _int(1),
    "replication.sleep.before.failover": _int(0),
    "replication.executor.workers": _int(1),
    "replication.sink.client.ops.timeout": _int(1),
    "hbase.replication.source.maxthreads": _int(1),
    "hbase.replication.drop.on.deleted.table": _bool,
    "hbase.replication.drop.on.deleted.columnfamily": _bool,
    "hbase.replication.bulkload.enabled": _bool,
    "hbase.regionserver.replication.handler.count": _int(1),
    "hbase.rpc.timeout": _int(1),
    "hbase.ipc.max.request.size": _int(1),
    "zookeeper.znode.parent": _znode_parent,
    "hbrep.zookeeper.znode.root": _optional_znode_path,
    "zookeeper.znode.replication": _name,
    "zookeeper.znode.replication.peers": _name,
    "zookeeper.znode.replication.peers.state": _name,
    "zookeeper.znode.replication.rs": _name,
    "zookeeper.znode.rs": _name,
    "zookeeper.znode.clusterId": _name,
    "hbase.zookeeper.property.clientPort": _int(1, 65535),
    "zookeeper.session.timeout": _int(1),
    "hbase.regionserver.logroll.period": _int(1),
    "hbase.regionserver.logroll.multiplier": _float(0.0, 1.0, low_open=True),
    "hbase.regionserver.hlog.blocksize": _int(1),
    "hbase.regionserver.maxlogs": _int(1),
    "hbase.regionserver.wal.enablecompression": _bool,
    "hbase.separate.oldlogdir.by.regionserver": _bool,
    "hbase.hregion.memstore.flush.size": _int(1),
    "hbase.regionserver.optionalcacheflushinterval": _int(0),
    "hbase.regionserver.port": _int(0, 65535),
    "hbase.master.logcleaner.ttl": _int(0),
    "hbase.master.cleaner.interval": _int(1),
    "hbrep.lag.alert.ms": _int(1),
    "hbrep.zk.auth": _digest_auth,
    "hbase.security.authentication": _authentication,
    "hbase.rpc.protection": _protection,
    "hbase.ipc.client.fallback-to-simple-auth-allowed": _bool,
    "hbase.ipc.server.fallback-to-simple-auth-allowed": _bool,
    "hbase.unsafe.client.kerberos.hostname.disable.reversedns": _bool,
    "hbase.rpc.crypto.encryption.aes.enabled": _bool,
    "hbase.client.netty.tls.enabled": _bool,
    "hbase.server.netty.tls.enabled": _bool,
    "hbase.server.netty.tls.supportplaintext": _bool,
    # any case, as HBase's X509Util.ClientAuth.fromPropertyValue (valueOf of the upper-cased value)
    "hbase.server.netty.tls.client.auth.mode": lambda raw: _choice("NONE", "OPTIONAL", "NEED")(raw.strip().upper()),
    "hbase.client.netty.tls.verify.server.hostname": _bool,
    "hbase.rpc.tls.truststore.location": _pem_file,
    "hbase.rpc.tls.truststore.type": _store_type,
    "hbase.rpc.tls.keystore.location": _pem_file,
    "hbase.rpc.tls.keystore.type": _store_type,
    "hbrep.source.ship.max.attempts": _int(1),
    "hbrep.source.bandwidth.split": _bool,
    "hbrep.ship.lease.ms": _int(1000),
    "hbrep.consistency.token.ttl.ms": _int(1),
    "hbrep.replicated.through.margin.ms": _int(0),
    "hbrep.spark.mode": _choice("connect", "submit"),
    "hbrep.spark.connect.url": _connect_url,
    "hbrep.spark.connect.port": _int(1, 65535),
    "hbrep.spark.connect.driver.memory.mb": _int(256),
    "hbrep.spark.connect.session": _name,
    "hbrep.spark.connect.ship.package": _bool,
    "hbrep.spark.connect.retries": _int(0),
    "hbrep.ship.window.ms": _int(0),
    "hbrep.regionserver.gc.thresholds": parse_gc_thresholds,
    "hbrep.regionserver.hbase.rpc.enabled": _choice("auto", "true", "false"),
    "hbrep.failover.mode": _choice("auto", "hbrep", "hbase"),
    "hbrep.regionserver.hbase.rpc.port": _int(0, 65535),
    "hbrep.rpc.tls.enabled": _bool,
    "hbrep.rpc.tls.cert": _pem_file,
    "hbrep.rpc.tls.key": _pem_file,
    "hbrep.rpc.tls.ca": _pem_file,
    "hbrep.rpc.tls.client.auth": _bool,
    "hbrep.zk.tls.enabled": _bool,
    "hbrep.zk.tls.cert": _pem_file,
    "hbrep.zk.tls.key": _pem_file,
    "hbrep.zk.tls.ca": _pem_file,
}


@dataclass(frozen=True)
class _Setting:
    value: str
    source: str


class Config(Mapping[str, str]):
    """An immutable view of HBase-style settings; every known key's value is valid."""

    def __init__(self, settings: Mapping[str, _Setting]):
        self._settings = dict(settings)
        for key, setting in self._settings.items():
            validator = VALIDATORS.get(key)
            if validator is None:
                continue
            try:
                validator(setting.value)
            except ValueError as exc:
                raise ConfigError(f"bad value for {key} (from {setting.source}): {exc}") from None

    # -- construction ---------------------------------------------------------------------------
    @classmethod
    def load(
        cls,
        conf_file: str | os.PathLike[str] | None = None,
        env: Mapping[str, str] | None = None,
        overrides: Mapping[str, object] | None = None,
    ) -> Config:
        """Build the configuration from defaults, an hbase-site.xml, the environment and overrides.

        Raises ConfigError naming the key (and where it came from) for any invalid value, and
        naming the file when it is missing or not a Hadoop configuration XML.
        """
        env = os.environ if env is None else env
        settings = {key: _Setting(value, "defaults") for key, value in DEFAULTS.items()}
        path = conf_file if conf_file is not None else env.get(ENV_CONF_FILE) or None
        if path is not None:
            for key, value in read_site_xml(path).items():
                settings[key] = _Setting(value, str(path))
        for name, value in env.items():
            if name.startswith(ENV_OVERRIDE_PREFIX) and len(name) > len(ENV_OVERRIDE_PREFIX):
                key = name[len(ENV_OVERRIDE_PREFIX) :].replace("__", ".")
                settings[key] = _Setting(value, f"environment {name}")
        for key, value in (overrides or {}).items():
            settings[key] = _Setting(_to_text(value), "overrides")
        return cls(settings)

    def with_overrides(self, overrides: Mapping[str, object]) -> Config:
        """Return a copy with the given keys replaced (validated like any other source)."""
        settings = dict(self._settings)
        for key, value in overrides.items():
            settings[key] = _Setting(_to_text(value), "overrides")
        return Config(settings)

    # -- Mapping --------------------------------------------------------------------------------
    def __getitem__(self, key: str) -> str:
        return self._settings[key].value

    def __iter__(self) -> Iterator[str]:
        return iter(self._settings)

    def __len__(self) -> int:
        return len(self._settings)

    def source_of(self, key: str) -> str:
        """Where the value of ``key`` came from: defaults, a file path, an env var or overrides."""
        return self._settings[key].source

    # -- typed accessors ------------------------------------------------------------------------
    def get_str(self, key: str, default: str | None = None) -> str:
        """The raw string value; ``default`` (or ConfigError) when the key is not set anywhere."""
        if key in self._settings:
            return self._settings[key].value
        if default is None:
            raise ConfigError(f"missing configuration key {key}")
        return default

    def get_int(self, key: str, default: int | None = None) -> int:
        """The value as an int; ConfigError naming the key when it is not an integer."""
        raw = self.get_str(key, None if default is None else str(default))
        return self._convert(key, raw, _int())  # type: ignore[return-value]

    def get_float(self, key: str, default: float | None = None) -> float:
        """The value as a float; ConfigError naming the key when it is not a number."""
        raw = self.get_str(key, None if default is None else repr(default))
        return self._convert(key, raw, _float(-math.inf, math.inf))  # type: ignore[return-value]

    def get_bool(self, key: str, default: bool | None = None) -> bool:
        """The value as a bool (true/false, 1/0, yes/no, on/off)."""
        raw = self.get_str(key, None if default is None else str(default).lower())
        return self._convert(key, raw, _bool)  # type: ignore[return-value]

    def _convert(self, key: str, raw: str, validator: Validator) -> object:
        try:
            return validator(raw)
        except ValueError as exc:
            source = self._settings[key].source if key in self._settings else "default argument"
            raise ConfigError(f"bad value for {key} (from {source}): {exc}") from None

    def as_dict(self) -> dict[str, str]:
        """Plain key → value dict (for shipping to Spark executors or writing to a manifest)."""
        return {key: setting.value for key, setting in self._settings.items()}


REPLICATION_ENABLE_KEY = "hbase.replication"


def replication_disabled_reason(conf: Config) -> str | None:
    """None when ``hbase.replication`` is true (the default); else the sentence every skipped
    replication path logs and reports (the key and where its value came from)."""
    if conf.get_bool(REPLICATION_ENABLE_KEY, True):
        return None
    source = conf.source_of(REPLICATION_ENABLE_KEY) if REPLICATION_ENABLE_KEY in conf else "default argument"
    return f"replication is disabled: {REPLICATION_ENABLE_KEY} is false (from {source})"


def _to_text(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def read_site_xml(path: str | os.PathLike[str]) -> dict[str, str]:
    """Parse a Hadoop-style ``<configuration><property><name/><value/></property>`` file.

    Raises ConfigError naming the file when it is missing, not XML, or a property has no name.
    """
    file = Path(path)
    try:
        root = ET.parse(file).getroot()
    except FileNotFoundError:
        raise ConfigError(f"configuration file not found: {file}") from None
    except ET.ParseError as exc:
        raise ConfigError(f"configuration file {file} is not valid XML: {exc}") from None
    if root.tag != "configuration":
        raise ConfigError(f"configuration file {file}: root element is <{root.tag}>, not <configuration>")
    values: dict[str, str] = {}
    for prop in root.iter("property"):
        name = (prop.findtext("name") or "").strip()
        if not name:
            raise ConfigError(f"configuration file {file}: a <property> has no <name>")
        values[name] = (prop.findtext("value") or "").strip()
    return values


def write_site_xml(path: str | os.PathLike[str], values: Mapping[str, object]) -> None:
    """Write ``values`` as an hbase-site.xml (the inverse of :func:`read_site_xml`)."""
    root = ET.Element("configuration")
    for key, value in values.items():
        prop = ET.SubElement(root, "property")
        ET.SubElement(prop, "name").text = key
        ET.SubElement(prop, "value").text = _to_text(value)
    ET.indent(root)
    Path(path).write_text(ET.tostring(root, encoding="unicode") + "\n")
