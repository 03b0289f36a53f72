"""kernels/add_custom's npu target without CANN: scripts/pack_npu.py run on this host (the same
makeself 2.4.5 and python3 as the opp-packager-bookworm image, whose run through `ascenv build`
is tests/test_walkthrough.py) and the package's scripts/install.sh, both install modes."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ascenv.package.inspection import inspect_package

KERNEL = Path(__file__).resolve().parents[2] / "kernels" / "add_custom"
HEADER = Path("/usr/share/makeself/makeself-header.sh")
OPS_INFO = "op_impl/ai_core/tbe/config/ascend910b/aic-ascend910b-ops-info.json"
SOURCE = "op_impl/ai_core/tbe/ascenv_impl/dynamic/add_custom.cpp"

pytestmark = pytest.mark.skipif(
    shutil.which("makeself") is None or not HEADER.is_file(), reason="makeself (Debian's 2.4.5) is not installed"
)


@pytest.fixture(scope="module")
def package(tmp_path_factory: pytest.TempPathFactory) -> Path:
    work, out = tmp_path_factory.mktemp("work"), tmp_path_factory.mktemp("out")
    done = subprocess.run(
        [sys.executable, str(KERNEL / "scripts" / "pack_npu.py"), str(KERNEL), str(work), str(out)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    (found,) = out.glob("custom_opp_*.run")
    return found


def install(package: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    environ = {"PATH": os.environ["PATH"], "HOME": os.environ["HOME"], **(env or {})}
    return subprocess.run(
        ["bash", str(package), *args], capture_output=True, text=True, env=environ, cwd=package.parent, check=False
    )


def test_the_package_is_one_vendor_with_add_custom_json_as_its_ops_info(package: Path) -> None:
    inspection = inspect_package(package)
    (vendor,) = inspection.vendors
    assert (vendor.name, vendor.op_types, vendor.ops_info) == ("ascenv", ("AddCustom",), {"ascend910b": ("AddCustom",)})
    # what it cannot hold without CANN, as README says: no kernels, libraries, aclnn, compiler
    assert (vendor.kernel_binaries, vendor.libraries, vendor.aclnn_headers) == ({}, (), ())
    assert not inspection.dangerous
    names = {m.path for m in inspection.members}
    assert {"install.sh", "help.info", f"packages/vendors/ascenv/{SOURCE}"} <= names
    assert not any("version.info" in n for n in names)


def test_the_ops_info_lists_the_inputs_and_outputs_of_the_op_description(package: Path, tmp_path: Path) -> None:
    assert install(package, f"--install-path={tmp_path}").returncode == 0
    info = json.loads((tmp_path / "vendors" / "ascenv" / OPS_INFO).read_text())
    (described,) = json.loads((KERNEL / "add_custom.json").read_text())
    op = info[described["op"]]
    assert [op["input0"]["name"], op["input1"]["name"], op["output0"]["name"]] == ["x", "y", "z"]
    assert {op[k]["dtype"] for k in ("input0", "input1", "output0")} == {"float16"}
    assert op["opFile"] == {"value": "add_custom"}


def test_install_path_replaces_what_an_older_install_left_and_writes_set_env(package: Path, tmp_path: Path) -> None:
    stale = tmp_path / "vendors" / "ascenv" / "op_impl" / "ai_core" / "tbe" / "kernel" / "old.o"
    stale.parent.mkdir(parents=True)
    stale.write_text("an older version's kernel")
    kept = tmp_path / "vendors" / "ascenv" / "ascenv-manifest.toml"  # not brought by the package: left
    kept.write_text("x")
    done = install(package, f"--install-path={tmp_path}")
    assert done.returncode == 0 and "SUCCESS" in done.stdout, done.stderr
    live = tmp_path / "vendors" / "ascenv"
    assert not stale.exists() and kept.exists()
    assert (live / SOURCE).read_bytes() == (KERNEL / "op_kernel" / "add_custom.cpp").read_bytes()
    assert (live / "bin" / "set_env.bash").read_text().splitlines()[0] == (
        f"export ASCEND_CUSTOM_OPP_PATH={live}:${{ASCEND_CUSTOM_OPP_PATH:-}}"
    )
    assert not (tmp_path / "vendors" / "config.ini").exists()  # --install-path never registers


@pytest.mark.parametrize(
    ("before", "after"),
    [
        (None, "load_priority=ascenv"),
        ("load_priority=customize,ascenv,ascenvx\n", "load_priority=ascenv,customize,ascenvx"),
        ("load_priority=customize\nsecond line\n", "load_priority=ascenv,customize"),
    ],
    ids=["no-config", "moved-first-word-bounded", "first-line-only"],
)
def test_without_install_path_it_registers_the_vendor_first_in_config_ini(
    package: Path, tmp_path: Path, before: str | None, after: str
) -> None:
    config = tmp_path / "opp" / "vendors" / "config.ini"
    config.parent.mkdir(parents=True)
    if before is not None:
        config.write_text(before)
    done = install(package, env={"ASCEND_OPP_PATH": str(tmp_path / "opp")})
    assert done.returncode == 0, done.stderr
    assert config.read_text() == after + "\n"
    assert (tmp_path / "opp" / "vendors" / "ascenv" / SOURCE).is_file()
    assert not (tmp_path / "opp" / "vendors" / "ascenv" / "bin").exists()


@pytest.mark.parametrize(
    ("args", "env", "words"),
    [
        (("--install-path=relative",), {}, "must be an absolute path"),
        (("--force-everything",), {}, "unknown option"),
        ((), {}, "ASCEND_OPP_PATH is not set"),
    ],
    ids=["relative", "unknown", "nowhere"],
)
def test_refused_installs_write_nothing(
    package: Path, tmp_path: Path, args: tuple[str, ...], env: dict[str, str], words: str
) -> None:
    done = install(package, *args, env=env)
    assert done.returncode != 0 and words in done.stderr, done.stderr
    assert not (package.parent / "relative").exists()
