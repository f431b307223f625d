"""GX checks of a replicated table: real Great Expectations on real Spark over real table files."""

from __future__ import annotations

from pathlib import Path

import pytest

from replication.checks.quality import QualityRulesError, load_rules, parse_rules, run_quality
from replication.fs import LocalFileSystem
from replication.tables.descriptors import ColumnFamilyDescriptor as CF
from replication.tables.descriptors import TableDescriptor, TableRegistry
from replication.tables.table_files import write_cells
from replication.wal.model import Cell

FS = LocalFileSystem()
PUT = 4
TABLE = "t1"

RULES_YAML = """
tables:
  t1:
    columns:
      "f:amount":
        not_null: true
        regex: "^[0-9]+$"
        min: 0
        max: 100
      "f:kind":
        in_set: [a, b]
"""


def cells(start: int, stop: int, *, amount: str | None = None) -> list[Cell]:
    out = []
    for i in range(start, stop):
        key = f"r{i:03d}".encode()
        out.append(Cell(key, b"f", b"amount", 10 + i, PUT, (amount or str(i)).encode()))
        out.append(Cell(key, b"f", b"kind", 10 + i, PUT, b"ab"[i % 2 : i % 2 + 1]))
    return out


class Roots:
    def __init__(self, tmp_path: Path):
        self.source = str(tmp_path / "src")
        self.peer = str(tmp_path / "peer")
        self.state = tmp_path / "state"
        self.seq = 0
        for root in (self.source, self.peer):
            TableRegistry(FS, root).create(TableDescriptor.of(TABLE, CF("f", 1)))

    def flush(self, root: str, items: list[Cell]) -> None:
        seqs = []
        for cell in items:
            self.seq += 1
            seqs.append((cell, self.seq))
        write_cells(FS, root, TABLE, "reg", seqs, self.seq)


@pytest.mark.slow
def test_suite_fails_on_row_count_mismatch_then_passes_after_catch_up(spark, tmp_path):
    roots = Roots(tmp_path)
    rules = load_rules(_write(tmp_path / "rules.yaml", RULES_YAML))
    roots.flush(roots.source, cells(0, 12))
    roots.flush(roots.peer, cells(0, 8))  # replication is behind: 4 rows missing on the peer

    behind = run_quality(spark, roots.source, roots.peer, TABLE, state_dir=roots.state, peer_name="2", rules=rules)
    assert not behind.success
    assert behind.source_rows == 12 and behind.peer_rows == 8
    assert [o.expectation for o in behind.failed] == ["expect_table_row_count_to_equal"]
    index = Path(behind.data_docs_index)
    assert index.name == "index.html" and index.is_file() and str(roots.state) in str(index)
    _assert_readable_offline(index, behind)

    roots.flush(roots.peer, cells(8, 12))  # caught up
    caught_up = run_quality(spark, roots.source, roots.peer, TABLE, state_dir=roots.state, peer_name="2", rules=rules)
    assert caught_up.success, caught_up.failed
    assert caught_up.peer_rows == 12
    kinds = {(o.expectation, o.column) for o in caught_up.outcomes}
    assert ("expect_column_values_to_be_unique", "row_key") in kinds
    assert ("expect_column_values_to_not_be_null", "row_key") in kinds
    assert ("expect_column_values_to_match_regex", "f:amount") in kinds
    assert ("expect_column_values_to_be_between", "f:amount#number") in kinds
    assert ("expect_column_values_to_be_in_set", "f:kind") in kinds

    # A bad value on the peer fails the user's rules (not numeric: regex and bounds), nothing else.
    roots.flush(roots.peer, [Cell(b"r003", b"f", b"amount", 13, PUT, b"oops")])
    bad = run_quality(spark, roots.source, roots.peer, TABLE, state_dir=roots.state, peer_name="2", rules=rules)
    failed = {(o.expectation, o.column, o.unexpected_count) for o in bad.failed}
    assert failed == {
        ("expect_column_values_to_match_regex", "f:amount", 1),
        ("expect_column_values_to_be_between", "f:amount#number", 1),
    }

    # the time interval limits both counts
    window = run_quality(
        spark, roots.source, roots.peer, TABLE, state_dir=roots.state, peer_name="2", start_ts=10, end_ts=15
    )
    assert window.source_rows == 5 and window.peer_rows == 5


def _write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def test_rules_file_errors_name_file_and_key(tmp_path):
    with pytest.raises(QualityRulesError, match=r"column f:a: unknown rule 'not_nul'"):
        parse_rules({"tables": {"t1": {"columns": {"f:a": {"not_nul": True}}}}}, "r.yaml")
    with pytest.raises(QualityRulesError, match="columns are named family:qualifier"):
        parse_rules({"tables": {"t1": {"columns": {"nocolon": {}}}}})
    with pytest.raises(QualityRulesError, match=r"mostly 1\.5"):
        parse_rules({"tables": {"t1": {"columns": {"f:a": {"mostly": 1.5}}}}})
    with pytest.raises(QualityRulesError, match="is not valid"):
        load_rules(_write(tmp_path / "bad.json", "{not json"))
    with pytest.raises(QualityRulesError, match=r"missing\.yaml"):
        load_rules(tmp_path / "missing.yaml")
    rules = load_rules(_write(tmp_path / "ok.yaml", RULES_YAML))
    assert [r.column for r in rules.for_table("t1")] == ["f:amount", "f:kind"]
    assert rules.for_table("other") == []
    assert rules.for_table("t1")[0].numeric and not rules.for_table("t1")[1].numeric


def _assert_readable_offline(index: Path, report) -> None:
    """hbrep's Data Docs need nothing from the network: no script at all, no outside style or link; the
    verdicts are in the page text, as headless Chromium shows them; GX's own site is kept beside them."""
    import re
    import sys

    assert Path(report.gx_data_docs_index).is_file() and report.gx_data_docs_index != str(index)
    pages = [index, index.parent / f"{report.suite}.html"]
    for page in pages:
        html = page.read_text(encoding="utf-8")
        assert "<script" not in html.lower(), page
        assert not re.findall(r"(?:src|href)=\"(?:https?:)?//", html), page
    sys.path.insert(0, str(Path(__file__).parent / "plugins"))
    from cdp import chromium_binary, load_page

    if chromium_binary() is None:
        return
    shown = load_page(pages[1].as_uri(), "document.readyState === 'complete'")
    assert shown.errors == []
    assert "expect_table_row_count_to_equal" in shown.text and "NOT met" in shown.text
    assert f"source rows {report.source_rows}" in shown.text and f"peer rows {report.peer_rows}" in shown.text
    listed = load_page(index.as_uri(), "document.readyState === 'complete'")
    assert report.suite in listed.text and "failed" in listed.text
