#!/usr/bin/env bash
# make down: stop every process `make up` started (Airflow's setsid session, region servers, ZooKeeper).
set -euo pipefail
cd "$(dirname "$0")/.."
exec .venv/bin/python -m replication.devstack.stack down "$@"
