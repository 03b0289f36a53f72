"""`ascenv export prometheus` on the fixture machines: labels, lock drift, the file it writes."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

from ascenv import errors
from tests.cli_helpers import run_cli
from tests.commands.test_lock_fixtures import host_with_site
from tests.fixture_hosts import build_host


def ascenv(host, cwd, *argv):
    return run_cli([*argv, "--root", str(host.root), "--python", sys.executable], dict(host.environ), cwd)


def export(host, cwd, *argv):
    return ascenv(host, cwd, "export", "prometheus", *argv)


def samples(text: str, name: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith(name + "{") or line.startswith(name + " ")]


def drift_driver(host) -> None:
    version_info = host.root / "usr/local/Ascend/driver/version.info"
    version_info.write_text(version_info.read_text().replace("Version=25.0.rc1.1", "Version=25.2.0"))


def test_stack_info_has_the_fixture_hosts_labels(tmp_path):
    host = host_with_site("a2-cann800", tmp_path, torch_npu="2.7.1")
    code, out, err = export(host, tmp_path)
    assert code == 0, err
    assert samples(out, "ascenv_stack_info") == [
        'ascenv_stack_info{driver="25.0.rc1.1",firmware="7.7.0.1.231",cann="8.0.0",torch_npu="2.7.1",'
        'torch="",nnal="",soc="ascend910b"} 1'
    ]
    assert err == ""  # on stdout the metrics are the whole output


def test_a3_host_labels(tmp_path):
    host = build_host("a3-cann850", tmp_path)
    code, out, err = export(host, tmp_path)
    assert code == 0, err
    (line,) = samples(out, "ascenv_stack_info")
    assert 'driver="25.2.0"' in line and 'cann="8.5.0"' in line and 'soc="ascend910_93"' in line
    assert 'firmware=""' in line  # no firmware file on that host: empty, not "None"


def test_lock_in_sync_flips_to_0_when_the_host_drifts(tmp_path):
    host = host_with_site("a2-cann800", tmp_path)
    assert ascenv(host, tmp_path, "lock", "-o", "cluster.lock")[0] == 0
    code, out, err = export(host, tmp_path, "--lock", "cluster.lock")
    assert code == 0, err
    assert samples(out, "ascenv_lock_in_sync") == ['ascenv_lock_in_sync{lock="cluster.lock"} 1']
    drift_driver(host)
    code, out, err = export(host, tmp_path, "--lock", "cluster.lock")
    assert code == 0, err  # drift is a metric, not a failure of the exporter
    assert samples(out, "ascenv_lock_in_sync") == ['ascenv_lock_in_sync{lock="cluster.lock"} 0']
    assert 'driver="25.2.0"' in samples(out, "ascenv_stack_info")[0]


def test_two_locks_two_series(tmp_path):
    host = host_with_site("a2-cann800", tmp_path)
    assert ascenv(host, tmp_path, "lock", "-o", "old.lock")[0] == 0
    drift_driver(host)
    assert ascenv(host, tmp_path, "lock", "-o", "new.lock")[0] == 0
    code, out, _ = export(host, tmp_path, "--lock", "old.lock", "--lock", "new.lock")
    assert samples(out, "ascenv_lock_in_sync") == [
        'ascenv_lock_in_sync{lock="old.lock"} 0',
        'ascenv_lock_in_sync{lock="new.lock"} 1',
    ]


def test_a_lock_of_another_platform_is_left_out(tmp_path):
    a2 = host_with_site("a2-cann800", tmp_path / "a2")
    assert ascenv(a2, tmp_path, "lock", "-o", "a2.lock")[0] == 0
    a3 = build_host("a3-cann850", tmp_path / "a3")
    assert ascenv(a3, tmp_path, "lock", "-o", "a3.lock")[0] == 0
    code, out, err = export(a3, tmp_path, "--lock", "a2.lock", "--lock", "a3.lock")
    assert code == 0, err
    assert samples(out, "ascenv_lock_in_sync") == ['ascenv_lock_in_sync{lock="a3.lock"} 1']
    assert "a2.lock is for another platform" in err
    code, out, err = export(a2, tmp_path, "--lock", "a3.lock")
    assert code == 0 and samples(out, "ascenv_lock_in_sync") == [], err
    assert "# TYPE ascenv_lock_in_sync gauge" in out  # the family stays declared


def test_from_snapshot_equals_the_live_probe(tmp_path):
    host = host_with_site("a2-cann800", tmp_path)
    assert ascenv(host, tmp_path, "snapshot", "-o", "node.json")[0] == 0
    live = export(host, tmp_path)[1]
    code, saved, err = run_cli(["export", "prometheus", "--from", "node.json"], {}, tmp_path)
    assert code == 0, err
    for name in ("ascenv_stack_info", "ascenv_findings"):
        assert samples(saved, name) == samples(live, name)


def test_writes_the_file_atomically_and_readable_by_node_exporter(tmp_path):
    host = build_host("a2-cann800", tmp_path)
    textfile = tmp_path / "textfile"
    textfile.mkdir()
    (textfile / "ascenv.prom").write_text("old\n")
    code, out, err = export(host, tmp_path, "-o", "textfile/ascenv.prom")
    assert code == 0, err
    assert out.startswith("wrote textfile/ascenv.prom")
    written = textfile / "ascenv.prom"
    assert written.read_text().startswith("# HELP ascenv_stack_info ")
    assert os.stat(written).st_mode & 0o004  # node-exporter's own user reads it
    assert sorted(p.name for p in textfile.iterdir()) == ["ascenv.prom"]  # no temp file left
    (stamp,) = samples(written.read_text(), "ascenv_last_run_timestamp_seconds")
    assert re.fullmatch(r"ascenv_last_run_timestamp_seconds \d{10}\.\d+", stamp)


def test_missing_lock_is_exit_2_before_probing(tmp_path):
    host = build_host("a2-cann800", tmp_path)
    code, out, err = export(host, tmp_path, "--lock", "nope.lock", "-o", "x.prom")
    assert code == errors.EXIT_USAGE
    assert "nope.lock" in err and "Traceback" not in err
    assert not (tmp_path / "x.prom").exists()


def test_unwritable_output_is_exit_2(tmp_path):
    host = build_host("a2-cann800", tmp_path)
    for target in ("missing-dir/ascenv.prom", "."):
        code, _, err = export(host, tmp_path, "-o", target)
        assert code == errors.EXIT_USAGE, (target, err)
        assert "cannot write" in err


def test_kind_is_required(tmp_path):
    code, _, err = run_cli(["export"], {}, Path(tmp_path))
    assert code == errors.EXIT_USAGE
