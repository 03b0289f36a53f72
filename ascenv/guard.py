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

# Hand-written matching instead of the re module: importing re (with enum and functools) costs
# more than the whole guard may (bench/bench_guard_import.py).


def _number(token: str) -> bool:
    """[0-9]+: ASCII digits only (str.isdigit() alone accepts "²", which int() refuses)."""
    return token.isascii() and token.isdigit()


def _labelled(token: str, labels: tuple[str, ...], number_required: bool) -> tuple[str, str] | None:
    """(label, digits) when ``token`` is one of ``labels`` (any case) followed by digits."""
    lowered = token.lower()
    for label in labels:
        digits = lowered[len(label) :]
        if lowered.startswith(label) and (_number(digits) or (not digits and not number_required)):
            return token[: len(label)], digits
    return None


def ascend_key(text: str) -> tuple[tuple, tuple]:
    """(sort key, normalised parts) of a dotted Ascend version (8.2.RC1.alpha001, 25.0.rc1.1,
    9.0.0-beta.1); ValueError says why a string is not one."""
    tokens = text.strip().replace("-", ".").split(".")
    if len(tokens) < 2 or not all(tokens):
        raise ValueError("needs at least major.minor, separated by '.' or '-'")
    if not (_number(tokens[0]) and _number(tokens[1])):
        raise ValueError("major and minor must be numbers")
    major, minor = int(tokens[0]), int(tokens[1])
    parts: list = [major, minor]
    stage, stage_num = STAGE_NONE, 0
    rest = tokens[2:]
    if rest:
        head = rest.pop(0)
        staged = _labelled(head, ("rc", "t"), True)
        if _number(head):
            stage, stage_num = STAGE_FINAL, int(head)
            parts.append(stage_num)
        elif staged:
            stage = STAGE_RC if staged[0].lower() == "rc" else STAGE_T
            stage_num = int(staged[1])
            parts.append((staged[0].upper(), stage_num))
        else:
            raise ValueError(f"third part {head!r} is not a number, RC<n> or T<n>")
    pre_rank, pre_num = NO_PRE, 0
    patches: list = []
    build = -1
    while rest:
        token = rest.pop(0)
        pre = _labelled(token, ("alpha", "beta", "rc"), False)
        if pre and not patches and pre_rank == NO_PRE and build < 0:
            kind = pre[0].lower()
            if kind == "rc" and stage != STAGE_FINAL:
                raise ValueError("an rc suffix can only follow X.Y.Z")
            number = pre[1]
            if not number and rest and _number(rest[0]):
                number = rest.pop(0)  # 9.0.0-beta.1
            pre_rank, pre_num = PRE_RANK[kind], int(number or 0)
            parts.append((kind, pre_num))
        elif _number(token) and build < 0:
            patches.append(int(token))
            parts.append(int(token))
        elif _labelled(token, ("b",), True) and build < 0:
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

_PRE_LETTER = {"a": 0, "alpha": 0, "b": 1, "beta": 1, "c": 2, "rc": 2, "pre": 2, "preview": 2}
_POST_LETTER = ("post", "rev", "r")
_INF = float("inf")


def _runs(text: str) -> list[tuple[str, str]]:
    """``rc1.dev2`` → [("a", "rc"), ("d", "1"), ("s", "."), ("a", "dev"), ("d", "2")]: runs of
    letters (a), ASCII digits (d) and separators (s); anything else raises ValueError."""
    runs: list[tuple[str, str]] = []
    for char in text:
        kind = "d" if _number(char) else "a" if char.isascii() and char.isalpha() else "s" if char in "-_." else ""
        if not kind:
            raise ValueError(f"unexpected character {char!r}")
        if runs and runs[-1][0] == kind and kind != "s":
            runs[-1] = (kind, runs[-1][1] + char)
        else:
            runs.append((kind, char))
    return runs


def _pep440_parts(text: str) -> tuple[tuple[int, ...], str, tuple[int, int] | None, int | None, int | None]:
    """(release, local, pre, post, dev) of a PEP 440 version without an epoch, read as PEP 440's
    "Normalization" section allows (v prefix, case, ``-``/``_``/``.`` separators, implicit numbers,
    ``1.0-1`` post-releases); ValueError for anything else."""
    public, plus, local = text.strip().lower().partition("+")
    if plus and not local:
        raise ValueError("empty local label")
    body = public[1:] if public.startswith("v") else public
    runs = _runs(body)
    release: list[int] = []
    while runs and runs[0][0] == "d":
        release.append(int(runs.pop(0)[1]))
        if len(runs) >= 2 and runs[0] == ("s", ".") and runs[1][0] == "d":
            runs.pop(0)
        else:
            break
    if not release:
        raise ValueError("no release number")
    pre = post = dev = None

    def number() -> int:
        if runs and runs[0][0] == "s" and len(runs) > 1 and runs[1][0] == "d":
            runs.pop(0)
        return int(runs.pop(0)[1]) if runs and runs[0][0] == "d" else 0

    stage = 0  # 1 after pre, 2 after post, 3 after dev: the order PEP 440 writes them in
    while runs:
        dash = runs[0] == ("s", "-")
        if runs[0][0] == "s":
            runs.pop(0)
        if not runs:
            raise ValueError("ends with a separator")
        kind, value = runs.pop(0)
        if kind == "a" and value in _PRE_LETTER and stage < 1:
            pre, stage = (_PRE_LETTER[value], number()), 1
        elif kind == "a" and value in _POST_LETTER and stage < 2:
            post, stage = number(), 2
        elif kind == "d" and dash and stage < 2:
            post, stage = int(value), 2
        elif kind == "a" and value == "dev" and stage < 3:
            dev, stage = number(), 3
        else:
            raise ValueError(f"unexpected {value!r}")
    if local and not all(c.isascii() and (c.isalnum() or c in "-_.") for c in local):
        raise ValueError(f"local label {local!r}")
    return tuple(release), local, pre, post, dev


def pep440_key(text: str) -> tuple:
    """A sort key of a PEP 440 version, local label ignored (as specifiers ignore it): (release
    without trailing zeros, pre, post, dev), ordered as PEP 440's "Summary of permitted suffixes
    and relative ordering" says: X.devN < X.aN < X.bN < X.rcN < X < X.postN."""
    try:
        release, _, pre, post, dev = _pep440_parts(text)
    except ValueError as exc:
        raise ValueError(f"not a PEP 440 version: {text!r} ({exc})") from None
    while len(release) > 1 and release[-1] == 0:
        release = release[:-1]
    rank: tuple[float, int]
    if pre is not None:
        rank = pre
    else:
        rank = (-1, 0) if dev is not None and post is None else (_INF, 0)  # 1.0.dev0 sorts before 1.0a0
    return (release, rank, -1 if post is None else post, _INF if dev is None else dev)


def _is_pre(key: tuple) -> bool:
    return key[1][0] != _INF or key[3] != _INF


def _pep440_clause(op: str, spec: str, version: str) -> bool:
    if spec.endswith(".*"):  # ==2.8.* / !=2.8.*: a release prefix
        if op not in ("==", "!="):
            raise ValueError(f"{op}{spec}: a .* prefix goes with == or != only")
        prefix = tuple(int(p) for p in spec[:-2].split("."))
        release = _pep440_parts(version)[0] + (0,) * len(prefix)
        inside = release[: len(prefix)] == prefix
        return inside if op == "==" else not inside
    have, want = pep440_key(version.split("+", 1)[0]), pep440_key(spec)
    if op == "~=":
        numbers = _pep440_parts(spec)[0]
        if len(numbers) < 2:
            raise ValueError(f"~={spec}: ~= needs at least X.Y")
        return have >= want and _pep440_clause("==", ".".join(map(str, numbers[:-1])) + ".*", version)
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


def _distributions(names: list, path: list) -> dict[str, tuple[str, str]]:
    """name → (version, dist-info path) of the first distribution of each name on ``path``, as
    import would find it; each directory is listed once."""
    wanted = {name.lower().replace("-", "_"): name for name in names}
    found: dict[str, tuple[str, str]] = {}
    for entry in path:
        if len(found) == len(wanted):
            break
        try:
            items = os.listdir(entry or ".")
        except OSError:
            continue
        for item in items:
            if not item.endswith(".dist-info"):
                continue
            project, _, version = item[: -len(".dist-info")].partition("-")
            name = wanted.get(project.lower().replace("-", "_").replace(".", "_"))
            if name is not None and name not in found:
                found[name] = (version, os.path.join(entry, item))
    return {name: found.get(name, ("", "")) for name in names}


def read_versions(
    root: str = "/", environ: object = None, path: object = None, layers: object = LAYERS
) -> dict[str, tuple[str, str]]:
    """layer → (version, where it was read) for ``layers``; a layer not found has ("", "")."""
    wanted = set(layers)  # type: ignore[call-overload]
    found = {}
    for layer in ("driver", "firmware"):
        if layer in wanted:
            file = f"{ASCEND_ROOT}/{layer}/version.info"
            version = _key_values(os.path.join(root, file.lstrip("/"))).get("version", "")
            found[layer] = (version, file if version else "")
    if "cann" in wanted:
        found["cann"] = _cann(root, dict(os.environ if environ is None else environ))  # type: ignore[call-overload]
    if "python" in wanted:
        found["python"] = (".".join(str(n) for n in sys.version_info[:3]), sys.executable)
    names = [name for name in ("torch", "torch_npu") if name in wanted]
    if names:
        found.update(_distributions(names, list(sys.path if path is None else path)))  # type: ignore[call-overload]
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
    texts = problems(ranges, who, read_versions(root, environ, path, ranges))
    if texts:
        raise StackMismatch("; ".join(texts))
