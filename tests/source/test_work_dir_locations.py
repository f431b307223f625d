"""Where a cycle's files go when the work dir is a local path or an HDFS URI (manifest.py's location helpers)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from replication.config import Config
from replication.source.manifest import cycle_folder, is_uri, join_location, result_path_for, shared_work_dir

NAME = st.text("abcdefghij0123456789-_.", min_size=1, max_size=12).filter(lambda s: s not in (".", ".."))


def test_the_work_dir_of_a_root_on_hdfs_is_a_uri_on_the_same_hdfs():
    conf = Config.load(env={})
    assert (
        shared_work_dir(conf, "webhdfs://127.0.0.1:9870/hbase-a")
        == "webhdfs://127.0.0.1:9870/hbase-a/.hbrep/airflow-cycles"
    )
    assert shared_work_dir(conf, "/data/hbase-a") == "/data/hbase-a/.hbrep/airflow-cycles"
    assert (
        shared_work_dir(Config.load(env={}, overrides={"hbrep.work.dir": "hdfs://nn:9870/w"}), "/x")
        == "hdfs://nn:9870/w"
    )


@given(folder=st.lists(NAME, min_size=1, max_size=4), authority=st.sampled_from(["nn:9870", "127.0.0.1:50070"]))
def test_a_result_sits_beside_its_manifest_on_hdfs_and_locally(folder, authority):
    uri = join_location(f"webhdfs://{authority}/", *folder, "manifest.json")
    assert uri.startswith(f"webhdfs://{authority}/") and is_uri(uri)
    assert result_path_for(uri) == uri[: -len("manifest.json")] + "result.json"
    local = join_location("/tmp", *folder, "manifest.json")
    assert not is_uri(local) and result_path_for(local) == local[: -len("manifest.json")] + "result.json"


def test_a_local_cycle_folder_is_created(tmp_path):
    folder = cycle_folder(tmp_path / "work", "c-1")
    assert folder == str(tmp_path / "work" / "c-1") and (tmp_path / "work" / "c-1").is_dir()
