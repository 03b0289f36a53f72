"""The layer above torch_npu: vllm-ascend, triton-ascend, NNAL/ATB and MindIE against the pairings
their publishers document (compat/stacks.toml). Grades as everywhere: a documented pairing is ok,
a documented requirement not met is an error with its source, a pairing nobody documents is info
naming the data's date and the nearest documented pairs."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any, Optional

from ascenv.checks import check, finding
from ascenv.checks._facts import active_install, device_units, parse
from ascenv.compat import source_url
from ascenv.errors import InvalidVersion
from ascenv.model import Finding, Severity, Snapshot, StackPart
from ascenv.versions import AscendVersion, ProductLine, python_version


def _part(snap: Snapshot, name: str) -> Optional[StackPart]:
    return next((p for p in snap.stack if p.name == name), None)


def _cann(snap: Snapshot) -> tuple[Optional[str], Optional[AscendVersion]]:
    install = active_install(snap)
    text = install.version if install else None
    return text, parse(text, ProductLine.CANN)


def _same_release(installed: AscendVersion, documented: AscendVersion) -> bool:
    """8.3.RC2 and its patches and builds (8.3.RC2.1) are the documented 8.3.RC2."""
    return installed == documented or installed.startswith(documented)


def _version(text: Optional[str]) -> Any:
    """A PEP 440 version without its local label (2.9.0.post1+git4c901a4 -> 2.9.0.post1)."""
    if not text:
        return None
    try:
        return python_version(text.split("+", 1)[0])
    except InvalidVersion:
        return None


def _source(provenance: Any) -> str:
    return source_url(provenance.source[0])


def _nearest(documented: list[str], limit: int = 3) -> str:
    return ", ".join(documented[:limit]) + (" …" if len(documented) > limit else "")


@check(
    "ASC-STACK-VLLM",
    layer="stack",
    title="vllm-ascend runs with the vllm, torch_npu, triton-ascend and CANN of its release",
    explain="""
vllm-ascend publishes, per release, the vLLM, Python, CANN, torch/torch_npu and Triton-Ascend it
is built and tested with (docs/source/community/versioning_policy.md, "Release compatibility
matrix"), and pins torch-npu and triton-ascend exactly in its requirements: "use the vLLM and vLLM
Ascend versions from the same release row". A vllm, torch_npu or triton-ascend other than the
row's, or a Python outside its range, is an error; a CANN other than the row's "Stable CANN"
and the CANN of the release's official images is not documented either way: info.
""",
)
def vllm_ascend(snap: Snapshot, matrix: Any) -> Iterator[Finding]:
    part = _part(snap, "vllm-ascend")
    if part is None or matrix is None:
        return
    installed = _version(part.version)
    rows = [r for r in matrix.vllm_ascend if installed is not None and r.version == installed]
    images = [i for i in matrix.images if installed is not None and i.vllm_ascend == installed]
    as_of = matrix.as_of
    if not rows and not images:
        known = sorted((r for r in matrix.vllm_ascend), key=lambda r: r.version, reverse=True)
        yield finding(
            "ASC-STACK-VLLM",
            Severity.INFO,
            f"vllm-ascend {part.version} is not in the data",
            found=f"vllm-ascend {part.version}",
            expected="a release of vllm-ascend's compatibility matrix",
            evidence=(part.path,),
            source=_source(known[0].provenance) if known else "",
            data_as_of=as_of,
            fix=f"nothing to do if it works; documented releases: {_nearest([r.text for r in known])}",
        )
        return
    problems = _row_problems(snap, rows[0]) if rows else []
    source = _source(rows[0].provenance if rows else images[0].provenance)
    for found, expected, fix in problems:
        yield finding(
            "ASC-STACK-VLLM",
            Severity.ERROR,
            f"vllm-ascend {part.version} is released for {expected}",
            found=f"{found} beside vllm-ascend {part.version}",
            expected=expected,
            evidence=(part.path,),
            fix=fix,
            source=source,
            data_as_of=as_of,
        )
    cann_text, cann = _cann(snap)
    if cann is None:
        if not problems:
            yield finding(
                "ASC-STACK-VLLM",
                Severity.OK,
                f"vllm-ascend {part.version} with the vllm and torch_npu of its release",
                source=source,
            )
        return
    documented = [r.cann for r in rows] + [i.cann for i in images]
    if any(_same_release(cann, d) for d in documented):
        if not problems:
            yield finding(
                "ASC-STACK-VLLM",
                Severity.OK,
                f"vllm-ascend {part.version} with CANN {cann_text}: documented",
                source=source,
            )
        return
    texts = list(dict.fromkeys(str(d) for d in documented))
    yield finding(
        "ASC-STACK-VLLM",
        Severity.INFO,
        f"vllm-ascend {part.version} with CANN {cann_text}: not documented",
        found=f"CANN {cann_text}",
        expected=f"CANN {' or '.join(texts)} (the release's matrix row and official images)",
        evidence=(part.path,),
        source=source,
        data_as_of=as_of,
    )


def _row_problems(snap: Snapshot, row: Any) -> list[tuple[str, str, str]]:
    """(found, expected, fix) for each package of the row's release that differs."""
    packages = snap.python.packages
    problems = []
    vllm = _version(packages.get("vllm"))
    if vllm is not None and not any(vllm.release == v.release for v in row.vllm):
        wanted = " or ".join(str(v) for v in row.vllm)
        problems.append((f"vllm {packages['vllm']}", f"vllm {wanted}", f"pip install vllm=={row.vllm[0]}"))
    torch_npu = _version(packages.get("torch-npu"))
    if torch_npu is not None and torch_npu != _version(str(row.torch_npu)):
        problems.append(
            (
                f"torch_npu {packages['torch-npu']}",
                f"torch_npu {row.torch_npu} (torch {row.torch})",
                f"pip install torch=={row.torch} torch-npu=={row.torch_npu}",
            )
        )
    python = _python_outside(snap.python.version, row.python)
    if python is not None:
        problems.append(
            (f"Python {python}", f"Python {row.python}", f"use a Python {row.python} (a venv or the release image)")
        )
    triton = _version(packages.get("triton-ascend"))
    if triton is not None and row.triton_ascend is not None and triton != row.triton_ascend:
        problems.append(
            (
                f"triton-ascend {packages['triton-ascend']}",
                f"triton-ascend {row.triton_ascend}",
                f"pip install triton-ascend=={row.triton_ascend}",
            )
        )
    return problems


def _python_outside(version: Optional[str], spec: str) -> Optional[str]:
    """``version`` when the row's Python range (``>=3.10,<3.13``) does not hold it, else None."""
    from packaging.specifiers import InvalidSpecifier, SpecifierSet

    release = _version(version)
    try:
        return version if release is not None and release not in SpecifierSet(spec) else None
    except InvalidSpecifier:
        return None


@check(
    "ASC-STACK-TRITON",
    layer="stack",
    title="triton-ascend has a CANN it is released for and the glibc its wheel needs",
    explain="""
Triton-Ascend compiles kernels with the compiler of the installed CANN; its installation guide
lists, per release, the CANN versions to choose from ("请选择如下版本之一"): 3.2.1 with 9.0.0,
3.2.0 with 8.5.0, 3.2.0rc4 with 8.3.RC2/8.3.RC1. A CANN older than every one listed for the
release is an error (its compiler lacks what the release emits, e.g. bishengir "Cannot find
option named ..."); a newer or in-between one that is not listed is not documented: info, unless
an official image (sglang's NPU Dockerfiles, vllm-ascend's triton-ascend pin) installs that
triton-ascend on that CANN: known-good. Where the table asks for a newer CANN and an official
image installs the pair anyway (sglang's A2/A3 image: 3.2.1 on 8.5.0), the sources disagree: a
warning naming both, never an error. Its
wheels are manylinux (glibc 2.27+, release note): a glibc older than the wheel's manylinux tag
(PEP 600: manylinux_X_Y needs glibc X.Y) cannot load it. It supports Atlas A2/A3 (quick start); on
a 310P, bishengir-compile fails with "Cannot find option named 'Ascend310P3'" (vllm-ascend#7423)
and its maintainers have "no plans to support Ascend 310P3" (triton-ascend#1002): an error.
""",
)
def triton_ascend(snap: Snapshot, matrix: Any) -> Iterator[Finding]:
    part = _part(snap, "triton-ascend")
    if part is None:
        return
    yield from _glibc(snap, part, matrix)
    yield from _compiler(snap, part)
    if matrix is None:
        return
    yield from _products(snap, part, matrix)
    installed = _version(part.version)
    row = next((r for r in matrix.triton_ascend if installed is not None and r.version == installed), None)
    cann_text, cann = _cann(snap)
    if cann is None:
        return
    image = next((i for i in matrix.images if i.triton_ascend == installed and _same_release(cann, i.cann)), None)
    if image is not None and row is not None and all(cann < c for c in row.cann):
        # the release's table asks for a newer CANN, an official image installs the pair: the sources
        # disagree (CONFLICT), reported at a lower confidence, never as a failure
        yield finding(
            "ASC-STACK-TRITON",
            Severity.WARN,
            f"triton-ascend {part.version} with CANN {cann_text}: the sources disagree",
            found=f"an official image installs triton-ascend {part.version} on CANN {cann_text} "
            f"({_source(image.provenance)}); Triton-Ascend's table lists it for CANN "
            + " or ".join(str(c) for c in row.cann),
            expected=f"CANN {' or '.join(str(c) for c in row.cann)} (Triton-Ascend's table)",
            evidence=(part.path, f"compat: {row.provenance.source[0]}", f"compat: {image.provenance.source[0]}"),
            fix=f"keep the official image's pairing, or install CANN {row.cann[0]} (Triton-Ascend's table), "
            f"or the triton-ascend released for CANN {cann_text}" + _older_release(matrix, cann),
            source=_source(row.provenance),
            data_as_of=matrix.as_of,
        )
        return
    if image is not None and (row is None or not any(_same_release(cann, c) for c in row.cann)):
        yield finding(
            "ASC-STACK-TRITON",
            Severity.OK,
            f"triton-ascend {part.version} with CANN {cann_text}: known-good (an official image installs both)",
            source=_source(image.provenance),
        )
        return
    if row is None:
        known = sorted(matrix.triton_ascend, key=lambda r: r.version, reverse=True)
        yield finding(
            "ASC-STACK-TRITON",
            Severity.INFO,
            f"triton-ascend {part.version} is not in the data",
            found=f"triton-ascend {part.version} with CANN {cann_text}",
            expected="a release of Triton-Ascend's CANN table",
            evidence=(part.path,),
            source=_source(known[0].provenance) if known else "",
            data_as_of=matrix.as_of,
            fix=f"documented: {_nearest([f'{r.version} with CANN {r.cann[0]}' for r in known])}",
        )
        return
    listed = " or ".join(str(c) for c in row.cann)
    source = _source(row.provenance)
    if any(_same_release(cann, c) for c in row.cann):
        yield finding(
            "ASC-STACK-TRITON",
            Severity.OK,
            f"triton-ascend {part.version} with CANN {cann_text}: documented",
            source=source,
        )
    elif all(cann < c for c in row.cann):
        yield finding(
            "ASC-STACK-TRITON",
            Severity.ERROR,
            f"triton-ascend {part.version} needs a newer CANN than {cann_text}",
            found=f"triton-ascend {part.version} with CANN {cann_text}",
            expected=f"CANN {listed}",
            evidence=(part.path,),
            fix=f"install CANN {row.cann[0]}, or the triton-ascend released for CANN {cann_text}"
            + _older_release(matrix, cann),
            source=source,
            data_as_of=matrix.as_of,
        )
    else:
        yield finding(
            "ASC-STACK-TRITON",
            Severity.INFO,
            f"triton-ascend {part.version} with CANN {cann_text}: not documented",
            found=f"CANN {cann_text}",
            expected=f"CANN {listed}",
            evidence=(part.path,),
            source=source,
            data_as_of=matrix.as_of,
        )


_COMPILER_SOURCE = (
    "https://github.com/triton-lang/triton-ascend/blob/13267ceebff5142d856c114e89a4ba41d09ae788/"
    "third_party/ascend/backend/utils.py"
)


def _compiler(snap: Snapshot, part: StackPart) -> Iterator[Finding]:
    """No bishengir-compile where triton-ascend looks for one: its first kernel compile raises
    "Couldn't find executable bishengir-compile or TRITON_NPU_COMPILER_PATH"."""
    if part.compiler_from != "not found":  # found, or a snapshot written before it was looked for
        return
    cann = active_install(snap)
    yield finding(
        "ASC-STACK-TRITON",
        Severity.ERROR,
        f"triton-ascend {part.version} finds no bishengir-compile",
        found="no bishengir-compile beside its backend, on PATH, or under TRITON_NPU_COMPILER_PATH",
        expected="CANN's bishengir-compile on PATH (its set_env.sh), or one bundled with triton-ascend",
        evidence=(part.path,),
        fix=f"source {cann.set_env}" if cann is not None and cann.set_env else "source <CANN>/set_env.sh",
        source=_COMPILER_SOURCE,
    )


# The chip part of a quay.io/ascend/cann tag -> its compute unit (the ops package each tag's
# Dockerfile installs: Ascend-cann-910b-ops, -A3-ops, -310p-ops, -950-ops).
_IMAGE_CHIP_UNITS = {"910b": "ascend910b", "a3": "ascend910_93", "310p": "ascend310p", "950": "ascend950"}


def _products(snap: Snapshot, part: StackPart, matrix: Any) -> Iterator[Finding]:
    """A chip family the publisher rules out (a maintainer's "no plans to support", after reported
    bishengir failures) is an error; one it neither lists nor rules out is a note."""
    rows = [p for p in matrix.products if p.package == part.name]
    supported = {u for p in rows if p.kind == "supported" for u in p.compute_units}
    # an official image that installs it for a chip (sglang's npu-950.Dockerfile) is known-good there
    supported |= {_IMAGE_CHIP_UNITS.get(i.chip, i.chip) for i in matrix.images if i.triton_ascend is not None}
    for unit in device_units(snap, matrix):
        refusal = next((p for p in rows if p.kind == "unsupported" and unit in p.compute_units), None)
        if refusal is not None:
            yield finding(
                "ASC-STACK-TRITON",
                Severity.ERROR,
                f"triton-ascend does not compile for {unit}",
                found=f"triton-ascend {part.version} on {unit} NPUs",
                expected=f"an NPU of {', '.join(sorted(supported)) or 'a supported family'}",
                evidence=(part.path,),
                fix="run the model without Triton kernels on this NPU (its framework's non-Triton path), "
                "or on an Atlas A2/A3",
                source=_source(refusal.provenance),
                data_as_of=matrix.as_of,
            )
        elif rows and unit not in supported:
            yield finding(
                "ASC-STACK-TRITON",
                Severity.INFO,
                f"triton-ascend on {unit}: not documented",
                found=f"triton-ascend {part.version} on {unit} NPUs",
                expected=f"the families it lists: {', '.join(sorted(supported))}",
                evidence=(part.path,),
                source=_source(next(p for p in rows if p.kind == "supported").provenance) if supported else "",
                data_as_of=matrix.as_of,
            )


def _older_release(matrix: Any, cann: AscendVersion) -> str:
    fits = [r for r in matrix.triton_ascend if any(_same_release(cann, c) for c in r.cann)]
    return f" (pip install triton-ascend=={max(fits, key=lambda r: r.version).version})" if fits else ""


_MANYLINUX = re.compile(r"manylinux_(\d+)_(\d+)_")
_LEGACY = {"manylinux2014": (2, 17), "manylinux2010": (2, 12), "manylinux1": (2, 5)}


def wheel_glibc(tags: tuple[str, ...]) -> Optional[tuple[int, int]]:
    """The glibc a wheel's platform tag needs (PEP 600 manylinux_X_Y; PEP 599's aliases)."""
    floors = []
    for tag in tags:
        match = _MANYLINUX.search(tag)
        if match:
            floors.append((int(match.group(1)), int(match.group(2))))
        floors += [v for k, v in _LEGACY.items() if f"{k}_" in tag]
    return min(floors) if floors else None


def _glibc(snap: Snapshot, part: StackPart, matrix: Any) -> Iterator[Finding]:
    host = re.match(r"(\d+)\.(\d+)", snap.host.glibc or "")
    if host is None:
        return
    have = (int(host.group(1)), int(host.group(2)))
    floor, source = (
        wheel_glibc(part.wheel_tags),
        "PEP 600 (manylinux_X_Y needs glibc X.Y): https://peps.python.org/pep-0600/",
    )
    if floor is None and matrix is not None:
        installed = _version(part.version)
        # sources that disagree (CONFLICT rows) give the lowest floor: a disputed higher one is no error
        rows = [f for f in matrix.glibc_floors if f.package == part.name and f.version == installed]
        row = min(rows, key=lambda f: tuple(int(p) for p in f.glibc.split("."))) if rows else None
        if row is not None:
            major, minor = row.glibc.split(".")
            floor, source = (int(major), int(minor)), _source(row.provenance)
    if floor is not None and have < floor:
        need = f"{floor[0]}.{floor[1]}"
        yield finding(
            "ASC-STACK-TRITON",
            Severity.ERROR,
            f"triton-ascend {part.version} needs glibc {need}",
            found=f"glibc {snap.host.glibc}",
            expected=f"glibc {need} or newer",
            evidence=(part.path,),
            fix=f"run it on an OS with glibc {need} or newer (or in such a container image)",
            source=source,
            data_as_of=matrix.as_of if matrix is not None else "",
        )


@check(
    "ASC-STACK-NNAL",
    layer="stack",
    title="NNAL (ATB) is the CANN's release and one C++ ABI build is selected",
    explain="""
NNAL (ATB, libatb.so) is released with CANN: the official CANN images install
Ascend-cann-nnal_<v> of the CANN <v> they carry (github:Ascend/cann-container-image Dockerfiles).
Another pairing is not documented (info); "undefined symbol ...atb..." from torch_npu's ATB plugin
is then the first suspect. NNAL ships two C++ ABI builds (atb/cxx_abi_0, atb/cxx_abi_1);
nnal/atb/set_env.sh selects the one matching torch's _GLIBCXX_USE_CXX11_ABI as ATB_HOME_PATH.
""",
)
def nnal(snap: Snapshot, matrix: Any) -> Iterator[Finding]:
    cann_text, cann = _cann(snap)
    for part in (p for p in snap.stack if p.name == "nnal-atb"):
        atb = parse(part.version, ProductLine.CANN)
        if len(part.abi_variants) > 1 and part.abi_selected is None:
            yield finding(
                "ASC-STACK-NNAL",
                Severity.INFO,
                f"NNAL {part.version or '?'}: no C++ ABI build selected",
                found=f"{', '.join(part.abi_variants)} installed in {part.path}, ATB_HOME_PATH does not name one",
                expected="ATB_HOME_PATH=<nnal>/atb/latest/atb/cxx_abi_<0|1>",
                fix=f"source {part.path.rsplit('/', 1)[0]}/set_env.sh",
            )
        if atb is None or cann is None:
            continue
        images = [i for i in (matrix.images if matrix is not None else ()) if i.nnal is not None]
        source = _source(images[0].provenance) if images else ""
        if _same_release(atb, cann) or _same_release(cann, atb):
            yield finding(
                "ASC-STACK-NNAL", Severity.OK, f"NNAL {part.version} with CANN {cann_text}: one release", source=source
            )
        else:
            yield finding(
                "ASC-STACK-NNAL",
                Severity.INFO,
                f"NNAL {part.version} with CANN {cann_text}: not documented",
                found=f"NNAL {part.version} ({part.source}), CANN {cann_text}",
                expected=f"NNAL {cann_text} (the official images install the NNAL of their CANN)",
                evidence=(part.source,),
                fix=f"install Ascend-cann-nnal_{cann_text} if torch_npu's ATB plugin fails to load",
                source=source,
                data_as_of=matrix.as_of if matrix is not None else "",
            )


@check(
    "ASC-STACK-MINDIE",
    layer="stack",
    title="MindIE runs on the CANN of its release",
    explain="""
"The MindIE, CANN, and Ascend Extension for PyTorch versions must match" (MindIE installation
guide, version mapping); the MindIE release table lists the CANN of each MindIE release ("请勿跨版本
混用各组件": do not mix components across versions). A CANN the row does not name is an error.
""",
)
def mindie(snap: Snapshot, matrix: Any) -> Iterator[Finding]:
    part = _part(snap, "mindie")
    cann_text, cann = _cann(snap)
    if part is None or matrix is None or cann is None:
        return
    version = parse(part.version, ProductLine.CANN)
    rows = [r for r in matrix.mindie if version is not None and _same_release(version, r.version)]
    if not rows:
        yield finding(
            "ASC-STACK-MINDIE",
            Severity.INFO,
            f"MindIE {part.version} is not in the data",
            found=f"MindIE {part.version} with CANN {cann_text}",
            expected="a release of MindIE's version table",
            evidence=(part.source,),
            data_as_of=matrix.as_of,
            fix=f"documented: {_nearest([f'MindIE {r.text} with CANN {r.cann}' for r in matrix.mindie])}",
        )
        return
    listed = " or ".join(str(r.cann) for r in rows)
    source = _source(rows[0].provenance)
    if any(_same_release(cann, r.cann) for r in rows):
        yield finding("ASC-STACK-MINDIE", Severity.OK, f"MindIE {part.version} with CANN {cann_text}", source=source)
        return
    yield finding(
        "ASC-STACK-MINDIE",
        Severity.ERROR,
        f"MindIE {part.version} is released for CANN {listed}",
        found=f"MindIE {part.version} with CANN {cann_text}",
        expected=f"CANN {listed}",
        evidence=(part.source,),
        fix=f"install CANN {rows[0].cann}, or the MindIE released for CANN {cann_text}",
        source=source,
        data_as_of=matrix.as_of,
    )


@check(
    "ASC-STACK-JIT",
    layer="stack",
    title="a JIT front-end's sources carry what the installed CANN needs of them",
    explain="""
A JIT front-end builds its kernels at run time with the compiler of the installed CANN, so a CANN
release that changes that compiler can need a change of the front-end's own sources; without it
the kernels do not build, or build and fault on the device. tilelang-ascend's AscendNPU IR route
documents two for CANN 8.5 ("TileLang now supports CANN 8.5", its README's news, naming both):
PR #334 runs bishengir's adapt-triton-kernel pass itself, which CANN 8.5 moved from the HIVM to
the HFusion pipeline that TileLang does not run ("SUSPECT REMOTE ERROR, EE8888" at run time
without it), and PR #346 adds CANN 8.5's pkg_inc include directory for runtime/rt.h. Those changes
are compat/stacks.toml's [[jit_change]] rows, generated from the saved pull requests; the probe
reads the front-end's Python sources (a checkout on PYTHONPATH, as its install script sets, or
its distribution) for the strings each change adds. A front-end on a route a change concerns
(its sources name bishengir) whose sources lack the change, on the CANN line that needs it, is an
error; the Ascend C route (no bishengir) is not concerned; a CANN line no change is documented
for is info, not an error.
""",
)
def jit_frontend(snap: Snapshot, matrix: Any) -> Iterator[Finding]:
    if matrix is None:
        return
    cann_text, cann = _cann(snap)
    for part in snap.stack:
        changes = [c for c in matrix.jit_changes if c.frontend == part.name]
        if part.found is None or not changes or cann is None:
            continue
        name = f"{part.name} {part.version or '(version unknown)'}"
        source = _source(changes[0].provenance)
        unread = [c for c in changes if not set(c.uses + c.has) <= set(part.sought)]
        if unread:
            yield finding(
                "ASC-STACK-JIT",
                Severity.INFO,
                f"{name}: its sources were not read for what CANN {unread[0].cann} needs of them",
                found=f"a snapshot that looked for {', '.join(part.sought) or 'nothing'} in {part.path}",
                fix="take the snapshot again with this ascenv (`ascenv snapshot -o FILE`)",
                evidence=(part.path,),
                source=source,
            )
            continue
        needed = [c for c in changes if c.cann.contains(cann)]
        route = [c for c in needed if set(c.uses) & set(part.found)]
        missing = [c for c in route if not set(c.has) & set(part.found)]
        if missing:
            yield finding(
                "ASC-STACK-JIT",
                Severity.ERROR,
                f"{name} lacks what CANN {cann_text} needs of it: it builds kernels for an older CANN's compiler",
                found=f"{part.path}: no {' / '.join(' or '.join(c.has) for c in missing)} in its sources",
                expected="; ".join(f"{c.change} ({c.fixed_in})" for c in missing),
                evidence=(part.path, f"compat: {missing[0].provenance.source[0]}"),
                fix=f"update {part.name} to a version with {', '.join(c.fixed_in for c in missing)} and rebuild it "
                "(in its checkout: git pull, then its install script), or install the CANN it was made for; "
                "then clear its kernel cache so that no kernel of the old build is reused",
                source=_source(missing[0].provenance),
                data_as_of=matrix.as_of,
            )
        elif route:
            yield finding(
                "ASC-STACK-JIT",
                Severity.OK,
                f"{name} has what CANN {cann_text} needs of it ({', '.join(c.fixed_in for c in route)})",
                evidence=(part.path,),
                source=source,
            )
        elif needed:
            yield finding(
                "ASC-STACK-JIT",
                Severity.OK,
                f"{name} does not compile through {' or '.join(needed[0].uses)}: "
                f"CANN {cann_text}'s changes do not concern it",
                evidence=(part.path,),
                source=source,
            )
        else:
            yield finding(
                "ASC-STACK-JIT",
                Severity.INFO,
                f"{name} with CANN {cann_text}: no change of its sources is documented for this CANN",
                found=f"changes documented for CANN {', '.join(dict.fromkeys(str(c.cann) for c in changes))}",
                evidence=(part.path,),
                source=source,
                data_as_of=matrix.as_of,
            )
