"""The snapshot manifest (input of a ship job) and the ship result (its output), as JSON files.

A manifest is everything a Spark task needs to ship one queue without asking the source's ZooKeeper:
the queue's WALs in order with their recorded positions and znode versions, where each WAL was found,
the peer's configuration, cluster ids and sinks, and the configuration. XCom and the CLI carry only the
file's path.
"""

from __future__ import annotations

import contextlib
import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from replication.config import Config
from replication.fs import FileSystem, FileSystemError, LocalFileSystem, get_filesystem


@dataclass
class WalTask:
    """One WAL of a queue: its name, where the snapshot found it, its position and znode version."""

    name: str
    path: str | None
    position: int
    version: int


@dataclass
class QueueTask:
    """One queue to ship: ``<replicator>/<queue_id>`` and its WALs in read order."""

    replicator: str
    queue_id: str
    peer_id: str
    recovered: bool
    replicator_alive: bool
    dead_servers: list[str]
    wals: list[WalTask]

    @property
    def key(self) -> str:
        return f"{self.replicator}/{self.queue_id}"


@dataclass
class PeerTask:
    """A peer as the snapshot saw it."""

    peer_id: str
    cluster_key: str
    enabled: bool
    config: dict[str, Any]
    peer_cluster_id: str | None
    peer_root: str | None
    sinks: list[str]
    protocol: str = "hbrep"  # the RPC the peer's sinks speak: hbrep | hbase (source/peer_protocol.py)
    # a serial peer's barriers and queue positions (SerialReplicationChecker.to_dict; for a real HBase source
    # HBaseSerialChecker.to_dict, kind "hbase"), else None
    serial: dict[str, Any] | None = None


@dataclass
class Manifest:
    """Input of one ship cycle."""

    cycle_id: str
    created_ms: int
    source_cluster_key: str
    source_root: str
    source_cluster_id: str
    conf: dict[str, str]
    peers: dict[str, PeerTask]
    queues: list[QueueTask]

    def to_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> Manifest:
        raw = json.loads(text)
        raw["peers"] = {pid: PeerTask(**peer) for pid, peer in raw["peers"].items()}
        raw["queues"] = [
            QueueTask(**{**queue, "wals": [WalTask(**wal) for wal in queue["wals"]]}) for queue in raw["queues"]
        ]
        return cls(**raw)


@dataclass
class WalProgress:
    """How far one WAL got: the position to record and whether it is finished (to drop from the queue)."""

    name: str
    start_position: int
    end_position: int
    done: bool
    version: int


@dataclass
class QueueResult:
    """What shipping one queue did. ``status``: ok | waiting | stuck | failed | disabled | skipped.

    ``waiting``: a serial peer's queue stopped at an entry whose earlier edits (other servers', before
    its routing epoch) are not shipped yet; ``error`` says which. ``last_seq_ids``: the highest sequence
    id read per region (encoded name), recorded for serial peers as HBase's last pushed sequence ids.
    """

    replicator: str
    queue_id: str
    peer_id: str
    status: str
    wals: list[WalProgress] = field(default_factory=list)
    error: str | None = None
    drained: bool = False
    metrics: dict[str, float] = field(default_factory=dict)
    last_seq_ids: dict[str, int] = field(default_factory=dict)

    @property
    def key(self) -> str:
        return f"{self.replicator}/{self.queue_id}"

    def to_json(self) -> str:
        """This result as JSON (the object ShipResult.to_json writes for each queue)."""
        return json.dumps(asdict(self), sort_keys=True)

    @classmethod
    def from_dict(cls, raw: dict) -> QueueResult:
        """The inverse of ``asdict``: a QueueResult from its JSON object."""
        return cls(**{**raw, "wals": [WalProgress(**w) for w in raw["wals"]]})


@dataclass
class ShipResult:
    """Output of one ship job: one QueueResult per queue of the manifest."""

    cycle_id: str
    queues: list[QueueResult]
    started_ms: int = 0
    finished_ms: int = 0

    def to_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> ShipResult:
        raw = json.loads(text)
        raw["queues"] = [QueueResult.from_dict(q) for q in raw["queues"]]
        return cls(**raw)


def write_text(location: str, text: str, fs: FileSystem | None = None) -> None:
    """Write a manifest/result file atomically at ``location`` (a path or a filesystem URI)."""
    if fs is None:
        fs, location = get_filesystem(location)
    fs.write_atomic(location, text.encode("utf-8"))
    if isinstance(fs, LocalFileSystem):
        # The manifest carries the configuration (cluster token, ZooKeeper credentials): owner-only.
        os.chmod(location, 0o600)


def read_text(location: str, fs: FileSystem | None = None) -> str:
    """Read a manifest/result file written by :func:`write_text`."""
    if fs is None:
        fs, location = get_filesystem(location)
    return fs.read_range(location, 0).decode("utf-8")


def exists_at(location: str) -> bool:
    """True when a manifest/result file is at ``location`` (a path or a filesystem URI)."""
    fs, path = get_filesystem(location)
    return fs.exists(path)


def work_dir_for(conf: Config) -> Path:
    """Where manifests and results go: ``hbrep.work.dir`` or ``<hbrep.state.dir>/cycles``."""
    return Path(conf.get_str("hbrep.work.dir", os.path.join(conf.get_str("hbrep.state.dir"), "cycles")))


def shared_work_dir(conf: Config, root: str) -> str:
    """Where cycles run by workers of other machines put their files: ``hbrep.work.dir``, else
    ``<root>/.hbrep/airflow-cycles`` on the cluster's own filesystem root (the Airflow hook's choice).
    A root on HDFS (``hdfs://``, ``webhdfs://``) gives a work dir on HDFS, as a URI."""
    if "hbrep.work.dir" in conf:
        return conf.get_str("hbrep.work.dir")
    return join_location(root, ".hbrep", "airflow-cycles")


def is_uri(location: str | os.PathLike[str]) -> bool:
    """True for a filesystem URI (``hdfs://nn:9870/x``), False for a plain local path."""
    return "://" in str(location)


def join_location(base: str | os.PathLike[str], *parts: str) -> str:
    """``base/part/...`` for a local path or a URI alike (a URI keeps its ``scheme://authority``)."""
    if not is_uri(base):
        return str(Path(base).joinpath(*parts))
    return "/".join([str(base).rstrip("/"), *parts])


def cycle_folder(work_dir: str | os.PathLike[str], cycle_id: str) -> str:
    """The folder of one cycle's manifest and result under ``work_dir``, created (locally or on HDFS)."""
    folder = join_location(work_dir, cycle_id)
    if is_uri(folder):
        fs, path = get_filesystem(folder)
        fs.mkdirs(path)
    else:
        Path(folder).mkdir(parents=True, exist_ok=True)
    return folder


def remove_cycle_folder(manifest_path: str) -> None:
    """Delete the folder of a manifest (its cycle's files), wherever it is; a missing folder is fine."""
    folder = manifest_path.rsplit("/", 1)[0]
    fs, path = get_filesystem(folder)
    with contextlib.suppress(FileSystemError, OSError):
        fs.delete(path, recursive=True)


def result_path_for(manifest_path: str) -> str:
    """The ship result file of a manifest: ``result.json`` beside it (a local path or a URI)."""
    return manifest_path.rsplit("/", 1)[0] + "/result.json"
