"""Data Docs that read offline: one self-contained HTML page per suite and an index, beside GX's own site.

GX's Data Docs load Bootstrap, jQuery, bootstrap-table and Vega from CDNs and fill their result tables with
those scripts; on a machine without internet (HBase sites often are air-gapped) the tables stay empty. The
pages written here carry their style inline and no script or outside link, and show every expectation's
verdict, its observed value and unexpected count, the interval checked and the row counts. They are
rendered with Jinja2 (autoescaped) into ``<gx project>/uncommitted/data_docs/offline/``.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from jinja2 import Environment, select_autoescape

OFFLINE_DIR = "offline"

_STYLE = """
body { font-family: system-ui, sans-serif; margin: 1.2rem; color: #1d2433; }
table { border-collapse: collapse; font-size: .9rem; } th, td { border: 1px solid #d9dee7; padding: .25rem .55rem; }
th { background: #eef1f6; text-align: left; } .ok { color: #137333; font-weight: 600; }
.bad { color: #b3261e; font-weight: 600; } .meta { color: #5b6478; }
"""

_SUITE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{{ r.suite }} · hbrep Data Docs</title>
<style>{{ style }}</style></head><body>
<p><a href="index.html">All suites</a></p>
<h1>{{ r.suite }}</h1>
<p class="{{ 'ok' if r.success else 'bad' }}">{{ 'Passed' if r.success else 'Failed' }}:
{{ passed }} of {{ r.outcomes|length }} expectations met</p>
<p class="meta">table {{ r.table }} on the peer as {{ r.peer_table }} · interval {{ interval }} ·
source rows {{ r.source_rows }} · peer rows {{ r.peer_rows }} · checked {{ when }}</p>
<table><thead><tr><th>Expectation</th><th>Column</th><th>Verdict</th><th>Observed</th><th>Unexpected</th></tr></thead>
<tbody>{% for o in r.outcomes %}
<tr><td>{{ o.expectation }}</td><td>{{ o.column or '(table)' }}</td>
<td class="{{ 'ok' if o.success else 'bad' }}">{{ 'met' if o.success else 'NOT met' }}</td>
<td>{{ o.observed if o.observed is not none else '' }}</td>
<td>{{ o.unexpected_count if o.unexpected_count is not none else '' }}</td></tr>{% endfor %}
</tbody></table>
<p class="meta">GX's own Data Docs (they need internet for their scripts): <code>{{ gx_index }}</code></p>
</body></html>
"""

_INDEX = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>hbrep Data Docs</title><style>{{ style }}</style></head><body>
<h1>Data quality of replicated tables</h1>
<table><thead><tr><th>Suite</th><th>Table</th><th>Verdict</th><th>Interval</th><th>Checked</th></tr></thead>
<tbody>{% for s in suites %}
<tr><td><a href="{{ s.page }}">{{ s.suite }}</a></td><td>{{ s.table }}</td>
<td class="{{ 'ok' if s.success else 'bad' }}">{{ 'passed' if s.success else 'failed' }}</td>
<td>{{ s.interval }}</td><td>{{ s.when }}</td></tr>{% endfor %}
</tbody></table></body></html>
"""

_ENV = Environment(autoescape=select_autoescape(default=True, default_for_string=True))


def _when(ms: int | None) -> str:
    if not ms:
        return "the start"
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(ms / 1000))


def _interval(start_ms: int, end_ms: int) -> str:
    end = "now" if end_ms >= 2**62 else _when(end_ms)
    return f"{_when(start_ms)} → {end}"


def write_offline_docs(site: Path, report: Any, *, start_ms: int, end_ms: int, gx_index: str) -> Path:
    """Write ``report``'s page and rebuild the index under ``site``; return the index's path."""
    folder = site / OFFLINE_DIR
    folder.mkdir(parents=True, exist_ok=True)
    now = int(time.time() * 1000)
    outcomes = list(report.outcomes)
    page = f"{report.suite}.html"
    html = _ENV.from_string(_SUITE).render(
        r=report,
        style=_STYLE,
        passed=sum(1 for o in outcomes if o.success),
        when=_when(now),
        interval=_interval(start_ms, end_ms),
        gx_index=gx_index,
    )
    (folder / page).write_text(html, encoding="utf-8")
    summary = {"suite": report.suite, "table": report.table, "success": bool(report.success), "page": page,
               "interval": _interval(start_ms, end_ms), "when": _when(now)}  # fmt: skip
    (folder / f"{report.suite}.json").write_text(json.dumps(summary), encoding="utf-8")
    suites = sorted(
        (json.loads(p.read_text(encoding="utf-8")) for p in folder.glob("*.json")), key=lambda s: s["suite"]
    )
    index = folder / "index.html"
    index.write_text(_ENV.from_string(_INDEX).render(suites=suites, style=_STYLE), encoding="utf-8")
    return index
