"""Where an embedded Spark Connect server records its port, so that clients find it.

The dev stack's server (``replication/devstack/spark_connect.py``, ``hbrep spark start``) writes
``<state>/spark-connect.port``; the ship job's client (``jobs/connect.connect_url``) reads it when
``hbrep.spark.connect.url`` is not set. Both sides use this module, so the library does not import
the dev stack.
"""

from __future__ import annotations

import os
from pathlib import Path

from replication.config import Config

PORT_FILE = "spark-connect.port"


def embedded_state_dir(conf: Config) -> Path:
    """Where ``hbrep spark start`` keeps the embedded server's pid, port and log: ``<hbrep.state.dir>/spark``."""
    return Path(conf.get_str("hbrep.state.dir")) / "spark"


def port_file(state_dir: str | os.PathLike[str]) -> Path:
    """The file in ``state_dir`` that holds the port of the server started from there."""
    return Path(state_dir) / PORT_FILE


def read_port(state_dir: str | os.PathLike[str]) -> int | None:
    """The port recorded by the last start in ``state_dir`` (None when there is none)."""
    try:
        return int(port_file(state_dir).read_text().strip())
    except (FileNotFoundError, ValueError):
        return None
