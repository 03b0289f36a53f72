"""A long bootstrap step tells its elapsed time and what it has written, then how long it took."""

from __future__ import annotations

import io
import threading
from pathlib import Path

from ascenv.containers import images
from ascenv.output import Output


def _bytes(said: str) -> float:
    number, unit = said.split()[:2]
    return float(number.replace(",", "")) * {"kB": 1e3, "MB": 1e6}[unit]


def test_the_step_is_ticked_with_elapsed_time_and_bytes_written_then_told_done(tmp_path: Path) -> None:
    statuses: list[str] = []
    events: list[str] = []
    host = images.Host(environ={}, cache=tmp_path, on_event=events.append, on_status=statuses.append)
    growing = tmp_path / "rootfs"
    growing.mkdir()
    with images.elapsed(host, "bootstrapping demo", growing, every=0.05):
        for i in range(6):
            (growing / f"f{i}").write_bytes(b"x" * 400_000)
            threading.Event().wait(0.06)
    assert statuses and all(s.startswith("bootstrapping demo: 0:0") and " elapsed, " in s for s in statuses)
    written = [_bytes(s.split(", ")[1]) for s in statuses]
    assert written == sorted(written) and written[-1] >= 2_000_000  # grows with the tree
    assert events == [events[0]] and events[0].startswith("bootstrapping demo: done in 0:0")


def test_an_error_inside_still_stops_the_ticker(tmp_path: Path) -> None:
    statuses: list[str] = []
    host = images.Host(environ={}, cache=tmp_path, on_status=statuses.append)
    try:
        with images.elapsed(host, "x", tmp_path, every=0.01):
            raise KeyError("boom")
    except KeyError:
        pass
    seen = len(statuses)
    threading.Event().wait(0.1)
    assert len(statuses) == seen  # nothing ticks after the step ended
    assert not any(t.name == "ascenv-elapsed" for t in threading.enumerate())


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_status_line_is_drawn_on_a_terminal_replaced_by_a_message_and_absent_in_a_pipe() -> None:
    term = _Terminal()
    out = Output(stdout=io.StringIO(), stderr=term, interactive=True, color=False)
    out.status("bootstrapping: 0:01 elapsed")
    out.status("bootstrapping: 0:02 elapsed")
    out.message("done")
    text = term.getvalue()
    assert text.count("\r\x1b[2K") == 3 and text.endswith("done\n") and "0:02 elapsed" in text
    pipe = io.StringIO()
    quiet = Output(stdout=io.StringIO(), stderr=pipe, interactive=False, color=False)
    quiet.status("bootstrapping: 0:01 elapsed")
    quiet.message("done")
    assert pipe.getvalue() == "done\n"
