#!/usr/bin/env bash
# make up: ZooKeeper + embedded clusters a -> b + `airflow standalone` on 127.0.0.1 (DAGs unpaused).
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHONPATH="$PWD/plugins${PYTHONPATH:+:$PYTHONPATH}" exec .venv/bin/python -m hbrep_airflow.devstack up "$@"
