#!/usr/bin/env bash
# make down: stop every process `make up` started (Airflow's setsid session, region servers, ZooKeeper).
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHONPATH="$PWD/plugins${PYTHONPATH:+:$PYTHONPATH}" exec .venv/bin/python -m hbrep_airflow.devstack down "$@"
