#!/usr/bin/env bash
# make up: ZooKeeper + embedded clusters a -> b + `airflow standalone` on 127.0.0.1 (DAGs unpaused).
set -euo pipefail
cd "$(dirname "$0")/.."
exec .venv/bin/python -m replication.devstack.stack up "$@"
