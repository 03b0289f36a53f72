"""The npu-smi probe: run ``npu-smi info``, ``info -m`` and ``info -t board -i N`` and merge them.

npu-smi comes from the PATH of the environment being judged, never from under ``--root``.
Every command has its own timeout within one deadline for all of them; a failing one becomes a
``ProbeError`` and the others go on (after a timeout, the rest are skipped).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Optional

from ascenv import proc
from ascenv.model import NpuInfo, ProbeError
from ascenv.probe.npu_smi import (
    NOT_ON_PATH,
    PROBE,
    distinct_npus,
    parse_board,
    parse_chip_map,
    parse_errors,
    parse_info,
)

TIMEOUT = 15.0  # seconds per command: npu-smi answers in about a second, a wedged driver never
# All of npu-smi's queries together: `info`, `info -m`, and one board query per NPU (16 on an A3)
# must not add up to minutes when each answers slowly.
BUDGET = 30.0


def probe_npu(
    run: proc.Runner,
    path: Optional[str],
    timeout: Optional[float] = None,
    deadline: Optional[proc.Deadline] = None,
) -> NpuInfo:
    """What npu-smi says about the NPUs; ``path`` is the PATH string to find it on.

    Each query gets ``timeout`` (default ``TIMEOUT``) or what is left of ``deadline`` (default: ``BUDGET`` from now),
    whichever is less. After one query times out the rest are skipped: they go through the same
    driver interface and would hang the same way, one full timeout per NPU."""
    exe = proc.which("npu-smi", path)
    if exe is None:
        return NpuInfo(
            source="npu-smi info",
            errors=(ProbeError(PROBE, "not-found", NOT_ON_PATH, source="npu-smi info"),),
        )
    queries = _Queries(run, exe, TIMEOUT if timeout is None else timeout, deadline or proc.Deadline(BUDGET))
    done = queries.run("info")
    if done is None:
        return NpuInfo(source=f"{exe} info", errors=queries.errors())
    info = parse_info(_output(done), source=done.command)
    errors = list(info.errors) + _failure(done, info.errors) + _cut(done)
    if not done.ok and not info.chips:
        # The sub-queries go through the same driver interface: after a failure or a timeout they
        # would fail the same way (and a timeout would cost the full timeout again per query).
        return replace(info, errors=tuple(errors))
    if done.ok and not info.chips and not info.errors:
        errors.append(ProbeError(PROBE, "parse", "npu-smi info printed no table ascenv could read", done.command))

    done_map = queries.run("info", "-m")
    chip_map = parse_chip_map(done_map.stdout) if done_map is not None else ()
    if done_map is not None:
        errors += _sub_errors(done_map)

    boards = []
    for npu in distinct_npus(info.chips) or tuple(dict.fromkeys(entry.npu for entry in chip_map)):
        done_board = queries.run("info", "-t", "board", "-i", str(npu))
        if done_board is None:
            continue
        board_errors = _sub_errors(done_board)
        errors += board_errors
        if done_board.ok and not board_errors:
            board = parse_board(done_board.stdout, npu)
            if board.fields:
                boards.append(board)
            else:
                errors.append(ProbeError(PROBE, "parse", "npu-smi printed no key : value lines", done_board.command))
    errors += queries.errors()
    return replace(info, chip_map=chip_map, boards=tuple(boards), errors=tuple(errors))


class _Queries:
    """npu-smi's queries under one deadline; those not run are listed in one "skipped" error."""

    def __init__(self, run: proc.Runner, exe: str, timeout: float, deadline: proc.Deadline) -> None:
        self._run, self._exe, self._timeout, self._deadline = run, exe, timeout, deadline
        self._timed_out = False
        self._skipped: list[str] = []

    def run(self, *args: str) -> Optional[proc.Completed]:
        argv = [self._exe, *args]
        if self._timed_out or self._deadline.expired:
            self._skipped.append(" ".join(argv))
            return None
        done = self._run(argv, timeout=self._deadline.timeout(self._timeout))
        self._timed_out = self._timed_out or done.status == proc.TIMEOUT
        return done

    def errors(self) -> tuple[ProbeError, ...]:
        if not self._skipped:
            return ()
        why = "after a query timed out" if self._timed_out else "the probe's time was up"
        message = f"not run {why}: {', '.join(self._skipped)}"
        return (ProbeError(PROBE, "skipped", message, self._skipped[0]),)


def _cut(done: proc.Completed) -> list[ProbeError]:
    """Output cut at the capture limit: what was parsed is the head of it, the rest is unknown."""
    return [ProbeError(PROBE, "truncated", proc.cut_message(done, stream), done.command) for stream in done.truncated]


def _output(done: proc.Completed) -> str:
    """npu-smi prints its errors on stdout (printf); the shell and the loader on stderr."""
    return done.stdout + ("\n" if done.stdout and not done.stdout.endswith("\n") else "") + done.stderr


def _sub_errors(done: proc.Completed) -> list[ProbeError]:
    recognised = parse_errors(_output(done), done.command)
    return list(recognised) + _failure(done, recognised) + _cut(done)


def _failure(done: proc.Completed, recognised: tuple[ProbeError, ...]) -> list[ProbeError]:
    """The run itself as an error, unless npu-smi's own message already says what went wrong."""
    if done.ok or (recognised and done.status == proc.EXIT):
        return []
    if done.status == proc.TIMEOUT:
        message = (
            f"{done.command} did not answer within {done.duration:.1f} s (a hung driver or a device in a bad state)"
        )
        return [ProbeError(PROBE, "timeout", message, done.command)]
    if done.status == proc.NOT_FOUND:
        return [ProbeError(PROBE, "not-found", done.describe(), done.command, meaning=NOT_ON_PATH)]
    if done.status == proc.OS_ERROR:
        kind = "permission" if "Permission" in done.stderr else "os-error"
        return [ProbeError(PROBE, kind, done.describe(), done.command)]
    return [ProbeError(PROBE, "exit-status", done.describe(), done.command)]
