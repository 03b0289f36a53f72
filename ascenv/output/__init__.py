"""The output sink: the only package that imports rich.

Machine output (JSON) goes to stdout, written with ``json.dumps`` (never through rich, which
wraps lines and reads ``[...]`` as markup). Human reports go to stdout through rich; messages,
warnings, progress and prompts go to stderr.
"""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import Iterator, Mapping
from typing import IO, TYPE_CHECKING, Any, Optional

if TYPE_CHECKING:
    from rich.console import Console

FORMATS = ("human", "json", "markdown")

# The version of every JSON document a command prints; added here, in one place (README: "JSON").
JSON_SCHEMA = 1


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
        self.stdout = stdout if stdout is not None else sys.stdout
        self.stderr = stderr if stderr is not None else sys.stderr
        self.interactive = self.stderr.isatty() and sys.stdin.isatty() if interactive is None else interactive
        self._no_color = None if color is None else not color
        self._consoles: dict = {}

    # rich is imported on first use: JSON output never needs it (doctor start-up, issue #3 item 5)
    @property
    def console(self) -> Console:
        return self._console("stdout")

    @property
    def err_console(self) -> Console:
        return self._console("stderr")

    def _console(self, stream: str) -> Console:
        if stream not in self._consoles:
            from rich.console import Console

            self._consoles[stream] = Console(
                file=getattr(self, stream), highlight=False, soft_wrap=True, no_color=self._no_color
            )
        return self._consoles[stream]

    # machine output ----------------------------------------------------------------------------
    def json(self, payload: Mapping[str, Any]) -> None:
        """One JSON document to stdout, ``{"schema": JSON_SCHEMA, ...payload}``."""
        document = {"schema": JSON_SCHEMA, **payload}
        self.stdout.write(json.dumps(document, indent=2, sort_keys=False, ensure_ascii=False) + "\n")

    def text(self, text: str) -> None:
        """Plain text to stdout, unstyled (markdown reports, file contents)."""
        self.stdout.write(text if text.endswith("\n") else text + "\n")

    # messages to stderr ---------------------------------------------------------------------------
    def message(self, text: str) -> None:
        self.err_console.print(_escape(text))

    def warn(self, text: str) -> None:
        self.err_console.print(f"[yellow]warning:[/] {_escape(text)}")

    def error(self, text: str, hint: Optional[str] = None) -> None:
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
        if not self.interactive or self.format == "json":
            yield Progress(None, None)
            return
        from rich.progress import Progress as RichProgress

        with RichProgress(console=self.err_console, transient=True) as bar:
            task = bar.add_task(description, total=total)
            yield Progress(bar, task)


def _escape(text: str) -> str:
    from rich.markup import escape

    return escape(text)


class Progress:
    """What long-running core code reports through; does nothing when there is no bar."""

    def __init__(self, bar: Any, task: Any) -> None:
        self._bar = bar
        self._task = task

    def advance(self, amount: float = 1, description: Optional[str] = None) -> None:
        if self._bar is not None:
            self._bar.update(self._task, advance=amount, description=description)

    def __call__(self, amount: float = 1) -> None:
        self.advance(amount)
