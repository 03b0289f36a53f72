"""`ascenv build`, `ascenv store` and `ascenv install` through cli.main: a real build of the CPU
target into the project's default store, the store commands on it, and `install` of an NPU
package (a fake makeself `.run` that records how it was called: no CANN package here)."""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import replace
from pathlib import Path

import pytest

from ascenv import errors, lockfile, store
from ascenv.probe.fs import Root
from ascenv.probe.vendors import probe_vendors
from tests.cli_helpers import run_cli
from tests.test_builder import make_project
from tests.test_store import add_entry


def ascenv(cwd: Path, *argv: str, environ=None) -> tuple[int, str, str]:  # type: ignore[no-untyped-def]
    return run_cli(argv, {"PATH": os.environ.get("PATH", ""), **(environ or {})}, cwd)


@pytest.fixture
def project(tmp_path: Path, builder_image: str) -> Path:  # noqa: F811
    return make_project(tmp_path / "project", builder_image)


@pytest.mark.engine
@pytest.mark.live_host  # the manifest's host summary probes this machine (read only)
def test_build_then_hit_then_store_commands(project: Path) -> None:
    code, out, err = ascenv(project, "build", "add_custom", "--format", "json")
    assert code == 0, err
    built = json.loads(out)
    assert (built["op"], built["target"], built["reused"]) == ("add_custom", "cpu", False)
    assert built["path"] == str(project / ".ascenv" / "store" / "add_custom" / built["key"])
    assert "is not in git and its recipe sets no source_date_epoch: using SOURCE_DATE_EPOCH=0" in err
    assert "make: Entering directory '/ascenv/src/cpu'" in err  # the log, streamed
    manifest = store.loads_manifest((Path(built["path"]) / "manifest.toml").read_text(), "manifest.toml")
    assert manifest.host["arch"] and manifest.source_date_epoch == 0

    code, out, err = ascenv(project, "build", "add_custom")
    assert code == 0 and out.startswith(
        f"store hit: add_custom (cpu) {built['key'][:12]}, outputs verified, nothing built"
    )

    code, out, _ = ascenv(project, "store", "ls", "--format", "json")
    listed = json.loads(out)["builds"]
    assert code == 0 and [(b["key"], b["ok"]) for b in listed] == [(built["key"], True)]
    code, out, _ = ascenv(project, "store", "show", built["key"][:8])
    assert code == 0 and f'key = "{built["key"]}"' in out and "[toolchain.versions]" in out

    binary = Path(built["path"]) / "outputs" / "add_custom_cpu"
    binary.chmod(0o755)
    binary.write_bytes(b"tampered")
    code, out, _ = ascenv(project, "store", "ls")
    assert code == errors.EXIT_FINDINGS and "outputs/add_custom_cpu: sha256" in out


@pytest.mark.engine
def test_an_unpinned_image_is_refused(project: Path) -> None:
    (project / "containers" / "pins.toml").unlink()
    code, _, err = ascenv(project, "build", "add_custom")
    assert code == errors.EXIT_USAGE
    assert "the image 'builder-bookworm' has no pin in" in err and "ascenv builds only from pinned images" in err


def test_an_unknown_target_or_project_is_a_usage_error(tmp_path: Path) -> None:
    code, _, err = ascenv(tmp_path, "build", "add_custom", "--target", "gpu")
    assert code == errors.EXIT_USAGE and "has no target 'gpu'" in err and "targets: cpu, npu" in err
    code, _, err = ascenv(tmp_path, "build", "nope")
    assert code == errors.EXIT_USAGE and "no operator project 'nope'" in err


def test_store_gc_keeps_what_the_lock_references(tmp_path: Path) -> None:
    st = store.Store(tmp_path / "elsewhere")
    old = add_entry(st, "add_custom", "a" * 64, target="npu", finished="2026-01-01T00:00:00Z")
    add_entry(st, "add_custom", "b" * 64, target="npu", finished="2026-01-02T00:00:00Z")
    vendor = lockfile.LockedVendor("customize", "/opp/vendors/customize", 0, manifest_digest=old.manifest_sha256)
    lock = lockfile.Lock(vendors=(vendor,))
    (tmp_path / "ascenv.lock").write_text(lockfile.dumps_lock(replace(lock, input_hash=lockfile.input_hash(lock))))
    code, out, err = ascenv(
        tmp_path, "store", "gc", "--keep", "0", "--format", "json", environ={"ASCENV_STORE": "elsewhere"}
    )
    assert code == 0, err
    result = json.loads(out)
    assert result["removed"] == ["add_custom/" + "b" * 64]
    assert result["kept_referenced"] == ["add_custom/" + "a" * 64]
    code, _, err = ascenv(tmp_path, "store", "gc", "--store", "elsewhere")
    assert code == errors.EXIT_USAGE and "needs --keep N" in err


FAKE_RUN = """#!/bin/sh
# A stand-in for custom_opp_<os>_<arch>.run (makeself): --list lists, --install-path installs.
echo "$@" >> "{calls}"
case "$1" in
  --list) echo "drwxr-xr-x root/root 0 2024-01-01 00:00 ./packages/vendors/customize/"
          echo "-rw-r--r-- root/root 9 2024-01-01 00:00 ./packages/vendors/customize/version.info" ;;
  --install-path=*) root="${{1#--install-path=}}"
          mkdir -p "$root/vendors/customize/op_api/lib"
          echo "custom_opp_compiler_version=7.7.0.1.238" > "$root/vendors/customize/version.info" ;;
  *) echo "unexpected option $1" >&2; exit 9 ;;
esac
"""


def test_install_uses_install_path_and_records_the_manifest_in_the_vendor(tmp_path: Path) -> None:
    calls = tmp_path / "calls.txt"
    st = store.Store(tmp_path / ".ascenv" / "store")
    entry = add_entry(
        st,
        "add_custom",
        "c" * 64,
        target="npu",
        outputs={"custom_opp_ubuntu_aarch64.run": FAKE_RUN.format(calls=calls).encode()},
    )
    code, out, err = ascenv(tmp_path, "install", "add_custom", "--install-path", "opp")
    assert code == 0, err
    root = tmp_path / "opp"
    assert calls.read_text().splitlines() == ["--list", f"--install-path={root}"]  # never --check
    recorded = root / "vendors" / "customize" / "ascenv-manifest.toml"
    assert recorded.read_bytes() == (entry.path / "manifest.toml").read_bytes()
    assert f"manifest recorded: {recorded}" in out
    # the vendors probe (what doctor and lock read), over tmp_path as the root file system
    vendors, _ = probe_vendors(Root(str(tmp_path)), {"ASCEND_CUSTOM_OPP_PATH": "/opp/vendors/customize"}, None)
    assert vendors[0].manifest == "/opp/vendors/customize/ascenv-manifest.toml"
    assert vendors[0].manifest_digest == hashlib.sha256((entry.path / "manifest.toml").read_bytes()).hexdigest()
    assert vendors[0].version_info == {"custom_opp_compiler_version": "7.7.0.1.238"}


def test_install_refuses_a_cpu_only_store_and_a_failing_installer(tmp_path: Path) -> None:
    st = store.Store(tmp_path / ".ascenv" / "store")
    add_entry(st, "add_custom", "d" * 64, target="cpu")
    code, _, err = ascenv(tmp_path, "install", "add_custom", "--install-path", "opp")
    assert code == errors.EXIT_USAGE and "has no npu build of 'add_custom'" in err
    add_entry(st, "add_custom", "e" * 64, target="npu", outputs={"custom_opp.run": b"echo broken >&2; exit 4\n"})
    code, _, err = ascenv(tmp_path, "install", "add_custom", "--install-path", "opp")
    assert code == errors.EXIT_BUILD_FAILED and "the installer of custom_opp.run failed" in err and "broken" in err
