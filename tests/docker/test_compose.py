"""docker/ stays valid without a Docker engine: the compose file and Dockerfile are parsed, and every
service's command and environment must refer to things that exist (hbrep CLI commands, Airflow
commands, entrypoint subcommands, repo files, config keys and environment variables the code reads,
other services)."""

from __future__ import annotations

import re
import shlex
import subprocess
from functools import cache
from pathlib import Path
from typing import Any

import click
import pytest
import yaml

from replication.cli import cli
from replication.config import DEFAULTS, Config, read_site_xml
from replication.fs import get_filesystem
from replication.fs.webhdfs import WebHdfsFileSystem
from replication.zk.cluster_key import ClusterKey

REPO = Path(__file__).resolve().parents[2]
DOCKER = REPO / "docker"
COMPOSE = DOCKER / "docker-compose.yml"
REQUIRED = {
    "zk1", "zk2", "zk3", "namenode", "datanode", "spark-master", "spark-worker-1", "spark-worker-2", "spark-connect",
    "postgres", "airflow-scheduler", "airflow-api-server", "airflow-dag-processor", "airflow-triggerer",
    "hbrep-a", "hbrep-b",
}  # fmt: skip
THIRD_PARTY_PREFIXES = ("AIRFLOW__", "AIRFLOW_CONN_", "SPARK_", "JAVA_", "PYSPARK_")


@cache
def compose() -> dict[str, Any]:
    return yaml.safe_load(COMPOSE.read_text())


@cache
def dockerfile() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) pairs, continuation lines joined, comments dropped."""
    text = re.sub(r"\\\n", " ", (DOCKER / "Dockerfile").read_text())
    out = []
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            instruction, _, args = line.partition(" ")
            out.append((instruction.upper(), args.strip()))
    return out


def hbrep_services() -> dict[str, dict[str, Any]]:
    return {name: svc for name, svc in compose()["services"].items() if svc.get("image", "").startswith("hbrep")}


def entrypoint_subcommands() -> set[str]:
    text = (DOCKER / "entrypoint.sh").read_text()
    return set(re.findall(r"^\s*([a-z][a-z-]*)\)\s*$", text, re.M))


def check_hbrep_argv(argv: list[str]) -> None:
    """Resolve ``hbrep ...`` through the real click tree and parse its arguments."""
    assert argv[0] == "hbrep"
    ctx = cli.make_context("hbrep", argv[1:], resilient_parsing=False)
    command: click.Command = cli
    args = ctx.protected_args + ctx.args
    while isinstance(command, click.Group):
        assert args, f"{argv}: names a group, not a command"
        name, args = args[0], args[1:]
        sub = command.get_command(ctx, name)
        assert sub is not None, f"{argv}: no hbrep command {name!r}"
        command = sub
    command.make_context(command.name, list(args), parent=ctx)  # raises click.UsageError when wrong


@cache
def airflow_parser():
    from airflow.cli.cli_parser import get_parser

    return get_parser()


def test_compose_has_the_production_like_stack():
    services = compose()["services"]
    assert set(services) >= REQUIRED
    for name, svc in services.items():
        for dep in svc.get("depends_on") or []:  # a list or a mapping: both iterate service names
            assert dep in services, f"{name} depends on unknown service {dep}"
        assert "image" in svc or "build" in svc, name


def test_build_contexts_and_dockerfile_sources_exist():
    for name, svc in hbrep_services().items():
        context = (DOCKER / svc["build"]["context"]).resolve()
        assert context == REPO, name
        assert (context / svc["build"]["dockerfile"]).is_file(), name
    instructions = dockerfile()
    assert instructions[0][0] == "FROM"
    copied_to = {}
    for instruction, args in instructions:
        if instruction == "COPY":
            *sources, dest = shlex.split(args)
            for source in sources:
                assert (REPO / source).exists(), f"Dockerfile COPY {source}: not in the repo"
                copied_to[dest] = REPO / source
    entry = next(json_args for i, json_args in instructions if i == "ENTRYPOINT")
    assert "/usr/local/bin/hbrep-entrypoint" in entry and copied_to["/usr/local/bin/hbrep-entrypoint"].is_file()
    conf = copied_to["/etc/hbrep/hbase-site.xml"]
    Config.load(conf, env={})  # the baked-in hbase-site.xml is valid
    assert set(read_site_xml(conf)) <= set(DEFAULTS), "hbase-site.xml sets keys hbrep does not know"


def test_entrypoint_is_valid_sh_and_its_hbrep_commands_exist():
    script = DOCKER / "entrypoint.sh"
    subprocess.run(["sh", "-n", str(script)], check=True)
    code = "\n".join(line for line in script.read_text().splitlines() if not line.lstrip().startswith("#"))
    calls = re.findall(r"(?:^|[\s'])(hbrep [^;&|>'\n]+)", code, re.M)
    assert len(calls) >= 3
    for call in calls:
        argv = [a if not a.startswith("$") else "x" for a in shlex.split(call.replace("$count", "2"))]
        if "--root" in argv:
            argv[argv.index("--root") + 1] = "/tmp"
        check_hbrep_argv(argv)


@pytest.mark.parametrize("name", sorted(hbrep_services()))
def test_hbrep_image_service_commands_exist(name):
    command = hbrep_services()[name]["command"]
    services = compose()["services"]
    head = command[0]
    if head == "hbrep":
        check_hbrep_argv(command)
    elif head == "airflow":
        airflow_parser().parse_args(command[1:])
    elif head == "regionservers":
        _, cluster, root, count = command
        check_hbrep_argv(["hbrep", "cluster", "start", cluster, "--root", "/tmp", "--regionservers", count])
        fs, path = get_filesystem(root)
        assert isinstance(fs, WebHdfsFileSystem) and path == f"/hbase-{cluster}"
        assert re.match(r"https?://(\w+):", fs.url).group(1) in services
    elif head == "spark-worker":
        host = re.fullmatch(r"spark://([\w-]+):7077", command[1]).group(1)
        assert host in services
    else:
        assert head in entrypoint_subcommands(), f"{name}: unknown command {head!r}"
    assert head in entrypoint_subcommands() or head in ("hbrep", "airflow")


@pytest.mark.parametrize("name", sorted(hbrep_services()))
def test_hbrep_image_service_environment_is_read_by_the_code(name):
    env = {k: str(v) for k, v in (hbrep_services()[name].get("environment") or {}).items()}
    sources = "\n".join(
        p.read_text() for folder in ("replication", "plugins", "dags") for p in (REPO / folder).rglob("*.py")
    )
    services = compose()["services"]
    for var, value in env.items():
        if var.startswith("HBREP__"):
            key = var[len("HBREP__") :].replace("__", ".")
            assert key in DEFAULTS, f"{name}: {var} sets unknown config key {key}"
        elif var.startswith(THIRD_PARTY_PREFIXES):
            continue
        else:
            assert f'"{var}"' in sources, f"{name}: no code reads {var}"
        if var == "HBREP_CLUSTER":
            assert {host for host, _ in ClusterKey.parse(value).servers} == {"zk1", "zk2", "zk3"}
        if var.startswith("AIRFLOW_CONN_") or var == "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN":
            hosts = re.findall(r"(?:@|//|,)([a-z][\w-]*):\d+", value)
            assert hosts and set(hosts) <= set(services), f"{name}: {var} names unknown hosts {hosts}"
    overrides = {k: v for k, v in env.items() if k.startswith("HBREP__")}
    conf = Config.load(DOCKER / "hbase-site.xml", env=overrides)  # every value is valid
    if "HBREP_CLUSTER" in env:
        assert ClusterKey.parse(env["HBREP_CLUSTER"]).znode_parent == conf.get_str("zookeeper.znode.parent")
    assert conf.get_str("hbrep.spark.master") == "spark://spark-master:7077"


def test_zookeeper_ensemble_ids_match_the_server_list():
    services = compose()["services"]
    for n in (1, 2, 3):
        env = services[f"zk{n}"]["environment"]
        assert env["ZOO_MY_ID"] == str(n)
        servers = dict(part.split("=", 1) for part in env["ZOO_SERVERS"].split())
        assert servers == {f"server.{i}": f"zk{i}:2888:3888;2181" for i in (1, 2, 3)}
        assert "-Djute.maxbuffer=" in env["JVMFLAGS"]


def test_hdfs_has_webhdfs_and_append_on():
    services = compose()["services"]
    for name in ("namenode", "datanode"):
        env = services[name]["environment"]
        assert env["HDFS-SITE.XML_dfs.webhdfs.enabled"] == "true"
        assert env["HDFS-SITE.XML_dfs.support.append"] == "true"  # WebHdfsFileSystem.sync appends


def test_compose_matches_the_distributed_stack():
    """PostgreSQL, the Redis broker, two Celery workers, the Spark master and two workers, as ``make up DIST=1``
    runs them (replication/devstack/dist_stack.py), under the names the code uses."""
    from replication.devstack.celery_workers import CELERY_EXECUTOR, celery_environment
    from replication.devstack.dist_stack import WORKERS

    services = compose()["services"]
    airflow = {name: svc for name, svc in services.items() if (svc.get("command") or [""])[0] == "airflow"}
    workers = {name: svc for name, svc in airflow.items() if svc["command"][1:3] == ["celery", "worker"]}
    assert len(workers) == WORKERS, sorted(workers)
    for name, svc in workers.items():
        command = svc["command"]
        assert command[command.index("--celery-hostname") + 1] == f"celery@{svc['hostname']}", name
        assert svc["hostname"] == name  # each its own host: the task instances name it
    assert len({svc["hostname"] for svc in workers.values()}) == WORKERS
    broker = re.fullmatch(r"redis://([\w-]+):(\d+)/\d+", airflow["airflow-scheduler"]["environment"]
                          ["AIRFLOW__CELERY__BROKER_URL"])  # fmt: skip
    assert broker and broker.group(1) in services and services[broker.group(1)]["image"].startswith("redis:")
    assert "redis-server" in services[broker.group(1)]["command"] and "--appendonly" in services["redis"]["command"]
    db = airflow["airflow-scheduler"]["environment"]["AIRFLOW__DATABASE__SQL_ALCHEMY_CONN"]
    assert db.startswith("postgresql") and services["postgres"]["image"].startswith("postgres:")
    backend = airflow["airflow-scheduler"]["environment"]["AIRFLOW__CELERY__RESULT_BACKEND"]
    assert backend == "db+" + db.replace("+psycopg2", ""), backend
    same_keys = set(celery_environment("redis://x:1/0")) & {"AIRFLOW__CORE__EXECUTOR", "AIRFLOW__CELERY__BROKER_URL"}
    for name, svc in airflow.items():  # every Airflow process runs the same executor on the same broker
        env = svc["environment"]
        assert env["AIRFLOW__CORE__EXECUTOR"] == CELERY_EXECUTOR, name
        assert {k: env[k] for k in same_keys} == {k: airflow["airflow-scheduler"]["environment"][k] for k in same_keys}
        assert "redis" in (svc.get("depends_on") or {}) or name == "airflow-init", name
    spark_workers = [n for n, svc in services.items() if (svc.get("command") or [""])[0] == "spark-worker"]
    assert len(spark_workers) == WORKERS and "spark-master" in services
    connect = services["spark-connect"]
    assert connect["command"] == ["spark-connect"] and set(spark_workers) <= set(connect["depends_on"])


def test_the_kubernetes_pod_template_runs_the_hbrep_image():
    """docker/pod_template.yaml (KubernetesExecutor's worker pod): the hbrep image, a container named ``base``
    (the one Airflow runs the task in), the DAGs and plugins of the image, the same database and source cluster."""
    template = yaml.safe_load((DOCKER / "pod_template.yaml").read_text())
    assert template["kind"] == "Pod"
    (base,) = [c for c in template["spec"]["containers"] if c["name"] == "base"]
    assert base["image"].startswith("hbrep:")
    env = {e["name"]: e.get("value") for e in base["env"]}
    scheduler = compose()["services"]["airflow-scheduler"]["environment"]
    keys = ("AIRFLOW__CORE__DAGS_FOLDER", "AIRFLOW__CORE__PLUGINS_FOLDER", "HBREP_CLUSTER", "HBREP_CONF",
            "HBREP__hbrep__spark__mode", "AIRFLOW_CONN_HBREP_SOURCE", "AIRFLOW_CONN_HBREP_SPARK_CONNECT")  # fmt: skip
    for key in keys:
        assert env[key] == str(scheduler[key]), key
    assert env["AIRFLOW__CORE__EXECUTOR"] == "KubernetesExecutor"
    assert template["spec"]["restartPolicy"] == "Never"
