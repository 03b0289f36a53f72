"""Run ``ascenv`` in-process, as the tests of every command do."""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from types import ModuleType
from typing import Optional

from ascenv import cli
from ascenv.commands._common import Context
from ascenv.output import Output


def run_cli(
    argv: Sequence[str], environ: Mapping[str, str], cwd: Optional[object] = None, interactive: bool = False
) -> tuple[int, str, str]:
    """``cli.main(argv)`` with ``environ`` and ``cwd`` (the Context's default when None), no
    colour; returns (exit code, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    output = Output("human", stdout=out, stderr=err, interactive=interactive, color=False)
    ctx = Context(environ=environ, out=output) if cwd is None else Context(environ=environ, out=output, cwd=str(cwd))
    code = cli.main(list(argv), ctx=ctx)
    return code, out.getvalue(), err.getvalue()


def bin_script(name: str) -> ModuleType:
    """A maintenance script of bin/ (not a package) imported as a module, for its own tests."""
    import importlib.util
    import sys
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "bin" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module
