"""Standard output that fails, for every command (issue 28, X1/X2 of the second adversarial round):
stdout on ``/dev/full`` is exit 2 with one line "cannot write standard output: …"; stdout whose
reader is gone (``| head``) is exit 141 (128 + SIGPIPE, README's table), quietly; never exit 3 or
1, never a traceback. Each command runs as a user runs it, in its own process, with arguments
that make it print (on a fixture host)."""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ascenv import cli, errors
from ascenv.commands._common import Context
from ascenv.output import Output
from ascenv.store import Store
from tests.cli_helpers import run_cli
from tests.fixture_hosts import build_host
from tests.package.pkgbuild import small_package
from tests.test_store import add_entry

REPO = Path(__file__).resolve().parents[1]

# Commands whose printing run needs what a test machine lacks (a Docker engine, Ansible nodes, a
# built operator): their --help is what they print here, through the same parser and stdout.
# `package inspect` reads a real makeself package (tests/package/pkgbuild.small_package), and
# `install --rollback` swaps a vendor tree made here.
HELP_ONLY = {"build", "fleet", "image"}


@pytest.fixture(scope="module")
def machine(tmp_path_factory: pytest.TempPathFactory) -> dict:
    tmp = tmp_path_factory.mktemp("stdout")
    host = build_host("a2-cann800", tmp / "hosts")
    # XDG_DATA_HOME: `compat update --remove` acts on a data directory of this test, none there
    environ = {**os.environ, **host.environ, "PYTHONPATH": str(REPO), "XDG_DATA_HOME": str(tmp / "data")}
    code, _, err = run_cli(["snapshot", "--root", str(host.root), "-o", str(tmp / "snap.json")], host.environ, tmp)
    assert code == 0, err
    code, _, err = run_cli(["lock", "--from", "snap.json", "-o", "good.lock"], host.environ, tmp)
    assert code == 0, err
    (tmp / "app.log").write_text("RuntimeError: EZ3002 the op is not supported\n" * 50)
    for tree in ("opp/vendors/customize", "opp/.ascenv-previous/customize"):
        (tmp / tree).mkdir(parents=True)
        (tmp / tree / "TAG").write_text(tree)
    # `test --target npu` with no NPU here prints the command for an NPU host: a stored build of a
    # copy of add_custom whose npu target declares an accuracy_argv
    kernel = tmp / "kernels" / "add_custom"
    shutil.copytree(REPO / "kernels" / "add_custom", kernel)
    with open(kernel / "kernel.toml", "r+", encoding="utf-8") as fh:
        text = fh.read().replace(
            'outputs = ["custom_opp_*.run"]\n', 'outputs = ["custom_opp_*.run"]\naccuracy_argv = ["{out}/a"]\n'
        )
        fh.seek(0)
        fh.write(text)
    add_entry(Store(tmp / "store"), "add_custom", "a" * 64, target="npu")
    (tmp / "ascenv.toml").write_text('cann = ">=8.0.0"\n')
    root = str(host.root)
    argv = {
        "doctor": ["doctor", "--from", "snap.json"],
        "check": ["check", "--from", "snap.json"],
        "explain": ["explain"],
        "triage": ["triage", "app.log", "--from", "snap.json"],
        "snapshot": ["snapshot", "--root", root],
        "lock": ["lock", "--from", "snap.json", "--format", "json", "-o", "again.lock"],
        "diff": ["diff", "snap.json", "good.lock"],
        "report": ["report", "--from", "snap.json", "--format", "json", "-o", "r.tar.gz"],
        "store": ["store", "ls", "--store", "store"],
        "bench": ["bench", "history", "add_custom", "--store", "store"],
        "package": ["package", "inspect", str(small_package(tmp / "pkg"))],
        # a rollback swaps the live and the kept vendor: every run prints, and two runs swap back
        "install": ["install", "--rollback", "customize", "--install-path", "opp"],
        "op": ["op", "check", "--root", root, "--format", "json"],  # no vendor there: the document says so
        "clean-cache": ["clean-cache", "ls"],
        "test": ["test", "add_custom", "--target", "npu", "--store", "store", "--format", "json"],
        "compat": ["compat", "update", "--remove"],
        "completion": ["completion", "bash"],
        "export": ["export", "prometheus", "--from", "snap.json", "--lock", "good.lock"],
        **{name: [name, "--help"] for name in HELP_ONLY},
    }
    return {"cwd": tmp, "environ": environ, "argv": argv}


def _names() -> list[str]:
    return [spec.name for spec in cli.command_specs()]


def test_every_command_is_exercised(machine: dict) -> None:
    assert set(machine["argv"]) == set(_names())


def _ascenv(machine: dict, argv: list[str], stdout: object) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "ascenv", *argv],
        cwd=machine["cwd"],
        env=machine["environ"],
        stdout=stdout,
        stderr=subprocess.PIPE,
        text=True,
        timeout=120,
    )


@pytest.mark.parametrize("name", _names())
def test_a_full_stdout_is_exit_2_with_one_line(machine: dict, name: str) -> None:
    printed = _ascenv(machine, machine["argv"][name], subprocess.PIPE)
    assert printed.stdout, f"{name} prints nothing: the test would not test it"
    with open("/dev/full", "w") as full:
        done = _ascenv(machine, machine["argv"][name], full)
    assert done.returncode == errors.EXIT_USAGE, done.stderr
    assert done.stderr == "ascenv: cannot write standard output: No space left on device\n"


@pytest.mark.parametrize("name", _names())
def test_a_closed_reader_is_exit_141_quietly(machine: dict, name: str) -> None:
    read, write = os.pipe()
    os.close(read)  # the reader is gone before the first byte: every write is EPIPE
    try:
        done = _ascenv(machine, machine["argv"][name], write)
    finally:
        os.close(write)
    assert (done.returncode, done.stderr) == (errors.EXIT_STDOUT_CLOSED, "")


@pytest.mark.parametrize("name", _names())
def test_head_c_1_ends_with_the_command_s_own_code_or_141(machine: dict, name: str) -> None:
    """``| head -c 1``: head exits after one byte; whether ascenv had written everything into the
    pipe by then is a race, so either code is right, and nothing else is."""
    own = _ascenv(machine, machine["argv"][name], subprocess.DEVNULL).returncode
    argv = [sys.executable, "-m", "ascenv", *machine["argv"][name]]
    popen = {"cwd": machine["cwd"], "env": machine["environ"], "stdout": subprocess.PIPE, "stderr": subprocess.PIPE}
    with subprocess.Popen(argv, **popen) as first:  # type: ignore[call-overload]
        with subprocess.Popen(["head", "-c", "1"], stdin=first.stdout, stdout=subprocess.DEVNULL) as head:
            first.stdout.close()
            err = first.stderr.read()
            assert first.wait(timeout=120) in (own, errors.EXIT_STDOUT_CLOSED)
            assert head.wait(timeout=30) == 0
    assert err == b""


def test_a_closed_descriptor_is_exit_2(machine: dict) -> None:
    """``ascenv doctor >&-``: Python starts with ``sys.stdout = None``."""
    done = subprocess.run(
        [sys.executable, "-m", "ascenv", *machine["argv"]["doctor"]],
        cwd=machine["cwd"],
        env=machine["environ"],
        stderr=subprocess.PIPE,
        text=True,
        timeout=120,
        preexec_fn=lambda: os.close(1),
    )
    assert done.returncode == errors.EXIT_USAGE
    assert done.stderr == "ascenv: cannot write standard output: Bad file descriptor\n"


@pytest.mark.parametrize("argv", [["--help"], ["explain", "--help"], ["--version"], ["store", "gc", "--help"]])
def test_help_and_version_on_a_full_stdout_are_exit_2(machine: dict, argv: list[str]) -> None:
    """argparse drops the OSError of printing --help and exits 0: the text is lost silently."""
    with open("/dev/full", "w") as full:
        done = _ascenv(machine, argv, full)
    assert (done.returncode, done.stderr) == (
        errors.EXIT_USAGE,
        "ascenv: cannot write standard output: No space left on device\n",
    )


# -o - means standard output (X5) -----------------------------------------------------------------
class _Stdout(io.TextIOWrapper):
    """A binary-capable stdout (``buffer`` is a BytesIO), a terminal when ``tty``."""

    def __init__(self, tty: bool = False) -> None:
        super().__init__(io.BytesIO(), encoding="utf-8")
        self.tty = tty

    def isatty(self) -> bool:
        return self.tty

    def bytes(self) -> bytes:
        self.flush()
        return self.buffer.getvalue()  # type: ignore[attr-defined]


def _run(argv: list[str], environ: dict, cwd: Path, stdout: _Stdout) -> tuple[int, str]:
    err = io.StringIO()
    out = Output("human", stdout=stdout, stderr=err, interactive=False, color=False)
    return cli.main(argv, ctx=Context(environ=environ, out=out, cwd=str(cwd))), err.getvalue()


@pytest.fixture
def saved(tmp_path: Path) -> dict:
    host = build_host("a2-cann800", tmp_path / "hosts")
    environ = {**host.environ, "SOURCE_DATE_EPOCH": "1700000000"}
    code, _, err = run_cli(["snapshot", "--root", str(host.root), "-o", "snap.json"], environ, tmp_path)
    assert code == 0, err
    return {"cwd": tmp_path, "environ": environ, "root": str(host.root)}


@pytest.mark.parametrize(
    ("argv", "binary"),
    [
        (["lock", "--from", "snap.json"], False),
        (["report", "--from", "snap.json"], True),
        (["snapshot", "--root", "{root}"], False),
    ],
)
def test_dash_o_dash_writes_the_file_to_stdout_and_the_summary_to_stderr(saved: dict, argv: list[str], binary: bool):
    argv = [a.format(root=saved["root"]) for a in argv]
    code, err = _run([*argv, "-o", "file.out"], saved["environ"], saved["cwd"], _Stdout())
    assert code == 0, err
    stdout = _Stdout()
    code, err = _run([*argv, "-o", "-"], saved["environ"], saved["cwd"], stdout)
    assert code == 0, err
    written = (saved["cwd"] / "file.out").read_bytes()
    if argv[0] == "snapshot":  # the time of the probe differs between the two runs
        assert json.loads(stdout.bytes())["host"] == json.loads(written)["host"]
    else:
        assert stdout.bytes() == written
        assert "wrote standard output" in err
    assert not (saved["cwd"] / "-").exists()
    if binary:
        assert stdout.bytes()[:2] == b"\x1f\x8b"


def test_dash_dot_slash_dash_is_still_a_file_named_dash(saved: dict):
    """As with tar and cat, ``./-`` is the way to name a file called ``-``."""
    code, err = _run(["lock", "--from", "snap.json", "-o", "./-"], saved["environ"], saved["cwd"], _Stdout())
    assert code == 0, err
    assert (saved["cwd"] / "-").read_text().startswith("# This file is generated by `ascenv lock`")


@pytest.mark.parametrize("command", [["report", "--from", "snap.json"], ["report", "--from", "missing.json"]])
def test_a_bundle_is_refused_on_a_terminal_before_any_work(saved: dict, command: list[str]):
    stdout = _Stdout(tty=True)
    code, err = _run([*command, "-o", "-"], saved["environ"], saved["cwd"], stdout)
    assert code == errors.EXIT_USAGE
    assert "-o - would write a gzip archive to the terminal" in err and "missing.json" not in err
    assert stdout.bytes() == b""


def test_a_lock_may_go_to_a_terminal(saved: dict):
    stdout = _Stdout(tty=True)
    code, err = _run(["lock", "--from", "snap.json", "-o", "-"], saved["environ"], saved["cwd"], stdout)
    assert code == 0, err
    assert b'lock-version = "1.1"' in stdout.bytes()


@pytest.mark.parametrize("command", [["lock", "--from", "snap.json"], ["report", "--from", "snap.json"]])
def test_dash_o_dash_with_format_json_is_refused(saved: dict, command: list[str]):
    stdout = _Stdout()
    code, err = _run([*command, "-o", "-", "--format", "json"], saved["environ"], saved["cwd"], stdout)
    assert code == errors.EXIT_USAGE and "--format json" in err
    assert stdout.bytes() == b""


def test_dash_o_dash_on_a_full_stdout_is_exit_2(machine: dict):
    with open("/dev/full", "w") as full:
        done = _ascenv(machine, ["report", "--from", "snap.json", "-o", "-"], full)
    assert (done.returncode, done.stderr) == (
        errors.EXIT_USAGE,
        "ascenv: cannot write standard output: No space left on device\n",
    )


# names that are not UTF-8 (X3) -------------------------------------------------------------------
BAD = os.fsdecode(b"bad\xff")  # as Python gives it: surrogateescape


@pytest.mark.parametrize(
    "argv",
    [
        ["lock", "--from", f"{BAD}.json", "-o", "x.lock"],
        ["lock", "--from", "snap.json", "-o", f"{BAD}.lock"],
        ["report", "--from", f"{BAD}.json", "-o", "x.tar.gz"],
        ["report", "--from", "snap.json", "-o", f"{BAD}.tar.gz", "--log", f"{BAD}.log"],
        ["report", "--root", f"{BAD}-root", "-o", "x.tar.gz"],
        ["snapshot", "--root", f"{BAD}-root", "--format", "json", "-o", f"{BAD}.json"],
        ["triage", f"{BAD}.log", "--from", "snap.json"],
        ["triage", f"{BAD}.log", "--from", f"{BAD}.json", "--format", "markdown"],
        ["diff", f"{BAD}.json", "snap.json"],
    ],
)
def test_a_name_that_is_not_utf8_is_shown_as_backslash_xff(saved: dict, argv: list[str]):
    cwd = saved["cwd"]
    (cwd / f"{BAD}.json").write_bytes((cwd / "snap.json").read_bytes())
    (cwd / f"{BAD}.log").write_text("RuntimeError: EZ3002 not supported\n")
    os.symlink(saved["root"], cwd / f"{BAD}-root")
    stdout = _Stdout()
    code, err = _run(argv, saved["environ"], cwd, stdout)
    assert code == 0, err
    shown = stdout.bytes().decode("utf-8") + err  # strict: no lone surrogate reached the output
    assert "\\udcff" not in shown
    if argv[0] in ("triage", "diff"):
        assert "bad\\xff" in shown
    for written in cwd.iterdir():
        if written.suffix in (".lock", ".json") and written.name != "snap.json" and written.is_file():
            text = written.read_bytes().decode("utf-8")  # strict: a UTF-8 file
            assert "\\udcff" not in text


def test_a_lock_of_a_snapshot_named_bad_xff_records_it_as_shown(saved: dict):
    cwd = saved["cwd"]
    (cwd / f"{BAD}.json").write_bytes((cwd / "snap.json").read_bytes())
    code, err = _run(["lock", "--from", f"{BAD}.json", "-o", "x.lock"], saved["environ"], cwd, _Stdout())
    assert code == 0, err
    assert 'source = "bad\\\\xff.json"' in (cwd / "x.lock").read_text()
    code, err = _run(["lock", "--check", "x.lock", "--from", f"{BAD}.json"], saved["environ"], cwd, _Stdout())
    assert code == 0, err


@pytest.mark.parametrize(
    ("argv", "code"),
    [
        (["doctor", "--from", "missing.json"], errors.EXIT_USAGE),  # the error message cannot be shown
        (["lock", "--from", "snap.json", "-o", "-"], errors.EXIT_OK),  # the summary cannot be shown
        (["report", "--from", "snap.json", "-o", "-", "--log", "missing.log"], errors.EXIT_USAGE),
    ],
)
@pytest.mark.parametrize("stderr", ["/dev/full", "closed pipe"])
def test_a_failing_stderr_keeps_the_command_s_own_code(machine: dict, argv: list[str], code: int, stderr: str):
    """Messages that cannot be written are dropped; rich would make a broken stderr exit 1."""
    read, write = os.pipe()
    os.close(read)
    try:
        with open("/dev/full", "w") as full:
            done = subprocess.run(
                [sys.executable, "-m", "ascenv", *argv],
                cwd=machine["cwd"],
                env=machine["environ"],
                stdout=subprocess.DEVNULL,
                stderr=full if stderr == "/dev/full" else write,
                timeout=120,
            )
    finally:
        os.close(write)
    assert done.returncode == code


def test_normalize_dash_o_dash_streams_the_same_package_as_a_file(tmp_path: Path):
    package = small_package(tmp_path / "pkg")
    environ = {"PATH": os.environ.get("PATH", ""), "SOURCE_DATE_EPOCH": "1700000000"}
    code, _, err = run_cli(["package", "normalize", str(package), "-o", "file.run"], environ, tmp_path)
    assert code == 0, err
    stdout = _Stdout()
    code, err = _run(["package", "normalize", str(package), "-o", "-"], environ, tmp_path, stdout)
    assert code == 0, err
    assert stdout.bytes() == (tmp_path / "file.run").read_bytes()  # byte for byte: the repack is reproducible
    assert err.startswith("standard output: ") and not (tmp_path / "-").exists()  # the summary on stderr


@pytest.mark.parametrize(
    ("tty", "extra", "says"), [(True, [], "to the terminal"), (False, ["--format", "json"], "json")]
)
def test_normalize_dash_o_dash_is_refused_on_a_terminal_or_with_json(tmp_path: Path, tty: bool, extra: list, says: str):
    package = small_package(tmp_path / "pkg")
    stdout = _Stdout(tty=tty)
    code, err = _run(["package", "normalize", str(package), "-o", "-", *extra], {}, tmp_path, stdout)
    assert code == errors.EXIT_USAGE and says in err
    assert stdout.bytes() == b""
