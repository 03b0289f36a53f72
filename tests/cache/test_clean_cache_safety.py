"""clean-cache never deletes outside the caches: the attacks of an adversarial test, end to end.

Every test hashes the whole sandbox except the caches it may delete before and after
(``helpers.canary``). Nothing here touches the real home, caches or system trees: system
directories are only ever given to ``--dry-run`` and ``ls``."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from ascenv import errors
from ascenv.cache import execute as execute_module
from ascenv.cache.machine import MachineFacts
from ascenv.commands import clean_cache
from ascenv.output import Output
from tests.cache.helpers import canary, write
from tests.cli_helpers import run_cli

OLD = 1_000_000.0
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def sb(tmp_path, monkeypatch):
    """A sandbox: tmp_path/home is $HOME, the state directory beside it, no machine facts."""
    (tmp_path / "home").mkdir()
    monkeypatch.setattr(clean_cache, "gather_machine_facts", lambda *a, **k: MachineFacts())
    return tmp_path


def run(sb, *argv, environ=None, interactive=False):
    env = {
        "HOME": str(sb / "home"),
        "XDG_STATE_HOME": str(sb / "state"),
        "DOCKER_HOST": f"unix://{sb}/no-engine.sock",
        **(environ or {}),
    }
    return run_cli(["clean-cache", "--recent", "0s", *argv], env, sb / "home", interactive)


def plan_of(out: str) -> list[str]:
    return json.loads(out)["plan"]["entries"]


def precious(directory: Path) -> None:
    """A user's tree: documents and photos, sub-directories included."""
    write(str(directory / "docs/a.txt"), b"precious", mtime=OLD)
    write(str(directory / "photos/2024/beach.jpg"), b"jpeg", mtime=OLD)
    write(str(directory / "Ascend910B4/k.o"), b"looks like a cache, is not one", mtime=OLD)


# H1: a cache root that is a symlink, or lies below one --------------------------------------------


@pytest.mark.parametrize(
    "link, environ",
    [
        ("home/atc_data/kernel_cache", {}),
        ("home/atc_data/fuzzy_kernel_cache", {}),
        ("home/ascend/log", {}),
        ("cachelink/kernel_cache", {"ASCEND_CACHE_PATH": "{sb}/cachelink"}),
        ("work/log", {"ASCEND_WORK_PATH": "{sb}/work"}),
        ("plogs", {"ASCEND_PROCESS_LOG_PATH": "{sb}/plogs"}),
    ],
)
def test_a_symlinked_root_is_shown_with_its_target_and_never_emptied(sb, link, environ):
    outside = sb / "outside"
    precious(outside)
    write(str(outside / "debug/plog/plog-1.log"), b"a log of another tree", mtime=OLD)
    (sb / link).parent.mkdir(parents=True, exist_ok=True)
    os.symlink(outside, sb / link)
    environ = {k: v.format(sb=sb) for k, v in environ.items()}
    with canary(sb, sb / "state"):
        code, out, err = run(sb, "--yes", "--kind", "all", "--format", "json", environ=environ)
        assert code == 0, err
        assert plan_of(out) == []
    assert f"leads through a symlink to {outside}" in err and f"--follow {outside}" in err


def test_a_symlinked_ancestor_of_the_roots_is_refused_too(sb):
    real = sb / "real_atc"
    write(str(real / "kernel_cache/Ascend910B4/k.o"), b"k", mtime=OLD)
    os.symlink(real, sb / "home/atc_data")
    with canary(sb, sb / "state"):
        code, out, err = run(sb, "--yes", "--format", "json")
        assert code == 0 and plan_of(out) == []
    assert f"--follow {real}/kernel_cache" in err


def test_follow_names_the_target_and_then_only_soc_directories_go(sb):
    outside = sb / "outside"
    precious(outside)
    write(str(outside / "Ascend310P3/te_add.o"), b"k" * 100, mtime=OLD)
    os.remove(outside / "Ascend910B4/k.o")
    os.rmdir(outside / "Ascend910B4")
    os.makedirs(sb / "home/atc_data")
    os.symlink(outside, sb / "home/atc_data/kernel_cache")
    with canary(sb, sb / "state", outside / "Ascend310P3"):
        code, out, err = run(sb, "--yes", "--format", "json", "--follow", str(outside))
        assert code == 0, err
        assert plan_of(out) == [str(outside / "Ascend310P3")]
    assert not (outside / "Ascend310P3").exists()


def test_only_soc_named_directories_of_a_real_kernel_cache_are_entries(sb):
    kc = sb / "home/atc_data/kernel_cache"
    for name in ("docs", "photos", "backup-Ascend910B4", "ascend", ".hidden"):
        write(str(kc / name / "x.txt"), b"not a kernel", mtime=OLD)
    write(str(kc / "op_cache.ini"), b"[op_compiler_cache]\n", mtime=OLD)
    write(str(kc / "Ascend910_9382/k.o"), b"k", mtime=OLD)
    with canary(sb, sb / "state", kc / "Ascend910_9382"):
        code, out, _ = run(sb, "--yes", "--format", "json")
        assert plan_of(out) == [str(kc / "Ascend910_9382")]


# H2: system trees at any depth, look-alike work paths ----------------------------------------------


@pytest.mark.parametrize(
    "variable",
    [
        "ASCEND_PROCESS_LOG_PATH",
        "NPU_COLLECT_PATH",
        "ASCEND_DUMP_PATH",
        "DUMP_GRAPH_PATH",
        "ASCEND_WORK_PATH",
        "ASCEND_CACHE_PATH",
        "ACL_OP_COMPILER_CACHE_DIR",
    ],
)
@pytest.mark.parametrize("value", ["/usr/lib", "/usr/share", "/var/lib", "/var/log", "/etc/ssl", "/usr/lib/python3"])
def test_no_variable_makes_anything_in_a_system_tree_an_entry(sb, variable, value):
    code, out, err = run(sb, "--dry-run", "--kind", "all", "--format", "json", environ={variable: value})
    data = json.loads(out)
    assert code == 0 and data["plan"]["entries"] == []
    assert not [e for e in data["entries"] if e["path"].startswith(value)]
    if os.path.isdir(value) and variable not in ("ASCEND_CACHE_PATH", "ACL_OP_COMPILER_CACHE_DIR", "ASCEND_WORK_PATH"):
        assert "system tree" in err


@pytest.mark.parametrize(
    "variable, layout",
    [
        ("ASCEND_WORK_PATH", "2024_06"),  # looks like a <pid>_<device> graph dump
        ("ASCEND_DUMP_PATH", "holiday"),
        ("NPU_COLLECT_PATH", "2024"),
        ("DUMP_GRAPH_PATH", "albums"),
        ("ASCEND_PROCESS_LOG_PATH", "letters"),
    ],
)
def test_a_variable_naming_a_data_directory_plans_only_what_cann_writes(sb, variable, layout):
    data = sb / "data"
    write(str(data / layout / "beach.jpg"), b"holiday", mtime=OLD)
    write(str(data / "notes.txt"), b"mine", mtime=OLD)
    cann = {
        "ASCEND_WORK_PATH": "1234_0/ge_proto_00001_Build.txt",
        "ASCEND_DUMP_PATH": "Add.add_1.2.3.1700000000000000",
        "NPU_COLLECT_PATH": "extra-info/data-dump/0/Add.add_1.2.3.1700000000000000",
        "DUMP_GRAPH_PATH": "ge_onnx_00001_graph_0_Build.pbtxt",
        "ASCEND_PROCESS_LOG_PATH": "debug/plog/plog-1_2024.log",
    }[variable]
    write(str(data / cann), b"written by CANN", mtime=OLD)
    top = data / cann.split("/")[0]
    with canary(sb, sb / "state", top):
        code, out, err = run(
            sb, "--yes", "--kind", "dump", "--kind", "log", "--format", "json", environ={variable: str(data)}
        )
        assert code == 0, err
        assert plan_of(out) == [str(top)]
    assert not top.exists()


def test_a_graph_dump_directory_holding_anything_else_stays(sb):
    write(str(sb / "work/1234_0/ge_proto_1.txt"), b"g", mtime=OLD)
    write(str(sb / "work/1234_0/thesis.tex"), b"mine", mtime=OLD)
    with canary(sb, sb / "state"):
        code, out, _ = run(
            sb, "--yes", "--kind", "dump", "--format", "json", environ={"ASCEND_WORK_PATH": str(sb / "work")}
        )
        assert plan_of(out) == []


@pytest.mark.parametrize("variable", ["ASCEND_PROCESS_LOG_PATH", "ASCEND_WORK_PATH", "NPU_COLLECT_PATH"])
def test_a_directory_holding_the_home_is_never_a_cache(sb, variable):
    write(str(sb / "debug/plog/plog-1.log"), b"x", mtime=OLD)  # a log-shaped child beside the home
    write(str(sb / "home/debug/x.log"), b"x", mtime=OLD)
    for value in (str(sb), str(sb / "home"), "/", "/home", "/tmp"):
        with canary(sb, sb / "state"):
            code, out, err = run(sb, "--yes", "--kind", "all", "--format", "json", environ={variable: value})
            assert code == 0 and plan_of(out) == [], value


def test_another_users_home_is_never_cleaned(sb, monkeypatch):
    alice = sb / "alice"
    write(str(alice / "cache/kernel_cache/Ascend910B4/k.o"), b"alice's", mtime=OLD)
    write(str(alice / "log/debug/x.log"), b"alice's", mtime=OLD)
    monkeypatch.setattr(clean_cache, "other_homes", lambda uid: (str(alice),))
    environ = {"ASCEND_CACHE_PATH": str(alice / "cache"), "ASCEND_PROCESS_LOG_PATH": str(alice / "log")}
    with canary(sb, sb / "state"):
        code, out, err = run(sb, "--yes", "--kind", "all", "--all-users", "--format", "json", environ=environ)
        assert code == 0 and plan_of(out) == []
    assert "another user's home" in err


# M1: the tree changes after the plan was shown -------------------------------------------------


def _victim(sb: Path) -> Path:
    victim = sb / "victim"
    write(str(victim / "kernel_cache/Ascend910B4/precious.txt"), b"precious", mtime=OLD)
    write(str(sb / "home/atc_data/kernel_cache/Ascend910B4/k.o"), b"k", mtime=OLD)
    return victim


@pytest.mark.parametrize("swap", ["symlink", "directory"])
def test_an_ancestor_swapped_while_the_user_reads_the_plan_is_not_followed(sb, monkeypatch, swap):
    victim = _victim(sb)
    home = sb / "home"

    def confirm_after_swapping(self, question):
        os.rename(home / "atc_data", home / "atc_data.moved")
        if swap == "symlink":
            os.symlink(victim, home / "atc_data")
        else:  # a look-alike directory moved into place
            os.rename(victim, home / "atc_data")
            os.symlink(home / "atc_data", victim)
        return True

    monkeypatch.setattr(Output, "confirm", confirm_after_swapping)
    code, _, err = run(sb, interactive=True)
    assert code == errors.EXIT_FINDINGS  # the plan was not carried out (C1)
    assert (victim / "kernel_cache/Ascend910B4/precious.txt").read_bytes() == b"precious"
    assert "left alone" in err and "Skipped 1 entry" in err and "Deleted 0 entries" in err


def test_a_swap_between_the_scan_and_the_delete_with_yes_is_not_followed(sb, monkeypatch):
    victim = _victim(sb)
    home = sb / "home"
    real_execute = execute_module.execute

    def swap_then_execute(*args, **kwargs):
        os.rename(home / "atc_data/kernel_cache", home / "kc.moved")
        os.symlink(victim / "kernel_cache", home / "atc_data/kernel_cache")
        return real_execute(*args, **kwargs)

    monkeypatch.setattr(execute_module, "execute", swap_then_execute)
    with canary(sb, sb / "state", home):
        code, out, _ = run(sb, "--yes", "--format", "json")
    result = json.loads(out)["result"]
    assert code == errors.EXIT_FINDINGS and result["files"] == 0
    assert result["skipped"] == [str(home / "atc_data/kernel_cache/Ascend910B4")] and result["deleted"] == []
    assert (home / "kc.moved/Ascend910B4/k.o").exists()


# M2: mounts inside a cache ---------------------------------------------------------------------


def _bind(source: Path, target: Path) -> None:
    done = subprocess.run(["mount", "--bind", str(source), str(target)], capture_output=True)
    if done.returncode:
        pytest.skip(f"cannot bind-mount here: {done.stderr.decode().strip()}")


def _umount(target: Path) -> None:
    subprocess.run(["umount", str(target)], check=False)


@pytest.mark.skipif(os.geteuid() != 0, reason="mounting needs root")
@pytest.mark.parametrize("where", ["Ascend910B4/sub", "Ascend910B4/a/b/c", "Ascend910B4"])
def test_a_bind_mount_inside_a_cache_is_never_entered(sb, where):
    kc = sb / "home/atc_data/kernel_cache"
    write(str(kc / "Ascend910B4/top.o"), b"k", mtime=OLD)
    write(str(kc / "Ascend310P3/k.o"), b"k", mtime=OLD)
    outside = sb / "outside"
    precious(outside)
    (kc / where).mkdir(parents=True, exist_ok=True)
    _bind(outside, kc / where)
    try:
        with canary(outside):
            code, out, err = run(sb, "--yes", "--format", "json")
            assert code == 0, err
    finally:
        _umount(kc / where)
    assert not (kc / "Ascend310P3").exists()
    assert "mount point" in err or "mount point" in out


@pytest.mark.skipif(os.geteuid() != 0, reason="mounting needs root")
def test_a_bind_mount_in_a_kernel_meta_is_left_alone_even_without_one_file_system(sb):
    meta = sb / "home/kernel_meta"
    write(str(meta / "add.o"), b"k", mtime=OLD)
    (meta / "data").mkdir()
    outside = sb / "outside"
    precious(outside)
    _bind(outside, meta / "data")
    try:
        with canary(outside):
            code, _, err = run(sb, "--yes", "--no-one-file-system")
            assert code == 0, err
    finally:
        _umount(meta / "data")
    assert not (meta / "add.o").exists()


# M9: trees deeper than PATH_MAX and than Python's recursion limit --------------------------------


def _deep(directory: Path, depth: int) -> None:
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    for _ in range(depth):
        os.mkdir("d", dir_fd=fd)
        child = os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
        os.close(fd)
        fd = child
    os.close(os.open("leaf.o", os.O_CREAT | os.O_WRONLY, 0o644, dir_fd=fd))
    os.close(fd)


@pytest.fixture
def deep_soc(sb):
    soc = sb / "home/atc_data/kernel_cache/Ascend910B4"
    write(str(soc / "top.o"), b"k" * 8000, mtime=OLD)
    _deep(soc, 3000)  # 6 kB of path: past PATH_MAX, and three times Python's recursion limit
    yield soc
    # whatever the test left: pytest's own clean-up (shutil.rmtree) cannot remove it
    subprocess.run(["rm", "-rf", str(soc)], check=False)


def test_a_tree_deeper_than_path_max_is_counted_and_removed_whole(sb, deep_soc):
    soc = deep_soc
    with canary(sb, sb / "state", soc):
        code, out, err = run(sb, "--dry-run", "--format", "json")
        entry = json.loads(out)["entries"][0]
        assert code == 0 and (entry["files"], entry["dirs"], entry["errors"]) == (2, 3001, [])
        code, out, err = run(sb, "--yes", "--format", "json")
        assert code == 0, err
    result = json.loads(out)["result"]
    assert (result["files"], result["errors"]) == (2, [])
    assert not soc.exists()
    lines = [json.loads(x) for x in (sb / "state/ascenv/clean-cache.jsonl").read_text().splitlines()]
    assert [(x["action"], x.get("dirs")) for x in lines] == [("begin", None), ("remove", 3001)]


# M8 and L4: names that are not UTF-8 ---------------------------------------------------------------


def _subprocess(sb: Path, *argv: str, environ: dict) -> subprocess.CompletedProcess:
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(sb / "home"),
        "XDG_STATE_HOME": str(sb / "state"),
        "DOCKER_HOST": f"unix://{sb}/no-engine.sock",
        "PYTHONIOENCODING": "utf-8:strict",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONPATH": str(REPO),  # this checkout's ascenv
        **environ,
    }
    return subprocess.run(
        [sys.executable, "-m", "ascenv", "clean-cache", "--recent", "0s", *argv],
        env=env,
        cwd=str(sb / "home"),
        capture_output=True,
        timeout=120,
    )


def test_non_utf8_names_never_exit_3_and_never_delete_then_crash(sb):
    bad = os.fsdecode(b"w\xff")
    work = os.fsencode(sb / bad)
    write(work + b"/kernel_meta/k\xfe.o", b"k", mtime=OLD)
    write(work + b"/log/debug/plog-\xff.log", b"l", mtime=OLD)
    write(os.fsencode(sb / "home/atc_data/kernel_cache/Ascend910B4") + b"/sub\xff/k.o", b"k", mtime=OLD)
    write(os.fsencode(sb / "home/atc_data/kernel_cache") + b"/Ascend910B4\xff/k.o", b"k", mtime=OLD)
    environ = {"ASCEND_WORK_PATH": os.fsdecode(work), "ASCEND_PROCESS_LOG_PATH": os.fsdecode(work + b"/log\xff")}
    for argv in (("ls",), ("ls", "--format", "json"), ("--dry-run",), ("--dry-run", "--format", "json")):
        done = _subprocess(sb, *argv, "--kind", "all", environ=environ)
        assert done.returncode == 0, done.stderr
        text = done.stdout.decode("utf-8")  # strict: the output is valid UTF-8
        if "json" in argv:
            assert "\\xff" in json.dumps(json.loads(text)) or "\\\\xff" in text
    done = _subprocess(sb, "--yes", "--kind", "all", "--format", "json", environ=environ)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.decode("utf-8"))["result"]
    assert result["files"] == 3 and result["errors"] == []
    assert os.listdir(os.fsencode(sb / "home/atc_data/kernel_cache")) == [b"Ascend910B4\xff"]  # not a SoC name


def test_the_soc_field_is_escaped_in_json():
    from ascenv.cache.entry import CacheEntry

    entry = CacheEntry("kernel-cache", "/c/" + os.fsdecode(b"A\xff"), "/c", "t", soc=os.fsdecode(b"A\xff"))
    from ascenv.output.clean_cache import entry_json

    data = entry_json(entry, now=0)
    assert data["soc"] == "A\\xff" and data["path"] == "/c/A\\xff"
    json.dumps(data).encode("utf-8")


# L3: the journal under interruption and concurrency ---------------------------------------------


def test_an_entry_interrupted_midway_is_journaled_with_what_was_removed(sb, monkeypatch):
    soc = sb / "home/atc_data/kernel_cache/Ascend910B4"
    for i in range(50):
        write(str(soc / f"k{i}.o"), b"k", mtime=OLD)
    real = execute_module._Remover.remove_file
    calls = []

    def remove_then_interrupt(self, *args):
        calls.append(1)
        if len(calls) == 20:
            raise KeyboardInterrupt
        return real(self, *args)

    monkeypatch.setattr(execute_module._Remover, "remove_file", remove_then_interrupt)
    code, _, err = run(sb, "--yes")
    assert code == errors.EXIT_INTERRUPTED and "interrupted" in err
    begin, end = [json.loads(x) for x in (sb / "state/ascenv/clean-cache.jsonl").read_text().splitlines()]
    assert begin["action"] == "begin" and end["action"] == "remove" and end["interrupted"] is True
    assert end["files"] == 19 == 50 - len(os.listdir(soc))


@pytest.mark.slow
@pytest.mark.parametrize("sig", ["SIGTERM", "SIGINT"])
def test_a_signal_during_the_delete_leaves_a_journal_line_for_every_removal(sb, sig):
    import signal

    soc = sb / "home/atc_data/kernel_cache/Ascend910B4"
    soc.mkdir(parents=True)
    fd = os.open(soc, os.O_RDONLY | os.O_DIRECTORY)
    for i in range(40_000):
        os.close(os.open(f"k{i}.o", os.O_CREAT | os.O_WRONLY, 0o644, dir_fd=fd))
    os.close(fd)
    journal = sb / "state/ascenv/clean-cache.jsonl"
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(sb / "home"),
        "XDG_STATE_HOME": str(sb / "state"),
        "DOCKER_HOST": f"unix://{sb}/no-engine.sock",
        "PYTHONPATH": str(REPO),  # this checkout's ascenv
    }
    child = subprocess.Popen(
        [sys.executable, "-m", "ascenv", "clean-cache", "--recent", "0s", "--yes"],
        env=env,
        cwd=str(sb / "home"),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not (journal.exists() and journal.read_text()):
        time.sleep(0.005)
    child.send_signal(getattr(signal, sig))
    child.wait(timeout=60)
    left = len(os.listdir(soc)) if soc.exists() else 0
    lines = [json.loads(x) for x in journal.read_text().splitlines()]
    assert lines[0]["action"] == "begin"
    assert len(lines) == 2, "the interrupted entry has its remove line"
    assert lines[1]["files"] == 40_000 - left
    if left:
        assert lines[1]["interrupted"] is True and child.returncode == errors.EXIT_INTERRUPTED


def _running_with(text: str) -> list[int]:
    """Processes whose command line contains ``text`` (zombies aside)."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as handle:
                if text.encode() in handle.read():
                    with open(f"/proc/{pid}/stat") as stat:
                        if stat.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X"):
                            found.append(int(pid))
        except OSError:
            continue
    return found


@pytest.mark.slow
@pytest.mark.parametrize("sig", ["SIGINT", "SIGTERM"])
def test_an_interrupt_while_npu_smi_hangs_ends_every_process_clean_cache_started(tmp_path, sig):
    """Ctrl-C (to the process group, as a terminal sends it) or SIGTERM while the scan's workers
    run and the machine facts wait on a hung npu-smi: exit 130 at once, nothing left running."""
    import signal

    soc = tmp_path / "home/atc_data/kernel_cache/Ascend910B4"
    soc.mkdir(parents=True)
    fd = os.open(soc, os.O_RDONLY | os.O_DIRECTORY)
    for i in range(40_000):  # enough for the scan to fork its workers
        os.close(os.open(f"k{i}.o", os.O_CREAT | os.O_WRONLY, 0o644, dir_fd=fd))
    os.close(fd)
    tools = tmp_path / "bin"
    tools.mkdir()
    pid_file = tmp_path / "npu-smi.pid"
    (tools / "npu-smi").write_text(f"#!/bin/sh\necho $$ > {pid_file}\nexec sleep 120\n")
    (tools / "npu-smi").chmod(0o755)
    env = {
        "PATH": f"{tools}:{os.environ.get('PATH', '/usr/bin:/bin')}",
        "HOME": str(tmp_path / "home"),
        "XDG_STATE_HOME": str(tmp_path / "state"),
        "DOCKER_HOST": f"unix://{tmp_path}/no-engine.sock",
        "PYTHONPATH": str(REPO),
    }
    child = subprocess.Popen(
        [sys.executable, "-m", "ascenv", "clean-cache", "ls", "--format", "json", "--path", str(tmp_path / "home")],
        env=env,
        cwd=str(tmp_path),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not (pid_file.exists() and pid_file.read_text().strip()):
        time.sleep(0.005)
    npu_smi = int(pid_file.read_text())
    signalled = time.monotonic()
    if sig == "SIGINT":
        os.killpg(child.pid, signal.SIGINT)
    else:
        child.send_signal(signal.SIGTERM)
    _, err = child.communicate(timeout=30)
    assert child.returncode == errors.EXIT_INTERRUPTED, err
    assert time.monotonic() - signalled < 10, "it waited for npu-smi's timeout"
    time.sleep(0.2)  # the orphaned npu-smi, if any, would still run
    assert _running_with(str(tmp_path)) == [], "a forked worker outlived clean-cache"
    assert npu_smi not in _running_with("sleep"), "the hung npu-smi outlived clean-cache"


def test_a_second_delete_while_one_runs_refuses_and_deletes_nothing(sb):
    write(str(sb / "home/atc_data/kernel_cache/Ascend910B4/k.o"), b"k", mtime=OLD)
    with execute_module.exclusive(str(sb / "state/ascenv/clean-cache.lock")):
        with canary(sb, sb / "state"):
            code, _, err = run(sb, "--yes")
    assert code == errors.EXIT_USAGE and "another ascenv clean-cache is deleting" in err
    assert run(sb, "--yes")[0] == 0 and not (sb / "home/atc_data/kernel_cache/Ascend910B4").exists()


# L7: journal edge cases --------------------------------------------------------------------------


def test_an_unwritable_state_directory_is_exit_2_with_the_path_and_nothing_deleted(sb):
    write(str(sb / "home/atc_data/kernel_cache/Ascend910B4/k.o"), b"k", mtime=OLD)
    write(str(sb / "state"), b"a file in the way")
    with canary(sb):
        code, _, err = run(sb, "--yes")
    assert code == errors.EXIT_USAGE and str(sb / "state/ascenv") in err and "XDG_STATE_HOME" in err


@pytest.mark.parametrize("name", ["clean-cache.jsonl", "clean-cache.lock"])
def test_a_journal_or_lock_that_is_a_symlink_is_not_written_through(sb, name):
    write(str(sb / "home/atc_data/kernel_cache/Ascend910B4/k.o"), b"k", mtime=OLD)
    write(str(sb / "target.txt"), b"keep me")
    (sb / "state/ascenv").mkdir(parents=True)
    os.symlink(sb / "target.txt", sb / "state/ascenv" / name)
    with canary(sb, sb / "state/ascenv/clean-cache.lock"):
        code, _, err = run(sb, "--yes")
    assert code == errors.EXIT_USAGE and "symbolic link" in err


# L8: messages ---------------------------------------------------------------------------------------


def test_the_question_says_entry_for_one(sb, monkeypatch):
    write(str(sb / "home/atc_data/kernel_cache/Ascend910B4/k.o"), b"k", mtime=OLD)
    asked = []
    monkeypatch.setattr(Output, "confirm", lambda self, q: asked.append(q) or False)
    run(sb, interactive=True)
    assert asked and asked[0].startswith("Delete 1 entry and free ")


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to setuid to nobody")
def test_scan_errors_are_shown_in_the_plan(monkeypatch):
    from tests.cache.helpers import as_user, shared_tmp

    monkeypatch.setattr(clean_cache, "gather_machine_facts", lambda *a, **k: MachineFacts())
    with shared_tmp() as tmp:
        home = tmp / "home"
        write(str(home / "atc_data/kernel_cache/Ascend910B4/mine.o"), b"k", mtime=OLD)
        write(str(home / "atc_data/kernel_cache/Ascend910B4/locked/root.o"), b"k", mtime=OLD)
        kc = home / "atc_data/kernel_cache"
        for path in (home, home / "atc_data", kc, kc / "Ascend910B4", kc / "Ascend910B4/mine.o"):
            os.chown(path, 65534, 65534)
        os.chmod(home / "atc_data/kernel_cache/Ascend910B4/locked", 0o700)
        env = {"HOME": str(home), "DOCKER_HOST": f"unix://{tmp}/none.sock", "XDG_STATE_HOME": str(tmp / "state")}
        argv = ["clean-cache", "--recent", "0s", "--dry-run"]
        assert run_cli(argv, env, home)[0] == 0  # as root first: nobody may not read the modules it imports
        code, _, err = as_user(65534, lambda: run_cli(["--debug", *argv], env, home))
    assert code == 0 and "locked: Permission denied" in err, err


# What held: regression tests -----------------------------------------------------------------------


def test_special_files_hard_links_and_dash_names_in_a_cache(sb):
    soc = sb / "home/atc_data/kernel_cache/Ascend910B4"
    write(str(sb / "outside/data.bin"), b"outside data", mtime=OLD)
    soc.mkdir(parents=True)
    os.link(sb / "outside/data.bin", soc / "hard.o")
    os.mkfifo(soc / "fifo")
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(soc / "sock"))
    write(str(soc / "-rf"), b"x", mtime=OLD)
    write(str(soc / "--no-preserve-root/k.o"), b"x", mtime=OLD)
    os.symlink(sb / "outside", soc / "link")
    try:
        with canary(sb, sb / "state", soc):
            result: list = []
            worker = threading.Thread(target=lambda: result.append(run(sb, "--yes", "--format", "json")))
            worker.start()
            worker.join(timeout=60)
            assert result, "clean-cache blocked on a special file"
    finally:
        sock.close()
    code, out, _ = result[0]
    assert code == 0 and json.loads(out)["result"]["errors"] == [] and not soc.exists()
    assert (sb / "outside/data.bin").read_bytes() == b"outside data"


# L10: start-up ------------------------------------------------------------------------------------


@pytest.mark.parametrize("argv", [("ls",), ("--dry-run",), ("ls", "--kind", "kernel-cache")])
def test_without_container_kinds_neither_the_docker_sdk_nor_the_builder_is_imported(sb, argv):
    write(str(sb / "home/atc_data/kernel_cache/Ascend910B4/k.o"), b"k", mtime=OLD)
    probe = (
        "import io, json, sys, contextlib\n"
        "from ascenv import cli\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        f"    code = cli.main(['clean-cache', *{list(argv)!r}, '--format', 'json'])\n"
        "heavy = sorted(m for m in sys.modules if m.split('.')[0] in ('docker', 'requests') "
        "or m in ('ascenv.builder', 'ascenv.store', 'ascenv.commands.build', 'ascenv.containers.engine'))\n"
        "print(json.dumps([code, heavy]))\n"
    )
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(sb / "home"),
        "XDG_STATE_HOME": str(sb / "state"),
        "DOCKER_HOST": f"unix://{sb}/no-engine.sock",
        "PYTHONPATH": str(REPO),
    }
    done = subprocess.run([sys.executable, "-c", probe], env=env, cwd=str(sb / "home"), capture_output=True, timeout=60)
    assert json.loads(done.stdout) == [0, []], done.stderr
