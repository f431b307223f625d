"""Server names, WAL file names and where WALs live (spec §2: ServerName, AbstractFSWAL, AbstractFSWALProvider).

- Server name: ``host,port,startcode`` (host lower-cased; parsed at the first and last comma).
- WAL file name: ``URLEncode(prefix) + "." + filenum [+ ".meta"]`` where prefix is the server name (plus
  ``.meta`` for the meta WAL): ``rs1%2C16020%2C1700000000000.1700000123456``.
- Live WALs: ``<root>/WALs/<server>/``; archived: ``<root>/oldWALs/`` (or ``oldWALs/<server>/``); a dead
  server's directory while it is split: ``WALs/<server>-splitting/``.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Protocol, TypeVar
from urllib.parse import quote_plus, unquote_plus

from replication.fs import FileSystem
from replication.wal.errors import InvalidWALName

WALS_DIR = "WALs"  # HConstants.HREGION_LOGDIR_NAME
OLD_WALS_DIR = "oldWALs"  # HConstants.HREGION_OLDLOGDIR_NAME
SPLITTING_EXT = "-splitting"
META_WAL_PROVIDER_ID = ".meta"
_SERVER_RE = re.compile(r"^([^,]+),(\d+),(-?\d+)")
_WAL_NAME_RE = re.compile(r".*\.\d*(.meta)*$")  # validateWALFilename, "." unescaped as in HBase


@dataclass(frozen=True, slots=True, order=True)
class ServerName:
    """A region server's name: host, port and start code (ms)."""

    host: str
    port: int
    start_code: int

    @classmethod
    def parse(cls, text: str) -> ServerName:
        """Parse ``host,port,startcode`` (split at the first and last comma); InvalidWALName if malformed."""
        first, last = text.find(","), text.rfind(",")
        if first <= 0 or last == first:
            raise InvalidWALName(f"bad server name {text!r}: expected host,port,startcode")
        host, port, code = text[:first], text[first + 1 : last], text[last + 1 :]
        if not port.isdigit() or not code.lstrip("-").isdigit():
            raise InvalidWALName(f"bad server name {text!r}: port and startcode must be numbers")
        return cls(host.lower(), int(port), int(code))

    def __str__(self) -> str:
        return f"{self.host},{self.port},{self.start_code}"


def _url_encode(text: str) -> str:
    # java.net.URLEncoder: letters, digits, ". - * _" stay; space → "+"; everything else %XX (UTF-8).
    return quote_plus(text, safe="*").replace("~", "%7E")


def wal_file_name(server: ServerName | str, filenum: int, *, meta: bool = False) -> str:
    """The file name AbstractFSWAL.computeFilename gives WAL number ``filenum`` of ``server``."""
    prefix = str(server) + (META_WAL_PROVIDER_ID if meta else "")
    return f"{_url_encode(prefix)}.{filenum}" + (META_WAL_PROVIDER_ID if meta else "")


def is_meta_wal(name: str) -> bool:
    """True for a hbase:meta WAL (the name ends in ``.meta``); those are never replicated."""
    return posixpath.basename(name).endswith(META_WAL_PROVIDER_ID)


def wal_start_timestamp(name: str) -> int:
    """The start timestamp (the filenum) in a WAL name, as WAL.getTimestamp; InvalidWALName if none."""
    base = posixpath.basename(name)
    parts = base.split(".")
    stamp = parts[-2] if len(parts) > 1 and parts[-1] in ("meta", "syncrep") else parts[-1]
    if not stamp.isdigit():
        raise InvalidWALName(f"bad WAL file name {base!r}: no start timestamp")
    return int(stamp)


def wal_group_id(name: str) -> str:
    """The WAL group (prefix) of a WAL name, as getWALPrefixFromWALName: URL-encoded, without filenum.

    HBase strips ``.meta`` with String.replaceAll, so "." matches any character there; we do the same
    so group ids agree with HBase's.
    """
    base = re.sub(".meta", "", posixpath.basename(name))
    cut = base.rfind(".")
    if cut <= 0:
        raise InvalidWALName(f"bad WAL file name {name!r}: no '.<filenum>' suffix")
    return base[:cut]


def server_of_wal(name: str) -> str:
    """The server name (``host,port,startcode``) a WAL belongs to, decoded from its prefix."""
    base = posixpath.basename(name)
    if not _WAL_NAME_RE.match(base):
        raise InvalidWALName(f"bad WAL file name {base!r}")
    decoded = unquote_plus(wal_group_id(base))
    match = _SERVER_RE.match(decoded)
    if not match:
        raise InvalidWALName(f"bad WAL file name {base!r}: prefix {decoded!r} is not a server name")
    return match.group(0)


def is_wal_name(name: str) -> bool:
    """True when ``name`` is a WAL file name of some server (``server_of_wal`` can read it)."""
    try:
        server_of_wal(name)
    except InvalidWALName:
        return False
    return True


def wal_dir(root: str, server: ServerName | str) -> str:
    """``<root>/WALs/<server>``: where a live server writes its WALs (directory names are not encoded)."""
    return posixpath.join(root, WALS_DIR, str(server))


def old_wal_dir(root: str) -> str:
    """``<root>/oldWALs``: where closed WALs are archived."""
    return posixpath.join(root, OLD_WALS_DIR)


def wal_candidates(root: str, name: str, servers: Iterable[ServerName | str] = ()) -> list[str]:
    """Every path where WAL ``name`` may be, in the order find_wal tries them."""
    base = posixpath.basename(name)
    owner = server_of_wal(base)
    paths = [
        posixpath.join(wal_dir(root, owner), base),
        posixpath.join(old_wal_dir(root), base),
        posixpath.join(old_wal_dir(root), owner, base),
    ]
    for server in servers:
        paths.append(posixpath.join(wal_dir(root, server), base))
        paths.append(posixpath.join(root, WALS_DIR, f"{server}{SPLITTING_EXT}", base))
    seen: set[str] = set()
    return [p for p in paths if not (p in seen or seen.add(p))]


def find_wal(fs: FileSystem, root: str, name: str, servers: Iterable[ServerName | str] = ()) -> str | None:
    """The current path of WAL ``name`` or None: WALs/<owner>/, oldWALs/, oldWALs/<owner>/, then
    WALs/<dead>/ and WALs/<dead>-splitting/ for each of ``servers`` (findArchivedLog, locateRecoveredPaths).
    """
    for path in wal_candidates(root, name, servers):
        if fs.exists(path):
            return path
    return None


class _HasName(Protocol):
    @property
    def name(self) -> str: ...


NamedWal = TypeVar("NamedWal", bound=_HasName)


def order_wals(wals: Iterable[NamedWal]) -> list[list[NamedWal]]:
    """The queue's WALs grouped by WAL group, each group ordered by start timestamp (then name)."""
    groups: dict[str, list[NamedWal]] = {}
    for wal in wals:
        groups.setdefault(wal_group_id(wal.name), []).append(wal)
    return [sorted(group, key=lambda w: (wal_start_timestamp(w.name), w.name)) for _, group in sorted(groups.items())]
