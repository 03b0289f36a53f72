"""The output sink: the only package that imports rich.

Machine output (JSON) goes to stdout, written with ``json.dumps`` (never through rich, which
wraps lines and reads ``[...]`` as markup). Human reports go to stdout through rich; messages,
warnings, progress and prompts go to stderr.

Everything printed comes partly from untrusted data (snapshots and bundles from other machines,
file contents, package and directory names). So that such data can neither drive the terminal
(an ``ESC ]0;...BEL`` title, ``ESC [2J``, a CR that overwrites a line) nor restyle or forge a
report, C0 and C1 control characters are shown as ``\\xNN``:
- renderers put data into rich markup only through ``safe()`` (controls shown, markup escaped)
  and into markdown through ``printable()``;
- every rich console of an Output shows any control character left in the text it renders
  (``_ShowControls``), and ``text()`` does the same for plain text (keeping newlines and TABs),
  so a value a renderer forgot cannot reach the terminal raw either.

Standard output may fail under any command: its reader goes away (``| head -1``: EPIPE, since
Python ignores SIGPIPE), the disk is full (``> /dev/full``: ENOSPC), an I/O error, or the
descriptor is closed (``>&-``). Every write and flush goes through ``GuardedStdout``, which turns
these into ``errors.OutputClosed`` (exit 141, quiet, as a program killed by SIGPIPE) and
``errors.OutputFailed`` (exit 2, "cannot write standard output: …") before rich can see them:
rich turns a BrokenPipeError into ``SystemExit(1)``, which the README's table reads as "findings".
"""

from __future__ import annotations

import contextlib
import errno
import json
import re
import sys
from collections.abc import Iterator, Mapping
from typing import IO, TYPE_CHECKING, Any, Optional

from ascenv import errors
from ascenv.fsutil import shown

if TYPE_CHECKING:
    from rich.console import Console, ConsoleOptions, ConsoleRenderable, RenderableType, RenderHook, RenderResult

FORMATS = ("human", "json", "markdown")

# The version of every JSON document a command prints; added here, in one place (README: "JSON").
JSON_SCHEMA = 1

# C0 controls but TAB, DEL and the C1 controls (ECMA-48: 0x80-0x9f act as ESC + a letter on
# terminals that honour 8-bit controls, e.g. 0x9b = CSI).
# Lone surrogates too: a file name or argument that is not UTF-8 (surrogateescape), which no UTF-8
# output can encode (UnicodeEncodeError, exit 3): shown as \xff by fsutil.shown.
_CONTROLS = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f\ud800-\udfff]")
_CONTROLS_BUT_NEWLINE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff]")
_JSON_UNESCAPED = re.compile("[\x7f-\x9f\u2028\u2029\ud800-\udfff]")  # json.dumps leaves these raw

# Width of a console that does not write to a terminal: tables are printed whole, with no
# 80-column cut and no ellipsis, as docker and git do in a pipe.
PIPE_WIDTH = 1 << 15


def _show(match: re.Match[str]) -> str:
    char = match.group()
    return shown(char) if "\ud800" <= char <= "\udfff" else f"\\x{ord(char):02x}"


def printable(value: object) -> str:
    """``value`` as text with every control character (newline included) shown as ``\\xNN``."""
    return _CONTROLS.sub(_show, str(value))


def shown_text(text: str) -> str:
    """Plain text (markdown, a file's contents) with control characters other than newline and
    TAB, and undecodable bytes, shown as ``\\xNN``: what ``Output.text`` prints, and what a
    rendered file that is read in a terminal later (report.md) holds."""
    return _CONTROLS_BUT_NEWLINE.sub(_show, text)


def safe(value: object) -> str:
    """``value`` for a rich markup string: controls shown as ``\\xNN``, ``[...]`` kept literal."""
    from rich.markup import escape

    return escape(printable(value))


class Output:
    def __init__(
        self,
        format: str = "human",
        *,
        stdout: Optional[IO[str]] = None,
        stderr: Optional[IO[str]] = None,
        interactive: Optional[bool] = None,
        color: Optional[bool] = None,
    ) -> None:
        self.format = format
        # -q/-qq as pip counts them: -q hides informational messages and progress, -qq warnings
        # too; errors are always said. -v: ``detail`` lines (the commands ascenv runs) are shown.
        self.quiet = 0
        self.verbose = 0
        self.stdout: IO[str] = GuardedStdout(stdout if stdout is not None else sys.stdout)  # type: ignore[assignment]
        self.stderr: IO[str] = QuietStderr(stderr if stderr is not None else sys.stderr)  # type: ignore[assignment]
        if interactive is None:
            interactive = _is_terminal(self.stderr) and sys.stdin is not None and _is_terminal(sys.stdin)
        self.interactive = interactive
        self._color = color
        self._no_color = None if color is None else not color
        self._consoles: dict = {}

    # rich is imported on first use: JSON output never needs it (doctor's start-up time)
    @property
    def console(self) -> Console:
        return self._console("stdout")

    @property
    def err_console(self) -> Console:
        return self._console("stderr")

    def _console(self, stream: str) -> Console:
        if stream not in self._consoles:
            from rich.console import Console

            file = getattr(self, stream)
            console = Console(
                file=file,
                highlight=False,
                soft_wrap=True,
                no_color=self._no_color,
                # no-color.org: "prevent the addition of ANSI color"; users who set NO_COLOR
                # expect plain text, so bold and dim go too (rich keeps them under no_color)
                color_system=None if self._color is False else "auto",
                width=None if _is_terminal(file) else PIPE_WIDTH,
            )
            console.push_render_hook(_show_controls_hook())
            self._consoles[stream] = console
        return self._consoles[stream]

    # machine output ----------------------------------------------------------------------------
    def json(self, payload: Mapping[str, Any], *, kind: Optional[str] = None) -> None:
        """One JSON document to stdout, ``{"schema": JSON_SCHEMA, ...payload}``. ``kind`` names its
        published schema, ascenv/schemas/<kind>.json (the tests validate each document with it)."""
        from ascenv.serde import to_data  # text that is not UTF-8 (a path given as bad\xff) as shown

        document = to_data({"schema": JSON_SCHEMA, **payload})
        # allow_nan=False: NaN and Infinity are not JSON (RFC 8259 sec. 6), and jq or a CI gate
        # fails on them; a value that reaches here is a bug, never a document that cannot be read
        encoded = json.dumps(document, indent=2, sort_keys=False, ensure_ascii=False, allow_nan=False)
        # json.dumps escapes C0 only: DEL, C1 and the line/paragraph separators as \\uXXXX too
        # (the same JSON value), so a document shown on a terminal cannot drive it
        encoded = _JSON_UNESCAPED.sub(lambda m: f"\\u{ord(m.group()):04x}", encoded)
        self.stdout.write(encoded + "\n")

    def data(self, payload: bytes, *, binary: Optional[str] = None) -> None:
        """A file's bytes to stdout (``-o -``). Binary data (``binary`` names it, e.g. "a gzip
        archive") is refused on a terminal, as ``tar`` ("Refusing to write archive contents to
        terminal") and ``docker save`` ("cowardly refusing to save to a terminal") do: it would
        garble the screen and could drive it."""
        if binary and _is_terminal(self.stdout):
            raise errors.UsageError(
                f"-o - would write {binary} to the terminal", hint="redirect standard output to a file or a pipe"
            )
        self.stdout.flush()  # text written before goes first
        raw = getattr(self.stdout, "buffer", None)
        if raw is None:  # a text-only stream (a test's StringIO)
            self.stdout.write(payload.decode("utf-8", "surrogateescape"))
            return
        guarded(raw.write, payload)
        guarded(raw.flush)

    def on_stderr(self) -> Output:
        """An Output whose "stdout" is this one's stderr: where a command's summary goes when its
        stdout carries a file (``-o -``)."""
        return Output(self.format, stdout=self.stderr, stderr=self.stderr, interactive=False, color=self._color)

    def text(self, text: str) -> None:
        """Plain text to stdout, unstyled (markdown reports, file contents); control characters
        other than newline and TAB are shown as ``\\xNN``."""
        text = shown_text(text)
        self.stdout.write(text if text.endswith("\n") else text + "\n")

    # messages to stderr ---------------------------------------------------------------------------
    def status(self, text: str) -> None:
        """A one-line status that the next status or message replaces (``\r`` and erase line),
        on a terminal only: in a pipe or a log it would be hundreds of lines."""
        if not self.interactive or self.format == "json" or self.quiet > 0:
            return
        width = max(20, self.err_console.width - 1)
        self.stderr.write("\r\x1b[2K" + safe(text)[:width])
        self.stderr.flush()
        self._status_shown = True

    def _clear_status(self) -> None:
        if getattr(self, "_status_shown", False):
            self.stderr.write("\r\x1b[2K")
            self._status_shown = False

    def message(self, text: str) -> None:
        self._clear_status()
        if self.quiet < 1:
            self.err_console.print(_escape(text))

    def detail(self, text: str) -> None:
        """A line only ``--verbose`` shows (dim, on stderr)."""
        if self.verbose > 0 and self.quiet < 1:
            self.err_console.print(f"[dim]{_escape(text)}[/]")

    def warn(self, text: str) -> None:
        self._clear_status()
        if self.quiet < 2:
            self.err_console.print(f"[yellow]warning:[/] {_escape(text)}")

    def error(self, text: str, hint: Optional[str] = None) -> None:
        self._clear_status()
        self.err_console.print(f"[bold red]error:[/] {_escape(text)}")
        if hint:
            self.err_console.print(f"[cyan]hint:[/] {_escape(hint)}")

    def confirm(self, question: str) -> bool:
        """Ask on stderr; never asks (answers no) when not interactive."""
        if not self.interactive:
            return False
        self.err_console.print(f"{_escape(question)} [y/N] ", end="")
        answer = sys.stdin.readline().strip().lower()
        return answer in ("y", "yes")

    @contextlib.contextmanager
    def progress(self, description: str, total: Optional[float] = None) -> Iterator[Progress]:
        """A progress bar on stderr when interactive; silent otherwise."""
        if not self.interactive or self.format == "json" or self.quiet > 0:
            yield Progress(None, None)
            return
        from rich.progress import Progress as RichProgress

        with RichProgress(console=self.err_console, transient=True) as bar:
            # rich's live display renders outside the console's render hooks: show controls here
            task = bar.add_task(safe(description), total=total)
            yield Progress(bar, task)


class GuardedStdout:
    """Standard output whose write errors are ascenv errors (see the module's docstring); every
    other attribute is the stream's own. ``None`` (Python's ``sys.stdout`` when descriptor 1 was
    closed at start-up) fails as writing to a closed descriptor does."""

    def __init__(self, stream: Optional[IO[str]]) -> None:
        self.stream = stream

    def write(self, text: str) -> int:
        if self.stream is None:
            raise stdout_error(OSError(errno.EBADF, "Bad file descriptor"))
        return guarded(self.stream.write, text)

    def flush(self) -> None:
        if self.stream is not None:
            guarded(self.stream.flush)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stream, name)  # None has no isatty, fileno, ...: AttributeError


class QuietStderr:
    """Standard error whose write errors are dropped: a message that cannot be shown has nowhere
    else to go, and the exit code still tells what happened (``2>/dev/full`` must not turn exit 2
    into rich's ``SystemExit(1)`` or a traceback). Every other attribute is the stream's own."""

    def __init__(self, stream: Optional[IO[str]]) -> None:
        self.stream = stream

    def write(self, text: str) -> int:
        with contextlib.suppress(OSError, ValueError, AttributeError):
            self.stream.write(text)  # type: ignore[union-attr]
        return len(text)

    def flush(self) -> None:
        with contextlib.suppress(OSError, ValueError, AttributeError):
            self.stream.flush()  # type: ignore[union-attr]

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stream, name)


def guarded(call: Any, *args: Any) -> Any:
    """``call(*args)`` on standard output, its OSError (and a closed stream's ValueError) an ascenv error."""
    try:
        return call(*args)
    except OSError as exc:
        raise stdout_error(exc) from None
    except ValueError as exc:  # "I/O operation on closed file"
        raise stdout_error(OSError(errno.EBADF, str(exc))) from None


def stdout_error(exc: OSError) -> errors.AscenvError:
    if isinstance(exc, BrokenPipeError) or exc.errno == errno.EPIPE:
        return errors.OutputClosed("standard output closed by its reader")
    return errors.OutputFailed(f"cannot write standard output: {exc.strerror or exc}")


def _escape(text: str) -> str:
    return safe(text)


def _is_terminal(stream: IO[str]) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # no isatty, or a closed stream
        return False


class _ShowControls:
    """Renders ``inner`` with control characters in its text shown as ``\\xNN`` (newlines and
    TABs kept: they are layout). Control segments (cursor moves of a progress bar) are rich's own
    and pass as they are."""

    def __init__(self, inner: RenderableType) -> None:
        self.inner = inner

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        from rich.segment import Segment

        for segment in console.render(self.inner, options):
            if segment.control or not _CONTROLS_BUT_NEWLINE.search(segment.text):
                yield segment
            else:
                yield Segment(_CONTROLS_BUT_NEWLINE.sub(_show, segment.text), segment.style)


def _show_controls_hook() -> RenderHook:
    """A rich render hook (``Console.push_render_hook``) wrapping everything in ``_ShowControls``;
    built here so that importing ascenv.output does not import rich."""
    from rich.console import RenderHook

    class ShowControlsHook(RenderHook):
        def process_renderables(self, renderables: list[ConsoleRenderable]) -> list[ConsoleRenderable]:
            return [_ShowControls(r) for r in renderables]

    return ShowControlsHook()


class Progress:
    """What long-running core code reports through; does nothing when there is no bar."""

    def __init__(self, bar: Any, task: Any) -> None:
        self._bar = bar
        self._task = task

    def advance(self, amount: float = 1, description: Optional[str] = None) -> None:
        if self._bar is not None:
            shown = None if description is None else safe(description)
            self._bar.update(self._task, advance=amount, description=shown)

    def __call__(self, amount: float = 1) -> None:
        self.advance(amount)
