from __future__ import annotations

import os
from pathlib import Path

import pytest

from ascenv.probe.driver import driver_loaded, probe_driver, probe_firmware, read_install_info
from ascenv.probe.fs import Root
from tests.fixture_hosts import HOST_NAMES, build_host, corpus_text

_800IA2 = "version_files/driver25.0.rc1.1_fw7.7.0.1.231_toolkit8.2.RC1_opp_kernel_nnal_mindie2.1.RC1_800IA2-notes.txt"


def write(root: Path, machine_path: str, text: str) -> None:
    path = root / machine_path.lstrip("/")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_a2_host(tmp_path):
    root = Root(build_host("a2-cann800", tmp_path).root)
    driver = probe_driver(root)
    assert driver.version == "25.0.rc1.1"
    assert driver.path == "/usr/local/Ascend/driver"
    assert driver.version_file.get("innerversion") == "V100R001C21SPC002B220"
    assert driver.version_file.get("compatible_version_fw") == "[7.0.0,7.7.99]"
    assert driver.loaded is True
    assert driver.errors == ()
    firmware = probe_firmware(root)
    assert firmware.version == "7.7.0.1.231"
    assert firmware.source == "/usr/local/Ascend/firmware/version.info"
    assert firmware.version_file.get("package_version") == "25.0.rc1.1"
    info = read_install_info(root)
    assert info.path == "/etc/ascend_install.info"
    assert info.get("Driver_Install_Mode") == "normal"


def test_a3_host_has_a_driver_but_no_firmware_file(tmp_path):
    root = Root(build_host("a3-cann850", tmp_path).root)
    assert probe_driver(root).version == "25.2.0"
    firmware = probe_firmware(root)
    assert firmware.version is None
    (error,) = firmware.errors
    assert (error.probe, error.kind, error.source) == (
        "firmware",
        "not-found",
        "/usr/local/Ascend/firmware/version.info",
    )
    assert "/usr/local/Ascend/firmware/version.info" in error.message


def test_container_without_driver_files(tmp_path):
    root = Root(build_host("container-no-devices", tmp_path).root)
    driver = probe_driver(root)
    assert driver.version is None and driver.path is None
    assert driver.loaded is None  # neither /sys/module nor /proc/modules in the image
    (error,) = driver.errors
    assert error.kind == "not-found"
    assert (
        "/usr/local/Ascend/driver/version.info" in error.message and "/var/davinci/driver/version.info" in error.message
    )
    assert read_install_info(root).get("Driver_Install_Status") == "complete"


def test_nonroot_host_has_no_install_info(tmp_path):
    root = Root(build_host("nonroot-home", tmp_path).root)
    assert read_install_info(root) is None
    assert probe_driver(root).errors[0].kind == "not-found"


@pytest.mark.parametrize("name", HOST_NAMES)
def test_every_fixture_host(name, tmp_path):
    host = build_host(name, tmp_path)
    driver = probe_driver(Root(host.root))
    expected = {
        "a3-cann850": "25.2.0",
        "container-no-devices": None,
        "nonroot-home": None,
        "vllm-ascend-v0.12.0rc1": "25.2.2",
        "vllm-ascend-v0.11.0": "25.2.2",
    }.get(name, "25.0.rc1.1")
    assert driver.version == expected


def test_driver_install_path_param_is_followed(tmp_path):
    write(
        tmp_path,
        "/etc/ascend_install.info",
        "Driver_Install_Path_Param=/opt/ascend\nFirmware_Install_Path_Param=/opt/ascend\n",
    )
    write(tmp_path, "/opt/ascend/driver/version.info", corpus_text(_800IA2, 0))
    write(tmp_path, "/opt/ascend/firmware/version.info", corpus_text(_800IA2, 1))
    write(tmp_path, "/usr/local/Ascend/driver/version.info", "Version=1.0.old\n")
    root = Root(tmp_path)
    driver = probe_driver(root)
    assert (driver.version, driver.path) == ("25.0.rc1.1", "/opt/ascend/driver")
    assert probe_firmware(root).source == "/opt/ascend/firmware/version.info"


def test_310b_soc_driver_under_var_davinci(tmp_path):
    # the 310B installer reports the driver under /var/davinci, the firmware under /usr/local/Ascend
    write(tmp_path, "/var/davinci/driver/version.info", "Version=24.1.0\n")
    driver = probe_driver(Root(tmp_path))
    assert (driver.version, driver.path) == ("24.1.0", "/var/davinci/driver")


def test_garbage_and_unreadable_files_do_not_raise(tmp_path):
    write(tmp_path, "/etc/ascend_install.info", "\x00\xff garbage = \n==\nDriver_Install_Path_Param=relative/path\n")
    write(tmp_path, "/usr/local/Ascend/driver/version.info", "no version here\n")
    (tmp_path / "usr/local/Ascend/firmware/version.info").mkdir(parents=True)  # a directory: unreadable
    root = Root(tmp_path)
    driver = probe_driver(root)
    assert driver.version is None
    assert driver.errors[0].kind == "parse" and "has no Version= line" in driver.errors[0].message
    firmware = probe_firmware(root)
    assert firmware.errors[0].kind == "not-a-file" and "a directory, not a regular file" in firmware.errors[0].message


def test_empty_root(tmp_path):
    root = Root(tmp_path)
    assert read_install_info(root) is None
    assert probe_driver(root).errors[0].kind == "not-found"
    assert probe_firmware(root).errors[0].kind == "not-found"
    assert driver_loaded(root) is None


def test_loaded_from_proc_modules(tmp_path):
    write(tmp_path, "/proc/modules", "drv_devmng_host 200704 5 drv_devdrv_host, Live 0x0000000000000000 (OE)\n")
    assert driver_loaded(Root(tmp_path)) is True
    write(tmp_path, "/proc/modules", "ext4 1000 1 - Live 0x0\n")
    assert driver_loaded(Root(tmp_path)) is False


# --- files that exist but cannot be read are not "not installed" ---------------------------------------


def without_read_override(code: str, *args: str):
    """Run Python ``code`` as a process that file modes apply to: as root, with CAP_DAC_OVERRIDE
    and CAP_DAC_READ_SEARCH dropped (setpriv), as the adversarial test did; as a user, directly."""
    import shutil
    import subprocess
    import sys

    import ascenv

    prefix: list[str] = []
    if os.geteuid() == 0:
        setpriv = shutil.which("setpriv")
        if setpriv is None:
            pytest.skip("running as root without setpriv: file modes cannot be made to apply")
        prefix = [setpriv, "--bounding-set", "-dac_override,-dac_read_search", "--inh-caps", "-all"]
    environ = dict(os.environ, PYTHONPATH=str(Path(ascenv.__file__).parents[1]))
    done = subprocess.run(
        [*prefix, sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=60, env=environ
    )
    assert done.returncode in (0, 1), done.stderr
    return done


_PROBE_DRIVER = """
import json, sys
from ascenv import serde
from ascenv.probe.driver import probe_driver
from ascenv.probe.fs import Root
print(json.dumps(serde.to_data(probe_driver(Root(sys.argv[1])).errors)))
"""


@pytest.mark.parametrize("locked", ["usr/local/Ascend/driver/version.info", "usr/local/Ascend/driver"])
def test_an_unreadable_driver_is_a_permission_error(tmp_path, locked):
    import json

    host = build_host("a2-cann800", tmp_path)
    os.chmod(host.root / locked, 0)
    try:
        done = without_read_override(_PROBE_DRIVER, str(host.root))
    finally:
        os.chmod(host.root / locked, 0o755)
    (error,) = json.loads(done.stdout)
    assert error["kind"] == "permission" and error["source"] == "/usr/local/Ascend/driver/version.info"
    assert error["message"].startswith("/usr/local/Ascend/driver/version.info exists but cannot be read as uid ")
    assert str(tmp_path) not in error["message"]


@pytest.mark.parametrize("kind", ["fifo", "socket", "directory"])
def test_a_special_file_as_version_info_is_not_a_file_and_does_not_hang(tmp_path, kind):
    from tests.probe.test_fs import plant
    from tests.test_fsutil import no_hang

    host = build_host("a2-cann800", tmp_path)
    (host.root / "usr/local/Ascend/driver/version.info").unlink()
    plant(host.root, "/usr/local/Ascend/driver/version.info", kind)
    driver = no_hang(lambda: probe_driver(Root(host.root)))
    (error,) = driver.errors
    assert driver.version is None and error.kind == "not-a-file" and "not a regular file" in error.message
