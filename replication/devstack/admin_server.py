"""One long-lived JVM of hbrep's AdminTool (``AdminTool serve``) per real HBase cluster, for the tests and
devstack code that call HBase's Admin API hundreds of times: each call then costs a Configuration and a
Connection in that JVM, not a JVM start and the loading of HBase's client classes (about 1.2 s of CPU a
call on this project's 2-core machine, measured with ``AdminTool wal``).

The protocol is AdminTool's (see its ``serve``): a JSON line per command on the JVM's stdin, a JSON line per
answer on its stdout; its stderr (HBase's client logging) goes to a log file. A JVM that dies is started
again at the next call; a command that outlasts its timeout stops the JVM (it may hold a lock or a
connection in a bad state) and raises.
"""

from __future__ import annotations

import json
import queue
import subprocess
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from replication.processes import dies_with_parent


class AdminServerError(RuntimeError):
    """A command the served AdminTool refused, or a JVM that died or did not answer in time: one line."""


class AdminServer:
    """A served AdminTool started lazily by :meth:`call` (``command()`` gives its ``java`` command line, with
    ``serve``); one call at a time (a lock); :meth:`close` ends it.

    ``configuration()`` names the configuration the JVM was started on (e.g. its site file's modification
    time): when it changes, the next call starts a new JVM. Each command reads the site file again, but
    some of HBase's state is made once per JVM from the configuration of its first use (a compression
    codec, for one: a WAL of ZSTD values read in a JVM that had read others before failed).
    """

    def __init__(
        self, command: Callable[[], Sequence[str]], log_file: Path, configuration: Callable[[], object] = lambda: None
    ):
        self.command = command
        self.configuration = configuration
        self._started_on: object = None
        self.log_file = log_file
        self._lock = threading.Lock()
        self._process: subprocess.Popen[str] | None = None
        self._answers: queue.Queue[str | None] = queue.Queue()

    @property
    def pid(self) -> int | None:
        """The served JVM's pid while it runs, else None."""
        process = self._process
        return process.pid if process is not None and process.poll() is None else None

    def busy(self) -> bool:
        """True while another thread's command runs (the caller may then run its own in a process of its own)."""
        return self._lock.locked()

    def call(self, args: Sequence[str], *, stdin: str | None = None, timeout: float = 300.0) -> Any:
        """Run one AdminTool command in the served JVM; its JSON answer. AdminServerError (one line) when the
        command failed, the JVM died, or no answer came within ``timeout`` seconds."""
        request = json.dumps({"args": list(args), "stdin": stdin}) + "\n"
        with self._lock:
            process = self._running()
            try:
                assert process.stdin is not None
                process.stdin.write(request)
                process.stdin.flush()
            except OSError as exc:
                self._stop()
                gone = f"AdminTool {args[0]}: the served JVM is gone ({exc}); see {self.log_file}"
                raise AdminServerError(gone) from None
            try:
                line = self._answers.get(timeout=timeout)
            except queue.Empty:
                self._stop()
                raise AdminServerError(f"AdminTool {' '.join(args[:2])} did not finish within {timeout:.0f}s") from None
            if line is None:
                self._stop()
                raise AdminServerError(f"AdminTool {args[0]}: the served JVM exited; see {self.log_file}") from None
        answer = json.loads(line)
        if not answer["ok"]:
            raise AdminServerError(answer["error"])
        return answer["out"]

    def close(self) -> None:
        """End the JVM (its stdin closed, then SIGKILL after 10 s); a later :meth:`call` starts a new one."""
        with self._lock:
            self._stop()

    def _running(self) -> subprocess.Popen[str]:
        configuration = self.configuration()
        if self._process is not None and self._process.poll() is None and configuration == self._started_on:
            return self._process
        self._stop()
        self._started_on = configuration
        self.log_file.parent.mkdir(parents=True, exist_ok=True)
        with open(self.log_file, "ab") as log:
            process = subprocess.Popen(list(self.command()), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log,
                                       text=True, bufsize=1, preexec_fn=dies_with_parent())  # fmt: skip
        answers: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=_read_answers, args=(process, answers), daemon=True, name="admin-answers").start()
        self._process, self._answers = process, answers
        return process

    def _stop(self) -> None:
        process, self._process = self._process, None
        if process is None:
            return
        try:
            if process.stdin is not None:
                process.stdin.close()
            process.wait(timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            process.kill()
            process.wait()


def _read_answers(process: subprocess.Popen[str], answers: queue.Queue[str | None]) -> None:
    """Each answer line of ``process`` into ``answers``, then None when its stdout ends."""
    assert process.stdout is not None
    for line in process.stdout:
        if line.strip():
            answers.put(line)
    answers.put(None)
