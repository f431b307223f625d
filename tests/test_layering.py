"""The layering of docs/architecture.md holds: `lint-imports` with the contracts in pyproject.toml.

The contracts: the library's rooms in their order (a room imports only rooms below it), no Airflow in
``replication/``, and ``devstack/`` imported by nothing in the library. A broken contract fails this test
with lint-imports' own report of the imports that break it.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _lint_imports(*args: str, cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "plugins"), str(REPO)])}
    exe = Path(sys.executable).with_name("lint-imports")
    return subprocess.run([str(exe), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


def test_every_layering_contract_is_kept():
    done = _lint_imports()
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert "0 broken" in done.stdout, done.stdout[-2000:]


def test_a_room_importing_a_room_above_it_breaks_the_contract(tmp_path):
    # the same kind of contract over a two-room package with an upward import: lint-imports must refuse it
    pkg = tmp_path / "rooms"
    (pkg / "low").mkdir(parents=True)
    (pkg / "high").mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "high" / "__init__.py").write_text("")
    (pkg / "low" / "__init__.py").write_text("from rooms import high  # upward\n")
    (tmp_path / ".importlinter").write_text(
        "[importlinter]\nroot_package = rooms\n\n[importlinter:contract:1]\nname = rooms\ntype = layers\n"
        "layers =\n    rooms.high\n    rooms.low\n"
    )
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    exe = Path(sys.executable).with_name("lint-imports")
    done = subprocess.run([str(exe)], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode != 0
    assert "rooms.low is not allowed to import rooms.high" in done.stdout
