"""The target Python environment: read, one copy of each distribution."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator

from ascenv.checks import check, finding
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
                fix=f"{snap.python.executable or 'python'} -m pip uninstall -y {name}"
                "  # repeat until none is left, then reinstall once",
            )
