"""The I/O edge: read a machine (or a root file system) into a ``Snapshot``.

Each probe runs on its own: a failing one records a ``ProbeError`` and the others go on.
Parsers are pure functions beside thin readers; ``collect`` is the only entry point.
"""

from __future__ import annotations

import datetime
from typing import Mapping, Optional

from ascenv import __version__, proc
from ascenv.model import Snapshot
from ascenv.probe.fs import Root
from ascenv.probe.host import probe_host


def collect(root: Root, environ: Mapping[str, str], run: proc.Runner = proc.run, *, python: Optional[str] = None) -> Snapshot:
    """Probe everything. ``environ`` is the environment to judge (the caller's, or a saved one);
    ``python`` the interpreter whose packages to read (default: python3 on ``environ``'s PATH)."""
    return Snapshot(
        created=datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0).isoformat(),
        root=str(root.directory),
        ascenv_version=__version__,
        host=probe_host(root),
    )
