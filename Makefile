# hbrep: two commands on a fresh clone — `make demo` and `make test`. Each installs what it needs.
SHELL := /bin/bash
PYTHON ?= python3.11
VENV := .venv
PY := $(VENV)/bin/python
UV := $(VENV)/bin/uv
STAMP := $(VENV)/.installed
export PATH := $(CURDIR)/$(VENV)/bin:$(PATH)
export SPARK_LOCAL_IP := 127.0.0.1
export GX_ANALYTICS_ENABLED := false
export PYSPARK_PYTHON := $(CURDIR)/$(VENV)/bin/python
export PYSPARK_DRIVER_PYTHON := $(CURDIR)/$(VENV)/bin/python

.PHONY: krb5 demo-hbase install test test-fast demo bench lint fmt lock proto clean up down chaos chromium redis fuzz postgresql

install: $(STAMP)

# Re-runs only when the pins or the package metadata change; otherwise `make install` is a no-op.
# --compile-bytecode: .pyc files written at install, as pip does by default (uv does not). Without them a
# process whose environment sets PYTHONDONTWRITEBYTECODE (this machine's does) compiles every module it imports,
# in each Airflow task, Spark Python worker and region server it starts.
$(STAMP): pyproject.toml constraints.txt | krb5
	@command -v java >/dev/null || { echo "hbrep: java not found (Java 17 is required for ZooKeeper and Spark)"; exit 1; }
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	@test -x $(UV) || $(VENV)/bin/pip install -q uv==0.13.9
	$(UV) pip install --python $(PY) -q --compile-bytecode -r constraints.txt
	$(UV) pip install --python $(PY) -q --compile-bytecode --no-deps -e .
	@touch $(STAMP)

# The suite runs on TEST_WORKERS pytest-xdist workers (default 2, this machine's cores; 0 runs it in one process).
# Much of a test's time is spent waiting on the JVMs and servers it starts, so two workers keep both cores busy.
# Each module runs whole on one worker; tests/conftest.py groups the real-HBase, scheduler and reliability tests.
TEST_WORKERS ?= 2
test: install | chromium postgresql redis
	$(PY) -m pytest -q -p no:cacheprovider --durations=30 \
	  $(if $(filter-out 0,$(TEST_WORKERS)),-n $(TEST_WORKERS) --dist loadscope --no-loadscope-reorder,) $(PYTEST_ARGS)

test-fast: install
	$(PY) -m pytest -q -m "not slow" $(PYTEST_ARGS)

demo: install | postgresql
	$(PY) -m replication.devstack.demo

# Real HBase -> hbrep's DAGs -> real HBase, a region server SIGKILLed, HBase's VerifyReplication at the end.
# SECURE=1: the same Kerberized (a KDC made for the run, SASL on ZooKeeper and on every HBase RPC).
demo-hbase: install | postgresql
	$(PY) -m replication.devstack.demo_hbase $(if $(filter 1,$(SECURE)),--secure,)

# The reliability suite in its long form (more rows, more rounds); rewrites RELIABILITY.md.
chaos: install
	HBREP_CHAOS_LONG=1 $(PY) -m pytest -q -p no:cacheprovider tests/reliability $(PYTEST_ARGS)

# Long fuzzing of hbrep's parsers under atheris (libFuzzer), FUZZ_SECONDS per target (default 300); make test
# runs the same targets bounded, under hypothesis (tests/fuzz). atheris is installed here only (binary wheel).
fuzz: install
	$(UV) pip install --python $(PY) -q atheris==3.0.0
	cd tests/fuzz && ../../$(PY) run_fuzz.py --seconds $(or $(FUZZ_SECONDS),300) --work ../../build/fuzz \
	  --report ../../RELIABILITY.md

bench: install
	$(PY) -m bench $(if $(QUICK),--quick,) $(foreach b,$(ONLY),--only $(b))

lint: install
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

fmt: install
	$(VENV)/bin/ruff check --fix .
	$(VENV)/bin/ruff format .

# Regenerate the checked-in protobuf modules from replication/proto/*.proto.
proto: install
	$(PY) -m grpc_tools.protoc -Ireplication/proto --python_out=replication/proto --pyi_out=replication/proto \
	  replication/proto/*.proto
	$(PY) -m grpc_tools.protoc -Ireplication/proto --grpc_python_out=replication/proto \
	  $$(grep -l '^service ' replication/proto/*.proto)
	sed -i -E 's/^import ([A-Za-z_]+_pb2)/from . import \1/' replication/proto/*_pb2*.py replication/proto/*_pb2.pyi

# Re-pin every dependency (run after editing pyproject.toml); commit constraints.txt.
lock: install
	$(UV) pip compile pyproject.toml --extra dev -c constraints.txt --python-version 3.11 \
	  --no-annotate --no-header -o constraints.txt

clean:
	rm -rf $(VENV) .hbrep build *.egg-info

# Airflow standalone on 127.0.0.1 with ZooKeeper and the embedded clusters a -> b, DAGs unpaused.
# `make up DIST=1`: the distributed stack (CeleryExecutor on Redis with two Celery workers, a Spark standalone
# master and two workers with the Connect server on it, cluster a's WALs and the ship work dir on HDFS).
# `make up SPARK_MODE=submit`: the ship DAG runs spark-submit per run instead of the Spark Connect server.
up: install | postgresql $(if $(DIST),redis,)
	scripts/airflow-up.sh $(if $(DIST),--dist,) $(if $(SPARK_MODE),--spark-mode $(SPARK_MODE),)

# Stop every process `make up` started (PostgreSQL included); the clusters' state is kept for the next `make up`.
# `make down CLEAN=1` also removes it, so the next `make up` starts from empty clusters.
down:
	scripts/airflow-down.sh $(if $(CLEAN),--clean,)

# Debian's Redis server: the distributed stack's Celery broker (replication/devstack/redis.py).
redis:
	@command -v redis-server >/dev/null || (apt-get update && apt-get install -y --no-install-recommends redis-server)

# MIT Kerberos from Debian: the KDC the Kerberos tests start per run (replication/devstack/kdc.py), kinit/klist,
# and the headers the `kerberos` wheel (pure-sasl's GSSAPI binding) and the `gssapi` wheel (the acceptor of the HBase
# RPC listener) are built against. Nothing is started here.
krb5:
	@test -x /usr/sbin/krb5kdc && test -x /usr/sbin/kadmin.local && command -v kinit >/dev/null && \
	  command -v krb5-config >/dev/null || \
	  (apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y krb5-kdc krb5-admin-server krb5-user libkrb5-dev)

# Headless Chromium for the Replication view test (tests/plugins/test_replication_view.py).
chromium:
	@command -v chromium >/dev/null || (apt-get update && apt-get install -y chromium)

# PostgreSQL's server binaries (Debian's postgresql), Airflow's metadata database in make up, make demo and the
# tests (replication/devstack/postgres.py runs them; HBREP_POSTGRES_BIN names another folder of initdb/postgres).
postgresql:
	@test -n "$$HBREP_POSTGRES_BIN" || ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || \
	  (apt-get update && apt-get install -y postgresql)
