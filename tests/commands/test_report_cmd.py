"""`ascenv report` end to end on the fixture machines: the bundle, its determinism, redaction,
bundles as `ascenv diff` inputs, and bad bundles."""

from __future__ import annotations

import gzip
import io
import json
import os
import re
import sys
import tarfile
from pathlib import Path

import pytest

from ascenv import lockfile, report
from tests.cli_helpers import run_cli
from tests.fixture_hosts import HOST_NAMES, build_host, corpus_text

EPOCH = "1767225600"  # 2026-01-01T00:00:00Z
TRIAGE_DATA = Path(__file__).resolve().parents[1] / "data" / "triage"


def host_environ(host, **extra):
    return {**host.environ, "HOME": host.home or "/root", "SOURCE_DATE_EPOCH": EPOCH, **extra}


def make_report(host, cwd, *extra, output="r.tar.gz", environ=None):
    argv = ["report", "--root", str(host.root), "--python", sys.executable, "-o", output, "--format", "json", *extra]
    return run_cli(argv, environ or host_environ(host), cwd)


def members(path):
    data, _ = report.read_bundle(path.read_bytes(), str(path))  # verifies every sha256
    return data


@pytest.mark.parametrize("name", HOST_NAMES)
def test_bundle_from_each_fixture_host(name, tmp_path):
    host = build_host(name, tmp_path)
    code, out, err = make_report(host, tmp_path)
    assert code == 0, err
    result = json.loads(out)
    bundle = members(tmp_path / "r.tar.gz")
    assert result["size"] == (tmp_path / "r.tar.gz").stat().st_size
    assert {"report.md", "snapshot.json", "findings.json", "ascenv.lock"} <= set(bundle)
    snapshot = json.loads(bundle["snapshot.json"])
    assert snapshot["schema"] == 1 and snapshot["created"] == "2026-01-01T00:00:00+00:00"
    lock, _ = lockfile.loads_lock(bundle["ascenv.lock"].decode(), "ascenv.lock")  # valid, hash included
    assert lock.created == "2026-01-01T00:00:00+00:00"
    # the same findings as `ascenv doctor` on the same machine
    code, out, _ = run_cli(
        ["doctor", "--root", str(host.root), "--python", sys.executable, "--format", "json"],
        host_environ(host),
        tmp_path,
    )
    doctor = [(f["id"], f["severity"]) for f in json.loads(out)["findings"]]
    assert [(f["id"], f["severity"]) for f in json.loads(bundle["findings.json"])["findings"]] == doctor
    text = bundle["report.md"].decode()
    assert text.startswith("## ascenv report") and "### ascenv doctor" in text and "### Versions" in text
    # npu-smi's raw output, as printed, for every host that has an npu-smi
    if not host.captures:
        assert not [m for m in bundle if m.startswith("captures/")]
    elif "info" in host.captures and name != "container-no-devices":
        assert bundle["captures/npu-smi_info.txt"].decode() == corpus_text(host.captures["info"])
    else:  # npu-smi fails with DCMI -8020 in the container
        assert "-8020" in bundle["captures/npu-smi_info.txt"].decode()


def test_version_files_are_included_as_on_disk(tmp_path):
    host = build_host("a2-cann800", tmp_path)
    assert make_report(host, tmp_path)[0] == 0
    bundle = members(tmp_path / "r.tar.gz")
    manifest = json.loads(bundle["MANIFEST.json"])
    sources = {m["source"]: m["name"] for m in manifest["members"]}
    for path in (
        "/usr/local/Ascend/driver/version.info",
        "/usr/local/Ascend/firmware/version.info",
        "/etc/ascend_install.info",
    ):
        assert bundle[sources[path]] == (host.root / path.lstrip("/")).read_bytes()
    info = "/usr/local/Ascend/ascend-toolkit/8.0.0/aarch64-linux/ascend_toolkit_install.info"
    assert bundle[sources[info]] == (host.root / info.lstrip("/")).read_bytes()


def test_two_runs_give_the_same_bytes(tmp_path):
    host = build_host("two-canns-dangling-latest", tmp_path)
    assert make_report(host, tmp_path, output="one.tar.gz")[0] == 0
    assert make_report(host, tmp_path, output="two.tar.gz")[0] == 0
    assert (tmp_path / "one.tar.gz").read_bytes() == (tmp_path / "two.tar.gz").read_bytes()
    later = host_environ(host, SOURCE_DATE_EPOCH=str(int(EPOCH) + 60))
    assert make_report(host, tmp_path, output="three.tar.gz", environ=later)[0] == 0
    assert (tmp_path / "three.tar.gz").read_bytes() != (tmp_path / "one.tar.gz").read_bytes()


def test_serial_numbers_and_home_directories_are_redacted(tmp_path):
    host = build_host("two-canns-dangling-latest", tmp_path)
    code, out, _ = make_report(host, tmp_path)
    raw = gzip.decompress((tmp_path / "r.tar.gz").read_bytes())
    assert b"1000000000" not in raw  # Serial Number of the board capture (from_ascend_deployer_5.txt)
    assert (
        "Serial Number        : <serial-1>"
        in members(tmp_path / "r.tar.gz")["captures/npu-smi_info_-t_board_-i_0.txt"].decode()
    )
    assert json.loads(out)["redactions"] == {"serial": 1}

    dev = build_host("nonroot-home", tmp_path)
    code, out, _ = make_report(dev, tmp_path, output="dev.tar.gz", environ=host_environ(dev, USER="dev"))
    raw = gzip.decompress((tmp_path / "dev.tar.gz").read_bytes())
    assert code == 0 and b"/home/dev" not in raw
    assert b"/home/<user-1>/Ascend/ascend-toolkit/8.1.RC1" in raw
    assert (tmp_path / "dev.tar.gz").stat().st_mode & 0o777 == 0o644


def test_no_redact_keeps_everything_and_says_so(tmp_path):
    host = build_host("nonroot-home", tmp_path)
    code, out, _ = make_report(host, tmp_path, "--no-redact")
    path = tmp_path / "r.tar.gz"
    assert code == 0 and json.loads(out)["redacted"] is False
    assert b"/home/dev/Ascend/ascend-toolkit/8.1.RC1" in gzip.decompress(path.read_bytes())
    assert "**Not redacted** (`--no-redact`)" in members(path)["report.md"].decode()
    assert path.stat().st_mode & 0o777 == 0o600


def test_vendor_build_manifests_are_bundled_and_redacted(tmp_path):
    host = build_host("a2-cann800", tmp_path)
    vendors = host.root / "usr/local/Ascend/ascend-toolkit/8.0.0/opp/vendors"
    (vendors / "customize").mkdir(parents=True)
    (vendors / "config.ini").write_text("load_priority=customize\n")
    (vendors / "customize/version.info").write_text("custom_opp_compiler_version=7.6.0.1.220")
    # constructed: the tables of ascenv/store.py Manifest that can hold personal values
    manifest = (
        '# ascenv build manifest (schema 1)\nop = "add_custom"\ncommand = ["bash", "build.sh"]\n'
        '[env]\nPIP_INDEX_URL = "https://builder:Sup3rS3cret@pypi.mirror.lab/simple"\n'
        'WORKDIR = "/home/li_lei/ops/add_custom"\n'
        '[host]\nhostname = "build-box-3"\naddress = "172.16.4.21"\n'
    )
    (vendors / "customize/ascenv-manifest.toml").write_text(manifest)
    code, out, err = make_report(host, tmp_path)
    assert code == 0, err
    bundle = members(tmp_path / "r.tar.gz")
    text = bundle["manifests/customize/ascenv-manifest.toml"].decode()
    assert 'hostname = "<host-1>"' in text and 'WORKDIR = "/home/<user-1>/ops/add_custom"' in text
    assert 'address = "<ip-1>"' in text and "https://<secret-1>@<host-2>/simple" in text
    raw = gzip.decompress((tmp_path / "r.tar.gz").read_bytes())
    for secret in (b"Sup3rS3cret", b"build-box-3", b"li_lei", b"172.16.4.21"):
        assert secret not in raw
    sources = {m["name"]: m["source"] for m in json.loads(bundle["MANIFEST.json"])["members"]}
    assert (
        sources["manifests/customize/ascenv-manifest.toml"]
        == "/usr/local/Ascend/ascend-toolkit/latest/opp/vendors/customize/ascenv-manifest.toml"
    )


def test_from_snapshot_and_given_lock(tmp_path):
    host = build_host("a3-cann850", tmp_path)
    environ = host_environ(host)
    argv = ["--root", str(host.root), "--python", sys.executable]
    assert (
        run_cli(["snapshot", *argv, "-o", str(tmp_path / "snap.json"), "--format", "json"], environ, tmp_path)[0] == 0
    )
    assert run_cli(["lock", *argv, "-o", "ascenv.lock"], environ, tmp_path)[0] == 0
    code, out, err = run_cli(
        ["report", "--from", "snap.json", "--lock", "ascenv.lock", "-o", "r.tar.gz"],
        {"SOURCE_DATE_EPOCH": EPOCH},
        tmp_path,
    )
    assert code == 0, err
    bundle = members(tmp_path / "r.tar.gz")
    assert not [m for m in bundle if m.startswith(("captures/", "files/"))]  # nothing was run or read
    given, _ = lockfile.loads_lock((tmp_path / "ascenv.lock").read_text(), "ascenv.lock")
    bundled, _ = lockfile.loads_lock(bundle["ascenv.lock"].decode(), "bundle")
    assert bundled.input_hash == given.input_hash  # nothing personal in it: unchanged
    text = bundle["report.md"].decode()
    assert "`ascenv.lock`: the stack as a lock (read from ascenv.lock)" in text
    assert "`ascenv report --from snap.json --lock ascenv.lock`" in text
    assert "wrote r.tar.gz" in out


@pytest.mark.parametrize(
    "argv, environ, message",
    [
        (["--from", "missing.json"], {}, "missing.json: No such file or directory"),
        (["--root", "ROOT", "--lock", "missing.lock"], None, "cannot read lock missing.lock"),
        (["--root", "ROOT"], {"SOURCE_DATE_EPOCH": "yesterday"}, "SOURCE_DATE_EPOCH='yesterday' is not a number"),
        (["--root", "no-such-dir"], None, "--root no-such-dir does not exist"),
    ],
)
def test_bad_inputs_exit_2_and_write_nothing(tmp_path, argv, environ, message):
    host = build_host("a2-cann800", tmp_path)
    argv = [str(host.root) if a == "ROOT" else a for a in argv]
    code, _, err = run_cli(
        ["report", *argv, "--python", sys.executable], host_environ(host) if environ is None else environ, tmp_path
    )
    assert code == 2 and message in err and "Traceback" not in err
    assert not (tmp_path / report.DEFAULT_OUTPUT).exists()


def test_interrupted_write_leaves_no_file(tmp_path, monkeypatch):
    host = build_host("a2-cann800", tmp_path)
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    (out_dir / "r.tar.gz").write_bytes(b"previous bundle")

    def interrupted(fh_data, *args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "replace", interrupted)
    code, _, err = make_report(host, out_dir)
    assert code == 130 and "interrupted" in err
    assert sorted(os.listdir(out_dir)) == ["r.tar.gz"] and (out_dir / "r.tar.gz").read_bytes() == b"previous bundle"


def test_unwritable_output_is_a_clear_error(tmp_path):
    host = build_host("a2-cann800", tmp_path)
    code, _, err = make_report(host, tmp_path, output="no/such/dir/r.tar.gz")
    assert code == 2 and "cannot write" in err and "no/such/dir/r.tar.gz" in err


# --- bundles as `ascenv diff` inputs ---------------------------------------------------------------


def test_diff_takes_bundles(tmp_path):
    a2 = build_host("a2-cann800", tmp_path)
    assert make_report(a2, tmp_path, output="a2.tar.gz")[0] == 0
    environ = host_environ(a2)
    argv = ["--root", str(a2.root), "--python", sys.executable]
    assert run_cli(["snapshot", *argv, "-o", str(tmp_path / "a2.json"), "--format", "json"], environ, tmp_path)[0] == 0
    code, out, err = run_cli(["diff", "a2.tar.gz", "a2.json", "--format", "json"], {}, tmp_path)
    assert code == 0 and json.loads(out)["identical"] is True, err

    other = build_host("two-canns-dangling-latest", tmp_path)
    assert make_report(other, tmp_path, output="other.tar.gz")[0] == 0
    code, out, _ = run_cli(["diff", "a2.tar.gz", "other.tar.gz", "--format", "json"], {}, tmp_path)
    changes = json.loads(out)["changes"]
    assert code == 1
    assert ("cann", "/usr/local/Ascend/ascend-toolkit/8.0.0", "removed") in {
        (c["layer"], c["item"], c["kind"]) for c in changes
    }


def _bundle_bytes(tmp_path):
    host = build_host("a2-cann800", tmp_path)
    assert make_report(host, tmp_path, output="good.tar.gz")[0] == 0
    return (tmp_path / "good.tar.gz").read_bytes()


def _retar(data: bytes, change) -> bytes:
    """The bundle's members, changed by ``change(members)``, in a new archive (MANIFEST.json kept)."""
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
        content = {m.name: tar.extractfile(m).read() for m in tar}
    content = change(content)
    return report.pack(report.Bundle(content, "2026-01-01T00:00:00+00:00", True))


@pytest.mark.parametrize(
    "damage, message",
    [
        (lambda d: b"# not a bundle\n", "is not an ascenv report bundle (not gzip-compressed)"),
        (lambda d: gzip.compress(b"plain text, not a tar"), "is not a readable report bundle"),
        (
            lambda d: _retar(d, lambda m: {k: v for k, v in m.items() if k != "snapshot.json"}),
            "snapshot.json is listed in MANIFEST.json but missing",
        ),
        (
            lambda d: _retar(d, lambda m: {**m, "snapshot.json": m["snapshot.json"].replace(b"25.0.rc1.1", b"25.2.0")}),
            "snapshot.json does not match its sha256",
        ),
    ],
)
def test_bad_bundles_in_diff_exit_2(tmp_path, damage, message):
    bad = tmp_path / "bad.tar.gz"
    bad.write_bytes(damage(_bundle_bytes(tmp_path)))
    code, _, err = run_cli(["diff", "bad.tar.gz", "good.tar.gz"], {}, tmp_path)
    assert code == 2 and "bad.tar.gz" in err and message in err and "Traceback" not in err


# --- what the adversarial test planted (each leaked into the bundle verbatim) -------------------

PEM_BODY = "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW"


def test_planted_keys_tokens_and_passwords_are_not_in_the_bundle(tmp_path):
    host = build_host("a2-cann800", tmp_path)
    block = f"-----BEGIN OPENSSH PRIVATE KEY-----\n{PEM_BODY}\nAAAAB3NzaC1yc2E\n-----END OPENSSH PRIVATE KEY-----\n"
    with open(host.root / "etc/ascend_install.info", "a") as fh:
        fh.write(block)
    planted = {
        "ASCEND_T1": "AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY",
        "ASCEND_T2": "pypi-AgEIcHlwaS5vcmcCJGI1ZDJmYzQ3LWJh",
        "ASCEND_PASS": "PlainPass123456",
        "ASCEND_T5": "https://u:Pa@ssw0rdSecret99@mirror.example.invalid/simple",
        "ASCEND_T6": "Authorization: Basic dXNlcjpQYTU1dzByZA==",
    }
    code, _, err = make_report(host, tmp_path, environ=host_environ(host, **planted))
    assert code == 0, err
    raw = gzip.decompress((tmp_path / "r.tar.gz").read_bytes())
    for secret in (
        PEM_BODY,
        "AIzaSyD-9tSrke72",
        "pypi-AgEIcHlwaS5",
        "PlainPass123456",
        "ssw0rdSecret99",
        "dXNlcjpQYTU1",
    ):
        assert secret.encode() not in raw, secret
    bundle = members(tmp_path / "r.tar.gz")
    info = next(name for name in bundle if name.endswith("ascend_install.info"))
    text = bundle[info].decode()  # the lines around the block are kept as they are
    assert "-----BEGIN" not in text and re.search(
        r"\nFirmware_Install_Path_Param=/usr/local/Ascend\n<secret-\d+>\n$", text
    )


def test_a_40000_character_token_in_a_version_file_does_not_stall_the_report(tmp_path):
    import base64
    import time

    host = build_host("a2-cann800", tmp_path)
    with open(host.root / "etc/ascend_install.info", "a") as fh:
        fh.write("\nsig=" + base64.b16encode(os.urandom(20000)).decode() + "\n")  # took 3 minutes
    start = time.perf_counter()
    assert make_report(host, tmp_path)[0] == 0
    assert time.perf_counter() - start < 30


def test_reading_a_hostile_bundle_writes_nothing(tmp_path):
    """A bundle with '../' and absolute names is refused, and nothing appears anywhere (the
    reader never extracts)."""
    work = tmp_path / "work"
    work.mkdir()
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w") as tar:
        for name in ("../escaped.txt", str(tmp_path / "absolute.txt"), "snapshot.json"):
            info = tarfile.TarInfo(name)
            info.size = 2
            tar.addfile(info, io.BytesIO(b"{}"))
    (work / "bad.tar.gz").write_bytes(gzip.compress(raw.getvalue()))
    (work / "x.lock").write_text("")
    before = sorted(p.name for p in tmp_path.rglob("*"))
    code, _, err = run_cli(["diff", "bad.tar.gz", "x.lock"], {}, work)
    assert code == 2 and "'../escaped.txt' is not a plain relative path" in err
    assert sorted(p.name for p in tmp_path.rglob("*")) == before


# --- report --log: the triage of the user's error log, in the bundle and redacted --------------------


def test_log_is_triaged_into_the_bundle_and_redacted(tmp_path):
    host = build_host("a2-cann800", tmp_path)
    log = TRIAGE_DATA / "torch_npu_plog_drvRetCode87_507899_EE8888_card-in-two-containers_vllm-ascend-issue248.txt"
    token = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    (tmp_path / "run.log").write_text(log.read_text(encoding="utf-8") + f"export GITHUB_TOKEN={token}\n")
    code, out, err = make_report(host, tmp_path, "--log", "run.log")
    assert code == 0, err
    bundle = members(tmp_path / "r.tar.gz")
    triaged = json.loads(bundle["triage.json"])
    assert triaged["schema"] == 1 and triaged["causes"], triaged
    assert any("drvRetCode=87" in line["text"] for c in triaged["causes"] for line in c["lines"])
    text = bundle["report.md"].decode()
    assert "### ascenv triage" in text and "`triage.json`" in text
    assert "--log run.log" in text  # the command line that made it
    assert all(token[:12] not in data.decode("utf-8", "replace") for data in bundle.values())


def test_a_missing_log_is_a_usage_error_before_anything_is_written(tmp_path):
    host = build_host("a2-cann800", tmp_path)
    code, _, err = make_report(host, tmp_path, "--log", "nope.log")
    assert code == 2 and "nope.log: no such file" in err
    assert not (tmp_path / "r.tar.gz").exists()
