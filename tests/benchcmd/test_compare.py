"""Stored runs, baselines and the noise-aware comparison, through the command line."""

from __future__ import annotations

import csv
import io
import json
import os
import random
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Optional

from rich.cells import cell_len

from ascenv.bench.fingerprint import Fingerprint, differences
from ascenv.bench.records import Record, Run
from ascenv.bench.stats import compare, compare_runs
from ascenv.bench.store import BenchStore, loads_run, new_run
from ascenv.output import Output
from ascenv.output import bench as render
from ascenv.store import Store
from tests.benchcmd.test_readers import DATA, KD_EDITED, sample
from tests.cli_helpers import run_cli

ENV = {"PATH": "/usr/bin:/bin"}
# a model's profile kept whole under one name: every op type it holds
MODEL_IMPORT = ("--op", "mm", "--all-ops", "--no-probe", "--format", "json")
NPU = Fingerprint(soc="910B4")


def record(durations: list[float], op: str = "add_custom", shapes: str = "n=1024001") -> Record:
    s = sorted(durations)
    return Record(op, shapes, None, None, "AI_VECTOR_CORE", len(s), tuple(durations), s[len(s) // 2], s[0], s[-1])


def stored_run(store: Path, durations: list[float], created: str, fp: Fingerprint = NPU) -> Run:
    run = new_run(
        op="add_custom", target="npu", tool="msprof op", created=created, source="x", files=(), skipped_rows=0,
        fingerprint=fp, records=(record(durations),),
    )  # fmt: skip
    BenchStore(Store(store)).write(run)
    return run


def noisy(rng: random.Random, centre: float, n: int = 10) -> list[float]:
    return [centre * (1 + rng.gauss(0, 0.02)) for _ in range(n)]


def test_verdicts() -> None:
    rng = random.Random(1)
    base = noisy(rng, 100)
    assert compare(base, base, 0.05).verdict == "same"
    slow = compare(base, [x * 1.2 for x in base], 0.05)
    assert slow.verdict == "slower" and slow.regression and 0.15 < slow.low <= slow.change <= slow.high < 0.25
    fast = compare(base, [x * 0.8 for x in base], 0.05)
    assert fast.verdict == "faster" and not fast.regression
    one = compare([100.0], [150.0], 0.05)
    assert one.verdict == "inconclusive" and not one.regression  # one launch proves nothing
    assert compare([], base, 0.05).verdict == "inconclusive"
    wild = compare(noisy(rng, 100, 4), [x * (1 + rng.uniform(-0.5, 0.5)) for x in noisy(rng, 100, 4)], 0.05)
    assert wild.verdict in ("inconclusive", "faster", "slower")


def test_unchanged_runs_compared_20_times_never_regress() -> None:
    """False-regression rate of two draws of one unchanged kernel (2 % launch noise, 10 launches)."""
    rng = random.Random(20261201)
    verdicts = [compare(noisy(rng, 100), noisy(rng, 100), 0.05) for _ in range(20)]
    assert sum(v.regression for v in verdicts) == 0
    assert all(v.verdict in ("same", "inconclusive", "faster", "slower") for v in verdicts)
    assert sum(v.verdict == "same" for v in verdicts) >= 18


def test_fingerprint_differences() -> None:
    a = Fingerprint(soc="910B4", cann="8.3.RC1", metric_set="PipeUtilization", target="npu", host_cpu="Kunpeng")
    assert differences(a, replace(a, host_cpu="Xeon", build_key="other")) == ()  # an NPU run ignores the host CPU
    found = differences(a, replace(a, cann="8.5.0", metric_set="Memory"))
    assert [str(d) for d in found] == ["cann: 8.3.RC1 vs 8.5.0", "metric_set: PipeUtilization vs Memory"]
    cpu = replace(a, target="cpu")
    assert [d.field for d in differences(cpu, replace(cpu, host_cpu="Xeon"))] == ["host_cpu"]
    assert [d.field for d in differences(a, replace(a, downclocked=True))] == ["downclocked"]
    assert differences(a, replace(a, torch_npu=None)) == ()  # unknown on one side is no difference


def test_runs_are_stored_beside_their_build_or_under_the_op(tmp_path: Path) -> None:
    bench = BenchStore(Store(tmp_path))
    loose = stored_run(tmp_path, [1.0, 2.0, 3.0], "2026-12-01T09:00:00.000000Z")
    built = stored_run(tmp_path, [1.0, 2.0, 3.0], "2026-12-01T10:00:00.000000Z", Fingerprint(build_key="abcdef123456"))
    assert (tmp_path / "add_custom" / ".bench" / "runs" / f"{loose.id}.json").is_file()
    path = tmp_path / "add_custom" / "abcdef123456" / "bench" / f"{built.id}.json"
    assert loads_run(path.read_text(), str(path)) == built
    assert [s.run.id for s in bench.runs("add_custom")] == [built.id, loose.id]  # newest first
    assert bench.resolve("abcdef", None).run == built  # a build key prefix: its newest run
    assert not list(tmp_path.glob("**/.ascenv-*.tmp"))  # written atomically, no temp file left


def test_a_significant_change_within_the_threshold_is_same() -> None:
    """Each run's launches share those seconds of the machine: a tight interval 3 % off zero is
    the drift between two runs, not a change the threshold asks about."""
    base = [100.0, 100.5, 99.5, 100.2, 99.8]
    drifted = compare(base, [x * 1.03 for x in base], 0.05)
    assert drifted.low > 0 and drifted.verdict == "same" and not drifted.regression
    faster = compare(base, [x * 0.97 for x in base], 0.05)
    assert faster.high < 0 and faster.verdict == "same"
    assert compare(base, [x * 1.03 for x in base], 0.02).verdict == "slower"  # beyond a 2 % threshold


def test_launches_with_a_peer_are_judged_against_it() -> None:
    """A busier machine slows the kernel and its peer alike: the ratio stays; a slower kernel
    beside an unchanged peer is slower."""
    rng = random.Random(3)
    durations = noisy(rng, 100)
    peers = [d / 2 for d in durations]

    def with_peers(scale_kernel: float, scale_peer: float) -> Run:
        r = replace(record([d * scale_kernel for d in durations]), peers=tuple(p * scale_peer for p in peers))
        return replace(run_of(r), id=f"run-{scale_kernel}-{scale_peer}")

    a = with_peers(1.0, 1.0)
    busy = compare_runs(a, with_peers(1.3, 1.3), 0.05)
    (shape,) = busy.shapes
    assert shape.against_peer and shape.change.verdict == "same" and abs(shape.change.change) < 1e-9
    (slower,) = compare_runs(a, with_peers(1.3, 1.0), 0.05).shapes
    assert slower.against_peer and slower.change.verdict == "slower" and slower.change.regression
    (plain,) = compare_runs(a, replace(run_of(record([d * 1.3 for d in durations])), id="no-peers"), 0.05).shapes
    assert not plain.against_peer and plain.change.verdict == "slower"  # one side without peers: durations


def run_of(r: Record) -> Run:
    return new_run(
        op="add_custom", target="cpu", tool="cpu-checker", created="2026-12-01T09:00:00.000000Z", source="x",
        files=(), skipped_rows=0, fingerprint=Fingerprint(target="cpu"), records=(r,),
    )  # fmt: skip


def test_compare_cli_same_slower_and_refused(tmp_path: Path) -> None:
    rng = random.Random(7)
    base = noisy(rng, 100)
    a = stored_run(tmp_path, base, "2026-12-01T09:00:00.000000Z")
    code, out, err = run_cli(["bench", "baseline", "set", a.id[:10], "--store", str(tmp_path)], ENV)
    assert code == 0 and a.id in out
    same = stored_run(tmp_path, list(base), "2026-12-01T09:10:00.000000Z")
    code, out, _ = run_cli(
        ["bench", "compare", "--op", "add_custom", "--store", str(tmp_path), "--format", "json"], ENV
    )
    doc = json.loads(out)
    assert code == 0 and (doc["a"], doc["b"]) == (a.id, same.id) and doc["shapes"][0]["verdict"] == "same"

    slow = stored_run(tmp_path, [x * 1.3 for x in base], "2026-12-01T09:20:00.000000Z")
    code, out, _ = run_cli(["bench", "compare", "--op", "add_custom", "--store", str(tmp_path)], ENV)
    assert code == 1 and "slower" in out
    code, out, _ = run_cli(
        ["bench", "compare", a.id, slow.id, "--fail-over", "40%", "--store", str(tmp_path), "--format", "json"], ENV
    )
    (shape,) = json.loads(out)["shapes"]  # +30 %, significant, but within the 40 % the user allows
    assert code == 0 and shape["verdict"] == "same"
    assert 0.25 < shape["change"] < 0.35

    other = stored_run(tmp_path, list(base), "2026-12-01T09:30:00.000000Z", Fingerprint(soc="310P3"))
    code, out, err = run_cli(["bench", "compare", a.id, other.id, "--store", str(tmp_path)], ENV)
    assert code == 2 and "soc: 910B4 vs 310P3" in err
    code, out, err = run_cli(["bench", "compare", a.id, other.id, "--allow-env-change", "--store", str(tmp_path)], ENV)
    assert code == 0 and "warning" in err and "soc: 910B4 vs 310P3" in err


def test_a_downclocked_run_never_becomes_the_baseline(tmp_path: Path) -> None:
    run = stored_run(tmp_path, [1.0, 2.0, 3.0], "2026-12-01T09:00:00.000000Z", Fingerprint(downclocked=True))
    code, _, err = run_cli(["bench", "baseline", "set", run.id, "--store", str(tmp_path)], ENV)
    assert code == 2 and "down-clocked" in err
    assert BenchStore(Store(tmp_path)).baselines("add_custom") == {}


def test_import_cli_json_and_history(tmp_path: Path) -> None:
    path = sample(tmp_path, KD_EDITED, "kernel_details.csv")
    store = tmp_path / "store"
    argv = ["bench", "import", str(path), *MODEL_IMPORT, "--store", str(store)]
    code, out, err = run_cli(argv, ENV)
    assert code == 0, err
    doc = json.loads(out)
    assert doc["schema"] == 1 and doc["tool"] == "torch_npu" and Path(doc["path"]).is_file()
    fa = next(r for r in doc["records"] if r["op"] == "MatMulV2")
    assert (fa["samples"], fa["duration_min_us"], fa["duration_max_us"], fa["block_dim"]) == (4, 185.504, 190.544, 16)
    assert fa["clock"] == {"current_mhz": None, "rated_mhz": None, "downclocked": None}
    assert fa["metric_set"] == "PipeUtilization" and fa["metrics"]["aic_cube_ratio"] > 0
    stored = loads_run(Path(doc["path"]).read_text(), doc["path"])
    assert stored.fingerprint.metric_set == "PipeUtilization" and stored.id == doc["run"]
    code, out, _ = run_cli(["bench", "history", "mm", "--store", str(store), "--format", "json"], ENV)
    assert code == 0 and len(json.loads(out)["history"]) == len(doc["records"])


def test_import_cli_errors_exit_2(tmp_path: Path) -> None:
    bad = tmp_path / "api_statistic.csv"
    bad.write_text("Device_id,API Name,Count\n0,aclnnAdd,3\n")
    code, _, err = run_cli(["bench", "import", str(bad), "--op", "x", "--store", str(tmp_path), "--no-probe"], ENV)
    assert code == 2 and "api_statistic.csv" in err and "Device_id,API Name,Count" in err
    code, _, err = run_cli(["bench", "compare", "--fail-over", "lots", "--store", str(tmp_path)], ENV)
    assert code == 2 and "not a percentage" in err
    assert DATA.is_dir()


# --- charts: two runs imported from one real torch_npu profile, B edited to be slower and faster


def profiled_runs(tmp_path: Path, scale: Optional[dict[str, float]] = None) -> tuple[Path, str, str]:
    """The store and the ids of runs A and B, imported from the kernel_details fixture; in B the
    launches of each op in ``scale`` take that many times as long (default: MatMulV2 x1.3,
    FlashAttentionScoreGrad x0.8)."""
    scale = {"MatMulV2": 1.3, "FlashAttentionScoreGrad": 0.8} if scale is None else scale
    a = sample(tmp_path, KD_EDITED, "a/kernel_details.csv")
    rows = list(csv.reader(io.StringIO(a.read_text(), newline="")))
    column = rows[0].index("Duration(us)")
    for row in rows[1:]:
        if row[5] in scale:
            row[column] = f"{float(row[column]) * scale[row[5]]:.3f}"
    b = tmp_path / "b" / "kernel_details.csv"
    b.parent.mkdir()
    with b.open("w", newline="") as fh:
        csv.writer(fh, lineterminator="\n").writerows(rows)
    store = tmp_path / "store"
    ids = []
    for path in (a, b):
        argv = ["bench", "import", str(path), *MODEL_IMPORT, "--store", str(store)]
        code, out, err = run_cli(argv, ENV)
        assert code == 0, err
        ids.append(json.loads(out)["run"])
    return store, ids[0], ids[1]


def compare_json(store: Path, a: str, b: str) -> list[dict]:
    _, out, _ = run_cli(["bench", "compare", a, b, "--store", str(store), "--format", "json"], ENV)
    return json.loads(out)["shapes"]


def test_compare_draws_a_and_b_bars_in_proportion_with_the_verdict(tmp_path: Path) -> None:
    store, a, b = profiled_runs(tmp_path)
    shapes = compare_json(store, a, b)
    code, out, _ = run_cli(["bench", "compare", a, b, "--store", str(store)], ENV)
    assert code == 1  # MatMulV2 30 % slower
    lines = out.splitlines()
    assert all(cell_len(line) <= 120 for line in lines), max(lines, key=cell_len)
    starts = [i for i, line in enumerate(lines) if line.startswith("  A  ")]
    assert len(starts) == len(shapes) == 8
    previous = 3  # after the "A vs B" line and the two lines of legend
    bars = {}
    for i, shape in zip(starts, shapes):
        title = " ".join(x.strip() for x in lines[previous:i])  # a long title wraps onto "    " lines
        assert title.replace(" ", "") == f"{shape['op']}{shape['input_shapes']}{shape['task_type']}"
        row_a, row_b, noise, between = lines[i : i + 4]
        assert row_b.startswith("  B  ")
        assert between.startswith("     noise: launch spread ") and "between runs not measured" in between
        bar_a, bar_b = row_a.count("\u2588"), row_b.count("\u2588")
        median_a, median_b = shape["median_us"]
        assert 0 < max(bar_a, bar_b) <= 50
        # whole cells, each rounded by at most half a cell: |bar_a * b - bar_b * a| <= (a + b) / 2
        assert abs(bar_a * median_b - bar_b * median_a) <= (median_a + median_b) / 2
        assert row_b.endswith(f"{shape['change']:+.1%}  {shape['verdict']}")
        low, high = shape["interval"]
        computed = shape["verdict"] != "inconclusive" or low != high
        assert (f"95% {low:+.1%} .. {high:+.1%}" if computed else "no interval") in noise
        bars[shape["op"], shape["input_shapes"]] = (bar_a, bar_b, shape["verdict"])
        previous = i + 4
    slower = bars["MatMulV2", "81920,4096;8192,512"]
    faster = next(v for k, v in bars.items() if k[0] == "FlashAttentionScoreGrad")
    assert slower[2] == "slower" and slower[0] < slower[1]  # B, 30 % slower, has the longer bar
    assert faster[2] == "faster" and faster[0] > faster[1]
    assert "1 shape slower by more than 5%" in out


def test_compare_chart_refusals(tmp_path: Path) -> None:
    # a suffix that names no format: exit 2 before the runs are even looked up
    code, _, err = run_cli(["bench", "compare", "nosuch", "nosuch", "--store", str(tmp_path), "--chart", "x.pdf"], ENV)
    assert code == 2 and "the suffix .pdf names no chart format" in err and ".png or FILE.svg" in err
    code, _, err = run_cli(["bench", "compare", "nosuch", "nosuch", "--store", str(tmp_path), "--chart", "x"], ENV)
    assert code == 2 and "no suffix" in err
    # stacks that differ: the comparison is refused, and no chart of it is drawn
    base = [100.0, 101.0, 99.0, 100.5]
    one = stored_run(tmp_path, base, "2026-12-01T09:00:00.000000Z")
    other = stored_run(tmp_path, base, "2026-12-01T09:10:00.000000Z", Fingerprint(soc="310P3"))
    chart = tmp_path / "x.svg"
    code, _, err = run_cli(["bench", "compare", one.id, other.id, "--store", str(tmp_path), "--chart", str(chart)], ENV)
    assert code == 2 and "soc: 910B4 vs 310P3" in err and not chart.exists()


def test_compare_chart_without_matplotlib_exit_4(tmp_path: Path) -> None:
    """matplotlib absent (a None in sys.modules makes its import fail): exit 4 saying how to
    install the extra, before any run is looked up, and no file."""
    script = (
        "import sys; sys.modules['matplotlib'] = None\n"
        "from ascenv.cli import main\n"
        f"sys.exit(main(['bench', 'compare', 'nosuch', 'nosuch', '--store', {str(tmp_path)!r}, '--chart', 'x.png']))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=tmp_path, env=dict(os.environ), capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 4, done.stderr
    assert "--chart needs matplotlib, which is not installed" in done.stderr and "ascenv[chart]" in done.stderr
    assert "Traceback" not in done.stderr and not (tmp_path / "x.png").exists()


def test_compare_chart_in_ascii_where_the_output_cannot_encode_blocks(tmp_path: Path) -> None:
    store, a, b = profiled_runs(tmp_path)
    bench = BenchStore(Store(store))
    result = compare_runs(bench.resolve(a, None).run, bench.resolve(b, None).run, 0.05)
    raw = io.BytesIO()
    stdout = io.TextIOWrapper(raw, encoding="ascii")
    render.comparison(Output("human", stdout=stdout, stderr=io.StringIO(), color=False), result, "human", False)
    stdout.flush()
    text = raw.getvalue().decode("ascii")  # nothing outside ASCII was written
    row = next(x for x in text.splitlines() if x.startswith("  B  ") and "slower" in x)
    assert row.count("#") > 40 and "[" in text and "95% +" in text


# --- which runs the defaults pick: latest is the newest run comparable with the other side


def target_run(store: Path, created: str, target: str, fp: Fingerprint, scale: float = 1.0) -> Run:
    durations = [scale * x for x in noisy(random.Random(created), 100)]
    run = new_run(
        op="add_custom", target=target, tool="cpu-checker" if target == "cpu" else "torch_npu", created=created,
        source="x", files=(), skipped_rows=0, fingerprint=replace(fp, target=target), records=(record(durations),),
    )  # fmt: skip
    BenchStore(Store(store)).write(run)
    return run


CPU = Fingerprint(host_cpu="Kunpeng-920", host_cores=2)


def defaults(store: Path, *argv: str) -> tuple[int, dict, str]:
    code, out, err = run_cli(["bench", "compare", *argv, "--store", str(store), "--format", "json"], ENV)
    return code, json.loads(out) if out else {}, err


def test_default_compare_after_an_import_takes_the_newest_run_of_the_baselines_target(tmp_path: Path) -> None:
    """Issue 25: a CPU baseline, a later CPU run, then an NPU profile imported: "latest" was the
    import and the defaults failed "stacks differ: cpu vs npu"."""
    base = target_run(tmp_path, "2026-12-01T09:00:00.000000Z", "cpu", CPU)
    assert run_cli(["bench", "baseline", "set", base.id, "--store", str(tmp_path)], ENV)[0] == 0
    later = target_run(tmp_path, "2026-12-01T09:10:00.000000Z", "cpu", CPU)
    imported = target_run(tmp_path, "2026-12-01T09:20:00.000000Z", "npu", NPU)
    code, doc, err = defaults(tmp_path)
    assert code == 0, err
    assert (doc["a"], doc["b"]) == (base.id, later.id)
    assert doc["picked"]["a"] == "the baseline of add_custom (cpu)"
    assert doc["picked"]["b"].startswith("the newest run of add_custom with A's target (cpu) and stack")
    assert imported.id in doc["picked"]["b"] and "target: cpu vs npu" in doc["picked"]["b"]
    # the terminal says it too, on stderr beside the comparison
    code, out, err = run_cli(["bench", "compare", "--store", str(tmp_path)], ENV)
    assert code == 0 and f"A {base.id}  vs  B {later.id}" in out
    assert "A: the baseline of add_custom (cpu)" in err and f"the newest, {imported.id}, differs" in err


def test_latest_skips_a_run_of_another_host_cpu_and_names_it(tmp_path: Path) -> None:
    base = target_run(tmp_path, "2026-12-01T09:00:00.000000Z", "cpu", CPU)
    later = target_run(tmp_path, "2026-12-01T09:10:00.000000Z", "cpu", CPU, scale=1.5)
    moved = target_run(tmp_path, "2026-12-01T09:20:00.000000Z", "cpu", replace(CPU, host_cpu="Xeon"))
    code, doc, err = defaults(tmp_path, base.id)  # A named, B the default latest
    assert code == 1 and (doc["a"], doc["b"]) == (base.id, later.id), err  # the slower run, judged
    assert doc["picked"]["a"] is None  # named by the user: nothing to explain
    assert f"the newest, {moved.id}, differs: host_cpu: Kunpeng-920 vs Xeon" in doc["picked"]["b"]
    # latest on the A side: the newest run comparable with the named B
    code, doc, err = defaults(tmp_path, "latest", base.id)
    assert code == 0 and (doc["a"], doc["b"]) == (later.id, base.id), err
    # a run named outright on both sides is still compared as asked, and refused
    code, _, err = defaults(tmp_path, base.id, moved.id)
    assert code == 2 and "host_cpu: Kunpeng-920 vs Xeon" in err


def test_latest_with_no_other_comparable_run_is_the_run_itself_and_says_so(tmp_path: Path) -> None:
    base = target_run(tmp_path, "2026-12-01T09:00:00.000000Z", "npu", NPU)
    assert run_cli(["bench", "baseline", "set", base.id, "--store", str(tmp_path)], ENV)[0] == 0
    target_run(tmp_path, "2026-12-01T09:10:00.000000Z", "cpu", CPU)
    code, doc, err = defaults(tmp_path)
    assert code == 0 and doc["a"] == doc["b"] == base.id, err
    assert "A itself, no other run matches" in doc["picked"]["b"]


# --- import --op: only that operator's records of a profile that holds many


def import_cli(tmp_path: Path, op: str, *extra: str) -> tuple[int, str, str]:
    path = sample(tmp_path, KD_EDITED, "kernel_details.csv")
    argv = ["bench", "import", str(path), "--op", op, "--store", str(tmp_path / "store"), "--no-probe", *extra]
    return run_cli(argv, ENV)


def test_import_of_a_profile_without_the_op_warns_lists_its_op_types_and_stores_nothing(tmp_path: Path) -> None:
    """Issue 25: --op add_custom of a torch_npu profile stored its unrelated ops, silently."""
    code, out, err = import_cli(tmp_path, "add_custom")
    assert code == 1 and out == "", err  # as `pip show NAME` of a package that is not there
    assert "add_custom is absent from" in err and "Traceback" not in err
    assert "Add, FlashAttentionScore, FlashAttentionScoreGrad, MatMulV2, MatMulV3" in err
    assert not (tmp_path / "store" / "add_custom").exists()
    code, out, err = import_cli(tmp_path, "add_custom", "--format", "json")
    doc = json.loads(out)
    assert code == 1 and doc["run"] is None and doc["absent"] is True and "MatMulV2" in doc["op_types"]


def test_import_keeps_only_the_ops_records_named_in_either_case(tmp_path: Path) -> None:
    code, out, err = import_cli(tmp_path, "mat_mul_v2", "--format", "json")  # the op type MatMulV2
    doc = json.loads(out)
    assert code == 0, err
    assert {r["op"] for r in doc["records"]} == {"MatMulV2"}  # not MatMulV3
    assert doc["left_out"] == ["Add", "FlashAttentionScore", "FlashAttentionScoreGrad", "MatMulV3"]
    stored = loads_run(Path(doc["path"]).read_text(), doc["path"])
    assert {r.op for r in stored.records} == {"MatMulV2"}
    code, out, err = import_cli(tmp_path, "Add")  # the type as the profile spells it
    assert code == 0 and "left out the other op types" in err and "MatMulV2" in err
    code, out, err = import_cli(tmp_path, "model", "--all-ops", "--format", "json")  # every op, as asked
    assert code == 0 and len({r["op"] for r in json.loads(out)["records"]}) == 5 and json.loads(out)["left_out"] == []


def test_op_key_matches_a_projects_snake_case_with_its_op_type() -> None:
    from ascenv.bench.records import op_key

    assert op_key("add_custom") == op_key("AddCustom") == op_key("ADD-CUSTOM")
    assert op_key("mat_mul_v2") != op_key("MatMulV3")
