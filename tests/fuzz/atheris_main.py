"""One atheris (libFuzzer) run of one target: ``python atheris_main.py TARGET [libFuzzer flags] CORPUS_DIR``.

hbrep's modules are instrumented for coverage; an ``HbrepError`` is an accepted outcome, any other
exception is a crash (libFuzzer writes the input as ``crash-*``); libFuzzer's ``-timeout`` and
``-rss_limit_mb`` turn hangs and memory blow-ups into crashes too.
"""

from __future__ import annotations

import contextlib
import sys
from pathlib import Path

import atheris

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(1, str(Path(__file__).resolve().parents[1]))  # tests/: shared_fixtures
with atheris.instrument_imports(include=["replication"]):
    from targets import TARGETS

    from replication.errors import HbrepError


def main() -> None:
    target = TARGETS[sys.argv[1]]

    def one_input(data: bytes) -> None:
        with contextlib.suppress(HbrepError):
            target(data)

    atheris.Setup([sys.argv[0], *sys.argv[2:]], one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
