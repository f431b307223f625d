"""Data-quality checks of a replicated table with Great Expectations 1.x, built as Data Docs (HTML).

One expectation suite per (peer, table), run as a GX checkpoint on a Spark DataFrame of the peer
table's latest state, one row per row key, over a time interval ``[start_ts, end_ts)``:

- ``ExpectTableRowCountToEqual``: the peer has as many rows as the source over the interval;
- ``ExpectColumnValuesToNotBeNull`` / ``ExpectColumnValuesToBeUnique`` on ``row_key`` (the row key as
  lowercase hex, so binary keys compare exactly);
- the per-column rules the user declares in a rules file (below).

The GX project is FILE-backed at ``<state_dir>/gx`` so the checkpoint's ``UpdateDataDocsAction``
writes Data Docs to ``<state_dir>/gx/uncommitted/data_docs/local_site/index.html``; the report
returns that path.

Rules file (YAML, or JSON with the same structure)::

    tables:
      "ns:t1":                 # the table as hbrep names it (t1 in the default namespace)
        columns:
          "f:amount":          # family:qualifier; the newest visible value, decoded as UTF-8
            not_null: true     # every row has this column
            regex: "^[0-9]+$"  # values match (Python/Java regex)
            in_set: [a, b]     # values are one of these strings
            min_length: 1      # value length bounds (either may be left out)
            max_length: 64
            min: 0             # numeric bounds: the value parsed as a number; unparsable fails
            max: 100
            unique: true       # no two rows share a value
            mostly: 0.99       # GX "mostly" (fraction that must pass) for this column's rules

Unknown keys are refused (QualityRulesError names the file and the key), so a typo never skips a check.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from replication.checks.quality_docs import write_offline_docs
from replication.errors import HbrepError
from replication.tables.semantics import LATEST_TIMESTAMP

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

ROW_KEY = "row_key"
NUMBER_SUFFIX = "#number"
RULE_KEYS = {"not_null", "regex", "in_set", "min_length", "max_length", "min", "max", "unique", "mostly"}
_COLUMN = re.compile(r"^[^:]+:.*$")


class QualityRulesError(HbrepError):
    """A rules file that cannot be read or has an unknown key or bad value (the message names both)."""


@dataclass(frozen=True)
class ColumnRule:
    """The rules declared for one column ``family:qualifier`` of a table."""

    column: str
    not_null: bool = False
    regex: str | None = None
    in_set: tuple[str, ...] | None = None
    min_length: int | None = None
    max_length: int | None = None
    min: float | None = None
    max: float | None = None
    unique: bool = False
    mostly: float = 1.0

    @property
    def family(self) -> bytes:
        return self.column.split(":", 1)[0].encode("utf-8")

    @property
    def qualifier(self) -> bytes:
        return self.column.split(":", 1)[1].encode("utf-8")

    @property
    def numeric(self) -> bool:
        return self.min is not None or self.max is not None


@dataclass
class QualityRules:
    """Table name → its column rules (tables without rules get the built-in checks only)."""

    tables: dict[str, list[ColumnRule]] = field(default_factory=dict)

    def for_table(self, table: str) -> list[ColumnRule]:
        """The rules of ``table`` (also found under ``default:<table>``); [] when none are declared."""
        if table in self.tables:
            return self.tables[table]
        if ":" not in table:
            return self.tables.get(f"default:{table}", [])
        return []


def parse_rules(doc: Any, source: str = "<rules>") -> QualityRules:
    """Build QualityRules from the parsed rules document; QualityRulesError naming ``source`` and the key."""
    if doc is None:
        return QualityRules()
    if not isinstance(doc, dict) or set(doc) - {"tables"}:
        raise QualityRulesError(f"rules file {source}: top level must be a mapping with only 'tables'")
    tables = doc.get("tables") or {}
    if not isinstance(tables, dict):
        raise QualityRulesError(f"rules file {source}: 'tables' must map table names to rules")
    out: dict[str, list[ColumnRule]] = {}
    for table, spec in tables.items():
        spec = spec or {}
        if not isinstance(spec, dict) or set(spec) - {"columns"}:
            raise QualityRulesError(f"rules file {source}: table {table} must be a mapping with only 'columns'")
        rules = []
        for column, raw in (spec.get("columns") or {}).items():
            where = f"rules file {source}: table {table} column {column}"
            if not isinstance(column, str) or not _COLUMN.match(column):
                raise QualityRulesError(f"{where}: columns are named family:qualifier")
            raw = raw or {}
            if not isinstance(raw, dict):
                raise QualityRulesError(f"{where}: rules must be a mapping")
            unknown = set(raw) - RULE_KEYS
            if unknown:
                raise QualityRulesError(f"{where}: unknown rule {sorted(unknown)[0]!r} (known: {sorted(RULE_KEYS)})")
            try:
                rule = ColumnRule(
                    column=column,
                    not_null=_bool(raw.get("not_null", False)),
                    regex=_regex(raw.get("regex")),
                    in_set=tuple(str(v) for v in raw["in_set"]) if raw.get("in_set") is not None else None,
                    min_length=_opt(int, raw.get("min_length")),
                    max_length=_opt(int, raw.get("max_length")),
                    min=_opt(float, raw.get("min")),
                    max=_opt(float, raw.get("max")),
                    unique=_bool(raw.get("unique", False)),
                    mostly=float(raw.get("mostly", 1.0)),
                )
            except (TypeError, ValueError, re.error) as exc:
                raise QualityRulesError(f"{where}: {exc}") from None
            if not 0.0 < rule.mostly <= 1.0:
                raise QualityRulesError(f"{where}: mostly {rule.mostly} must be in (0, 1]")
            rules.append(rule)
        out[str(table)] = rules
    return QualityRules(out)


def _bool(value: Any) -> bool:
    if not isinstance(value, bool):
        raise ValueError(f"{value!r} is not true/false")
    return value


def _regex(value: Any) -> str | None:
    if value is None:
        return None
    re.compile(str(value))
    return str(value)


def _opt(kind, value: Any):
    if value is None:
        return None
    if isinstance(value, bool):
        raise ValueError(f"{value!r} is not a number")
    return kind(value)


def load_rules(path: str | os.PathLike[str] | None) -> QualityRules:
    """Read a rules file (``.json`` as JSON, anything else as YAML); no path → no user rules."""
    if path is None:
        return QualityRules()
    p = Path(path)
    try:
        text = p.read_text()
    except OSError as exc:
        raise QualityRulesError(f"rules file {p}: {exc.strerror or exc}") from None
    try:
        if p.suffix == ".json":
            doc = json.loads(text)
        else:
            import yaml  # only YAML rules files need it

            doc = yaml.safe_load(text)
    except Exception as exc:  # JSON and YAML parse errors have many types
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise QualityRulesError(f"rules file {p} is not valid: {first}") from None
    return parse_rules(doc, str(p))


# ---------------------------------------------------------------------------------------------------
# DataFrames


def latest_state(
    spark: SparkSession,
    root: str,
    table: str,
    rules: list[ColumnRule],
    *,
    start_ts: int = 0,
    end_ts: int = LATEST_TIMESTAMP,
) -> DataFrame:
    """The table's latest state over ``[start_ts, end_ts)``, one row per row key: ``row_key`` (hex)
    and, per ruled column, its newest visible value as a string (and ``<col>#number`` for numeric rules)."""
    from pyspark.sql import functions as F  # pyspark and the Spark views load only when a check runs

    from replication.tables.spark_views import scan

    cells = scan(spark, root, table, start_ts=start_ts, end_ts=end_ts, versions=1, ordered=False)
    aggs = [F.lit(1).alias("_one")]
    for rule in rules:
        hit = (F.col("family") == F.lit(rule.family)) & (F.col("qualifier") == F.lit(rule.qualifier))
        aggs.append(F.max(F.when(hit, F.col("value"))).alias(rule.column))
    state = cells.groupBy("row").agg(*aggs)
    out = [F.lower(F.hex("row")).alias(ROW_KEY)]
    for rule in rules:
        text = F.col(f"`{rule.column}`").cast("string")
        out.append(text.alias(rule.column))
        if rule.numeric:
            # Unparsable values become NaN, which fails any bound, rather than null, which GX skips.
            number = F.when(text.isNull(), F.lit(None)).otherwise(
                F.coalesce(text.try_cast("double"), F.lit(float("nan")))
            )
            out.append(number.alias(rule.column + NUMBER_SUFFIX))
    return state.select(*out)


def row_count(spark: SparkSession, root: str, table: str, *, start_ts: int = 0, end_ts: int = LATEST_TIMESTAMP) -> int:
    """Rows with at least one visible cell in ``[start_ts, end_ts)`` (what a scan would return)."""
    from replication.tables.spark_views import scan  # pyspark, pyarrow: only when a check runs

    return (
        scan(spark, root, table, start_ts=start_ts, end_ts=end_ts, versions=1, ordered=False)
        .select("row")
        .distinct()
        .count()
    )


# ---------------------------------------------------------------------------------------------------
# GX


@dataclass
class ExpectationOutcome:
    """One expectation's verdict: its type, column, success and what GX observed."""

    expectation: str
    column: str | None
    success: bool
    observed: Any = None
    unexpected_count: int | None = None


@dataclass
class QualityReport:
    """The outcome of one checkpoint run and where its Data Docs are."""

    table: str
    peer_table: str
    suite: str
    success: bool
    source_rows: int
    peer_rows: int | None
    outcomes: list[ExpectationOutcome]
    data_docs_index: str  # hbrep's offline Data Docs (quality_docs.py): readable without internet
    gx_data_docs_index: str = ""  # GX's own site (its pages load scripts from CDNs)

    @property
    def failed(self) -> list[ExpectationOutcome]:
        return [o for o in self.outcomes if not o.success]

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _expectations(rules: list[ColumnRule], source_rows: int) -> list[Any]:
    import great_expectations.expectations as gxe  # GX (heavy) loads only when a check runs

    out: list[Any] = [
        gxe.ExpectTableRowCountToEqual(value=source_rows),
        gxe.ExpectColumnValuesToNotBeNull(column=ROW_KEY),
        gxe.ExpectColumnValuesToBeUnique(column=ROW_KEY),
    ]
    for r in rules:
        m = r.mostly
        if r.not_null:
            out.append(gxe.ExpectColumnValuesToNotBeNull(column=r.column, mostly=m))
        if r.regex is not None:
            out.append(gxe.ExpectColumnValuesToMatchRegex(column=r.column, regex=r.regex, mostly=m))
        if r.in_set is not None:
            out.append(gxe.ExpectColumnValuesToBeInSet(column=r.column, value_set=list(r.in_set), mostly=m))
        if r.min_length is not None or r.max_length is not None:
            out.append(
                gxe.ExpectColumnValueLengthsToBeBetween(
                    column=r.column, min_value=r.min_length, max_value=r.max_length, mostly=m
                )
            )
        if r.numeric:
            out.append(
                gxe.ExpectColumnValuesToBeBetween(
                    column=r.column + NUMBER_SUFFIX, min_value=r.min, max_value=r.max, mostly=m
                )
            )
        if r.unique:
            out.append(gxe.ExpectColumnValuesToBeUnique(column=r.column, mostly=m))
    return out


def _docs_index(context: Any, project: Path) -> str:
    """The local Data Docs site's index.html (GX reports it as a file:// URL)."""
    for site in context.get_docs_sites_urls():
        url = site.get("site_url") or ""
        if url.startswith("file://"):
            return url[len("file://") :]
    return str(project / "gx" / "uncommitted" / "data_docs" / "local_site" / "index.html")


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", name)


def run_quality(
    spark: SparkSession,
    source_root: str,
    peer_root: str,
    table: str,
    *,
    state_dir: str | os.PathLike[str],
    peer_name: str = "peer",
    peer_table: str | None = None,
    rules: QualityRules | None = None,
    start_ts: int = 0,
    end_ts: int = LATEST_TIMESTAMP,
) -> QualityReport:
    """Run the GX suite of ``table`` on the peer as a checkpoint and build Data Docs under ``state_dir``.

    The suite is rebuilt every run (the source row count over the interval is part of it).
    UnknownTable/UnknownFamily when either side lacks the table.
    """
    os.environ.setdefault("GX_ANALYTICS_ENABLED", "false")
    import great_expectations as gx  # after GX_ANALYTICS_ENABLED is set; heavy, only when a check runs
    from great_expectations.checkpoint import UpdateDataDocsAction

    peer_table = peer_table or table
    column_rules = (rules or QualityRules()).for_table(table)
    source_rows = row_count(spark, source_root, table, start_ts=start_ts, end_ts=end_ts)
    frame = latest_state(spark, peer_root, peer_table, column_rules, start_ts=start_ts, end_ts=end_ts)

    project = Path(state_dir)
    project.mkdir(parents=True, exist_ok=True)
    context = gx.get_context(mode="file", project_root_dir=str(project))
    base = _safe(f"hbrep_{peer_name}_{peer_table}")
    source = context.data_sources.add_or_update_spark(name=f"{base}_spark")
    batch = source.add_dataframe_asset(name=f"{base}_latest").add_batch_definition_whole_dataframe("whole")
    suite = context.suites.add_or_update(
        gx.ExpectationSuite(name=base, expectations=_expectations(column_rules, source_rows))
    )
    definition = context.validation_definitions.add_or_update(
        gx.ValidationDefinition(name=f"{base}_validation", data=batch, suite=suite)
    )
    checkpoint = context.checkpoints.add_or_update(
        gx.Checkpoint(
            name=f"{base}_checkpoint",
            validation_definitions=[definition],
            actions=[UpdateDataDocsAction(name="update_data_docs")],
            result_format={"result_format": "SUMMARY"},
        )
    )
    result = checkpoint.run(batch_parameters={"dataframe": frame})
    outcomes: list[ExpectationOutcome] = []
    peer_rows: int | None = None
    for validation in result.run_results.values():
        for item in validation.results:
            config = item.expectation_config
            kwargs = config.kwargs
            res = item.result or {}
            if config.type == "expect_table_row_count_to_equal":
                peer_rows = res.get("observed_value")
            outcomes.append(
                ExpectationOutcome(
                    expectation=config.type,
                    column=kwargs.get("column"),
                    success=bool(item.success),
                    observed=res.get("observed_value"),
                    unexpected_count=res.get("unexpected_count"),
                )
            )
    gx_index = _docs_index(context, project)
    report = QualityReport(
        table=table,
        peer_table=peer_table,
        suite=base,
        success=bool(result.success),
        source_rows=source_rows,
        peer_rows=peer_rows,
        outcomes=outcomes,
        data_docs_index=str(gx_index),
        gx_data_docs_index=str(gx_index),
    )
    # GX's pages need CDN scripts; the index users are pointed at reads offline (quality_docs.py)
    offline = write_offline_docs(Path(gx_index).parent, report, start_ms=start_ts, end_ms=end_ts, gx_index=gx_index)
    report.data_docs_index = str(offline)
    return report
