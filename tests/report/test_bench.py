"""ascenv/report/bench.py through `ascenv report --store`: the baseline and latest bench run of
each installed vendor's operator, from a tmp store, a tmp OPP tree and runs imported from the
recorded msprof samples."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from ascenv.store import MANIFEST, Store
from tests.benchcmd.test_readers import KD_EDITED, sample
from tests.cli_helpers import run_cli
from tests.commands.test_report_cmd import host_environ, members
from tests.fixture_hosts import build_host
from tests.test_store import add_entry

VENDORS = "usr/local/Ascend/ascend-toolkit/8.0.0/opp/vendors"
OLD_SUMMARY = "msprof_old-format_op_summary_PipeUtil-no-aic-aiv-prefix_mskpp-test-EXCERPT.txt"


def installed_host(tmp_path: Path, manifest: bytes):
    """The a2-cann800 fixture host with vendor ``customize`` installed by ascenv from the store."""
    host = build_host("a2-cann800", tmp_path)
    vendors = host.root / VENDORS
    (vendors / "customize").mkdir(parents=True)
    (vendors / "config.ini").write_text("load_priority=customize\n")
    (vendors / "customize" / "ascenv-manifest.toml").write_bytes(manifest)
    return host


def bench_import(tmp_path: Path, store: Path, name: str, key: str) -> dict:
    path = sample(tmp_path, name, f"{len(list(tmp_path.glob('*.csv')))}-op.csv")
    # --all-ops: a model's profile (KD_EDITED) stands in for add_custom's runs, whatever its op types
    argv = ["bench", "import", str(path), "--op", "add_custom", "--all-ops", "--build", key, "--store", str(store)]
    code, out, err = run_cli([*argv, "--no-probe", "--format", "json"], {"PATH": "/usr/bin:/bin"})
    assert code == 0, err
    return json.loads(out)


def report(host, tmp_path: Path, *extra: str) -> dict[str, bytes]:
    argv = ["report", "--root", str(host.root), "--python", sys.executable, "-o", "r.tar.gz", *extra]
    code, _, err = run_cli(argv, host_environ(host), tmp_path)
    assert code == 0, err
    return members(tmp_path / "r.tar.gz")


def test_the_report_carries_the_baseline_and_latest_run_of_an_installed_vendor(tmp_path: Path) -> None:
    store = Store(tmp_path / "store")
    entry = add_entry(store, "add_custom", "c0ffee".ljust(64, "0"), target="npu")
    baseline = bench_import(tmp_path, store.root, OLD_SUMMARY, entry.key)
    latest = bench_import(tmp_path, store.root, KD_EDITED, entry.key)
    code, _, err = run_cli(["bench", "baseline", "set", baseline["run"], "--store", str(store.root)], {})
    assert code == 0, err
    host = installed_host(tmp_path, (entry.path / MANIFEST).read_bytes())

    bundle = report(host, tmp_path, "--store", str(store.root))
    doc = json.loads(bundle["bench.json"])
    assert doc["schema"] == 1 and len(doc["vendors"]) == 1
    vendor = doc["vendors"][0]
    assert (vendor["vendor"], vendor["op"], vendor["build"], vendor["build_in_store"]) == (
        "customize", "add_custom", entry.key, True
    )  # fmt: skip
    assert list(vendor["baselines"]) == ["npu"] and vendor["baselines"]["npu"]["run"] == baseline["run"]
    assert vendor["latest"]["run"] == latest["run"] and vendor["latest"]["tool"] == "torch_npu"
    assert vendor["latest"]["fingerprint"]["build"] == entry.key
    # the records as `bench import` printed them (every launch's duration left out)
    assert [r["duration_us"] for r in vendor["latest"]["records"]] == [r["duration_us"] for r in latest["records"]]
    assert [r["samples"] for r in vendor["baselines"]["npu"]["records"]] == [r["samples"] for r in baseline["records"]]
    page = bundle["report.md"].decode()
    assert "### Bench runs of installed vendors" in page and "`bench.json`" in page
    assert f"| baseline (npu) | {baseline['run']} | msprof |" in page and f"| latest | {latest['run']} |" in page
    sources = {m["name"]: m["source"] for m in json.loads(bundle["MANIFEST.json"])["members"]}
    assert sources["bench.json"] == "the build store's bench runs"


def test_a_saved_snapshot_ties_the_vendor_to_its_build_by_the_manifest_digest(tmp_path: Path) -> None:
    store = Store(tmp_path / "store")
    entry = add_entry(store, "add_custom", "c0ffee".ljust(64, "0"), target="npu")
    run = bench_import(tmp_path, store.root, OLD_SUMMARY, entry.key)
    host = installed_host(tmp_path, (entry.path / MANIFEST).read_bytes())
    argv = ["snapshot", "--root", str(host.root), "--python", sys.executable, "-o", "snap.json"]
    assert run_cli(argv, host_environ(host), tmp_path)[0] == 0
    code, _, err = run_cli(["report", "--from", "snap.json", "--store", str(store.root)], host_environ(host), tmp_path)
    assert code == 0, err
    doc = json.loads(members(tmp_path / "ascenv-report.tar.gz")["bench.json"])
    assert doc["vendors"][0]["latest"]["run"] == run["run"] and doc["vendors"][0]["baselines"] == {}
    page = members(tmp_path / "ascenv-report.tar.gz")["report.md"].decode()
    assert "No baseline set" in page


def test_no_store_or_no_runs_is_said_in_the_page_not_an_error(tmp_path: Path) -> None:
    store = Store(tmp_path / "store")
    entry = add_entry(store, "add_custom", "c0ffee".ljust(64, "0"), target="npu")
    host = installed_host(tmp_path, (entry.path / MANIFEST).read_bytes())

    bundle = report(host, tmp_path, "--store", str(tmp_path / "absent"))
    assert "bench.json" not in bundle
    assert f"None: no build store at {tmp_path / 'absent'}." in bundle["report.md"].decode()
    bundle = report(host, tmp_path, "--store", str(store.root))
    assert "bench.json" not in bundle
    assert "None: no installed vendor's operator has bench runs in" in bundle["report.md"].decode()


def test_a_damaged_run_file_is_named_in_the_report_not_fatal(tmp_path: Path) -> None:
    store = Store(tmp_path / "store")
    entry = add_entry(store, "add_custom", "c0ffee".ljust(64, "0"), target="npu")
    bench_import(tmp_path, store.root, OLD_SUMMARY, entry.key)
    (entry.path / "bench" / "cut.json").write_text('{"schema": 1, "run": {')
    host = installed_host(tmp_path, (entry.path / MANIFEST).read_bytes())
    bundle = report(host, tmp_path, "--store", str(store.root))
    vendor = json.loads(bundle["bench.json"])["vendors"][0]
    assert "cut.json: not valid JSON" in vendor["problem"] and vendor["latest"] is None
    assert "Its runs could not be read:" in bundle["report.md"].decode()


def stored_check(store: Store, entry, created: str, failed: tuple[str, ...]) -> str:  # type: ignore[no-untyped-def]
    """An `ascenv test` run of ``entry`` written as the command writes it; its id."""
    from ascenv.accuracy import results
    from ascenv.accuracy.spec import DEFAULT_TOLERANCES

    shapes = tuple(
        results.ShapeResult(s, 1, (), "z float16", DEFAULT_TOLERANCES["float16"], s not in failed, problem="x")
        for s in ("16", "17")
    )
    run = results.new_run(
        op="add_custom", target="npu", build_key=entry.key, created=created, seed=0, reference="numpy.add",
        argv=("{out}/app",), shapes=shapes,
    )  # fmt: skip
    results.write(store.root, entry.path, run)
    return run.id


def test_the_report_carries_the_installed_builds_newest_accuracy_check(tmp_path: Path) -> None:
    store = Store(tmp_path / "store")
    entry = add_entry(store, "add_custom", "c0ffee".ljust(64, "0"), target="npu")
    stored_check(store, entry, "2026-12-01T10:00:00.000000Z", ())
    newest = stored_check(store, entry, "2026-12-01T11:00:00.000000Z", ("17",))
    (entry.path / "accuracy" / "zz-damaged.json").write_text("{")  # store show names it; a report skips it
    host = installed_host(tmp_path, (entry.path / MANIFEST).read_bytes())

    bundle = report(host, tmp_path, "--store", str(store.root))
    (vendor,) = json.loads(bundle["bench.json"])["vendors"]
    assert vendor["latest"] is None and vendor["baselines"] == {}  # no bench run: carried for the check
    check = vendor["accuracy"]
    assert (check["id"], check["passed"], check["failed"], check["shapes"]) == (newest, False, ["17"], 2)
    page = bundle["report.md"].decode()
    assert f"Accuracy check `{newest}` (npu, 2 shapes, 2026-12-01T11:00:00.000000Z): failed on 17." in page
    assert "| run | id |" not in page  # no bench table without runs

    bench_import(tmp_path, store.root, OLD_SUMMARY, entry.key)  # with runs too, both are shown
    newer = stored_check(store, entry, "2026-12-01T12:00:00.000000Z", ())
    page = report(host, tmp_path, "--store", str(store.root))["report.md"].decode()
    assert f"Accuracy check `{newer}` (npu, 2 shapes, 2026-12-01T12:00:00.000000Z): passed." in page
    assert "| latest |" in page
