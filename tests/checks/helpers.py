"""Snapshots for check tests, from values seen in tests/data/corpus (A2 910B4 host, CANN 8.0.0)."""

from __future__ import annotations

import dataclasses
import functools

from ascenv import model
from ascenv.checks import run_checks
from ascenv.probe.install_files import parse_key_values
from tests.fixture_hosts import _800IA2, corpus_sections

TOOLKIT = "/usr/local/Ascend/ascend-toolkit/8.0.0"


def a2_host(**changes: object) -> model.Snapshot:
    """A healthy Atlas 800I A2 (910B4, driver 25.0.rc1.1) with CANN 8.0.0 sourced."""
    chips = tuple(
        model.Chip(
            npu=i, chip=0, name="910B4", health="OK", bus_id=f"0000:{bus}:00.0", hbm_used_mb=0, hbm_total_mb=32768
        )
        for i, bus in enumerate(("C1", "C2", "81", "82"))
    )
    snap = model.Snapshot(
        host=model.HostInfo(arch="aarch64"),
        npu=model.NpuInfo(source="npu-smi info", driver_version="25.0.rc1.1", chips=chips),
        driver=model.DriverInfo(version="25.0.rc1.1", path="/usr/local/Ascend/driver", loaded=True),
        cann=model.CannInfo(
            installs=(
                model.CannInstall(
                    path=TOOLKIT,
                    kind="toolkit",
                    version="8.0.0",
                    set_env="/usr/local/Ascend/ascend-toolkit/set_env.sh",
                    links=("/usr/local/Ascend/ascend-toolkit/latest",),
                ),
            ),
            active=TOOLKIT,
            active_reason="ASCEND_HOME_PATH",
        ),
        devices=model.Devices(
            pci=(model.PciDevice("0000:c1:00.0", "0x19e5", "0xd802"),),
            nodes=tuple(
                model.DeviceNode(p, True, True)
                for p in ("/dev/davinci0", "/dev/davinci_manager", "/dev/devmm_svm", "/dev/hisi_hdc")
            ),
            in_container=False,
        ),
        python=model.PythonInfo(
            executable="/usr/bin/python3",
            version="3.10.12",
            distributions=(
                model.Distribution("torch", "2.1.0", "/site"),
                model.Distribution("torch_npu", "2.1.0.post10", "/site"),
            ),
        ),
    )
    return replace(snap, **changes)


def replace(obj, **changes):
    """dataclasses.replace with dotted paths: replace(snap, **{"driver.loaded": False})."""
    nested: dict = {}
    direct = {}
    for key, value in changes.items():
        head, _, rest = key.partition("__")
        if rest:
            nested.setdefault(head, {})[rest] = value
        else:
            direct[key] = value
    for head, sub in nested.items():
        direct[head] = replace(getattr(obj, head), **sub)
    return dataclasses.replace(obj, **direct)


def findings_of(snap: model.Snapshot, check_id: str, matrix: object = None) -> list[model.Finding]:
    return [f for f in run_checks(snap, matrix) if f.id == check_id]


def severities(snap: model.Snapshot, check_id: str, matrix: object = None) -> list[str]:
    return [f.severity.value for f in findings_of(snap, check_id, matrix)]


@functools.lru_cache(maxsize=1)
def shipped_matrix():
    """The compat matrix shipped in compat/ (loaded once per test session)."""
    from ascenv import compat

    return compat.load()


def with_install(snap: model.Snapshot, **changes: object) -> model.Snapshot:
    """The snapshot with its (first) CANN install changed: with_install(snap, kernels=())."""
    first, *rest = snap.cann.installs
    return replace(snap, cann__installs=(dataclasses.replace(first, **changes), *rest))


def with_packages(
    snap: model.Snapshot, *dists: model.Distribution, python: str = "3.10.12", arch: str = "aarch64"
) -> model.Snapshot:
    """The snapshot with these distributions on a Python of that version and architecture."""
    return replace(
        snap, python__distributions=dists, python__version=python, python__platform=f"linux-{arch}", host__arch=arch
    )


# The Atlas 800I A2 capture: driver 25.0.rc1.1 (compatible_version_fw=[7.0.0,7.7.99]) and
# firmware 7.7.0.1.231 (compatible_version_drv=...,[25.0,25.0.]).
DRIVER_FILE = model.VersionFile("/usr/local/Ascend/driver/version.info", parse_key_values(corpus_sections(_800IA2)[0]))
FIRMWARE_FILE = model.VersionFile(
    "/usr/local/Ascend/firmware/version.info", parse_key_values(corpus_sections(_800IA2)[1])
)


def hdk_host(driver="25.0.rc1.1", firmware="7.7.0.1.231", driver_fields=None, firmware_fields=None, **changes):
    driver_file = model.VersionFile(
        DRIVER_FILE.path, driver_fields if driver_fields is not None else DRIVER_FILE.fields
    )
    firmware_file = model.VersionFile(
        FIRMWARE_FILE.path, firmware_fields if firmware_fields is not None else FIRMWARE_FILE.fields
    )
    return a2_host(
        driver=model.DriverInfo(version=driver, path="/usr/local/Ascend/driver", version_file=driver_file, loaded=True),
        firmware=model.FirmwareInfo(version=firmware, source=FIRMWARE_FILE.path, version_file=firmware_file),
        **changes,
    )
