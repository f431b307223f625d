"""Only replication/zk/ writes znodes (issue 46): every other module reads and writes ZooKeeper state through
the storage classes and recipes in zk/ (queue and peer storage, the ship lease, lag targets, replicated-through
marks, consistency tokens, dead-server marks, the cluster's registrations).

The checker walks every module under replication/ outside replication/zk/ with ``ast`` and reports each
use (a call, or a reference such as ``zk.retry(zk.create, ...)``) of a kazoo write method on a ZooKeeper
client. A receiver counts as a ZooKeeper client when

- its name (or the attribute's, for ``self.zk`` / ``source.zk``) says so: ``zk``, ``zk*``, ``_zk*``, ``*_zk``,
  or one containing ``kazoo`` / ``zookeeper``; or
- the module binds that name to a KazooClient: a parameter or variable annotated ``KazooClient``, a
  variable or ``self.<attr>`` assigned from ``KazooClient(...)``, ``connect(...)`` or another such name,
  or ``with connected(...) as <name>``.

So ``fs.delete``, ``self.fs.create``, ``registry.create(desc)``, ``stopped.set()`` or webhdfs's
``self.client.delete`` (an ``hdfs`` client) are not flagged, while a ``client: KazooClient`` parameter is.
A filesystem (or other non-ZooKeeper) receiver that the rules above would flag anyway goes in
``NOT_ZOOKEEPER`` with the reason; none does today.

The dev stack (replication/devstack/) is checked too: it writes no znode of its own.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

from python_source import parse_python

REPO = Path(__file__).resolve().parents[2]
PACKAGE = REPO / "replication"
ZK_ROOM = PACKAGE / "zk"

# kazoo.client.KazooClient's methods that change znodes (transaction() returns the multi that does)
WRITE_METHODS = frozenset(
    {"create", "set", "delete", "ensure_path", "transaction", "set_acls", "create_async", "set_async", "delete_async"}
)
_ZK_NAME = re.compile(r"^_?zk|_zk$|kazoo|zookeeper", re.IGNORECASE)
_ZK_FACTORIES = frozenset({"KazooClient", "connect", "connected"})  # kazoo's class, replication.zk.client's

# Receivers the naming/binding rules would take for a ZooKeeper client but that are not one:
# (module path relative to the repository, receiver as ast.unparse spells it) -> why it is not ZooKeeper.
# Only filesystem (or other non-ZooKeeper) receivers belong here; a real znode write moves to zk/ instead.
NOT_ZOOKEEPER: dict[tuple[str, str], str] = {}


@dataclass(frozen=True)
class Violation:
    module: str
    line: int
    call: str  # e.g. "zk.create"

    def __str__(self) -> str:
        return f"{self.module}:{self.line}: {self.call}"


def _tail(node: ast.expr) -> str | None:
    """``zk`` for ``zk``, ``zk`` for ``self.zk`` / ``source.zk``; None for anything else (calls, subscripts)."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def _mentions_kazoo(annotation: ast.expr | None) -> bool:
    return annotation is not None and "KazooClient" in ast.unparse(annotation)


def _is_zk_value(value: ast.expr | None, bound: set[str]) -> bool:
    """A ``KazooClient(...)``/``connect(...)`` call, or a name already bound to a ZooKeeper client."""
    if isinstance(value, ast.Call):
        return _tail(value.func) in _ZK_FACTORIES
    if value is not None:
        text = ast.unparse(value)
        return text in bound or (_tail(value) is not None and bool(_ZK_NAME.search(_tail(value) or "")))
    return False


def _zk_bound_names(tree: ast.AST) -> set[str]:
    """Receivers (``name`` or ``self.attr`` as unparsed) the module binds to a KazooClient."""
    bound: set[str] = set()
    for _ in range(3):  # a few passes so that `self.client = client` follows `client: KazooClient`
        for node in ast.walk(tree):
            if isinstance(node, ast.arg) and _mentions_kazoo(node.annotation):
                bound.add(node.arg)
            elif isinstance(node, ast.AnnAssign) and _mentions_kazoo(node.annotation):
                bound.add(ast.unparse(node.target))
            elif isinstance(node, ast.Assign) and _is_zk_value(node.value, bound):
                bound.update(ast.unparse(t) for t in node.targets if isinstance(t, (ast.Name, ast.Attribute)))
            elif (
                isinstance(node, ast.withitem)
                and node.optional_vars is not None
                and _is_zk_value(node.context_expr, bound)
            ):
                bound.add(ast.unparse(node.optional_vars))
    return bound


def znode_writes(source: str, module: str = "<string>") -> list[Violation]:
    """Every use of a kazoo write method on a ZooKeeper client in ``source`` (see the module doc)."""
    tree = parse_python(source)
    bound = _zk_bound_names(tree)
    found = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Attribute) and node.attr in WRITE_METHODS):
            continue
        receiver = ast.unparse(node.value)
        tail = _tail(node.value)
        is_zk = receiver in bound or (tail is not None and bool(_ZK_NAME.search(tail)))
        if is_zk and (module, receiver) not in NOT_ZOOKEEPER:
            found.append(Violation(module, node.lineno, f"{receiver}.{node.attr}"))
    return sorted(found, key=lambda v: (v.module, v.line, v.call))


def _modules_outside_zk() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py") if ZK_ROOM not in p.parents)


def test_no_module_outside_zk_writes_znodes():
    violations = []
    for path in _modules_outside_zk():
        violations += znode_writes(path.read_text(encoding="utf-8"), str(path.relative_to(REPO)))
    assert not violations, "znode writes outside replication/zk/ (use or add a storage class there):\n" + "\n".join(
        map(str, violations)
    )


def test_the_allow_list_names_only_receivers_that_still_exist():
    sources = {str(p.relative_to(REPO)): p.read_text(encoding="utf-8") for p in _modules_outside_zk()}
    for (module, receiver), why in NOT_ZOOKEEPER.items():
        assert why, f"{module}: {receiver} is allow-listed without a reason"
        assert module in sources and f"{receiver}." in sources[module], f"stale allow-list entry {module}: {receiver}"


VIOLATING = """
from kazoo.client import KazooClient
from replication.zk.client import connect, connected

def mark(zk, paths, server):
    zk.ensure_path(paths.dead_servers)
    zk.create(paths.dead_server(server), b"1")

def clear(client: KazooClient, path):
    client.delete(path)
    client.retry(client.set, path, b"")

def multi(key):
    with connected(key) as conn:
        tx = conn.transaction()
        tx.create("/a", b"")
        tx.commit()

class Server:
    def __init__(self, key):
        self.session = connect(key)
        self._zk = self.session

    def stop(self):
        self.session.delete("/rs/me")
        self._zk.set_async("/x", b"")
        self.source.zk.set_acls("/x", [])
"""

NOT_VIOLATING = """
from hdfs import InsecureClient

def clean(fs, source, registry, stopped, desc):
    fs.delete("/wal")
    source.fs.create("/wal")
    registry.create(desc)
    stopped.set()
    SparkSession.builder.remote("sc://x").create()

class WebHdfs:
    def __init__(self, url):
        self.client = InsecureClient(url)

    def delete(self, path):
        return self.client.delete(path, recursive=True)

def reads(zk, path):
    zk.get(path)
    zk.get_children(path)
    zk.exists(path)
    zk.retry(zk.get, path)
"""


def test_the_checker_finds_each_kind_of_znode_write():
    found = {(v.line, v.call) for v in znode_writes(VIOLATING)}
    assert found == {
        (6, "zk.ensure_path"),
        (7, "zk.create"),
        (10, "client.delete"),
        (11, "client.set"),  # the write handed to retry is what counts (retry itself writes nothing)
        (15, "conn.transaction"),
        (25, "self.session.delete"),
        (26, "self._zk.set_async"),
        (27, "self.source.zk.set_acls"),
    }


def test_the_checker_leaves_filesystem_and_other_receivers_alone():
    assert znode_writes(NOT_VIOLATING) == []


def test_the_allow_list_silences_only_its_own_module_and_receiver(monkeypatch):
    source = "def f(zk_like_fs):\n    zk_like_fs.delete('/tmp/x')\n"
    assert [str(v) for v in znode_writes(source, "replication/x.py")] == ["replication/x.py:2: zk_like_fs.delete"]
    monkeypatch.setitem(NOT_ZOOKEEPER, ("replication/x.py", "zk_like_fs"), "a file system named like a client")
    assert znode_writes(source, "replication/x.py") == []
    assert len(znode_writes(source, "replication/y.py")) == 1
