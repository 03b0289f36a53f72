"""A project's stack constraints, checked at import time from files only: ``ascenv.require(...)``
and the module ``ascenv check --emit-guard FILE`` writes (this file's source plus the constraints).

Standard library only, and nothing of ascenv: a package calls it before ``import torch_npu`` to
fail with the finding's words instead of an ``undefined symbol`` later, and must not pay for
ascenv (bench/bench_guard_import.py measures the import). Versions are read from files, never by
importing torch: CANN from the install.info of the install set_env.sh selects
(``ASCEND_HOME_PATH``/``ASCEND_TOOLKIT_HOME``), driver and firmware from their version.info,
torch and torch_npu from the ``<name>-<version>.dist-info`` directory names on ``sys.path`` (the
name pip writes, PEP 427/PyPA "Recording installed projects"), Python from ``sys.version_info``.

``ascend_key`` is the ordering of Huawei's version strings for all of ascenv:
``ascenv.versions.AscendVersion`` takes its key from here, so the guard and ``ascenv check``
order 8.3.RC1 < 8.5.0.alpha001 < 8.5.0 the same way. ``title``/``fix``/``text`` are the words of
the ``ascenv check`` finding (``ascenv.constraints``), which the guard raises verbatim.
"""

from __future__ import annotations

import os
import re
import sys

# Layers a project can constrain, and the product line whose numbering each one uses. NNAL is
# released with CANN and numbered like it (8.5.0); ascenv does not read its version yet.
ASCEND_LAYERS = {"driver": "driver", "firmware": "firmware", "cann": "cann", "nnal": "cann"}
PYTHON_LAYERS = ("python", "torch", "torch_npu")
LAYERS = ("driver", "firmware", "cann", "nnal", "python", "torch", "torch_npu")
SHOWN = {"cann": "CANN", "nnal": "NNAL", "python": "Python"}
OPERATORS = ("~=", "==", "!=", ">=", "<=", ">", "<")
ASCEND_ROOT = "/usr/local/Ascend"


class StackMismatch(ImportError):
    """This machine's stack is outside what the project declared (an ImportError, so the
    ``import`` that ran the guard is what fails)."""


# --- Huawei's version strings -------------------------------------------------------------------

# Ranks inside one X.Y release. T builds are internal/test builds (8.0.T6, 8.0.T63) whose
# string does not say which RC they lead to, so all of them sort before X.Y.RC1.
STAGE_T, STAGE_RC, STAGE_FINAL = 0, 1, 2
STAGE_NONE = -1  # a bare "24.0" (a range bound in firmware version.info): below every 24.0.*
# Suffixes that come before the version they are attached to (alpha < beta < rc < none).
PRE_RANK = {"alpha": 0, "beta": 1, "rc": 2}
NO_PRE = 3

# ASCII digits only: str.isdigit() accepts "²", which int() refuses.
_SEPARATOR = re.compile(r"[.\-]")
_NUMBER = re.compile(r"[0-9]+")
_STAGE = re.compile(r"(?i)(rc|t)([0-9]+)")
_PRE = re.compile(r"(?i)(alpha|beta|rc)([0-9]*)")
_BUILD = re.compile(r"(?i)b([0-9]+)")


def ascend_key(text: str) -> tuple[tuple, tuple]:
    """(sort key, normalised parts) of a dotted Ascend version (8.2.RC1.alpha001, 25.0.rc1.1,
    9.0.0-beta.1); ValueError says why a string is not one."""
    tokens = _SEPARATOR.split(text.strip())
    if len(tokens) < 2 or not all(tokens):
        raise ValueError("needs at least major.minor, separated by '.' or '-'")
    if not (_NUMBER.fullmatch(tokens[0]) and _NUMBER.fullmatch(tokens[1])):
        raise ValueError("major and minor must be numbers")
    major, minor = int(tokens[0]), int(tokens[1])
    parts: list = [major, minor]
    stage, stage_num = STAGE_NONE, 0
    rest = tokens[2:]
    if rest:
        head = rest.pop(0)
        staged = _STAGE.fullmatch(head)
        if _NUMBER.fullmatch(head):
            stage, stage_num = STAGE_FINAL, int(head)
            parts.append(stage_num)
        elif staged:
            stage = STAGE_RC if staged.group(1).lower() == "rc" else STAGE_T
            stage_num = int(staged.group(2))
            parts.append((staged.group(1).upper(), stage_num))
        else:
            raise ValueError(f"third part {head!r} is not a number, RC<n> or T<n>")
    pre_rank, pre_num = NO_PRE, 0
    patches: list = []
    build = -1
    while rest:
        token = rest.pop(0)
        pre = _PRE.fullmatch(token)
        if pre and not patches and pre_rank == NO_PRE and build < 0:
            kind = pre.group(1).lower()
            if kind == "rc" and stage != STAGE_FINAL:
                raise ValueError("an rc suffix can only follow X.Y.Z")
            number = pre.group(2)
            if not number and rest and _NUMBER.fullmatch(rest[0]):
                number = rest.pop(0)  # 9.0.0-beta.1
            pre_rank, pre_num = PRE_RANK[kind], int(number or 0)
            parts.append((kind, pre_num))
        elif _NUMBER.fullmatch(token) and build < 0:
            patches.append(int(token))
            parts.append(int(token))
        elif _BUILD.fullmatch(token) and build < 0:
            build = int(token[1:])
            parts.append(("b", build))
        else:
            raise ValueError(f"unexpected part {token!r}")
    if stage == STAGE_NONE and (pre_rank != NO_PRE or build >= 0):
        raise ValueError("a suffix needs a full X.Y.Z, X.Y.RC<n> or X.Y.T<n> before it")
    # A numbered patch (25.0.rc1.1, 8.0.RC3.20) ranks above its base; a bNNN build of the same
    # release is a later build of it (torch_npu's DriverVersionToNum adds it like a patch,
    # GetCANNInfo.cpp @ Ascend/pytorch 9e73e708) but below any numbered patch bundle.
    key = (major, minor, stage, stage_num, pre_rank, pre_num, tuple(patches), build)
    return key, tuple(parts)


# --- PEP 440 versions (python, torch, torch_npu) --------------------------------------------------

# The canonical public version of PEP 440 (its appendix regex, without epochs and with the
# local label split off); packaging.version.Version agrees on these (tests/test_guard.py).
_PEP440 = re.compile(
    r"v?(?P<release>[0-9]+(?:\.[0-9]+)*)"
    r"(?:[-_.]?(?P<pre>a|b|c|rc|alpha|beta|pre|preview)[-_.]?(?P<pre_n>[0-9]+)?)?"
    r"(?:-(?P<post_implicit>[0-9]+)|[-_.]?(?P<post>post|rev|r)[-_.]?(?P<post_n>[0-9]+)?)?"
    r"(?:[-_.]?(?P<dev>dev)[-_.]?(?P<dev_n>[0-9]+)?)?"
    r"(?:\+(?P<local>[a-z0-9]+(?:[-_.][a-z0-9]+)*))?",
    re.IGNORECASE,
)
_PRE_LETTER = {"a": 0, "alpha": 0, "b": 1, "beta": 1, "c": 2, "rc": 2, "pre": 2, "preview": 2}
_INF = float("inf")


def pep440_key(text: str) -> tuple:
    """A sort key of a PEP 440 version, local label ignored (as specifiers ignore it): (release
    without trailing zeros, pre, post, dev), ordered as PEP 440's "Summary of permitted suffixes
    and relative ordering" says: X.devN < X.aN < X.bN < X.rcN < X < X.postN."""
    match = _PEP440.fullmatch(text.strip())
    if not match:
        raise ValueError(f"not a PEP 440 version: {text!r}")
    release = tuple(int(p) for p in match.group("release").split("."))
    while len(release) > 1 and release[-1] == 0:
        release = release[:-1]
    pre_letter, dev = match.group("pre"), match.group("dev")
    post = match.group("post_implicit") or (match.group("post_n") or "0" if match.group("post") else None)
    pre: tuple[float, int]
    if pre_letter:
        pre = (_PRE_LETTER[pre_letter.lower()], int(match.group("pre_n") or 0))
    else:
        pre = (-1, 0) if dev and post is None else (_INF, 0)  # 1.0.dev0 sorts before 1.0a0
    return (
        release,
        pre,
        -1 if post is None else int(post),
        _INF if dev is None else int(match.group("dev_n") or 0),
    )


def _is_pre(key: tuple) -> bool:
    return key[1][0] != _INF or key[3] != _INF


def _pep440_clause(op: str, spec: str, version: str) -> bool:
    if spec.endswith(".*"):  # ==2.8.* / !=2.8.*: a release prefix
        if op not in ("==", "!="):
            raise ValueError(f"{op}{spec}: a .* prefix goes with == or != only")
        prefix = tuple(int(p) for p in spec[:-2].split("."))
        match = _PEP440.fullmatch(version.split("+", 1)[0].strip())
        if not match:
            raise ValueError(f"not a PEP 440 version: {version!r}")
        release = tuple(int(p) for p in match.group("release").split(".")) + (0,) * len(prefix)
        inside = release[: len(prefix)] == prefix
        return inside if op == "==" else not inside
    have, want = pep440_key(version.split("+", 1)[0]), pep440_key(spec)
    if op == "~=":
        numbers = _PEP440.fullmatch(spec.strip()).group("release").split(".")  # type: ignore[union-attr]
        if len(numbers) < 2:
            raise ValueError(f"~={spec}: ~= needs at least X.Y")
        return have >= want and _pep440_clause("==", ".".join(numbers[:-1]) + ".*", version)
    # PEP 440 "Exclusive ordered comparison", as packaging 26 reads it (specifiers.py, _fast_compare)
    same_release = have[0] == want[0]
    if op == ">":  # >V excludes the post-releases of V (V itself neither a dev nor a post release)
        plain = want[2] < 0 and want[3] == _INF
        return have > want and not (plain and same_release and have[1] == want[1])
    if op == "<":  # <V excludes the pre-releases of a final V without a post segment
        return have < want and not (not _is_pre(want) and want[2] < 0 and same_release and _is_pre(have))
    return {"==": have == want, "!=": have != want, ">=": have >= want, "<=": have <= want}[op]


# --- specifiers: "op version, op version" -------------------------------------------------------


def clauses(spec: str) -> tuple[tuple[str, str], ...]:
    """``">=8.5.0, <9"`` → ((">=", "8.5.0"), ("<", "9")); ValueError when a clause has no
    operator of ``OPERATORS`` (PEP 440's, without ``===``)."""
    out = []
    for clause in spec.split(","):
        clause = clause.strip()
        op = next((o for o in OPERATORS if clause.startswith(o)), None)
        if op is None or not clause[len(op) :].strip():
            raise ValueError(f"{clause!r} is not <operator><version> with an operator of {' '.join(OPERATORS)}")
        out.append((op, clause[len(op) :].strip()))
    return tuple(out)


def _ascend_clause(op: str, spec: str, version: str) -> bool:
    have_key, have_parts = ascend_key(version)
    if spec.endswith((".*", ".X", ".x")) or op == "~=":  # a family: 8.5.* / ~=8.5.0 (>=8.5.0, 8.5.*)
        base = spec[:-2] if spec.endswith((".*", ".X", ".x")) else spec
        want_key, want_parts = ascend_key(base)
        if op == "~=":
            if len(want_parts) < 3:
                raise ValueError(f"~={spec}: ~= needs at least X.Y.Z")
            return have_key >= want_key and have_parts[:2] == want_parts[:2]
        inside = have_parts[: len(want_parts)] == want_parts
        if op not in ("==", "!="):
            raise ValueError(f"{op}{spec}: a .* family goes with == or != only")
        return inside if op == "==" else not inside
    want_key = ascend_key(spec)[0]
    return {
        "==": have_key == want_key,
        "!=": have_key != want_key,
        ">=": have_key >= want_key,
        "<=": have_key <= want_key,
        ">": have_key > want_key,
        "<": have_key < want_key,
    }[op]


def contains(layer: str, spec: str, version: str) -> bool:
    """Whether ``version`` of ``layer`` satisfies every clause of ``spec``; ValueError for a
    version or specifier that cannot be read (the message says which)."""
    judge = _ascend_clause if layer in ASCEND_LAYERS else _pep440_clause
    return all(judge(op, wanted, version) for op, wanted in clauses(spec))


# --- the words of a finding -------------------------------------------------------------------------


def shown(layer: str) -> str:
    return SHOWN.get(layer, layer)


def title(who: str, layer: str, spec: str, version: object) -> str:
    return f"{who} needs {shown(layer)} {spec}, found {version or 'none'}"


def fix(layer: str, spec: str) -> str:
    if layer in ("torch", "torch_npu"):
        return f"pip install '{layer}{spec}'"
    if layer == "python":
        return f"run it with a Python {spec} (python3 -m venv with that interpreter)"
    if layer in ("cann", "nnal"):
        return f"install {shown(layer)} {spec} and source its set_env.sh"
    return f"install the Ascend HDK {layer} {spec} (npu-smi info shows the running driver)"


def text(title_: str, source: str, fix_: str) -> str:
    """One finding in one line: what the guard raises, word for word."""
    where = f" ({source})" if source else ""
    return f"{title_}{where}: fix: {fix_}"


# --- reading this machine, from files only ---------------------------------------------------------


def _key_values(path: str) -> dict[str, str]:
    """``key=value`` / ``key: value`` lines (install.info, version.info); {} when unreadable."""
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            lines = handle.read().splitlines()
    except OSError:
        return {}
    values: dict[str, str] = {}
    for line in lines:
        key, sep, value = line.partition("=") if "=" in line else line.partition(":")
        if sep:
            values.setdefault(key.strip().lower(), value.strip().strip("\"'"))
    return values


def _cann(root: str, environ: dict) -> tuple[str, str]:
    """(version, install.info path) of the CANN set_env.sh selected, else of the default links."""
    homes = [environ.get(v) for v in ("ASCEND_HOME_PATH", "ASCEND_TOOLKIT_HOME")]
    homes += [f"{ASCEND_ROOT}/cann", f"{ASCEND_ROOT}/ascend-toolkit/latest"]
    for home in filter(None, homes):
        base = os.path.join(root, home.lstrip("/"))
        try:
            arch_dirs = [os.path.join(base, n) for n in sorted(os.listdir(base)) if n.endswith("-linux")]
        except OSError:
            continue
        for directory in (*arch_dirs, base):
            for package in ("toolkit", "nnae", "nnrt", "cann"):
                info = os.path.join(directory, f"ascend_{package}_install.info")
                version = _key_values(info).get("version")
                if version:  # shown as the machine path of the real file, as the probes record it
                    real = os.path.realpath(info)
                    inside = os.path.relpath(real, root) if root != "/" else real.lstrip("/")
                    return version, "/" + inside if not inside.startswith("..") else info
    return "", ""


def _distribution(name: str, path: list) -> tuple[str, str]:
    """(version, dist-info path) of the first ``name`` on ``path``, as import would find it."""
    wanted = name.lower().replace("-", "_")
    for entry in path:
        try:
            names = os.listdir(entry or ".")
        except OSError:
            continue
        for item in names:
            stem, _, kind = item.rpartition(".")
            project, _, version = stem.partition("-")
            if kind == "dist-info" and project.lower().replace("-", "_").replace(".", "_") == wanted:
                return version, os.path.join(entry, item)
    return "", ""


def read_versions(root: str = "/", environ: object = None, path: object = None) -> dict[str, tuple[str, str]]:
    """layer → (version, where it was read); a layer not found has ("", "")."""
    env = dict(os.environ if environ is None else environ)  # type: ignore[call-overload]
    entries = list(sys.path if path is None else path)  # type: ignore[call-overload]
    found = {}
    for layer in ("driver", "firmware"):
        file = f"{ASCEND_ROOT}/{layer}/version.info"
        version = _key_values(os.path.join(root, file.lstrip("/"))).get("version", "")
        found[layer] = (version, file if version else "")
    found["cann"] = _cann(root, env)
    found["python"] = (".".join(str(n) for n in sys.version_info[:3]), sys.executable)
    for name in ("torch", "torch_npu"):
        found[name] = _distribution(name, entries)
    return found


def problems(ranges: dict, who: str, found: dict) -> list[str]:
    """The findings' texts for the ``ranges`` (layer → specifier) this machine misses. NNAL is
    not read (``ascenv check`` says so as a note), nor are SoCs or vendors: they need npu-smi."""
    texts = []
    for layer, spec in ranges.items():
        if layer not in found:
            continue
        version, source = found[layer]
        try:
            ok = bool(version) and contains(layer, spec, version)
        except ValueError:
            ok = False
        if not ok:
            texts.append(text(title(who, layer, spec, version), source, fix(layer, spec)))
    return texts


def require(*, who: str = "this project", root: str = "/", environ: object = None, path: object = None, **ranges: str):
    """Raise StackMismatch when this machine is outside ``ranges`` (``cann=">=8.5.0"``,
    ``torch_npu="~=2.8"``, ...); every clause is checked before anything is raised."""
    unknown = sorted(set(ranges) - set(LAYERS))
    if unknown:
        raise TypeError(f"require(): unknown layer {unknown[0]!r}; expected one of {', '.join(LAYERS)}")
    for spec in ranges.values():
        clauses(spec)  # a malformed specifier is the caller's bug: ValueError, not a mismatch
    texts = problems(ranges, who, read_versions(root, environ, path))
    if texts:
        raise StackMismatch("; ".join(texts))
