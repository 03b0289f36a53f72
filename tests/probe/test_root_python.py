"""ascenv.probe.root_python: an image's Python environments found and read from its files, in the
layouts of the corpus's captures (CANN's container Python, conda envs, venvs, Debian's system
Python), never this shell's interpreter."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

from ascenv import proc
from ascenv.probe.fs import Root
from ascenv.probe.root_python import environments, probe_root_python
from ascenv.probe.snapshot import collect


def dist(root: Path, site: str, name: str, version: str) -> None:
    info = root / site.lstrip("/") / f"{name}-{version}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n\nbody: not a header\n")
    (info / "RECORD").write_text(f"{name}/__init__.py,,\n")


def interpreter(root: Path, path: str) -> None:
    """An ELF file of this machine at ``path`` (never run: its header says the platform)."""
    target = root / path.lstrip("/")
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(os.path.realpath(sys.executable), target)


def test_cann_image_python_behind_a_link(tmp_path: Path) -> None:
    # vllm-ascend's images: /usr/local/python3.11.13, and /usr/local/python3 linking to it
    site = "/usr/local/python3.11.13/lib/python3.11/site-packages"
    dist(tmp_path, site, "torch_npu", "2.8.0")
    dist(tmp_path, site, "torch", "2.8.0")
    (tmp_path / "usr/local/python3").symlink_to("python3.11.13")
    interpreter(tmp_path, "/usr/local/python3.11.13/bin/python3.11")
    python = probe_root_python(Root(tmp_path), {})
    assert python.from_files and python.errors == ()
    assert python.executable == "/usr/local/python3.11.13/bin/python3.11"
    assert python.version == "3.11"
    assert python.platform == f"linux-{os.uname().machine}"
    assert python.packages == {"torch": "2.8.0", "torch-npu": "2.8.0"}
    assert {d.location for d in python.distributions} == {site}
    assert all(d.record_hash for d in python.distributions)
    assert [e.prefix for e in environments(Root(tmp_path), {})] == ["/usr/local/python3.11.13"]


def test_the_conda_env_with_torch_npu_wins_over_base_and_system(tmp_path: Path) -> None:
    dist(tmp_path, "/root/miniconda3/lib/python3.12/site-packages", "numpy", "2.1.0")
    dist(tmp_path, "/root/miniconda3/envs/torch_npu/lib/python3.9/site-packages", "torch_npu", "2.1.0.post8")
    dist(tmp_path, "/usr/lib/python3/dist-packages", "six", "1.16.0")
    (tmp_path / "usr/lib/python3.10/dist-packages").mkdir(parents=True)
    python = probe_root_python(Root(tmp_path), {})
    assert python.packages == {"torch-npu": "2.1.0.post8"}
    assert python.version == "3.9"
    assert python.executable == "/root/miniconda3/envs/torch_npu/bin/python3.9"  # named, though absent
    assert python.platform is None


def test_venv_named_by_the_environment_reads_its_base_when_the_cfg_says_so(tmp_path: Path) -> None:
    base = "/usr/local/python3.10.14"
    dist(tmp_path, f"{base}/lib/python3.10/site-packages", "torch", "2.5.1")
    dist(tmp_path, "/data/envs/gdenv310/lib/python3.10/site-packages", "torch_npu", "2.5.1")
    cfg = tmp_path / "data/envs/gdenv310/pyvenv.cfg"
    cfg.write_text(f"home = {base}/bin\ninclude-system-site-packages = true\nversion = 3.10.14\n")
    # /data/envs is nowhere ascenv looks by itself: VIRTUAL_ENV names it
    assert "/data/envs/gdenv310" not in [e.prefix for e in environments(Root(tmp_path), {})]
    python = probe_root_python(Root(tmp_path), {"VIRTUAL_ENV": "/data/envs/gdenv310"})
    assert [d.location for d in python.distributions] == [
        "/data/envs/gdenv310/lib/python3.10/site-packages",
        f"{base}/lib/python3.10/site-packages",
    ]
    cfg.write_text(f"home = {base}/bin\ninclude-system-site-packages = false\n")
    python = probe_root_python(Root(tmp_path), {"VIRTUAL_ENV": "/data/envs/gdenv310"})
    assert python.packages == {"torch-npu": "2.5.1"}


def test_debian_system_python_in_its_sys_path_order(tmp_path: Path) -> None:
    dist(tmp_path, "/usr/local/lib/python3.11/dist-packages", "torch", "2.8.0")
    dist(tmp_path, "/usr/lib/python3/dist-packages", "torch", "2.1.0")
    dist(tmp_path, "/usr/lib/python3.11/dist-packages", "torch_npu", "2.8.0")
    interpreter(tmp_path, "/usr/bin/python3.11")
    python = probe_root_python(Root(tmp_path), {"PATH": "/usr/local/bin:/usr/bin:/bin"})
    assert [d.location for d in python.distributions] == [
        "/usr/local/lib/python3.11/dist-packages",
        "/usr/lib/python3/dist-packages",
        "/usr/lib/python3.11/dist-packages",
    ]
    assert python.packages["torch"] == "2.8.0"  # /usr/local's copy shadows the Debian package's
    assert python.executable == "/usr/bin/python3.11"


def test_pythonpath_entries_come_first(tmp_path: Path) -> None:
    cann = "/usr/local/Ascend/ascend-toolkit/latest/python/site-packages"  # set_env.sh's PYTHONPATH
    dist(tmp_path, cann, "te", "0.4.0")
    dist(tmp_path, "/usr/local/lib/python3.11/site-packages", "torch_npu", "2.8.0")
    python = probe_root_python(Root(tmp_path), {"PYTHONPATH": f"{cann}:/not/in/the/image:"})
    assert [d.location for d in python.distributions] == [cann, "/usr/local/lib/python3.11/site-packages"]


def test_a_link_out_of_the_image_reads_nothing_of_the_host(tmp_path: Path) -> None:
    host_file = tmp_path / "host-metadata"
    host_file.write_text("Name: hosts-own\nVersion: 9.9\n")
    root = tmp_path / "root"
    site = root / "usr/local/lib/python3.11/site-packages"
    (site / "evil-1.0.dist-info").mkdir(parents=True)
    (site / "evil-1.0.dist-info/METADATA").symlink_to(host_file)  # absolute: resolved inside the root
    dist(root, "/usr/local/lib/python3.11/site-packages", "torch", "2.8.0")
    python = probe_root_python(Root(root), {})
    assert python.packages == {"torch": "2.8.0"}


def test_no_environment_says_so_and_names_python_option(tmp_path: Path) -> None:
    (tmp_path / "usr/lib/python3.11/site-packages").mkdir(parents=True)
    python = probe_root_python(Root(tmp_path), {})
    assert python.distributions == () and python.from_files
    (error,) = python.errors
    assert error.kind == "not-found" and "/usr" in error.message and "--python PATH" in error.message


def test_collect_under_a_root_runs_no_interpreter(tmp_path: Path) -> None:
    dist(tmp_path, "/usr/local/lib/python3.11/site-packages", "torch_npu", "2.8.0")
    ran: list[list[str]] = []

    def run(cmd: list[str], **kwargs: object) -> proc.Completed:
        ran.append(cmd)
        return proc.run(cmd, **kwargs)  # type: ignore[arg-type]

    snap = collect(Root(tmp_path), {"PATH": os.environ["PATH"]}, run)
    assert snap.python.packages == {"torch-npu": "2.8.0"} and snap.python.from_files
    assert not any("python" in os.path.basename(c[0]) for c in ran)
    # --python says which interpreter to run: this one, whatever the root holds
    snap = collect(Root(tmp_path), {"PATH": os.environ["PATH"]}, run, python=sys.executable)
    assert not snap.python.from_files and snap.python.executable == sys.executable
    assert any(c[0] == sys.executable for c in ran)
