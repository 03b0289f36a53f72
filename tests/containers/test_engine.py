"""The preflight and Engine.run. The preflight tests need no engine: they point DOCKER_HOST at
sockets where none answers, or none may be used; the run tests use the engine and the builder
image (tests/engine_fixtures.py), except the lost-engine ones (a fake client: the daemon is shared)."""

from __future__ import annotations

import io
import os
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path

import docker.errors
import pytest
import requests.exceptions

from ascenv import errors
from ascenv.containers import engine as engine_mod
from ascenv.containers.engine import Mount
from tests.cli_helpers import run_cli

REPO = Path(__file__).resolve().parents[2]


def test_no_daemon_is_unreachable_with_exit_5(tmp_path):
    host = f"unix://{tmp_path}/docker.sock"
    code, out, err = run_cli(["image", "verify", "builder-bookworm"], {"DOCKER_HOST": host, "HOME": str(tmp_path)})
    assert code == errors.EXIT_ENGINE_UNREACHABLE == 5
    assert f"error: no Docker engine answers at {host} (No such file or directory)" in err
    assert "hint: start the engine" in err and "Traceback" not in err and out == ""


def test_refused_connection_is_unreachable(tmp_path):
    path = tmp_path / "docker.sock"
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(path))  # bound but never listening: connect() is refused
    try:
        with pytest.raises(errors.EngineUnreachable, match="Connection refused"):
            engine_mod.connect({"DOCKER_HOST": f"unix://{path}"})
    finally:
        sock.close()


def test_no_daemon_in_a_real_process_prints_no_traceback(tmp_path):
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "DOCKER_HOST": f"unix://{tmp_path}/none.sock"}
    done = subprocess.run(
        [sys.executable, "-m", "ascenv", "image", "ls"], cwd=REPO, env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 5
    assert "no Docker engine answers" in done.stderr and "Traceback" not in done.stderr


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to switch to an unprivileged uid")
def test_socket_permission_denied_is_exit_6(tmp_path):
    """A listening socket the caller may not open: the SDK's real exception, classified."""
    path = tmp_path / "docker.sock"
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(path))
    sock.listen(1)
    os.chmod(path, 0o600)  # root's only
    os.chmod(tmp_path, 0o755)
    # The venv's interpreter may not be reachable for another uid, so fork instead of exec.
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: drop to nobody, try the socket, report the classification
        try:
            os.setgroups([])
            os.setgid(65534)
            os.setuid(65534)
            try:
                engine_mod.connect({"DOCKER_HOST": f"unix://{path}"})
                report = "connected"
            except errors.EngineError as exc:
                report = f"{type(exc).__name__} {exc.exit_code} {exc.message}"
            os.write(write_end, report.encode())
        finally:
            os._exit(0)
    os.close(write_end)
    try:
        os.waitpid(pid, 0)
        with os.fdopen(read_end) as fh:
            report = fh.read()
    finally:
        sock.close()
    assert report == f"EnginePermissionDenied 6 permission denied on the Docker engine socket unix://{path}"


@pytest.mark.parametrize(
    "found, too_old", [("1.40", True), ("1.12", True), ("1.41", False), ("1.45", False), ("2.0", False)]
)
def test_api_version_gate(found, too_old):
    if too_old:
        with pytest.raises(errors.EngineTooOld) as info:
            engine_mod.check_api_version(found, "19.03.15", "unix:///var/run/docker.sock")
        assert info.value.exit_code == 7
        assert f"is version 19.03.15 (API {found}); ascenv needs API 1.41 (Docker 20.10) or newer" in info.value.message
    else:
        engine_mod.check_api_version(found, "28.2.2", "unix:///var/run/docker.sock")


def test_sdk_missing_is_exit_4(monkeypatch):
    monkeypatch.setitem(sys.modules, "docker", None)  # import docker -> ImportError
    with pytest.raises(errors.EngineSdkMissing) as info:
        engine_mod.connect({})
    assert info.value.exit_code == 4 and "pip install 'docker>=7'" in info.value.hint


# --- with the engine and the builder image --------------------------------------------------
@pytest.mark.engine
def test_run_has_no_network_read_only_sources_and_the_callers_ids(engine, builder_image, tmp_path):
    src, out = tmp_path / "src", tmp_path / "out"
    src.mkdir()
    out.mkdir()
    (src / "a.txt").write_text("from the host\n")
    os.chmod(out, 0o777)
    logs = []
    result = engine.run(
        builder_image,
        [
            "sh",
            "-c",
            "cat /src/a.txt; id -u; id -g; touch /src/x 2>/dev/null || echo read-only; "
            "cat /sys/class/net/*/operstate 2>/dev/null | wc -l; ls /sys/class/net; echo made > /out/made.txt",
        ],
        mounts=[Mount(str(src), "/src"), Mount(str(out), "/out", read_only=False)],
        user="1234:2345",
        timeout=120,
        labels={"ascenv.test": "run"},
        on_log=logs.append,
    )
    assert result.ok, result.logs
    lines = result.logs.splitlines()
    assert lines[:4] == ["from the host", "1234", "2345", "read-only"]
    assert lines[-1] == "lo"  # network "none": loopback only
    assert "".join(logs) == result.logs
    made = out / "made.txt"
    assert (made.stat().st_uid, made.stat().st_gid) == (1234, 2345)
    assert engine.containers({engine_mod.CONTAINER_LABEL: result.container}) == []


@pytest.mark.engine
def test_timeout_kills_and_removes(engine, builder_image):
    start = time.monotonic()
    result = engine.run(builder_image, ["sleep", "60"], timeout=2, labels={"ascenv.test": "timeout"})
    assert result.timed_out and result.exit_code is None and not result.ok
    assert time.monotonic() - start < 30
    assert engine.containers({engine_mod.CONTAINER_LABEL: result.container}) == []


@pytest.mark.engine
def test_container_killed_from_outside_is_removed(engine, builder_image):
    import threading

    tag = uuid.uuid4().hex

    def kill_when_running():
        for _ in range(100):
            names = engine.containers({"ascenv.test-id": tag})
            if names:
                engine.client.containers.get(names[0]).kill()
                return
            time.sleep(0.1)

    killer = threading.Thread(target=kill_when_running)
    killer.start()
    result = engine.run(builder_image, ["sleep", "60"], timeout=120, labels={"ascenv.test-id": tag})
    killer.join()
    assert result.exit_code == 137 and not result.timed_out  # SIGKILL
    assert engine.containers({"ascenv.test-id": tag}) == []


@pytest.mark.engine
@pytest.mark.parametrize("signame", ["SIGTERM", "SIGINT"])
def test_caller_interrupted_mid_run_leaves_no_container(engine, builder_image, signame):
    import signal

    tag = uuid.uuid4().hex
    code = (
        "import os, sys; from ascenv.containers import engine\n"
        "e = engine.connect(dict(os.environ))\n"
        "e.run(sys.argv[1], ['sleep', '120'], timeout=300, labels={'ascenv.test-id': sys.argv[2]})\n"
    )
    with subprocess.Popen(
        [sys.executable, "-c", code, builder_image, tag], cwd=REPO, stderr=subprocess.PIPE, text=True
    ) as proc:
        try:
            for _ in range(300):
                if engine.containers({"ascenv.test-id": tag}):
                    break
                time.sleep(0.1)
            assert engine.containers({"ascenv.test-id": tag}), "the container never started"
            proc.send_signal(getattr(signal, signame))
            _, stderr = proc.communicate(timeout=60)
        finally:
            proc.kill()
    # unwound through finally, not killed outright: Ctrl-C, or SIGTERM as errors.Terminated (a KeyboardInterrupt)
    unwound = "ascenv.errors.Terminated: killed by SIGTERM" if signame == "SIGTERM" else "KeyboardInterrupt"
    assert unwound in stderr
    assert engine.containers({"ascenv.test-id": tag}) == []


def test_labels_must_be_ascenvs():
    class NoClient:
        pass

    e = engine_mod.Engine(NoClient(), host="unix:///x", server_version="0", arch="amd64")
    with pytest.raises(ValueError, match="must start with 'ascenv.'"):
        e.run("img", ["true"], labels={"purpose": "x"})


class LostEngineApi:
    """The low-level client of an engine whose ``wait`` fails with the ConnectionError docker-py
    raises both for a daemon that went away and for its own read timeout on a unix socket;
    ``alive`` says which it was: whether the engine still answers afterwards."""

    def __init__(self, alive: bool):
        self.alive, self.waited, self.removed = alive, False, []

    def _gone(self, what):
        if self.waited and not self.alive:
            raise requests.exceptions.ConnectionError(
                f"('Connection aborted.', FileNotFoundError(2, 'No such file or directory')) on {what}"
            )

    def create_host_config(self, **kwargs):
        return kwargs

    def create_container(self, image, **kwargs):
        pass

    def attach_socket(self, name, params):
        return io.BytesIO()

    def start(self, name):
        pass

    def wait(self, name, timeout, condition):
        self.waited = True
        raise requests.exceptions.ConnectionError(
            "('Connection aborted.', RemoteDisconnected('Remote end closed connection without response'))"
        )

    def ping(self):
        self._gone("ping")
        return True

    def remove_container(self, name, force=False):
        self._gone("remove")
        self.removed.append(name)

    def inspect_container(self, name):
        self._gone("inspect")
        raise docker.errors.NotFound("gone")


def lost_engine(alive: bool):
    class Client:
        api = LostEngineApi(alive)

    return engine_mod.Engine(Client(), host="unix:///run/docker.sock", server_version="27.5.1", arch="amd64")


def test_engine_gone_mid_run_is_unreachable_not_a_timeout():
    engine = lost_engine(alive=False)
    with pytest.raises(errors.EngineUnreachable) as info:
        engine.run("img", ["make"], timeout=3600)
    assert info.value.message.startswith("the Docker engine at unix:///run/docker.sock stopped answering")
    assert "timed out" not in info.value.message and "docker rm -f ascenv-" in info.value.hint
    assert info.value.exit_code == errors.EXIT_ENGINE_UNREACHABLE


def test_connection_error_from_an_engine_that_still_answers_is_the_timeout():
    engine = lost_engine(alive=True)
    result = engine.run("img", ["make"], timeout=3600)
    assert result.timed_out and result.exit_code is None
    assert engine.client.api.removed == [result.container]  # killed and removed as after any timeout
