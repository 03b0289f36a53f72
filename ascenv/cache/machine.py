"""The I/O edge of clean-cache: what the pure core needs to know about this machine.

``gather_machine_facts`` uses the probes that exist (``probe.cann.probe_cann``,
``probe.vendors.probe_vendors``, ``probe.npu.probe_npu``) and /proc; each part that fails
or is missing leaves its field empty and adds a note, so the scan still runs.
"""

from __future__ import annotations

import contextlib
import os
import posixpath
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Callable, Optional

from ascenv import proc
from ascenv.cache.entry import CannRecord, VendorRecord
from ascenv.cache.workers import in_background


@dataclass(frozen=True)
class MachineFacts:
    canns: tuple[CannRecord, ...] = ()
    vendors: tuple[VendorRecord, ...] = ()
    npu_pids: tuple[int, ...] = ()
    busy: tuple[tuple[str, int], ...] = ()  # (path, pid): open files and working directories
    protected: tuple[str, ...] = ()  # CANN installs, their links, vendor directories
    notes: tuple[str, ...] = ()


def _mtime(path: Optional[str]) -> Optional[float]:
    try:
        return os.stat(path).st_mtime if path else None
    except OSError:
        return None


def gather_machine_facts(
    environ: Mapping[str, str], *, home: str, run: proc.Runner, uid: Optional[int], ours: Optional[int] = None
) -> MachineFacts:
    """Installed CANNs and vendors with their install times, NPU processes, busy paths.
    ``uid``: whose processes to look at for open files (None: everyone's); ``ours``: the pid of
    the clean-cache process (default: this one), whose own processes are no users (``busy_paths``)."""
    from ascenv.probe.fs import Root

    notes: list[str] = []
    root = Root("/")
    canns: list[CannRecord] = []
    protected: list[str] = []
    active = None
    try:
        from ascenv.probe.cann import probe_cann

        info = probe_cann(root, environ, home)
        active = info.active
        for inst in info.installs:
            # the installer writes ascend_<pkg>_install.info: its mtime is the install time
            canns.append(CannRecord(inst.version, inst.path, _mtime(inst.info_file) or _mtime(inst.path)))
            protected += [inst.path, *inst.links]
    except Exception as exc:  # noqa: BLE001 - the scan must run without this part
        notes.append(f"installed CANN versions unknown ({type(exc).__name__}: {exc}); staleness by CANN not judged")
    vendors: list[VendorRecord] = []
    try:
        from ascenv.probe.vendors import probe_vendors

        opp = environ.get("ASCEND_OPP_PATH") or (posixpath.join(active, "opp") if active else None)
        for vendor in probe_vendors(root, environ, opp)[0]:
            if vendor.exists:
                # install.sh copies version.info without -p: its mtime is the (re)install time
                vendors.append(
                    VendorRecord(
                        vendor.name,
                        vendor.path,
                        _mtime(posixpath.join(vendor.path, "version.info")),
                        tuple(vendor.compute_units),
                    )
                )
                protected.append(vendor.path)
    except Exception as exc:  # noqa: BLE001
        notes.append(
            f"installed operator packages unknown ({type(exc).__name__}: {exc}); staleness by vendor not judged"
        )
    npu_pids: list[int] = []
    try:
        # without npu-smi on the PATH probe_npu finds no process: its import is not needed
        if proc.which("npu-smi", environ.get("PATH")) is not None:
            from ascenv.probe.npu import probe_npu

            npu = probe_npu(run, environ.get("PATH"))
            npu_pids = sorted({p.pid for p in npu.processes if p.pid is not None})
    except Exception as exc:  # noqa: BLE001
        notes.append(f"NPU processes unknown ({type(exc).__name__}: {exc})")
    busy = busy_paths(uid, npu_pids, ours=ours)
    return MachineFacts(tuple(canns), tuple(vendors), tuple(npu_pids), busy, tuple(protected), tuple(notes))


@contextlib.contextmanager
def gathered_in_background(gather: Callable[[], MachineFacts]) -> Iterator[Callable[[], MachineFacts]]:
    """Start ``gather`` (``gather_machine_facts``) in a forked process now and yield what waits
    for its facts: it is mostly imports and /proc reads, some 0.1 s of CPU that then runs
    beside the start of the scan instead of after it. In this process when no fork can be made."""
    with in_background(lambda: _plain(gather())) as pending:
        yield lambda: _from_plain(pending())


def _plain(facts: MachineFacts) -> tuple:
    """The facts as tuples, strings and numbers only (what passes between processes)."""
    canns = tuple((c.version, c.path, c.installed_at) for c in facts.canns)
    vendors = tuple((v.name, v.path, v.installed_at, v.compute_units) for v in facts.vendors)
    return (canns, vendors, facts.npu_pids, facts.busy, facts.protected, facts.notes)


def _from_plain(plain: tuple) -> MachineFacts:
    canns, vendors, npu_pids, busy, protected, notes = plain
    return MachineFacts(
        tuple(CannRecord(*c) for c in canns), tuple(VendorRecord(*v) for v in vendors), npu_pids, busy, protected, notes
    )


def busy_paths(
    uid: Optional[int], extra_pids: tuple[int, ...] | list[int] = (), *, ours: Optional[int] = None
) -> tuple[tuple[str, int], ...]:
    """Open files and directories and working directories of the caller's processes (everyone's
    when ``uid`` is None) and of ``extra_pids`` (NPU processes, whoever runs them), read from
    /proc: each ``/proc/PID/fd/N`` link that names a path (not a pipe or a socket; a deleted
    file as ``PATH (deleted)``, still below its cache), and ``/proc/PID/cwd``. A process is the
    caller's when its real or effective uid is ``uid`` (``Uid:`` of /proc/PID/status). Processes
    that vanish or may not be inspected are skipped, and so are clean-cache's own: ``ours``
    (default: this process) and its children, the scan's forked workers, which hold the cache's
    directories open while they scan, and this gatherer when it runs forked.

    Read directly rather than through psutil: its import and ``open_files`` (which also reads
    each descriptor's fdinfo, and leaves out directories) were 35 ms of clean-cache's CPU."""
    result: list[tuple[str, int]] = []
    me = str(os.getpid() if ours is None else ours).encode()
    wanted = set(extra_pids)
    mine = None if uid is None else str(uid).encode()
    readlink, listdir = os.readlink, os.listdir
    try:
        pids = [name for name in listdir("/proc") if name.isdigit()]
    except OSError:
        return ()
    for name in pids:
        pid = int(name)
        base = "/proc/" + name
        try:
            uids, parent = _status(base)
        except OSError:
            continue  # ended
        if me in (name.encode(), parent) or (mine is not None and pid not in wanted and mine not in uids):
            continue
        with contextlib.suppress(OSError):  # ended, or not ours to inspect (EACCES): its descriptors may be
            result.append((readlink(base + "/cwd"), pid))
        fds = base + "/fd/"
        try:
            names = listdir(fds)
        except OSError:
            continue
        for fd in names:
            try:
                target = readlink(fds + fd)
            except OSError:
                continue  # closed since it was listed
            if target.startswith("/"):
                result.append((target, pid))
    return tuple(result)


def _status(base: str) -> tuple[list[bytes], bytes]:
    """The real and effective uid of a process and its parent's pid (/proc/PID/status)."""
    uids: list[bytes] = []
    parent = b""
    with open(base + "/status", "rb") as handle:
        for line in handle:
            if line.startswith(b"PPid:"):
                parent = line.split()[1]
            elif line.startswith(b"Uid:"):
                uids = line.split()[1:3]
                break  # after PPid
    return uids, parent


def other_homes(uid: int) -> tuple[str, ...]:
    """The home directories of the accounts other than ``uid`` (the password database)."""
    import pwd

    try:
        return tuple(sorted({e.pw_dir for e in pwd.getpwall() if e.pw_uid != uid and e.pw_dir}))
    except OSError:
        return ()
