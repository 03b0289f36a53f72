"""Every probe of the machine (or of a root file system) into one ``Snapshot``.

Each probe runs on its own: a failing one records a ``ProbeError`` and the others go on.
Parsers are pure functions beside thin readers; ``collect`` is the only entry point.
"""

from __future__ import annotations

import dataclasses
import posixpath
import threading
import time
from collections.abc import Mapping, Sequence
from typing import Callable, Optional, TypeVar

from ascenv import __version__, proc
from ascenv.model import (
    AbiInfo,
    CannInfo,
    Devices,
    DriverInfo,
    EnvInfo,
    FirmwareInfo,
    HostInfo,
    NpuInfo,
    ProbeError,
    PythonInfo,
    Snapshot,
    StackPart,
    Vendor,
    VendorConfig,
)
from ascenv.probe.abi import probe_abi
from ascenv.probe.cann import probe_cann
from ascenv.probe.devices import probe_devices
from ascenv.probe.driver import probe_driver, probe_firmware, read_install_info
from ascenv.probe.envvars import probe_env
from ascenv.probe.fs import Root
from ascenv.probe.host import probe_host
from ascenv.probe.npu import probe_npu
from ascenv.probe.python import probe_python
from ascenv.probe.stack import probe_stack
from ascenv.probe.vendors import probe_vendors
from ascenv.signals import termination_as_interrupt

T = TypeVar("T")


# The whole probe's time: npu-smi's queries and the target interpreter share one deadline (each
# still has its own timeout), so no mix of hung helpers makes it take minutes.
BUDGET = 30.0


def collect(
    root: Root,
    environ: Mapping[str, str],
    run: proc.Runner = proc.run,
    *,
    python: Optional[str] = None,
    budget: float = BUDGET,
    sought: Callable[[], Mapping[str, Sequence[str]]] = dict,
) -> Snapshot:
    """Probe everything. ``environ`` is the environment to judge (the caller's, or a saved one);
    ``python`` the interpreter whose packages to read (default: python3 on ``environ``'s PATH; under
    a root other than /, the root's own environments read from their files);
    ``budget`` the seconds all helper programs together may take; ``sought`` gives the JIT
    front-ends to read (import package -> the strings to look for in its sources:
    ``Matrix.jit_strings``), called late so that the caller may load it meanwhile."""
    failures: list[ProbeError] = []
    deadline = proc.Deadline(budget)

    def guarded(name: str, probe: Callable[[], T], fallback: T) -> T:
        return _guarded(failures, name, probe, fallback)

    path = environ.get("PATH")
    # The target interpreter is a subprocess of tens of milliseconds: it runs on a thread while
    # this one does every other probe (npu-smi's queries, then the file reads), and is joined
    # last (start-up time). Its failure, if any, is listed where it always was.
    python_result: list[PythonInfo] = []
    python_failures: list[ProbeError] = []  # its own list: appended to from another thread

    def probe_target_python() -> None:
        # under --root nothing is executed: the image's own environments are read from its files
        if python is None and not root.is_host:
            from ascenv.probe.root_python import probe_root_python  # here: a host's probe needs none of it

            probe: Callable[[], PythonInfo] = lambda: probe_root_python(root, environ)  # noqa: E731
        else:
            probe = lambda: probe_python(run, python, path, environ, deadline=deadline)  # noqa: E731
        python_result.append(_guarded(python_failures, "python", probe, PythonInfo()))

    # daemon: an interrupted ascenv must not wait for this thread at exit (it is stopped below).
    python_thread = threading.Thread(target=probe_target_python, name="ascenv-python-probe", daemon=True)
    with termination_as_interrupt():
        python_thread.start()
        try:
            host = guarded("host", lambda: probe_host(root), HostInfo())
            npu = guarded("npu-smi", lambda: probe_npu(run, path, deadline=deadline), NpuInfo())
            driver = guarded("driver", lambda: probe_driver(root), DriverInfo())
            firmware = guarded("firmware", lambda: probe_firmware(root), FirmwareInfo())
            firmware = _firmware_from_board(firmware, npu)
            install_info = guarded("install-info", lambda: read_install_info(root), None)
            cann = guarded("cann", lambda: probe_cann(root, environ, environ.get("HOME")), CannInfo())
            devices = guarded("devices", lambda: probe_devices(root), Devices())
            env = guarded("env", lambda: probe_env(environ, root, [i.path for i in cann.installs]), EnvInfo())
            opp = environ.get("ASCEND_OPP_PATH") or (posixpath.join(cann.active, "opp") if cann.active else None)
            no_vendors: tuple[tuple[Vendor, ...], VendorConfig] = ((), VendorConfig())
            vendors, vendor_config = guarded("vendors", lambda: probe_vendors(root, environ, opp), no_vendors)
            python_thread.join()
            # after the interpreter's probe: torch_npu's libraries are found from its distributions
            abi = guarded(
                "abi",
                lambda: probe_abi(root, python_result[0], environ, run, vendors=vendors, machine=host.arch),
                AbiInfo(),
            )
            no_stack: tuple[StackPart, ...] = ()
            home = environ.get("HOME")
            # the caller's data (the compat matrix) failing to load costs the front-ends, not the stack
            wanted: Mapping[str, Sequence[str]] = guarded("jit-sources", sought, {})
            stack = guarded(
                "stack", lambda: probe_stack(root, environ, python_result[0], home, sought=wanted), no_stack
            )
        except BaseException:
            # Interrupted (Ctrl-C, SIGTERM): the main thread's own run has killed its child; the
            # target interpreter's run is on the other thread, so kill it here and let it end.
            proc.kill_running()
            python_thread.join(timeout=5)
            raise
    return Snapshot(
        created=time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime()),  # ISO 8601 UTC (datetime costs an import)
        root=str(root.directory),
        ascenv_version=__version__,
        host=host,
        npu=npu,
        driver=driver,
        firmware=firmware,
        install_info=install_info,
        cann=cann,
        devices=devices,
        env=env,
        python=python_result[0],
        vendors=vendors,
        vendor_config=vendor_config,
        abi=abi,
        stack=stack,
        # a fixed order whatever the threads did
        errors=tuple(failures + python_failures + _special_files(root)),
    )


def _special_files(root: Root) -> list[ProbeError]:
    """The files a probe met that were FIFOs, sockets or devices: read as absent (opening one
    could block for ever or never end), and said, so an audited image's oddity is not silent."""
    return [
        ProbeError(probe="files", kind="not-a-file", message=f"{path} is {kind}: read as absent", source=path)
        for path, kind in sorted(root.skipped.items())
    ]


def _guarded(failures: list[ProbeError], name: str, probe: Callable[[], T], fallback: T) -> T:
    # A bug in one probe must not cost the user the rest of the report.
    try:
        return probe()
    except Exception as exc:  # noqa: BLE001
        failures.append(ProbeError(name, "internal", f"the {name} probe failed: {type(exc).__name__}: {exc}"))
        return fallback


def _firmware_from_board(firmware: FirmwareInfo, npu: NpuInfo) -> FirmwareInfo:
    """firmware/version.info is root-only on many hosts (ascend-dmi shows NA for other users);
    npu-smi's board query reports the same version to everyone."""
    if firmware.version is not None:
        return firmware
    board = next((b for b in npu.boards if b.firmware_version), None)
    if board is None:
        return firmware
    return dataclasses.replace(firmware, version=board.firmware_version, source=f"npu-smi info -t board -i {board.npu}")
