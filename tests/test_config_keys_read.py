"""Issue 23: every key declared in ``replication.config.DEFAULTS`` is read by some code, else removed.

A key counts as read when it appears in hbrep's code (replication/, dags/, plugins/; not config.py,
which declares them) as a string constant that is not a docstring, as a concatenation of module
string constants (``PREFIX + "cert"``), or as its environment override's name (``HBREP__a__b``, which
the DAG files read at parse time). Comments and docstrings never count, so a key named only in
prose is flagged.
"""

from __future__ import annotations

import ast
from pathlib import Path

from replication.config import DEFAULTS, ENV_OVERRIDE_PREFIX

REPO = Path(__file__).resolve().parents[1]
CODE_DIRS = ("replication", "dags", "plugins")
DECLARING_FILE = REPO / "replication" / "config.py"


def _docstring_nodes(tree: ast.AST) -> set[int]:
    ids = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                ids.add(id(first.value))
    return ids


def _strings_in(path: Path) -> set[str]:
    """Every non-docstring string constant of ``path``, and module-constant concatenations folded."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skip = _docstring_nodes(tree)
    module_strings: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    module_strings[target.id] = node.value.value

    def fold(node: ast.AST) -> str | None:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return node.value
        if isinstance(node, ast.Name):
            return module_strings.get(node.id)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            left, right = fold(node.left), fold(node.right)
            return left + right if left is not None and right is not None else None
        return None

    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip:
            found.add(node.value)
            if node.value.startswith(ENV_OVERRIDE_PREFIX):  # read from its environment override
                found.add(node.value.removeprefix(ENV_OVERRIDE_PREFIX).replace("__", "."))
        elif isinstance(node, ast.BinOp):
            folded = fold(node)
            if folded is not None:
                found.add(folded)
    return found


def _code_strings() -> set[str]:
    strings: set[str] = set()
    for folder in CODE_DIRS:
        for path in (REPO / folder).rglob("*.py"):
            if path != DECLARING_FILE and "proto" not in path.parts:
                strings |= _strings_in(path)
    return strings


def test_every_declared_key_is_read_by_some_code():
    strings = _code_strings()
    unread = sorted(key for key in DEFAULTS if key not in strings)
    assert unread == [], f"declared in replication/config.py but read by no code: {unread}"


def test_the_scan_flags_a_key_named_only_in_prose(tmp_path):
    module = tmp_path / "m.py"
    module.write_text('"""Reads hbase.example.key."""\n# hbase.example.other\nPREFIX = "hbrep.x."\nK = PREFIX + "y"\n')
    found = _strings_in(module)
    assert "hbase.example.key" not in found and "hbase.example.other" not in found
    assert "hbrep.x.y" in found
