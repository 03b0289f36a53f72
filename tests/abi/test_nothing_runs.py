"""Nothing under ``--root`` is executed or loaded (issue #23): canaries that leave a file when they
run — libraries whose constructor writes it, an interpreter script that writes it — are put where
``doctor --root`` reads: a torch_npu library, a CANN library found through LD_LIBRARY_PATH, a
custom-operator-like library beside torch_npu's, and the image's python3.11. The doctor reads them
all (the snapshot lists them) and the file never appears; the same canaries, loaded with ctypes
or run, do write it (the control: a canary that cannot fire would prove nothing)."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

from tests.abi.build import build, needs_tools, place
from tests.abi.test_probe_checks import CANN, SITE, site
from tests.cli_helpers import run_cli

pytestmark = needs_tools

CANARY = """
#include <fcntl.h>
#include <unistd.h>
__attribute__((constructor)) static void fired(void) {{
    int fd = open("{marker}", O_CREAT | O_WRONLY, 0644);
    if (fd >= 0) close(fd);
}}
{body}
"""


def _canary_root(tmp_path: Path, marker: Path) -> tuple[Path, list[str]]:
    root = site(tmp_path, torch_new=False, with_hccl=True)
    d = tmp_path / "canaries"
    placed = [
        # CANN's libascendcl.so, found through LD_LIBRARY_PATH: it defines what libtorch_npu.so needs
        place(
            root,
            f"{CANN}/libascendcl.so",
            build(
                d / "acl/libascendcl.so",
                CANARY.format(marker=marker, body="void *aclrtMalloc(unsigned long n) { return 0; }"),
            ),
        ),
        # a library of torch_npu/lib the import does not open (read as libop_plugin_atb.so is)
        place(
            root,
            f"{SITE}/torch_npu/lib/libop_plugin_canary.so",
            build(
                d / "plugin/libop_plugin_canary.so", CANARY.format(marker=marker, body="int plugin(void) { return 1; }")
            ),
        ),
    ]
    for name, version in (("torch_npu", "2.8.0"), ("torch", "2.9.0")):
        info = root / SITE.lstrip("/") / f"{name}-{version}.dist-info"
        info.mkdir(parents=True)
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    python = root / "usr/local/bin/python3.11"  # the image's interpreter: a script that would leave the marker
    python.parent.mkdir(parents=True)
    python.write_text(f"#!/bin/sh\n: > '{marker}'\n")
    python.chmod(python.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return root, [str(p) for p in placed] + [str(python)]


def test_doctor_root_loads_and_runs_nothing(tmp_path: Path) -> None:
    marker = tmp_path / "canary-fired"
    root, canaries = _canary_root(tmp_path, marker)
    # the control: each canary leaves the marker when loaded or run
    for path in canaries:
        if path.endswith(".so"):
            subprocess.run([sys.executable, "-c", f"import ctypes; ctypes.CDLL({path!r})"], check=True)
        else:
            subprocess.run([path], check=True)
        assert marker.exists(), path
        marker.unlink()
    environ = {"PATH": "/usr/bin:/bin", "LD_LIBRARY_PATH": f"{CANN}:/usr/local/Ascend/driver/lib64"}
    code, out, err = run_cli(["doctor", "--root", str(root), "--format", "json"], environ)
    assert code in (0, 1), err
    snap = json.loads(out)["snapshot"]
    # it did read them: the image's Python from its files, both canary libraries in the load order
    assert snap["python"]["executable"] == "/usr/local/bin/python3.11"
    assert snap["python"]["from_files"] is True
    assert {d["name"] for d in snap["python"]["distributions"]} == {"torch", "torch_npu"}
    assert f"{CANN}/libascendcl.so" in snap["abi"]["loaded"]
    assert f"{SITE}/torch_npu/lib/libop_plugin_canary.so" in snap["abi"]["loaded"]
    assert not marker.exists()
    # and a saved snapshot of the root, and triage on it, do not either
    assert run_cli(["snapshot", "--root", str(root), "-o", str(tmp_path / "s.json")], environ)[0] == 0
    log = tmp_path / "log.txt"
    log.write_text("ImportError: libtorch_npu.so: undefined symbol: _ZNK3c1010TensorImpl20is_contiguous_customEi\n")
    assert run_cli(["triage", str(log), "--root", str(root)], environ)[0] in (0, 1)
    assert not marker.exists()
    assert not os.path.exists(root / "usr/local/lib/python3.11/site-packages/__pycache__")
