"""Reading Python source in tests (importable as ``python_source``: pytest puts tests/ on sys.path)."""

from __future__ import annotations

import ast


def parse_python(source: str) -> ast.Module:
    """``ast.parse(source)``, tried again (up to 3 times) on CPython 3.11's spurious ``SystemError: AST
    constructor recursion depth mismatch``: the AST constructor's depth counter is shared by the threads of
    the process (CPython gh-106905), and 3.11's traceback formatting parses source lines in whatever thread
    formats one (a Spark or ZooKeeper client thread logging an error). tests/zk/test_only_zk_writes.py failed
    so in a fresh-clone make test at 6995314."""
    for _ in range(2):
        try:
            return ast.parse(source)
        except SystemError:
            pass
    return ast.parse(source)
