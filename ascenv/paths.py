"""Where ascenv's shipped data lives: beside the package in a wheel, at the repository top in a
checkout. The one place that knows both layouts."""

from __future__ import annotations

from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent


def data_dir(name: str) -> Path:
    """``compat``, ``containers``, ``kernels`` or ``deploy``: the installed copy, else the checkout's."""
    installed = _PACKAGE / "_data" / name
    if installed.is_dir():
        return installed
    return _PACKAGE.parent / name
