"""Shared by the bad-input tests: run ``hbrep`` as a user would (a subprocess), build WAL files."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping


def hbrep(*args: str, env: Mapping[str, str] | None = None, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """``hbrep ARGS...`` in a fresh interpreter; ``env`` adds variables (e.g. ``HBREP__key`` overrides)."""
    full_env = {k: v for k, v in os.environ.items() if not k.startswith(("HBREP_", "HBREP__"))}
    full_env.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "replication.cli", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=full_env,
    )


def error_line(result: subprocess.CompletedProcess[str]) -> str:
    """The one line a failed command printed on stderr (fails loudly when there is more or none)."""
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert result.returncode != 0, f"expected a failure, got rc=0: {result.stdout}"
    assert len(lines) == 1, f"expected exactly one stderr line, got: {result.stderr!r}"
    return lines[0]
