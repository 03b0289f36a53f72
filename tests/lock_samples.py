"""Snapshots of three machines built from the model, for the lock and diff tests and benchmarks.

Values are read from recorded real output in ``tests/data/corpus/`` (file named beside each one),
so the locks hold realistic strings (non-PEP 440 driver versions, CANN innerversions, chip names).
"""

from __future__ import annotations

from dataclasses import replace

from ascenv import model as m

CANN_DIR = "/usr/local/Ascend/ascend-toolkit"


def _dists(pairs: dict[str, str]) -> tuple[m.Distribution, ...]:
    return tuple(
        m.Distribution(
            name, version, "/opt/venv/lib/python3.11/site-packages", installer="pip", record_hash=f"sha256:{i:064x}"
        )
        for i, (name, version) in enumerate(pairs.items(), start=1)
    )


def a2() -> m.Snapshot:
    """Atlas 800I A2, 910B4: driver 25.0.rc1.1, firmware 7.7.0.1.231, CANN 8.2.RC1
    (version_files/driver25.0.rc1.1_fw7.7.0.1.231_toolkit8.2.RC1_..._800IA2-notes.txt; npu-smi
    npu_smi/910b4_atlas800IA2_25.0.rc1.1_8npu_noproc_blog-800IA2-driver-install.txt), with the
    Python of other_cmds/vllm-ascend_collect_env_FULL_910B4-1_25.2.2_CANN8.3.RC2_issue5606.txt."""
    path = f"{CANN_DIR}/8.2.RC1"
    return m.Snapshot(
        created="2025-12-01T08:00:00+00:00",
        host=m.HostInfo(os_id="openEuler", os_version="22.03", arch="aarch64", glibc="2.34", hostname="a2-node01"),
        npu=m.NpuInfo(
            npu_smi_version="25.0.rc1.1",
            driver_version="25.0.rc1.1",
            chips=tuple(
                m.Chip(npu=n, chip=0, name="910B4", health="OK", bus_id=None, hbm_total_mb=32768) for n in range(8)
            ),
        ),
        driver=m.DriverInfo(version="25.0.rc1.1", path="/usr/local/Ascend/driver"),
        firmware=m.FirmwareInfo(version="7.7.0.1.231"),
        cann=m.CannInfo(
            installs=(
                m.CannInstall(
                    path=path,
                    kind="toolkit",
                    version="8.2.RC1",
                    innerversion="V100R001C22SPC001B231",
                    arch="aarch64",
                    kernels=("ascend910b",),
                ),
            ),
            active=path,
            active_reason="ASCEND_HOME_PATH",
        ),
        python=m.PythonInfo(
            executable="/opt/venv/bin/python3",
            version="3.11.13",
            implementation="CPython",
            distributions=_dists(
                {
                    "numpy": "1.26.4",
                    "pyzmq": "27.1.0",
                    "torch": "2.8.0+cpu",
                    "torch_npu": "2.8.0",
                    "torchvision": "0.23.0",
                    "transformers": "4.57.1",
                }
            ),
        ),
        vendors=(
            m.Vendor(
                name="customize",
                path=f"{path}/opp/vendors/customize",
                origin="config.ini",
                priority=0,
                version_info={"custom_opp_compiler_version": "8.2.0.0.201"},
                compute_units=("ascend910b",),
            ),
        ),
    )


def a3() -> m.Snapshot:
    """Atlas A3 (npu-smi name ``Ascend910``, 2 chips per NPU), driver 25.2.0
    (npu_smi/a3-ascend910_25.2.0_busy_proc-empty-names_per-chip_vllm-ascend-issue3002.txt), CANN
    8.3.RC1 (version_files/ascend_toolkit_install.info_8.3.RC1_aarch64_A3_vllm-ascend-issue3002.txt)."""
    path = f"{CANN_DIR}/8.3.RC1"
    chips = tuple(
        m.Chip(npu=n, chip=c, name="Ascend910", health="OK", bus_id=None, phy_id=2 * n + c)
        for n in range(8)
        for c in (0, 1)
    )
    return replace(
        a2(),
        host=m.HostInfo(os_id="ubuntu", os_version="22.04", arch="aarch64", glibc="2.35", hostname="a3-node01"),
        npu=m.NpuInfo(npu_smi_version="25.2.0", driver_version="25.2.0", chips=chips),
        driver=m.DriverInfo(version="25.2.0"),
        firmware=m.FirmwareInfo(version=None),
        cann=m.CannInfo(
            installs=(
                m.CannInstall(
                    path=path,
                    kind="toolkit",
                    version="8.3.RC1",
                    innerversion="V100R001C23B085",
                    arch="aarch64",
                    kernels=("ascend910_93",),
                ),
            ),
            active=path,
        ),
        vendors=(),
    )


def p310_x86() -> m.Snapshot:
    """x86_64 inference host with 310P3 cards, driver 24.1.0.1
    (npu_smi/310p3_24.1.0.1_8cards_noproc_vllm-ascend-issue2809.txt), CANN 8.1.RC1 x86_64
    (version_files/ascend_toolkit_install.info_8.1.RC1_x86_64_vllm-ascend-issue616.txt)."""
    path = f"{CANN_DIR}/8.1.RC1"
    return replace(
        a2(),
        host=m.HostInfo(os_id="ubuntu", os_version="22.04", arch="x86_64", glibc="2.35", hostname="p310-01"),
        npu=m.NpuInfo(
            npu_smi_version="24.1.0.1",
            driver_version="24.1.0.1",
            chips=tuple(m.Chip(npu=n, chip=0, name="310P3", health="OK", bus_id=None, device_id=n) for n in range(8)),
        ),
        driver=m.DriverInfo(version="24.1.0.1"),
        firmware=m.FirmwareInfo(version=None),
        cann=m.CannInfo(
            installs=(
                m.CannInstall(
                    path=path,
                    kind="toolkit",
                    version="8.1.RC1",
                    innerversion="V100R001C21B081",
                    arch="x86_64",
                    kernels=("ascend310p",),
                ),
            ),
            active=path,
        ),
        vendors=(),
    )


def with_package(snap: m.Snapshot, name: str, version: str) -> m.Snapshot:
    """``snap`` with distribution ``name`` at ``version`` (same RECORD hash: a metadata-only change)."""
    dists = tuple(
        replace(d, version=version) if m.normalize_name(d.name) == m.normalize_name(name) else d
        for d in snap.python.distributions
    )
    return replace(snap, python=replace(snap.python, distributions=dists))
