"""torch ↔ torch_npu ↔ CANN ↔ Python: torch with its NPU plugin, the pairs, and which torch_npu to
install (the fix suggester)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any, Optional

from ascenv.checks import check, finding
from ascenv.checks._facts import active_install, has_npu_hardware, not_comparable
from ascenv.compat import source_url
from ascenv.errors import InvalidVersion
from ascenv.model import Distribution, Finding, Severity, Snapshot, normalize_name
from ascenv.versions import ProductLine, python_version, split_local, torch_release

CPU_INDEX_NOTE = "  # X+cpu wheels come from the PyTorch CPU wheel index: add --extra-index-url <your CPU wheel index>"


def _arch(snap: Snapshot) -> str:
    platform = snap.python.platform or ""
    for arch in ("aarch64", "x86_64"):
        if platform.endswith(arch):
            return arch
    return snap.host.arch or "aarch64"


def _python_xy(snap: Snapshot) -> Optional[str]:
    match = re.match(r"(\d+)\.(\d+)", snap.python.version or "")
    return f"{match.group(1)}.{match.group(2)}" if match else None


def _dist(snap: Snapshot, name: str) -> Optional[Distribution]:
    return next((d for d in snap.python.distributions if normalize_name(d.name) == name), None)


def _evidence(*dists: Optional[Distribution]) -> tuple[str, ...]:
    return tuple(d.dist_info for d in dists if d is not None)


def _pip(requirements: tuple[str, ...]) -> str:
    command = "pip install " + " ".join(requirements)
    return command + (CPU_INDEX_NOTE if "+cpu" in command else "")


@check(
    "ASC-TORCH-PLUGIN",
    layer="torch_npu",
    renamed_from=("ASC-PY-TORCH",),
    title="torch comes with torch_npu, and is not a CUDA build",
    explain="""
On Ascend, torch needs the torch_npu plugin; torch alone runs on the CPU only. On x86_64 a plain
`pip install torch` brings a CUDA build (with nvidia-* wheels) that torch_npu does not support:
the Ascend/pytorch README installs CPU torch (`torch==X.Y.Z+cpu` from the CPU index) there.
""",
)
def torch_pairing(snap: Snapshot, matrix: object) -> Iterator[Finding]:
    packages = snap.python.packages
    torch = packages.get("torch")
    if torch is None:
        return
    npu_host = has_npu_hardware(snap) or bool(snap.cann.installs)
    nvidia = sorted(n for n in packages if n.startswith("nvidia-"))
    cuda_label = "+cu" in torch
    if npu_host and (cuda_label or nvidia):
        found = f"torch {torch}" + (f" with {', '.join(nvidia[:3])}{' …' if len(nvidia) > 3 else ''}" if nvidia else "")
        base = torch.split("+", 1)[0]
        yield finding(
            "ASC-TORCH-PLUGIN",
            Severity.ERROR,
            "a CUDA build of torch on an Ascend host",
            found=found,
            expected=f"the CPU build torch=={base}" + ("+cpu" if (snap.host.arch or "") == "x86_64" else ""),
            fix=f"pip uninstall -y torch {' '.join(nvidia)}".rstrip()
            + f" && pip install torch=={base} --index-url <your CPU wheel index>",
        )
    if "torch-npu" not in packages and npu_host:
        yield finding(
            "ASC-TORCH-PLUGIN",
            Severity.WARN,
            "torch without torch_npu",
            found=f"torch {torch}, no torch_npu",
            expected="torch_npu built for this torch",
            fix="pip install torch_npu==<the release for your torch and CANN>"
            "  (see `ascenv doctor` torch_npu findings)",
        )


def _rows(matrix: Any, torch_npu: str) -> tuple[Any, ...]:
    """The matrix rows of an installed torch_npu; none without the data, or for a version that is
    not PEP 440 (pip cannot have installed it: the findings say "not comparable" instead)."""
    if matrix is None:
        return ()
    try:
        return matrix.torch_npu(torch_npu)
    except InvalidVersion:
        return ()


@check(
    "ASC-TORCH-PAIR",
    layer="torch_npu",
    title="torch_npu matches torch exactly on X.Y.Z",
    explain="""
torch_npu is built against one torch release and must be installed with exactly that X.Y.Z
(torch_npu 2.1.0.post10 → torch 2.1.0; 2.1.0rc1, 2.1.0.post17 and 2.1.0+cxx11-abi all mean 2.1.0).
From 2.1.0.post3 the wheels pin it; on x86_64 the 6.0.x…26.1.0 lines pin `torch==X+cpu`, which
the plain PyPI `torch X` does not satisfy (PEP 440 local label): `pip check` flags it and pip may
replace torch. From 2.12.0 the pin is `torch==X`. (setup.py of
github:Ascend/pytorch tags v6.0.rc1 … v26.1.0-pytorch2.12.0.)
""",
)
def torch_pair(snap: Snapshot, matrix: Any) -> Iterator[Finding]:
    packages = snap.python.packages
    torch, npu = packages.get("torch"), packages.get("torch-npu")
    if not npu:
        return
    evidence = _evidence(_dist(snap, "torch"), _dist(snap, "torch-npu"))
    if not torch:
        rows = _rows(matrix, npu)
        yield finding(
            "ASC-TORCH-PAIR",
            Severity.ERROR,
            f"torch_npu {npu} without torch",
            found=f"torch_npu {npu}, no torch distribution",
            expected="the torch release torch_npu was built for",
            evidence=evidence,
            fix=f"pip install {rows[0].torch_requirement(_arch(snap))}"
            if rows
            else "pip install torch==<the X.Y.Z of torch_npu>",
        )
        return
    try:
        wanted, have = torch_release(npu), torch_release(torch)
    except InvalidVersion as exc:
        yield finding(
            "ASC-TORCH-PAIR",
            Severity.INFO,
            "torch/torch_npu versions not comparable",
            found=exc.message,
            expected="X.Y.Z versions",
            evidence=evidence,
        )
        return
    arch = _arch(snap)
    rows = _rows(matrix, npu)
    requirement = rows[0].torch_requirement(arch) if rows else f"torch=={wanted}"
    if wanted != have:
        yield finding(
            "ASC-TORCH-PAIR",
            Severity.ERROR,
            f"torch_npu {npu} needs torch {wanted}, torch is {torch}",
            found=f"torch {torch}, torch_npu {npu}",
            expected=f"torch {wanted}.x build (torch_npu is built for one torch release)",
            evidence=evidence,
            fix=f"pip install {requirement}  (or a torch_npu built for torch {have}: see ASC-TORCH-SUGGEST)",
        )
        return
    label = split_local(torch)[1]
    cpu_pin = any(r.torch_pin.value == "cpu-local-on-x86_64" for r in rows[:1])
    if arch == "x86_64" and cpu_pin and not label.startswith("+cpu") and not label.startswith("+cu"):
        yield finding(
            "ASC-TORCH-PAIR",
            Severity.WARN,
            f"torch_npu {npu} pins torch=={wanted}+cpu on x86_64; torch {torch} has no +cpu label",
            found=f"torch {torch} (from PyPI, not the CPU wheel index)",
            expected=f"torch {wanted}+cpu",
            evidence=evidence,
            fix=f"pip install --force-reinstall {requirement}{CPU_INDEX_NOTE}",
        )
        return
    yield finding("ASC-TORCH-PAIR", Severity.OK, f"torch {torch} with torch_npu {npu}", evidence=evidence)


_GRADE = {
    "validated": (Severity.OK, "the validated pair"),
    "unverified": (Severity.INFO, "a pair the sources give as inferred or conflicting"),
    "window": (Severity.OK, "paired with it in a published table"),
    "newer-than-data": (Severity.INFO, "newer than the compatibility data"),
    "unknown": (Severity.INFO, "not documented either way"),
    "outside": (Severity.ERROR, "documented incompatible"),
}


@check(
    "ASC-TORCH-CANN",
    layer="torch_npu",
    title="torch_npu fits the active CANN",
    explain="""
Each torch_npu release line is built and validated against one CANN (the COMPATIBILITY table of
github:Ascend/pytorch); Huawei also publishes wider windows (PTA 6.0.0–7.2.0 with CANN
8.0.RC2…8.3.RC1, hiascend Pytorch/720 releasenote_0005; TorchNPU 7.3.X/26.0.X/26.1.X with CANN
8.5.X/9.0.X/9.1.X; the release notes of each branch, section 版本兼容性说明; MindIE bundles such
as CANN 8.3.RC2 with PTA 7.2.0). Grades say what is published: the validated pair and a pair a
published table lists are ok; a pair documented incompatible (an explicit N, or a reported
failure: torch_npu 2.7.1 on CANN 9.0.0 fails with `undefined symbol MsprofSysCycleTime`,
triton-ascend#326; torch_npu does not check this at import) is an error. A pair no table names
is not documented either way (a table that lists some CANN says nothing about the others): a
note naming the data's date and the nearest documented pairings, as is a CANN or torch_npu newer
than the data. A pre-release label of 8.5 and later (9.0.0-beta.2) is read as its release, a
post-release (2.12.0.post4) as a release of its line.
""",
)
def torch_cann(snap: Snapshot, matrix: Any) -> Iterator[Finding]:
    npu = snap.python.packages.get("torch-npu")
    install = active_install(snap)
    if matrix is None or not npu or install is None:
        return
    as_of = getattr(matrix, "as_of", "")
    evidence = _evidence(_dist(snap, "torch-npu")) + tuple(p for p in (install.info_file,) if p)
    odd, fit = not_comparable(install.version, ProductLine.CANN), None
    try:
        fit = None if odd else matrix.torch_npu_cann_fit(npu, install.version)
    except (LookupError, InvalidVersion):
        odd = _not_in_data(matrix, npu)
    if fit is None:
        yield finding(
            "ASC-TORCH-CANN",
            Severity.INFO,
            f"torch_npu {npu} with CANN {install.version or '?'}: unknown",
            found=odd or "",
            evidence=evidence,
            data_as_of=as_of,
        )
        return
    severity, words = _GRADE[fit.grade.value]
    row = fit.release
    read_as = f" (read as its release {fit.cann})" if fit.cann is not None and fit.cann.raw != install.version else ""
    found = _found(fit, f"{install.version}{read_as}", words, as_of)
    fix = ""
    if severity in (Severity.WARN, Severity.ERROR):
        better = [f for f in _suggestions(snap, matrix, install.version) if not _same(npu, f.release.text)]
        fix = _pip(better[0].release.pip_requirements(_arch(snap))) if better else ""
        if row.cann is not None:
            fix += ("  — or " if fix else "") + f"use CANN {row.cann} (the one torch_npu {row.text} was validated with)"
    yield finding(
        "ASC-TORCH-CANN",
        severity,
        f"torch_npu {npu} with CANN {install.version}: {fit.grade.value}",
        found=found,
        expected="the validated pair",
        evidence=evidence + (f"compat: {fit.source}",),
        fix=fix,
        source=source_url(fit.source),
        data_as_of=as_of,
    )


def _found(fit: Any, cann: str, words: str, as_of: str) -> str:
    row, grade = fit.release, fit.grade.value
    nearest = ", ".join(fit.nearest)
    if grade == "unknown" and fit.nearest and fit.nearest[0].startswith("torch_npu"):
        return (
            f"no pairing published for torch_npu {row.text} yet (compatibility data as of {as_of}); "
            f"the nearest documented are {nearest}"
        )
    if grade in ("unknown", "newer-than-data"):
        newer = f"CANN {cann} is newer than every release in the compatibility data (as of {as_of})"
        head = (
            newer
            if grade == "newer-than-data"
            else f"no published table pairs torch_npu {row.text} with CANN {cann} (data as of {as_of})"
        )
        return f"{head}; torch_npu {row.text} is documented with {nearest or 'no CANN'}"
    if grade == "outside":
        found = f"torch_npu {row.text} on CANN {cann} is {words} ({fit.source})"
        return found + (f"; its published pairings: {nearest}" if nearest else "")
    found = f"torch_npu {row.text} was validated with CANN {row.cann or 'unknown'}; CANN {cann} is {words}"
    if fit.window is not None:
        found += f" ({fit.window.provenance.source[0]})"
    return found


def _not_in_data(matrix: Any, npu: str) -> str:
    """Why a torch_npu has no row: newer than the data, a release of a known line that the data
    does not list yet (2.12.0.post4 is a post-release of 2.12.0, PEP 440), or a daily/source build."""
    newest = matrix.newest_torch_npu() if hasattr(matrix, "newest_torch_npu") else None
    public, label = split_local(npu)
    try:
        version = python_version(public)
    except InvalidVersion:
        return f"torch_npu {npu} is not in compat/torch_npu.toml (not a release version)"
    as_of = getattr(matrix, "as_of", "")
    line = tuple(
        r
        for r in matrix.torch_npu_releases
        if r.version.release == version.release and r.cann is not None and not r.version.is_prerelease
    )
    if version.is_devrelease:
        return f"torch_npu {npu} is a daily build: no pairing is published for dailies"
    if line and not label:
        pairs = ", ".join(dict.fromkeys(f"{r.text} with CANN {r.cann}" for r in line[:3]))
        return (
            f"torch_npu {npu} is a release of the {line[0].torch} line not in the compatibility data (as of "
            f"{as_of}): no pairing is known for it yet; that line is documented as {pairs}"
        )
    if newest is not None and version > newest.version:
        return (
            f"torch_npu {npu} is newer than the compatibility data (as of {as_of}; newest row "
            f"{newest.text}): no pairing is known yet"
        )
    return f"torch_npu {npu} is not in compat/torch_npu.toml (a source, daily or private build?)"


def _suggestions(snap: Snapshot, matrix: Any, cann: Optional[str]) -> tuple:
    """torch_npu releases on PyPI for the installed torch that fit this CANN, best first."""
    torch = snap.python.packages.get("torch")
    if not torch or not cann:
        return ()
    try:
        fits = matrix.torch_npu_for(cann, torch, arch=_arch(snap), python=_python_xy(snap))
    except InvalidVersion:
        return ()
    return tuple(f for f in fits if f.release.on_pypi)


@check(
    "ASC-TORCH-SUGGEST",
    layer="torch_npu",
    suggests=True,
    title="which torch_npu fits the installed torch and CANN",
    explain="""
The fix suggester: for the active CANN and the torch X.Y.Z installed, the torch_npu releases on
PyPI (compat/torch_npu.toml, every PyPI version has a row) that were validated with that CANN,
then those inside a published window, newest first, keeping only wheels for this Python and
architecture; with the pip command, `torch==X+cpu` on x86_64 where the wheels pin it.
""",
)
def suggest_torch_npu(snap: Snapshot, matrix: Any) -> Iterator[Finding]:
    torch = snap.python.packages.get("torch")
    install = active_install(snap)
    if matrix is None or not torch or install is None or not_comparable(install.version, ProductLine.CANN):
        return
    installed = snap.python.packages.get("torch-npu")
    fits = _suggestions(snap, matrix, install.version)
    arch, python = _arch(snap), _python_xy(snap)
    if fits:
        best = fits[0]
        if installed and _same(installed, best.release.text):
            return
        others = ", ".join(f"{f.release.text} ({f.grade.value})" for f in fits[1:4])
        yield finding(
            "ASC-TORCH-SUGGEST",
            Severity.INFO,
            f"for CANN {install.version} and torch {torch}: torch_npu {best.release.text} ({best.grade.value})",
            found=f"installed: torch_npu {installed or 'none'}" + (f"; also fitting: {others}" if others else ""),
            evidence=(f"compat: {best.release.provenance.source[0]}",),
            fix=_pip(best.release.pip_requirements(arch)),
        )
        return
    cann = matrix.cann_release(install.version)
    validated = [
        r
        for r in matrix.torch_npu_releases
        if r.on_pypi
        and r.cann is not None
        and cann is not None
        and r.cann.commercial() == cann.version
        and not r.version.is_prerelease
        and (python is None or python in r.python_for(arch))
    ]
    newest = max(validated, key=lambda r: r.version, default=None)
    # Advice, not a verdict: nothing documented is a note (ASC-TORCH-CANN grades the installed one).
    yield finding(
        "ASC-TORCH-SUGGEST",
        Severity.INFO,
        f"no torch_npu on PyPI is documented for torch {torch} with CANN {install.version}",
        found=f"torch_npu validated with CANN {install.version}: "
        + (
            ", ".join(sorted({f"{r.text} (torch {r.torch})" for r in validated}))
            or f"none documented (compatibility data as of {getattr(matrix, 'as_of', '')})"
        ),
        expected=f"a torch_npu release for torch {torch}",
        fix=_pip(newest.pip_requirements(arch)) if newest else "",
    )


def _same(a: str, b: str) -> bool:
    try:
        return python_version(split_local(a)[0]) == python_version(b)
    except InvalidVersion:
        return False


_CP_TAG = re.compile(r"cp(\d)(\d+)")


@check(
    "ASC-TORCH-PYTHON",
    layer="torch_npu",
    title="the torch_npu wheel is for this Python",
    explain="""
torch_npu wheels are built per CPython version (cp38 … cp312): read the supported Python from the
wheel tag of the installed torch_npu, not from the classifiers (the 2.12.0 METADATA still lists
3.8/3.9 and has no Requires-Python). A wheel for another Python (a copied site-packages, a
--target install) fails to import its C extension. For a version not installed yet, the PyPI
wheel list in compat/torch_npu.toml says which Pythons have a wheel.
""",
)
def torch_python(snap: Snapshot, matrix: Any) -> Iterator[Finding]:
    dist, python = _dist(snap, "torch-npu"), _python_xy(snap)
    if dist is None or python is None:
        return
    tagged = sorted(
        {f"{m.group(1)}.{m.group(2)}" for tag in dist.wheel_tags for m in _CP_TAG.finditer(tag.split("-")[0])}
    )
    rows = _rows(matrix, dist.version) if not tagged else ()
    supported = tagged or (list(rows[0].python_for(_arch(snap))) if rows else [])
    source = "its wheel tags" if tagged else "the PyPI wheel list (compat/torch_npu.toml)"
    if not supported:
        return
    if python in supported:
        yield finding(
            "ASC-TORCH-PYTHON",
            Severity.OK,
            f"torch_npu {dist.version} supports Python {python}",
            evidence=_evidence(dist),
        )
        return
    yield finding(
        "ASC-TORCH-PYTHON",
        Severity.ERROR if tagged else Severity.WARN,
        f"torch_npu {dist.version} is not built for Python {python}",
        found=f"Python {snap.python.version}; {source}: {', '.join(supported)}",
        expected=f"a torch_npu wheel for cp{python.replace('.', '')}",
        evidence=_evidence(dist),
        fix=f"{snap.python.executable or 'python'} -m pip install --force-reinstall torch-npu=={dist.version}  "
        f"# or use Python {supported[-1]}",
    )
