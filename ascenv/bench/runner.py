"""``ascenv bench run``: time the ``[[targets.<t>.benchmarks]]`` of an operator's recipe on a
stored build, per shape, with the tiling the project's own code chose for that shape, and keep
the run beside the build (``ascenv.bench.store``) so ``bench compare`` and ``history`` read it.

The CPU target runs in the build's own image with the isolation of ``ascenv build`` (labelled
container, no network, sources and outputs read-only, the caller's uid, always removed): ONE
container for every shape and sample, so starting a container is never part of a sample. Every
run is timed by the shell around it with GNU ``date +%s%N`` (nanoseconds; coreutils,
https://www.gnu.org/software/coreutils/manual/html_node/Date-conversion-specifiers.html): that
works for any argv, with no output protocol, and is the sample of a ``timing = "wall"``
benchmark. A wall time also counts every moment another process held the core, and on a busy
shared machine that is most of the spread (add_custom's checker on 262145 elements: 31 to 73 ms
wall across five runs, 7.7 to 8.1 ms of its own CPU time), so a ``timing = "printed"`` benchmark
measures itself and prints ``time_ns=N`` (add_custom's checker: the CPU time of the kernel run);
the sample is the sum of what one run printed. The NPU target runs ``msprof op`` on the host
where an NPU is present and imports what it wrote; elsewhere it returns the commands to run on
an NPU host.
"""

from __future__ import annotations

import datetime
import re
import shlex
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable, Optional, Union

from ascenv import builder, proc, store, stored_build
from ascenv.bench import fingerprint
from ascenv.bench.records import Record, Run
from ascenv.bench.store import BenchStore, new_run
from ascenv.containers.engine import Engine
from ascenv.errors import BuildFailed, InputError, UsageError

PROGRESS = "ascenv-bench: "  # the script's progress lines in the container log
RESULTS = f"{builder.WORK}/bench"
METRIC_SETS = {"wall": "wall-time", "printed": "printed-time"}  # runs of the two never compare
CPU_TOOL = "cpu-checker"  # a logic checker's time on the host CPU, not NPU performance
_TIMES = re.compile(r"^run=(\d+) kind=(warmup|timed) start_ns=(\d+) end_ns=(\d+) status=(\d+)$")
_PRINTED = re.compile(r"(?:^|\s)time_ns=(\d+)(?=\s|$)")
_PEER = re.compile(r"(?:^|\s)peer_ns=(\d+)(?=\s|$)")
_RUN_END = re.compile(r"^ascenv-bench-end run=(\d+)$")
_PAIR = re.compile(r"^([A-Za-z_][\w.-]*)=(\S*)$")
_DAVINCI = re.compile(r"^/dev/davinci\d+$")  # a chip node; davinci_manager is the control node


@dataclass(frozen=True)
class RunRequest:
    kernel_dir: Path
    recipe: builder.KernelRecipe
    target: str
    shapes: Optional[tuple[str, ...]] = None  # --shapes: instead of the recipe's
    repeat: int = 10
    warmup: int = 2
    build: Optional[str] = None  # a key prefix; default the newest build of op/target
    store_option: str = ""  # " --store DIR" as the user gave it, for the hints
    timeout: float = 3600.0


@dataclass(frozen=True)
class Case:
    """One benchmark on one shape (shape None: its argv has no {shape})."""

    benchmark: builder.Benchmark
    shape: Optional[str]

    @property
    def label(self) -> str:
        return self.benchmark.name + (f" {self.shape}" if self.shape is not None else "")

    def argv(self, places: Mapping[str, str]) -> list[str]:
        return builder.expand(self.benchmark.argv, self._places(places))

    def tiling(self, places: Mapping[str, str]) -> list[str]:
        return builder.expand(self.benchmark.tiling, self._places(places))

    def _places(self, places: Mapping[str, str]) -> dict[str, str]:
        return {**places, builder.SHAPE: self.shape or ""}


@dataclass(frozen=True)
class Measured:
    """A run of the recipe's benchmarks, stored at ``path``."""

    run: Run
    path: Path
    build_key: str
    benchmarks: tuple[builder.Benchmark, ...]
    warmup: int
    repeat: int


@dataclass(frozen=True)
class NpuCommands:
    """No NPU (or no msprof) here: what to run on an NPU host instead."""

    op: str
    build_key: str
    reason: str
    commands: tuple[str, ...]


Result = Union[Measured, NpuCommands]


# parsing what ran ------------------------------------------------------------------------------
@dataclass(frozen=True)
class Sample:
    index: int
    kind: str  # warmup | timed
    ns: int
    status: int
    peer_ns: Optional[int] = None  # the peer workload the program timed beside it (``peer_ns=N``)


def parse_times(text: str, source: str) -> tuple[Sample, ...]:
    """The lines the timing loop wrote: ``run=I kind=K start_ns=S end_ns=E status=C``."""
    samples = []
    for number, line in enumerate(text.splitlines(), 1):
        found = _TIMES.match(line.strip())
        if not found:
            raise InputError(
                f"{source}:{number}: expected 'run=I kind=warmup|timed start_ns=N end_ns=N status=N', found {line!r}",
                hint="the image needs GNU date, which prints nanoseconds for %N (busybox date does not)",
            )
        index, kind, start, end, status = found.groups()
        if int(end) < int(start):  # `date +%s%N` is the wall clock: NTP may step it back
            raise InputError(
                f"{source}:{number}: run {index} ended before it started ({line.strip()!r}): the clock was set back",
                hint="run the benchmark again",
            )
        samples.append(Sample(int(index), kind, int(end) - int(start), int(status)))
    return tuple(samples)


def parse_printed(text: str, source: str) -> dict[int, tuple[int, Optional[int]]]:
    """Per run index, the sums of the ``time_ns=N`` and of the ``peer_ns=N`` words its output
    held (None when it printed no peer time; the timing loop ends each run's output with
    ``ascenv-bench-end run=I``). A peer is a fixed workload the program times beside its own, in
    the same process: add_custom's checker times its reference add over the same elements."""
    found: dict[int, tuple[int, Optional[int]]] = {}
    total, peer, seen, peers_seen = 0, 0, False, False
    for line in text.splitlines():
        end = _RUN_END.match(line.strip())
        if end:
            if not seen:
                raise InputError(f'{source}: run {end.group(1)} printed no time_ns=N (timing = "printed")')
            found[int(end.group(1))] = (total, peer if peers_seen else None)
            total, peer, seen, peers_seen = 0, 0, False, False
            continue
        for value in _PRINTED.findall(line):
            total, seen = total + int(value), True
        for value in _PEER.findall(line):
            peer, peers_seen = peer + int(value), True
    return found


def parse_tiling(text: str, source: str) -> dict[str, Any]:
    """The first line made only of ``key=value`` words (add_custom_tiling prints ``status=ok
    totalLength=.. usedCoreNum=.. formerNum=.. formerLength=.. latterLength=.. tileLength=..``,
    then one line per core, not kept); whole numbers become ints. Nothing is recomputed here."""
    for line in text.splitlines():
        words = line.split()
        pairs = [_PAIR.match(w) for w in words]
        if words and all(pairs):
            return {m.group(1): _whole(m.group(2)) for m in pairs if m}
    first = text.strip().splitlines()[0] if text.strip() else ""
    raise InputError(f"{source}: no line of key=value words in the tiling program's output (first line: {first!r})")


def _whole(value: str) -> Any:
    """``"40"`` -> 40; anything else (``"²"``, which isdigit() accepts, 5000 digits, which int()
    refuses since Python 3.11) stays text."""
    return int(value) if value.isascii() and value.isdigit() and len(value) <= 18 else value


def npu_devices(snapshot: Any) -> list[str]:
    """The ``/dev/davinciN`` chip nodes the probe found present."""
    nodes = snapshot.devices.nodes if snapshot is not None else ()
    return [n.path for n in nodes if n.exists and _DAVINCI.match(n.path)]


def record_for(case: Case, samples: Sequence[Sample], tiling: Mapping[str, Any], op_type: str, tool: str) -> Record:
    timed = [s for s in samples if s.kind == "timed"]
    durations = tuple(round(s.ns / 1000, 3) for s in timed)
    peers = tuple(round(s.peer_ns / 1000, 3) for s in timed if s.peer_ns) if all(s.peer_ns for s in timed) else ()
    return Record(
        op=op_type,
        input_shapes=case.shape,
        input_dtypes=None,
        input_formats=None,
        task_type=case.benchmark.name,
        samples=len(durations),
        durations=durations,
        duration_us=statistics.median(durations),
        duration_min_us=min(durations),
        duration_max_us=max(durations),
        metric_set=METRIC_SETS[case.benchmark.timing],
        tool=tool,
        tiling=dict(tiling),
        peers=peers,
    )


# the run ---------------------------------------------------------------------------------------
def cases(request: RunRequest) -> tuple[Case, ...]:
    target = request.recipe.targets[request.target]
    where = f"{request.kernel_dir / builder.RECIPE_FILE}: targets.{request.target}"
    if not target.benchmarks:
        raise UsageError(
            f"{where} declares no benchmarks",
            hint=f"add a [[targets.{request.target}.benchmarks]] table (name, argv, measures, shapes, tiling)",
        )
    found = []
    for i, b in enumerate(target.benchmarks):
        if not any(f"{{{builder.SHAPE}}}" in arg for arg in b.argv):
            found.append(Case(b, None))
            continue
        shapes = request.shapes if request.shapes else b.shapes
        if not shapes:
            raise UsageError(
                f"{where}.benchmarks[{i}] ({b.name}) runs per {{shape}} but declares no shapes",
                hint="declare shapes = [...] in the recipe, or give --shapes S,S,...",
            )
        found += [Case(b, s) for s in shapes]
    return tuple(found)


def chosen_build(request: RunRequest, st: store.Store) -> store.Entry:
    return stored_build.chosen_build(st, request.recipe.name, request.target, request.build, request.store_option)


def _refuse_other_sources(request: RunRequest, entry: store.Entry, todo: Sequence[Case]) -> None:
    """A benchmark that reads ``{src}`` is refused beside a build of other sources; one that uses
    only ``{out}`` times the build as stored, whatever the sources became (a baseline build is
    benchmarked after later edits)."""
    readers = [c.benchmark.name for c in todo if any("{src}" in a for a in (*c.benchmark.argv, *c.benchmark.tiling))]
    if readers:
        stored_build.refuse_other_sources(
            request.kernel_dir,
            entry,
            f"benchmark {readers[0]}",
            "its timings",
            f"ascenv build {request.recipe.name} --target {request.target}{request.store_option}",
            "make the benchmark use only {out}",
        )


def bench_run(
    request: RunRequest,
    st: store.Store,
    *,
    connect: Callable[[], Engine],
    resolve_image: Callable[[Engine, str], builder.PinnedImage],
    snapshot: Optional[Any],
    msprof: Optional[str],
    run: proc.Runner = proc.run,
    on_event: Callable[[str], None] = lambda _: None,
) -> Result:
    """Run the recipe's benchmarks of ``request.target`` on the stored build and store the run."""
    if request.repeat < 1 or request.warmup < 0:
        raise UsageError(f"--repeat {request.repeat} --warmup {request.warmup}: expected --repeat >= 1, --warmup >= 0")
    todo = cases(request)
    entry = chosen_build(request, st)
    assert entry.manifest is not None
    _refuse_other_sources(request, entry, todo)
    if request.target == "npu":
        devices = npu_devices(snapshot)
        reason = (
            "no NPU here: no /dev/davinci<N> device node"
            if not devices
            else ("msprof is not on PATH" if msprof is None else "")
        )
        if reason:
            return NpuCommands(request.recipe.name, entry.key, reason, npu_commands(request, entry, todo))
        assert msprof is not None
        made = _profile_on_npu(request, st, entry, todo, msprof, snapshot, run, on_event)
    else:
        records = _time_in_container(request, st, entry, todo, connect, resolve_image, on_event)
        made = new_run(
            op=request.recipe.name,
            target=request.target,
            tool=CPU_TOOL,
            created=_now(),
            source="; ".join(f"benchmark {b.name}: {b.measures}" for b in _benchmarks(todo)),
            files=(),
            skipped_rows=0,
            fingerprint=fingerprint.gather(
                target=request.target,
                manifest=entry.manifest,
                snapshot=snapshot,
                metric_set="+".join(sorted({r.metric_set for r in records})),
            ),
            records=records,
        )
    path = BenchStore(st).write(made)
    return Measured(made, path, entry.key, _benchmarks(todo), request.warmup, request.repeat)


def _benchmarks(todo: Sequence[Case]) -> tuple[builder.Benchmark, ...]:
    return tuple(dict.fromkeys(c.benchmark for c in todo))


def _now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def timing_script(todo: Sequence[Case], warmup: int, repeat: int) -> str:
    """The sh program run in the container: per case the tiling once, then ``warmup + repeat``
    rounds, each timing one run of every case in turn (case 1, case 2, ..., case 1, case 2, ...):
    interleaved, not one case's runs in a block. A burst of load lasts about as long as one
    case's block of runs (a second or so), and a block lets it move every run of that case and
    none of the others: a CI run's launch/peer median of one shape rose 18 % for one run while the
    shape timed just before it did not move (the kernel 36 % slower, its peer 14 %: the peer
    cancels such a burst only in part). Interleaved, a burst meets one or two of a case's runs,
    which the median leaves out, and the spread it adds shows in the run's own interval.
    Results in RESULTS/<case>.*, progress on stdout."""
    places = builder.PLACEHOLDERS
    lines = ["set -u", f"d={RESULTS}", 'mkdir -p "$d"']
    for i, case in enumerate(todo):
        say = f"{PROGRESS}{case.label} ({i + 1}/{len(todo)}): {warmup} warm-up + {repeat} timed runs"
        lines.append(f"echo {shlex.quote(say)}")
        if case.benchmark.tiling:
            lines += [
                f'{shlex.join(case.tiling(places))} > "$d/{i}.tiling" 2>&1',
                f's=$?; echo "$s" > "$d/{i}.tiling-status"; [ "$s" -eq 0 ] || exit 1',
            ]
    if len(todo) > 1:
        say = f"{PROGRESS}{warmup + repeat} rounds, each timing one run of every case in turn"
        lines.append(f"echo {shlex.quote(say)}")
    lines += [
        "i=0",
        f'while [ "$i" -lt {warmup + repeat} ]; do',
        f'  kind=timed; [ "$i" -lt {warmup} ] && kind=warmup',
    ]
    for i, case in enumerate(todo):
        keep = (
            [f'  {{ cat "$d/{i}.out"; echo "ascenv-bench-end run=$i"; }} >> "$d/{i}.outs"']
            if case.benchmark.timing == "printed"
            else []
        )
        lines += [
            "  start=$(date +%s%N)",
            f'  {shlex.join(case.argv(places))} > "$d/{i}.out" 2>&1',
            "  status=$?",
            "  end=$(date +%s%N)",
            f'  echo "run=$i kind=$kind start_ns=$start end_ns=$end status=$status" >> "$d/{i}.times"',
            *keep,
            '  [ "$status" -eq 0 ] || exit 1',
        ]
    lines += ["  i=$((i + 1))", "done"]
    return "\n".join(lines) + "\n"


def _time_in_container(
    request: RunRequest,
    st: store.Store,
    entry: store.Entry,
    todo: Sequence[Case],
    connect: Callable[[], Engine],
    resolve: Callable[[Engine, str], builder.PinnedImage],
    on_event: Callable[[str], None],
) -> tuple[Record, ...]:
    assert entry.manifest is not None
    image = entry.manifest.toolchain.image
    on_event(f"benchmarking build {entry.key[:12]} of {entry.op} ({request.target}) in {image}")
    with stored_build.run_script(
        request.kernel_dir,
        request.recipe,
        st,
        entry,
        timing_script(todo, request.warmup, request.repeat),
        purpose="bench",
        connect=connect,
        resolve=resolve,
        timeout=request.timeout,
        on_log=stored_build.progress(PROGRESS, on_event),
    ) as (work, result):
        results = work / "bench"
        if result.timed_out:
            raise BuildFailed(f"the benchmarks of {entry.op} timed out after {request.timeout:.0f} s")
        timed = []
        for i, case in enumerate(todo):
            tiling: dict[str, Any] = {}
            if case.benchmark.tiling:
                tiling = _tiling_of(case, results, i, result.logs)
            times = results / f"{i}.times"
            timed.append(
                (tiling, parse_times(times.read_text(encoding="utf-8"), str(times)) if times.is_file() else ())
            )
        # the runs are interleaved: the case that failed, not the first one left with fewer runs
        for i, (case, (_, samples)) in enumerate(zip(todo, timed)):
            failed = [s for s in samples if s.status != 0]
            if failed:
                raise _failure(case, results / f"{i}.out", failed[0], result.logs)
        records = []
        for i, (case, (tiling, samples)) in enumerate(zip(todo, timed)):
            if not samples or len(samples) < request.warmup + request.repeat:
                raise _failure(case, results / f"{i}.out", None, result.logs)
            if case.benchmark.timing == "printed":
                outs = results / f"{i}.outs"
                printed = parse_printed(outs.read_text(encoding="utf-8", errors="replace"), f"{case.label} output")
                samples = tuple(replace(s, ns=printed[s.index][0], peer_ns=printed[s.index][1]) for s in samples)
            records.append(record_for(case, samples, tiling, request.recipe.op_type, CPU_TOOL))
    return tuple(records)


def _tiling_of(case: Case, results: Path, i: int, logs: str) -> dict[str, Any]:
    status, output = results / f"{i}.tiling-status", results / f"{i}.tiling"
    code = status.read_text(encoding="utf-8").strip() if status.is_file() else ""
    text = output.read_text(encoding="utf-8", errors="replace") if output.is_file() else ""
    if code != "0":
        raise BuildFailed(
            f"the tiling program of {case.label} ({shlex.join(case.benchmark.tiling)}) "
            f"{'exited ' + code if code else 'did not run'}; it printed:\n{_tail(text or logs)}",
            hint="fix the recipe's tiling argv or the tiling program",
        )
    return parse_tiling(text, f"{case.label}: {shlex.join(case.benchmark.tiling)}")


def _failure(case: Case, out: Path, failed: Optional[Sample], logs: str) -> BuildFailed:
    text = out.read_text(encoding="utf-8", errors="replace") if out.is_file() else logs
    what = f"exited {failed.status} in run {failed.index} ({failed.kind})" if failed else "did not finish"
    return BuildFailed(
        f"the benchmark {case.label} ({shlex.join(case.benchmark.argv)}) {what}; last lines:\n{_tail(text)}",
        hint="a benchmark must exit 0; nothing was stored",
    )


def _tail(text: str, lines: int = 20) -> str:
    return "\n".join(text.rstrip().splitlines()[-lines:]) or "(nothing)"


# the NPU target ----------------------------------------------------------------------------------
def _output_name(op: str, case: Case) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", f"ascenv-bench-{op}-{case.label.replace(' ', '-')}")


def _host_places(request: RunRequest, entry: store.Entry, work: str) -> dict[str, str]:
    return {"src": str(request.kernel_dir), "out": str(entry.outputs), "work": work}


def npu_commands(request: RunRequest, entry: store.Entry, todo: Sequence[Case]) -> tuple[str, ...]:
    """Per case: ``msprof op --output=DIR <argv>`` then ``ascenv bench import DIR ...``."""
    found = []
    for case in todo:
        directory = _output_name(entry.op, case)
        argv = case.argv(_host_places(request, entry, directory + "-work"))
        found.append(shlex.join(["msprof", "op", f"--output={directory}", *argv]))
        shape = ["--shape", case.shape] if case.shape is not None else []
        found.append(
            shlex.join(["ascenv", "bench", "import", directory, "--op", entry.op, *shape, "--build", entry.key])
            + request.store_option
        )
    return tuple(found)


def _profile_on_npu(
    request: RunRequest,
    st: store.Store,
    entry: store.Entry,
    todo: Sequence[Case],
    msprof: str,
    snapshot: Optional[Any],
    run: proc.Runner,
    on_event: Callable[[str], None],
) -> Run:
    """``msprof op`` on this host per case, then its output imported (not verified: no NPU was
    available where this was written)."""
    from ascenv.bench import readers

    records: list[Record] = []
    tools, files, info, skipped = set(), [], {}, 0
    with st.staging(f"bench-{entry.op}") as stage:
        for i, case in enumerate(todo):
            on_event(f"{case.label} ({i + 1}/{len(todo)}): msprof op")
            places = _host_places(request, entry, str(stage / f"work-{i}"))
            (stage / f"work-{i}").mkdir()
            output = stage / f"msprof-{i}"
            done = run([msprof, "op", f"--output={output}", *case.argv(places)], timeout=request.timeout)
            if not done.ok:
                raise BuildFailed(f"msprof op on {case.label} failed: {done.describe()}")
            tiling: dict[str, Any] = {}
            if case.benchmark.tiling:
                shown = run(case.tiling(places), timeout=120)
                if not shown.ok:
                    raise BuildFailed(f"the tiling program of {case.label} failed: {shown.describe()}")
                tiling = parse_tiling(shown.stdout, case.label)
            imported = readers.read_path(output, case.shape, shown=f"msprof op output of {case.label}")
            records += [replace(r, tiling=tiling) for r in imported.records]
            tools.add(imported.tool)
            files += list(imported.files)
            info.update(imported.profiler_info)
            skipped += imported.skipped_rows
    downclocked = [r.clock.downclocked for r in records if r.clock.downclocked is not None]
    return new_run(
        op=request.recipe.name,
        target="npu",
        tool="+".join(sorted(tools)),
        created=_now(),
        source="msprof op: " + "; ".join(c.label for c in todo),
        files=tuple(files),
        skipped_rows=skipped,
        fingerprint=fingerprint.gather(
            target="npu",
            manifest=entry.manifest,
            snapshot=snapshot,
            profiler_info=info,
            metric_set="+".join(sorted({r.metric_set for r in records})),
            downclocked=any(downclocked) if downclocked else None,
        ),
        records=tuple(records),
    )
