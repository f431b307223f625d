"""Where the shared fixtures are (real files HBase wrote, ``../shared/fixtures`` in the project's layout).

Looked for beside the checkout, beside the folder of git worktrees, and beside the repository the
checkout was cloned from, so that a clone made elsewhere (a temporary directory) finds them too.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def _origin_checkout() -> Path | None:
    """The local repository this checkout was cloned from (None for a remote URL or no origin)."""
    try:
        url = subprocess.run(
            ["git", "-C", str(REPO), "remote", "get-url", "origin"], capture_output=True, text=True, timeout=10
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    path = Path(url.removeprefix("file://"))
    return path.resolve() if url and path.is_absolute() and path.is_dir() else None


def fixture_dirs() -> list[Path]:
    """The places the shared fixtures may be, in the order they are tried."""
    dirs = [REPO.parent / "shared" / "fixtures", REPO.parents[1] / "shared" / "fixtures"]
    origin = _origin_checkout()
    if origin is not None:
        dirs.append(origin.parent / "shared" / "fixtures")
    return dirs


def hlog_fixtures_dir() -> Path:
    """The directory of the real HBase 0.94 HLog files; FileNotFoundError naming every place tried."""
    dirs = fixture_dirs()
    found = next((d / "hbase-0.94-hlogs" for d in dirs if (d / "hbase-0.94-hlogs").is_dir()), None)
    if found is None:
        raise FileNotFoundError(f"the HBase 0.94 HLog fixtures are in none of {[str(d) for d in dirs]}")
    return found
