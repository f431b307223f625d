"""``ageOfLastShippedOp`` as the histogram HBase's sources publish it (``MutableHistogram``).

HBase's ``MetricsReplicationSourceSourceImpl`` (per source, ``source.<queueId>.ageOfLastShippedOp``) and
``MetricsReplicationGlobalSourceSourceImpl`` (``source.ageOfLastShippedOp``) hold the age in a
``MutableHistogram``: every ``setLastShippedAge`` adds one value. Its snapshot writes the attributes
``<Name>_num_ops`` (values ever added), ``_min``, ``_max``, ``_mean``, ``_25th_percentile``, ``_median``,
``_75th_percentile``, ``_90th_percentile``, ``_95th_percentile``, ``_98th_percentile``, ``_99th_percentile``
and ``_99.9th_percentile``, where ``<Name>`` is the metric's name with its first letter capitalised
(``StringUtils.capitalize`` in ``MutableHistogram``'s constructor, HBase 2.6): ``Source.ageOfLastShippedOp_max``.

hbrep keeps, per queue, how many ages its ship tasks set and the last :data:`KEEP_SAMPLES` of them
(:func:`record_age`, called where the metrics store folds a ship task's age in); the figures other than
``_num_ops`` are computed over those kept values (exact ranks, where HBase's ``FastLongHistogram`` bins).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any

KEEP_SAMPLES = 1024
SAMPLES_FIELD = "ageOfLastShippedOpSamples"
"""The queue entry's list of the last ages set (metrics store) and the status JSON's field for it."""
NUM_OPS_FIELD = "ageOfLastShippedOp_num_ops"
"""The queue entry's count of ages ever set (a counter: summed into the global source's)."""

# (suffix, quantile) of MutableHistogram.updateSnapshotMetrics, in its order
PERCENTILES: tuple[tuple[str, float], ...] = (
    ("_25th_percentile", 0.25),
    ("_median", 0.50),
    ("_75th_percentile", 0.75),
    ("_90th_percentile", 0.90),
    ("_95th_percentile", 0.95),
    ("_98th_percentile", 0.98),
    ("_99th_percentile", 0.99),
    ("_99.9th_percentile", 0.999),
)
SUFFIXES: tuple[str, ...] = ("_num_ops", "_min", "_max", "_mean", *(suffix for suffix, _ in PERCENTILES))


def record_age(entry: dict[str, Any], age: int) -> None:
    """Add one set age to a queue's metrics entry: its count goes up by one and the age joins the kept
    values (the oldest dropped beyond :data:`KEEP_SAMPLES`)."""
    samples = [int(v) for v in entry.get(SAMPLES_FIELD, [])]
    samples.append(int(age))
    entry[SAMPLES_FIELD] = samples[-KEEP_SAMPLES:]
    entry[NUM_OPS_FIELD] = int(entry.get(NUM_OPS_FIELD, 0)) + 1


def histogram_name(prefix: str) -> str:
    """The attribute stem HBase's /jmx shows for ``<prefix>ageOfLastShippedOp`` (``source.`` ->
    ``Source.ageOfLastShippedOp``; ``source.1.`` -> ``Source.1.ageOfLastShippedOp``)."""
    name = prefix + "ageOfLastShippedOp"
    return name[:1].upper() + name[1:]


def _rank(ordered: Sequence[int], quantile: float) -> int:
    # nearest rank: the smallest value with at least `quantile` of the values at or below it
    return ordered[max(0, math.ceil(quantile * len(ordered)) - 1)]


def histogram_attributes(prefix: str, samples: Iterable[int], num_ops: int) -> dict[str, int]:
    """The attributes of one ``ageOfLastShippedOp`` histogram as HBase's /jmx writes them, in its order:
    ``num_ops`` as given, the others over ``samples`` (all 0 when there are none, as an empty snapshot)."""
    ordered = sorted(int(v) for v in samples)
    stem = histogram_name(prefix)
    figures: dict[str, int] = {stem + "_num_ops": int(num_ops)}
    if not ordered:
        figures.update({stem + suffix: 0 for suffix in SUFFIXES[1:]})
        return figures
    figures[stem + "_min"] = ordered[0]
    figures[stem + "_max"] = ordered[-1]
    figures[stem + "_mean"] = sum(ordered) // len(ordered)
    for suffix, quantile in PERCENTILES:
        figures[stem + suffix] = _rank(ordered, quantile)
    return figures
