"""The ELF reader against its peers: pyelftools (when importable) and `readelf --dyn-syms -W`;
and the whole ABI probe against readelf of the same libraries piped to sort and comm.

Each round reads one library's dynamic section and dynamic symbols with their versions. The
floor is readelf (a C program) printing the same table; the goal is the reader within 2x of it.
Give large real libraries, e.g. libtorch_npu.so from a torch_npu wheel
(`pip download --no-deps --platform manylinux2014_aarch64 --only-binary=:all: torch_npu==2.5.1`,
unzipped) and a libpython:

    .venv/bin/python bench/bench_abi.py LIB.so [LIB.so ...] [--rounds 5]

With ``--root DIR --site PATH``, a root holding torch and torch_npu unpacked in the site-packages
PATH (as tests/abi/test_real_wheels.py builds it): ``ascenv.probe.abi.probe_abi`` against
``readelf --dyn-syms -W`` of every library of its load order, the undefined and defined names
sorted and compared with ``comm`` (goal: within 2x):

    .venv/bin/python bench/bench_abi.py --root DIR --site /usr/local/lib/python3.11/site-packages

With ``--pairs DIR [DIR ...]``, roots unpacked like images (tests/abi/test_real_wheels.py leaves
them in ``.ascenv/test-wheels/roots``): per root, the ABI check as a whole process (a fresh
interpreter that finds the root's Python from its files, runs ``probe_abi`` and the ABI checks)
against the readelf | sort | comm pipeline over the same libraries, also a whole process;
the ratio per root and the worst (goal: within 2x). With ``--doctor-site SITE`` (a site-packages
holding torch and torch_npu for this machine, e.g. the x86_64 root's), ``ascenv doctor --python``
of a venv reading it, with the ABI check and with it stubbed out (start-up time it adds):

    roots=.ascenv/test-wheels/roots
    .venv/bin/python bench/bench_abi.py --pairs $roots/* \
        --doctor-site $roots/x86_64-torch2.9.0-npu2.8.0/usr/local/python3.11.13/lib/python3.11/site-packages
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT)]

from ascenv import elf  # noqa: E402


def timed(fn: Callable[[], object], rounds: int) -> float:
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def with_pyelftools(path: Path) -> Callable[[], object]:
    from elftools.elf.elffile import ELFFile  # type: ignore[import-not-found]

    def run() -> int:
        with open(path, "rb") as f:
            e = ELFFile(f)
            names = {}
            verneed = e.get_section_by_name(".gnu.version_r")
            if verneed is not None:
                for _, aux in verneed.iter_versions():
                    for a in aux:
                        names[a.entry.vna_other] = a.name
            versym = e.get_section_by_name(".gnu.version")
            dyn = e.get_section_by_name(".dynamic")
            needed = [t.needed for t in dyn.iter_tags() if t.entry.d_tag == "DT_NEEDED"]
            count = len(needed)
            for i, s in enumerate(e.get_section_by_name(".dynsym").iter_symbols()):
                version = names.get(versym.get_symbol(i).entry.ndx) if versym is not None else None
                count += bool((s.name, s.entry.st_shndx, s.entry.st_info.bind, version))
            return count

    return run


# undefined names no library defines, from readelf's table: the shell floor of the ABI check
PIPELINE = r"""
t=$(mktemp -d); for f in "$@"; do readelf --dyn-syms -W "$f"; done > "$t/all"
awk '$7=="UND" && $5=="GLOBAL" && $8!="" {sub(/@.*/,"",$8); print $8}' "$t/all" | sort -u > "$t/und"
awk '$7!="UND" && $7!="Ndx" && $5!="LOCAL" && $8!="" {sub(/@.*/,"",$8); print $8}' "$t/all" | sort -u > "$t/def"
comm -23 "$t/und" "$t/def" | wc -l; rm -r "$t"
"""


def probe(root: Path, site: str, rounds: int) -> None:
    from ascenv import model
    from ascenv.probe.abi import probe_abi
    from ascenv.probe.fs import Root

    dists = []
    for name in ("torch_npu", "torch"):
        found = sorted((root / site.lstrip("/")).glob(f"{name}-*.dist-info"))
        version = found[0].name.split("-")[1] if found else "0"
        dists.append(model.Distribution(name, version, site))
    python = model.PythonInfo(distributions=tuple(dists))
    abi = probe_abi(Root(root), python, {})
    mine = timed(functools.partial(probe_abi, Root(root), python, {}), rounds)
    files = [str(root / p.lstrip("/")) for p in abi.loaded]
    cmd = ["sh", "-c", PIPELINE, "sh", *files]
    floor = timed(functools.partial(subprocess.run, cmd, check=True, capture_output=True), rounds)
    print(
        f"ABI probe of {len(abi.loaded)} libraries ({len(abi.unresolved)} unbound): {mine * 1000:.0f} ms, "
        f"readelf | sort | comm {floor * 1000:.0f} ms (ratio {mine / floor:.2f})"
    )


# the ABI check in a fresh process: the image's Python from its files, probe_abi, the ABI checks
CHECK = """
import sys
sys.path[:0] = [sys.argv[2]]
from ascenv.checks import abi
from ascenv.model import Snapshot
from ascenv.probe.abi import probe_abi
from ascenv.probe.fs import Root
from ascenv.probe.root_python import probe_root_python
root = Root(sys.argv[1])
python = probe_root_python(root, {})
snap = Snapshot(python=python, abi=probe_abi(root, python, {}))
findings = [f for check in (abi.symbols, abi.needed, abi.glibc, abi.cxx11) for f in check(snap, None)]
print(len(snap.abi.loaded), len(snap.abi.unresolved), len(findings))
print("\\n".join(snap.abi.loaded))
"""


def pairs(roots: list[Path], rounds: int) -> None:
    ratios = []
    for root in roots:
        cmd = [sys.executable, "-c", CHECK, str(root), str(ROOT)]
        out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout.splitlines()
        loaded = [str(root / p.lstrip("/")) for p in out[1:] if p]
        floor_cmd = ["sh", "-c", PIPELINE, "sh", *loaded]
        mine = timed(functools.partial(subprocess.run, cmd, check=True, capture_output=True), rounds)
        floor = timed(functools.partial(subprocess.run, floor_cmd, check=True, capture_output=True), rounds)
        ratios.append((mine / floor, root.name))
        print(
            f"{root.name}: ABI check process {mine * 1000:.0f} ms ({out[0]}: loaded, unbound, findings), "
            f"readelf | sort | comm {floor * 1000:.0f} ms over {len(loaded)} libraries (ratio {mine / floor:.2f})"
        )
    worst = max(ratios)
    print(f"worst ratio over {len(ratios)} pairs: {worst[0]:.2f} ({worst[1]}; goal <= 2)")


# doctor with the ABI probe replaced by an empty one: what the check adds to its start-up
NO_ABI = """
import sys
sys.path[:0] = [sys.argv.pop(1)]
from ascenv.model import AbiInfo
from ascenv.probe import snapshot
snapshot.probe_abi = lambda *args, **kwargs: AbiInfo()
from ascenv import cli
sys.exit(cli.main(sys.argv[1:]))
"""
WITH_ABI = NO_ABI.replace("snapshot.probe_abi = lambda *args, **kwargs: AbiInfo()", "")


def doctor(site: Path, rounds: int) -> None:
    import tempfile
    import venv

    with tempfile.TemporaryDirectory() as tmp:
        env_dir = Path(tmp) / "venv"
        venv.create(env_dir, with_pip=False)
        python = env_dir / "bin" / "python"
        out = subprocess.run([str(python), "-c", "import site; print(site.getsitepackages()[0])"], capture_output=True)
        # torch and torch_npu "installed": their site-packages on the venv's sys.path (libraries, dist-info)
        (Path(out.stdout.decode().strip()) / "torch-site.pth").write_text(str(site.resolve()) + "\n")
        env = dict(os.environ, HOME=tmp)
        argv = ["doctor", "--python", str(python), "--format", "json"]
        runs = {
            name: [sys.executable, "-c", code, str(ROOT), *argv]
            for name, code in (("with", WITH_ABI), ("without", NO_ABI))
        }
        for cmd in runs.values():  # the page cache and the compat cache under HOME
            subprocess.run(cmd, capture_output=True, env=env)
        times: dict[str, list[float]] = {name: [] for name in runs}
        for _ in range(rounds):  # interleaved: a load change weighs on both alike
            for name, cmd in runs.items():
                start = time.perf_counter()
                subprocess.run(cmd, capture_output=True, env=env)
                times[name].append(time.perf_counter() - start)
        done = subprocess.run(runs["with"], capture_output=True, env=env, text=True)
        loaded = len(json.loads(done.stdout)["snapshot"]["abi"]["loaded"])
    with_abi, without = statistics.median(times["with"]), statistics.median(times["without"])
    print(
        f"doctor --python (torch and torch_npu installed, {loaded} libraries read): with the ABI check "
        f"{with_abi * 1000:.0f} ms, without {without * 1000:.0f} ms (ratio {with_abi / without:.2f})"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("libraries", nargs="*", type=Path)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--root", type=Path, help="a root with torch and torch_npu unpacked in --site")
    parser.add_argument("--site", default="/usr/local/lib/python3.11/site-packages")
    parser.add_argument("--pairs", nargs="+", type=Path, default=[], help="roots unpacked like images")
    parser.add_argument("--doctor-site", type=Path, help="a site-packages with torch and torch_npu for this machine")
    args = parser.parse_args()
    if args.root:
        probe(args.root, args.site, args.rounds)
    if args.pairs:
        pairs(args.pairs, args.rounds)
    if args.doctor_site:
        doctor(args.doctor_site, args.rounds)
    for path in args.libraries:
        parsed = elf.read(path)
        if parsed is None:
            print(f"{path}: not an ELF file")
            continue
        # the whole table decoded, as readelf prints it (elf.read alone leaves the symbols undecoded)
        mine = timed(lambda path=path: elf.read(path).symbols, args.rounds)  # type: ignore[union-attr]
        line = f"{path.name} ({parsed.machine}, {len(parsed.symbols)} symbols): ascenv.elf {mine * 1000:.0f} ms"
        if shutil.which("readelf"):
            cmd = ["readelf", "--dyn-syms", "-W", str(path)]
            floor = timed(functools.partial(subprocess.run, cmd, check=True, capture_output=True), args.rounds)
            line += f", readelf {floor * 1000:.0f} ms (ratio {mine / floor:.2f})"
        try:
            peer = timed(with_pyelftools(path), max(1, args.rounds // 2))
            line += f", pyelftools {peer * 1000:.0f} ms ({peer / mine:.0f}x ascenv.elf)"
        except ImportError:
            line += ", pyelftools not importable"
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
