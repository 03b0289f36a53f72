"""The target Python environment: the interpreter torch_npu will run in, not the one running ascenv.

``python3`` on the judged PATH by default, or ``--python PATH``. The interpreter runs
``_target.py`` (stdlib only, Python 3.7+) which reads the installed distributions' metadata files
on its own ``sys.path`` and prints JSON; nothing installed is imported (importing torch_npu loads
CANN libraries and can hang or crash on exactly the machines ascenv is asked to diagnose).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Optional

from ascenv import proc
from ascenv.errors import SchemaError
from ascenv.model import Distribution, ProbeError, PythonInfo
from ascenv.serde import from_data

TIMEOUT = 20.0  # a cold interpreter on a network home with many .pth files can take seconds
_SCRIPT = Path(__file__).with_name("_target.py")


def probe_python(
    run: proc.Runner,
    executable: Optional[str],
    path: Optional[str],
    environ: Optional[Mapping[str, str]] = None,
    deadline: Optional[proc.Deadline] = None,
) -> PythonInfo:
    """Run the target interpreter (``executable``, else ``python3`` found on ``path``).

    ``environ`` is the environment it runs with (PYTHONPATH and the user site decide its
    sys.path); None means the caller's own. It gets ``TIMEOUT`` or what is left of ``deadline``,
    whichever is less.
    """
    wanted = executable or "python3"
    target = wanted if "/" in wanted else proc.which(wanted, path)
    if target is None:
        where = "on PATH" if path is None else f"on PATH={path}"
        return _failed(wanted, "not-found", f"no {wanted} {where}; choose one with --python PATH")
    # -B: never write __pycache__ into the judged environment. Not -I/-E/-s: PYTHONPATH (set_env.sh
    # puts CANN's python/site-packages there) and the user site are part of what torch_npu sees.
    timeout = TIMEOUT if deadline is None else deadline.timeout(TIMEOUT)
    done = run([target, "-B", "-c", _SCRIPT.read_text(encoding="utf-8")], timeout=timeout, env=environ)
    source = f"{target} -B -c <ascenv/probe/{_SCRIPT.name}>"
    if done.status == proc.NOT_FOUND:
        return _failed(target, "not-found", f"{target} does not exist", source)
    if done.status == proc.TIMEOUT:
        return _failed(target, "timeout", f"{target} did not answer within {_seconds(timeout)} s", source)
    if done.status == proc.OS_ERROR:
        return _failed(target, "os-error", f"{target} could not be started: {proc.last_line(done.stderr)}", source)
    if done.status == proc.EXIT:
        ended = proc.exit_text(done.returncode) if done.returncode is not None else "failed"
        if ended.startswith("killed"):
            ended = "was " + ended
        message = f"{target} {ended}: {proc.last_line(done.stderr) or '(no stderr)'}"
        return _failed(target, "exit-status", message, source)
    if "stdout" in done.truncated:  # the head of a flood is no JSON: say what happened instead
        return _failed(target, "too-large", proc.cut_message(done, "stdout", target), source)
    return parse_target_output(done.stdout, target, source)


def parse_target_output(text: str, executable: str, source: str = "") -> PythonInfo:
    """The JSON printed by ``_target.py``; anything else becomes a PythonInfo with a parse error."""
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):  # RecursionError: nested deeper than json can parse
        found = proc.last_line(text) or "nothing"
        return _failed(executable, "parse", f"expected JSON from {executable}, found: {found[:200]}", source)
    if not isinstance(data, dict):
        return _failed(executable, "parse", f"expected a JSON object, found {type(data).__name__}", source)
    distributions = []
    errors = []
    for index, item in enumerate(data.get("distributions") or []):
        try:
            distributions.append(from_data(Distribution, item, f"distributions[{index}]"))
        except SchemaError as exc:
            errors.append(ProbeError("python", "parse", str(exc), source))
    return PythonInfo(
        executable=_text(data.get("executable")) or executable,
        version=_text(data.get("version")),
        implementation=_text(data.get("implementation")),
        platform=_text(data.get("platform")),
        distributions=tuple(distributions),
        errors=tuple(errors),
    )


def _failed(executable: str, kind: str, message: str, source: str = "") -> PythonInfo:
    return PythonInfo(executable=executable, errors=(ProbeError("python", kind, message, source),))


def _seconds(value: float) -> str:
    return f"{value:.1f}".rstrip("0").rstrip(".")


def _text(value: object) -> Optional[str]:
    """A non-empty string that can be printed (a ``"\\ud800"`` escape decodes to a lone surrogate)."""
    if not (isinstance(value, str) and value):
        return None
    return value.encode("utf-8", "backslashreplace").decode("utf-8")
