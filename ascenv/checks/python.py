"""The target Python environment: duplicates, torch without torch_npu, CUDA torch on an NPU host."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator

from ascenv.checks import check, finding
from ascenv.checks.npu import has_npu_hardware
from ascenv.model import Finding, Severity, Snapshot, normalize_name


@check(
    "ASC-PY-PROBE",
    layer="python",
    title="the target Python could be read",
    explain="""
ascenv reads the installed distributions of the target interpreter (python3 on PATH, or
--python) from its sys.path, without importing torch. If the interpreter is missing or fails,
the Python layer cannot be checked.
""",
)
def python_probe(snap: Snapshot, matrix: object) -> Iterator[Finding]:
    for error in snap.python.errors:
        yield finding(
            "ASC-PY-PROBE",
            Severity.WARN,
            "target Python not read",
            found=error.message,
            evidence=(error.source,) if error.source else (),
            fix="pass the interpreter you use: ascenv doctor --python /path/to/python",
        )


@check(
    "ASC-PY-DUPLICATE",
    layer="python",
    title="one installed copy per distribution",
    explain="""
Two dist-info (or egg-info) directories for one name on sys.path — an interrupted upgrade, a
user-site copy, a stale editable install — make `pip list` and the code that runs disagree
(vllm-ascend#3538). The first copy on sys.path wins.
""",
)
def duplicates(snap: Snapshot, matrix: object) -> Iterator[Finding]:
    seen: dict[str, list] = defaultdict(list)
    for dist in snap.python.distributions:
        seen[normalize_name(dist.name)].append(dist)
    for name, dists in sorted(seen.items()):
        # Distro packages sometimes ship a dist-info and an egg-info of one release side by side
        # (Debian's python3-cryptography): same version, same place, nothing to fix.
        if len({(d.version, d.location) for d in dists}) > 1:
            yield finding(
                "ASC-PY-DUPLICATE",
                Severity.WARN,
                f"{name} is installed {len(dists)} times",
                found="; ".join(f"{d.version} in {d.location}" for d in dists),
                expected="one copy",
                fix=f"{snap.python.executable or 'python'} -m pip uninstall -y {name}  # repeat until none is left, then reinstall once",
            )


@check(
    "ASC-PY-TORCH",
    layer="torch_npu",
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
            "ASC-PY-TORCH",
            Severity.ERROR,
            "a CUDA build of torch on an Ascend host",
            found=found,
            expected=f"the CPU build torch=={base}" + ("+cpu" if (snap.host.arch or "") == "x86_64" else ""),
            fix=f"pip uninstall -y torch {' '.join(nvidia)}".rstrip()
            + f" && pip install torch=={base} --index-url <your CPU wheel index>",
        )
    if "torch-npu" not in packages and npu_host:
        yield finding(
            "ASC-PY-TORCH",
            Severity.WARN,
            "torch without torch_npu",
            found=f"torch {torch}, no torch_npu",
            expected="torch_npu built for this torch",
            fix="pip install torch_npu==<the release for your torch and CANN>  (see `ascenv doctor` torch_npu findings)",
        )
