"""The pinned HBase/Hadoop classpath from interop/hbase/pom.xml, resolved by real Maven."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from replication.devstack.maven import (
    INTEROP_POM,
    MavenError,
    compile_interop_tools,
    interop_classpath,
    interop_tools_classpath,
)


def test_classpath_has_the_pinned_hbase_and_hadoop():
    jars = {Path(jar).name for jar in interop_classpath().split(":")}
    assert "hbase-server-2.6.1-hadoop3.jar" in jars
    assert "hbase-mapreduce-2.6.1-hadoop3.jar" in jars and "hbase-thrift-2.6.1.jar" in jars
    assert "hadoop-hdfs-3.3.5.jar" in jars and "hadoop-common-3.3.5.jar" in jars


def test_missing_maven_is_one_clear_error(tmp_path, monkeypatch):
    pom = tmp_path / "pom.xml"
    shutil.copy(INTEROP_POM, pom)  # no target/classpath.txt beside it, so Maven is needed
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(MavenError, match="mvn not found on PATH"):
        interop_classpath(pom)


def test_unresolvable_pom_is_one_clear_error(tmp_path):
    pom = tmp_path / "pom.xml"
    pom.write_text(INTEROP_POM.read_text().replace("<hbase.version>2.6.1-hadoop3<", "<hbase.version>0.0.0-none<"))
    with pytest.raises(MavenError, match="Maven could not resolve"):
        interop_classpath(pom, timeout=600)


def test_tools_classpath_has_the_compiled_admin_tool_first():
    first, _, rest = interop_tools_classpath().partition(":")
    assert (Path(first) / "io" / "hbrep" / "interop" / "AdminTool.class").is_file()
    assert "hbase-server-2.6.1-hadoop3.jar" in rest


def test_tools_that_do_not_compile_are_one_clear_error(tmp_path):
    sources = tmp_path / "src"
    (sources / "x").mkdir(parents=True)
    (sources / "x" / "Broken.java").write_text('package x; class Broken { int f() { return "no"; } }\n')
    with pytest.raises(MavenError, match=r"javac could not compile .*\n.*Broken.java"):
        compile_interop_tools(interop_classpath(), sources, tmp_path / "classes")
    assert not (tmp_path / "classes" / ".compiled").exists()
