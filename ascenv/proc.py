"""Run external commands: the only module that imports ``subprocess``.

A command that is missing, times out or cannot be started is *data* (a ``Completed`` with a
status), never an exception: a missing ``npu-smi`` is a finding, not a traceback.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Callable, Optional

OK = "ok"  # ran and exited 0
EXIT = "exit"  # ran and exited non-zero
NOT_FOUND = "not-found"  # the program is not on PATH (or the path does not exist)
TIMEOUT = "timeout"  # killed after the timeout
OS_ERROR = "os-error"  # could not be started (permission, bad format, ...)


@dataclass(frozen=True)
class Completed:
    argv: tuple[str, ...]
    status: str
    returncode: Optional[int]
    stdout: str
    stderr: str
    duration: float

    @property
    def ok(self) -> bool:
        return self.status == OK

    @property
    def command(self) -> str:
        return " ".join(shlex.quote(a) for a in self.argv)

    def describe(self) -> str:
        """A complete, readable account of the run (the shape pre-commit uses)."""

        def block(text: str) -> str:
            text = text.rstrip("\n")
            return " (none)" if not text else "\n" + "\n".join("    " + line for line in text.splitlines())

        head = {
            OK: "exited 0",
            EXIT: f"exited {self.returncode}",
            NOT_FOUND: "not found",
            TIMEOUT: f"timed out after {self.duration:.1f} s",
            OS_ERROR: "could not be started",
        }[self.status]
        return f"command: {self.command}\nresult: {head}\nstdout:{block(self.stdout)}\nstderr:{block(self.stderr)}"


Runner = Callable[..., Completed]


def run(
    argv: Sequence[str],
    *,
    timeout: float,
    env: Optional[Mapping[str, str]] = None,
    cwd: Optional[str] = None,
    input: Optional[str] = None,
) -> Completed:
    """Run ``argv`` with a timeout and capture its output as text (undecodable bytes replaced)."""
    argv = tuple(str(a) for a in argv)
    start = time.monotonic()

    def done(status: str, code: Optional[int], out: bytes | str | None, err: bytes | str | None) -> Completed:
        return Completed(argv, status, code, _text(out), _text(err), time.monotonic() - start)

    try:
        proc = subprocess.run(
            argv,
            input=None if input is None else input.encode(),
            stdin=subprocess.DEVNULL if input is None else None,
            capture_output=True,
            timeout=timeout,
            env=None if env is None else dict(env),
            cwd=cwd,
        )
    except FileNotFoundError as exc:
        return done(NOT_FOUND, None, b"", str(exc))
    except subprocess.TimeoutExpired as exc:
        return done(TIMEOUT, None, exc.stdout, exc.stderr)
    except OSError as exc:
        return done(OS_ERROR, None, b"", f"{type(exc).__name__}: {exc}")
    return done(OK if proc.returncode == 0 else EXIT, proc.returncode, proc.stdout, proc.stderr)


def last_line(text: str) -> str:
    """The last non-blank line of a command's output, stripped ("" when there is none): a tool's
    own last words, the reason it gives for failing."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else ""


def _text(data: bytes | str | None) -> str:
    if data is None:
        return ""
    if isinstance(data, str):
        return data
    return data.decode("utf-8", errors="replace")


def which(name: str, path: Optional[str]) -> Optional[str]:
    """``shutil.which`` against an explicit PATH string (the snapshot's, not ours)."""
    import shutil

    return shutil.which(name, path=path if path is not None else os.defpath)
