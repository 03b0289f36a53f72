import json
import os
from dataclasses import replace

import pytest
from lock_samples import a2, a3, p310_x86, with_package

from ascenv import errors, lockfile
from ascenv.snapshot_io import snapshot_to_json
from tests.cli_helpers import run_cli


def ascenv(tmp_path, *argv):
    return run_cli(argv, {}, tmp_path)


def save(tmp_path, name, snap):
    (tmp_path / name).write_text(json.dumps(snapshot_to_json(snap)))
    return name


@pytest.fixture
def locked(tmp_path):
    """An ascenv.lock written from the A2 snapshot."""
    code, out, err = ascenv(tmp_path, "lock", "--from", save(tmp_path, "a2.json", a2()))
    assert code == 0, err
    return tmp_path / "ascenv.lock"


def check_json(tmp_path, snap, *extra):
    code, out, err = ascenv(
        tmp_path, "lock", "--check", "--from", save(tmp_path, "now.json", snap), "--format", "json", *extra
    )
    return code, json.loads(out) if out else None, err


def test_lock_writes_a_readable_shared_file(tmp_path, locked):
    lock, warnings = lockfile.loads_lock(locked.read_text(), "ascenv.lock")
    assert lock.npu.driver == "25.0.rc1.1" and lock.source == "a2.json" and warnings == []
    assert oct(locked.stat().st_mode & 0o777) == "0o644"
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".ascenv-")] == []  # no temp file left


def test_lock_human_output_summarises_the_stack(tmp_path):
    code, out, _ = ascenv(tmp_path, "lock", "--from", save(tmp_path, "a3.json", a3()), "-o", "a3.lock")
    assert code == 0
    assert "wrote a3.lock: aarch64 ascend910_93, driver 25.2.0, firmware -, 16 chips, CANN 8.3.RC1 (1 installed)" in out


def test_check_same_machine_is_in_sync(tmp_path, locked):
    code, out, err = ascenv(tmp_path, "lock", "--check", "--from", "a2.json")
    assert code == 0, err
    assert "in sync with ascenv.lock" in out


def test_check_named_lock_file(tmp_path, locked):
    os.rename(locked, tmp_path / "prod.lock")
    code, report, _ = check_json(tmp_path, a2(), "--check", "prod.lock")
    assert code == 0 and report["in_sync"] is True and report["lock"] == "prod.lock"


def _layers(report):
    return [(c["layer"], c["item"], c["old"], c["new"], c["severity"]) for c in report["changes"]]


def test_driver_change_is_drift(tmp_path, locked):
    snap = a2()
    code, report, _ = check_json(tmp_path, replace(snap, driver=replace(snap.driver, version="25.2.0")))
    assert code == errors.EXIT_FINDINGS
    assert _layers(report) == [("driver", "version", "25.0.rc1.1", "25.2.0", "error")]


def test_cann_change_is_drift(tmp_path, locked):
    snap = a2()
    inst = replace(snap.cann.installs[0], version="8.2.RC2")
    code, report, _ = check_json(tmp_path, replace(snap, cann=replace(snap.cann, installs=(inst,))))
    assert code == 1
    assert _layers(report) == [
        (
            "cann",
            "/usr/local/Ascend/ascend-toolkit/8.2.RC1",
            "8.2.RC1 (V100R001C22SPC001B231, toolkit, aarch64)",
            "8.2.RC2 (V100R001C22SPC001B231, toolkit, aarch64)",
            "error",
        )
    ]


def test_torch_npu_change_is_drift(tmp_path, locked):
    code, report, _ = check_json(tmp_path, with_package(a2(), "torch_npu", "2.9.0"))
    assert code == 1
    assert _layers(report) == [("packages", "torch-npu", "2.8.0", "2.9.0", "error")]


def test_torch_npu_patch_release_warns_unless_strict(tmp_path, locked):
    code, report, _ = check_json(tmp_path, with_package(a2(), "torch_npu", "2.8.1"))
    assert code == 0 and report["in_sync"] is False
    assert _layers(report) == [("packages", "torch-npu", "2.8.0", "2.8.1", "warn")]
    code, report, _ = check_json(tmp_path, with_package(a2(), "torch_npu", "2.8.1"), "--strict")
    assert code == 1 and _layers(report)[0][4] == "error"


def test_vendor_change_is_drift(tmp_path, locked):
    snap = a2()
    vendor = replace(snap.vendors[0], version_info={"custom_opp_compiler_version": "8.3.0.0.100"})
    code, report, _ = check_json(tmp_path, replace(snap, vendors=(vendor,)))
    assert code == 1
    assert _layers(report) == [
        ("vendors", "customize: version.info custom_opp_compiler_version", "8.2.0.0.201", "8.3.0.0.100", "error")
    ]


def test_drift_human_table(tmp_path, locked):
    snap = a2()
    save(tmp_path, "now.json", replace(snap, driver=replace(snap.driver, version="25.2.0")))
    code, out, err = ascenv(tmp_path, "lock", "--check", "--from", "now.json")
    assert code == 1
    assert "25.0.rc1.1" in out and "25.2.0" in out and "drift: 1 error, 0 warnings" in out


def test_a3_lock_checked_on_x86_310p_is_another_platform(tmp_path):
    assert ascenv(tmp_path, "lock", "--from", save(tmp_path, "a3.json", a3()), "-o", "a3.lock")[0] == 0
    code, out, err = ascenv(tmp_path, "lock", "--check", "a3.lock", "--from", save(tmp_path, "p.json", p310_x86()))
    assert code == errors.EXIT_USAGE
    assert out == ""  # no false drift listed
    assert (
        "a3.lock is for another platform (arch aarch64 vs x86_64;"
        " SoC family ascend910_93 (Ascend910) vs ascend310p (310P3))" in err
    )
    assert "check it on a aarch64 ascend910_93 machine" in err


@pytest.mark.parametrize(
    "damage, message",
    [
        (lambda t: t[: len(t) // 3], "is not a readable lock"),
        (lambda t: t.replace('glibc = "2.34"', 'glibc = "2.38"'), "edited by hand"),
        (lambda t: t.replace('lock-version = "1.1"', 'lock-version = "3.1"'), "written by a newer ascenv"),
        (lambda t: t.replace("active = true", 'active = "yes"'), "cann[0].active: expected boolean"),
    ],
    ids=["truncated", "hand-edited", "future-version", "bad-type"],
)
def test_damaged_lock_is_a_clear_error(tmp_path, locked, damage, message):
    locked.write_text(damage(locked.read_text()))
    code, out, err = ascenv(tmp_path, "lock", "--check", "--from", "a2.json")
    assert code == errors.EXIT_USAGE
    assert message in err and "Traceback" not in err


def test_missing_lock_is_exit_2(tmp_path):
    save(tmp_path, "a2.json", a2())
    code, _, err = ascenv(tmp_path, "lock", "--check", "--from", "a2.json")
    assert code == 2 and "cannot read lock ascenv.lock" in err


def test_failed_lock_leaves_the_old_one_untouched(tmp_path, locked):
    before = locked.read_text()
    (tmp_path / "bad.json").write_text('{"schema": 1, "npu": {"chips": 3}}')
    code, _, err = ascenv(tmp_path, "lock", "--from", "bad.json")
    assert code == 2 and "npu.chips: expected a list" in err
    assert locked.read_text() == before


def test_json_lock_output(tmp_path):
    code, out, _ = ascenv(tmp_path, "lock", "--from", save(tmp_path, "p.json", p310_x86()), "--format", "json")
    data = json.loads(out)
    assert code == 0 and data["path"] == "ascenv.lock"
    assert data["lock"]["platform"]["compute-unit"] == "ascend310p"


def test_lock_records_the_image_pins(tmp_path, monkeypatch):
    pins = pytest.importorskip("ascenv.containers.pins", reason="the container module is not in this tree yet")
    from ascenv import paths

    image_id = "sha256:" + "5e" * 32
    digest = "sha256:" + "a1" * 32
    pins.save_pins(
        tmp_path / "containers" / pins.PINS_FILE,
        {
            "builder-bookworm": pins.Pin(
                kind="bootstrap", recipe_sha256="0" * 64, architecture="amd64", image_id=image_id
            ),
            "cann-8.1.rc1-910b": pins.Pin(
                kind="registry",
                recipe_sha256="1" * 64,
                architecture="arm64",
                ref=f"ascendai/cann@{digest}",
                tag="ascendai/cann:8.1.rc1-910b-ubuntu22.04-py3.10",
            ),
        },
    )
    monkeypatch.setattr(paths, "data_dir", lambda name: tmp_path / name)
    code, out, _ = ascenv(tmp_path, "lock", "--from", save(tmp_path, "a2.json", a2()), "--format", "json")
    assert code == 0
    assert json.loads(out)["lock"]["images"] == [
        {"name": "builder-bookworm", "digest": image_id},
        {"name": "cann-8.1.rc1-910b", "ref": "ascendai/cann:8.1.rc1-910b-ubuntu22.04-py3.10", "digest": digest},
    ]
    # a re-pinned image is drift in the images layer
    pins.save_pins(
        tmp_path / "containers" / pins.PINS_FILE,
        {
            "builder-bookworm": pins.Pin(
                kind="bootstrap", recipe_sha256="0" * 64, architecture="amd64", image_id="sha256:" + "77" * 32
            ),
            "cann-8.1.rc1-910b": pins.Pin(
                kind="registry",
                recipe_sha256="1" * 64,
                architecture="arm64",
                ref=f"ascendai/cann@{digest}",
                tag="ascendai/cann:8.1.rc1-910b-ubuntu22.04-py3.10",
            ),
        },
    )
    code, out, _ = ascenv(tmp_path, "lock", "--check", "--from", "a2.json", "--format", "json")
    assert code == 1
    assert [(c["layer"], c["item"], c["old"], c["new"]) for c in json.loads(out)["changes"]] == [
        ("images", "builder-bookworm", image_id, "sha256:" + "77" * 32)
    ]


def test_mistyped_root_is_a_usage_error_not_an_empty_machine(tmp_path):
    code, out, err = ascenv(tmp_path, "lock", "--root", "no-such-dir")
    assert code == 2 and "--root no-such-dir does not exist" in err
    assert not (tmp_path / "ascenv.lock").exists()


# --- where -o writes ---------------------------------------------------------------------------------


def test_lock_into_a_missing_directory_is_exit_2(tmp_path):
    code, _, err = ascenv(tmp_path, "lock", "--from", save(tmp_path, "a2.json", a2()), "-o", "missing/x.lock")
    assert code == 2 and "cannot write missing/x.lock: No such file or directory" in err
    assert "-o takes a file path" in err


def test_lock_onto_a_symlink_updates_its_target_and_keeps_the_link(tmp_path):
    (tmp_path / "locks").mkdir()
    (tmp_path / "locks" / "node1.lock").write_text("old")
    (tmp_path / "ascenv.lock").symlink_to("locks/node1.lock")
    code, _, err = ascenv(tmp_path, "lock", "--from", save(tmp_path, "a2.json", a2()))
    assert code == 0, err
    assert (tmp_path / "ascenv.lock").is_symlink()
    lock, _ = lockfile.loads_lock((tmp_path / "locks" / "node1.lock").read_text(), "node1.lock")
    assert lock.npu.driver == "25.0.rc1.1"


def test_lock_to_a_stdout_link_writes_the_stream(tmp_path):
    read_end, write_end = os.pipe()
    (tmp_path / "fakedev").mkdir()
    (tmp_path / "fakedev" / "stdout").symlink_to(f"/proc/self/fd/{write_end}")
    code, _, err = ascenv(tmp_path, "lock", "--from", save(tmp_path, "a2.json", a2()), "-o", "fakedev/stdout")
    os.close(write_end)
    with os.fdopen(read_end) as fh:
        text = fh.read()
    assert code == 0, err
    assert lockfile.loads_lock(text, "stdout")[0].npu.driver == "25.0.rc1.1"
    assert (tmp_path / "fakedev" / "stdout").is_symlink() and os.listdir(tmp_path / "fakedev") == ["stdout"]


# --- a hand-edited lock with a newer minor version is never "in sync" ---------------------------------


def test_minor_bump_unknown_key_and_edited_driver_is_refused_as_edited(tmp_path, locked):
    text = locked.read_text().replace('lock-version = "1.1"', 'lock-version = "1.2"\nfuture-key = 1', 1)
    (tmp_path / "minor.lock").write_text(text.replace('driver = "25.0.rc1.1"', 'driver = "1.2.3-handedited"', 1))
    code, out, err = ascenv(tmp_path, "lock", "--check", "minor.lock", "--from", "a2.json")
    assert code == 2 and "input-hash does not match" in err and "in sync" not in out


def test_unknown_key_in_a_hashed_table_and_edited_driver_is_drift(tmp_path, locked):
    text = locked.read_text().replace('lock-version = "1.1"', 'lock-version = "1.2"', 1)
    text = text.replace("[npu]\n", "[npu]\nsockets = 2\n", 1)
    (tmp_path / "minor.lock").write_text(text.replace('driver = "25.0.rc1.1"', 'driver = "1.2.3-handedited"', 1))
    code, out, err = ascenv(tmp_path, "lock", "--check", "minor.lock", "--from", "a2.json", "--format", "json")
    data = json.loads(out)
    assert code == 1 and data["in_sync"] is False
    assert [(c["layer"], c["old"], c["new"]) for c in data["changes"]] == [("driver", "1.2.3-handedited", "25.0.rc1.1")]
    assert "input-hash not verified" in err


def test_unknown_key_in_a_hashed_table_without_an_edit_is_in_sync_by_comparison(tmp_path, locked):
    text = locked.read_text().replace('lock-version = "1.1"', 'lock-version = "1.2"', 1)
    (tmp_path / "minor.lock").write_text(text.replace("[npu]\n", "[npu]\nsockets = 2\n", 1))
    code, out, err = ascenv(tmp_path, "lock", "--check", "minor.lock", "--from", "a2.json")
    assert code == 0 and "in sync with minor.lock (compared layer by layer)" in out
    assert "ignored unknown key npu.sockets" in err and "input-hash not verified" in err


@pytest.mark.parametrize(
    ("options", "accept"),
    [
        (("--from", "now.json"), "ascenv lock --from now.json -o ascenv.lock"),
        (
            ("--from", "now.json", "--python", "/opt/venv/bin/python"),
            "ascenv lock --from now.json --python /opt/venv/bin/python -o ascenv.lock",
        ),
        (("--from", "now.json", "--check", "site a.lock"), "ascenv lock --from now.json -o 'site a.lock'"),
    ],
)
def test_the_accept_hint_keeps_the_machine_options_given(tmp_path, locked, options, accept):
    if "site a.lock" in options:
        (tmp_path / "site a.lock").write_text((tmp_path / "ascenv.lock").read_text())
    snap = a2()
    save(tmp_path, "now.json", replace(snap, driver=replace(snap.driver, version="25.2.0")))
    argv = ["lock", *options] if "--check" in options else ["lock", "--check", *options]
    code, _, err = ascenv(tmp_path, *argv)
    assert code == 1 and f"accept the change with `{accept}`" in " ".join(err.split())


@pytest.mark.parametrize("make", ["snapshot", "other-json", "garbage"])
def test_a_snapshot_given_as_the_lock_is_named_as_one(tmp_path, make):
    if make == "snapshot":
        save(tmp_path, "snap.json", a2())
    elif make == "other-json":
        (tmp_path / "snap.json").write_text('{"nodes": 3}')
    else:
        (tmp_path / "snap.json").write_text("{{{ not anything")
    code, _, err = ascenv(tmp_path, "lock", "--check", "snap.json", "--from", "snap.json")
    said = " ".join(err.split())
    assert code == errors.EXIT_USAGE
    if make == "snapshot":
        assert (
            "snap.json is a snapshot (JSON), not a lock" in said
            and "ascenv lock --from snap.json -o ascenv.lock" in said
        )
    elif make == "other-json":
        assert "is JSON, not a lock" in said
    else:
        assert "not a readable lock" in said
