"""``hbrep conf [--json]``: the effective configuration with the origin of every value."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from replication.config import DEFAULTS, write_site_xml


def hbrep(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("HBREP")}
    return subprocess.run([sys.executable, "-m", "replication.cli", *args], capture_output=True, text=True,
                          timeout=120, env={**clean, **(env or {})})  # fmt: skip


def test_every_key_with_its_value_and_origin(tmp_path):
    site = tmp_path / "hbase-site.xml"
    write_site_xml(site, {"replication.source.nb.capacity": "500", "my.own.key": "x"})
    env = {"HBREP__replication__source__ratio": "0.25"}
    done = hbrep("--conf", str(site), "--zk-auth", "alice:s3cret", "conf", "--json", env=env)
    assert done.returncode == 0, done.stderr
    rows = {row["key"]: row for row in json.loads(done.stdout)}
    assert set(rows) == set(DEFAULTS) | {"my.own.key"}
    assert rows["replication.source.nb.capacity"] == {
        "key": "replication.source.nb.capacity", "value": "500", "source": "file", "from": str(site)
    }  # fmt: skip
    assert rows["my.own.key"]["source"] == "file"
    assert rows["replication.source.ratio"] == {
        "key": "replication.source.ratio", "value": "0.25", "source": "env", "from": "HBREP__replication__source__ratio"
    }  # fmt: skip
    assert rows["hbase.replication"] == {"key": "hbase.replication", "value": "true", "source": "default", "from": ""}
    assert rows["hbrep.zk.auth"] == {
        "key": "hbrep.zk.auth", "value": "<set, not shown>", "source": "flag", "from": "--zk-auth"
    }  # fmt: skip
    assert rows["hbrep.cluster.token"]["value"] == ""  # empty: nothing to hide
    assert "s3cret" not in done.stdout + done.stderr
    by_env = hbrep("conf", "--json", env={"HBREP_ZK_AUTH": "bob:pw2"})
    auth = next(r for r in json.loads(by_env.stdout) if r["key"] == "hbrep.zk.auth")
    assert (auth["source"], auth["from"], auth["value"]) == ("env", "HBREP_ZK_AUTH", "<set, not shown>")
    human = hbrep("--conf", str(site), "conf", env=env)
    assert human.returncode == 0
    lines = {line.split()[0]: line for line in human.stdout.splitlines()}
    assert lines["replication.source.nb.capacity"].split() == [
        "replication.source.nb.capacity",
        "500",
        "(file",
        f"{site})",
    ]
    assert lines["replication.source.ratio"].endswith("(env HBREP__replication__source__ratio)")
    assert lines["replication.source.size.capacity"].split()[1:] == ["67108864", "(default)"]


def test_a_bad_value_is_one_error_line(tmp_path):
    done = hbrep("conf", env={"HBREP__hbase__replication": "perhaps"})
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.strip().splitlines() == [
        "hbrep: error: bad value for hbase.replication (from environment HBREP__hbase__replication): "
        "'perhaps' is not a boolean (true/false)"
    ]


def test_keys_hbrep_does_not_act_on_are_marked_hbases_only():
    from replication.config import HBASE_ONLY_KEYS

    done = hbrep("conf", "--json")
    assert done.returncode == 0, done.stderr
    marked = {row["key"]: row["hbase_only"] for row in json.loads(done.stdout) if "hbase_only" in row}
    assert marked == HBASE_ONLY_KEYS and "hbase.wal.provider" in marked
    lines = {line.split()[0]: line for line in hbrep("conf").stdout.splitlines()}
    assert lines["hbase.wal.provider"].endswith("[HBase's only: hbrep does not act on it]")
    assert "HBase's only" not in lines["replication.source.nb.capacity"]
