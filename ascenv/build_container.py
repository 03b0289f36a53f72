"""One build step in a fresh container that dies with its caller.

``ascenv.containers.engine.Engine.run`` removes its container on every exit path ascenv sees
(return, exception, Ctrl-C, SIGTERM), but not when ascenv itself is killed with SIGKILL: the
container then runs on and stays. A build must leave nothing behind even then, so this runner
adds two things on top of the same engine client (kept here until the engine offers them):

- ``AutoRemove``: the engine deletes the container as soon as its main process exits;
- a stdin tie (the ``docker run -i --rm`` idiom): the container's stdin is attached to this
  process with ``StdinOnce``; when this process dies the kernel closes the socket, the engine
  closes the container's stdin, and a watchdog in the container's shell sees end-of-file and
  kills the build. PID 1 exits, the engine removes the container.

The build writes its log and exit status into a bind-mounted directory (``/ascenv/meta``), so
neither is lost when the container is removed the instant it exits; the log is streamed to the
caller by following that file.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Mapping, Optional, Sequence

from ascenv.containers import MANAGED_LABEL
from ascenv.containers.engine import CONTAINER_LABEL, Engine, ImageNotAvailable, Mount, sigterm_as_interrupt

META = "/ascenv/meta"  # inside the container: build.log, status, toolchain.txt
PURPOSE_LABEL = "ascenv.purpose"

# $1.. is the build argv. fd 3 keeps the real stdin: background jobs of a non-interactive shell
# get /dev/null as stdin (POSIX 2.9.3, "Asynchronous Lists"), so the watchdog reads fd 3.
WRAPPER = """umask 022
exec 3<&0
if [ -n "$ASCENV_TOOLCHAIN_PROBE" ]; then sh -c "$ASCENV_TOOLCHAIN_PROBE" > {meta}/toolchain.txt 2>/dev/null; fi
"$@" > {meta}/build.log 2>&1 &
child=$!
( while read -r _ <&3; do :; done; kill -KILL "$child" 2>/dev/null ) 3<&3 &
wait "$child"
code=$?
echo "$code" > {meta}/status
exit "$code"
""".format(meta=META)


@dataclass(frozen=True)
class StepResult:
    exit_code: Optional[int]  # None: killed (timeout) or vanished before writing its status
    timed_out: bool
    log: str
    seconds: float
    container: str
    toolchain: str  # what the toolchain probe printed

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and not self.timed_out


def run_step(
    engine: Engine,
    image: str,
    argv: Sequence[str],
    *,
    meta: Path,
    mounts: Sequence[Mount],
    env: Mapping[str, str],
    labels: Mapping[str, str],
    workdir: str = "/",
    timeout: float = 3600.0,
    toolchain_probe: str = "",
    on_log: Optional[Callable[[str], None]] = None,
) -> StepResult:
    """Run ``argv`` in a new container of ``image``; ``meta`` (an empty host directory) is
    mounted at ``/ascenv/meta``. Labels must start with ``ascenv.``."""
    import docker.errors
    import docker.types
    import requests.exceptions

    client = engine.client
    name = f"ascenv-build-{uuid.uuid4().hex[:16]}"
    all_labels = {**labels, MANAGED_LABEL: "true", CONTAINER_LABEL: name, PURPOSE_LABEL: "build"}
    binds = [docker.types.Mount(m.target, m.source, type="bind", read_only=m.read_only) for m in mounts]
    binds.append(docker.types.Mount(META, str(meta), type="bind", read_only=False))
    host_config = client.api.create_host_config(auto_remove=True, network_mode="none", mounts=binds)
    environment = {**env, "ASCENV_TOOLCHAIN_PROBE": toolchain_probe}
    start = time.monotonic()
    done = threading.Event()
    chunks: list[str] = []
    follower = threading.Thread(target=_follow, args=(meta / "build.log", done, chunks, on_log), daemon=True)
    sock = None
    timed_out = False
    with sigterm_as_interrupt():
        try:
            try:
                client.api.create_container(
                    image,
                    command=["/bin/sh", "-c", WRAPPER, "ascenv-build", *argv],
                    name=name,
                    user=f"{os.getuid()}:{os.getgid()}",
                    environment=environment,
                    working_dir=workdir,
                    labels=all_labels,
                    stdin_open=True,
                    detach=False,  # with stdin_open this sets StdinOnce (docker.types.ContainerConfig)
                    host_config=host_config,
                )
            except docker.errors.ImageNotFound:
                raise ImageNotAvailable(f"image {image} is not present in the engine at {engine.host}", hint="build or load it first: ascenv image build NAME") from None
            sock = client.api.attach_socket(name, params={"stdin": 1, "stream": 1})
            client.api.start(name)
            follower.start()
            try:
                client.api.wait(name, timeout=timeout, condition="removed")
            except docker.errors.NotFound:
                pass  # already exited and removed
            except (requests.exceptions.ReadTimeout, requests.exceptions.ConnectionError):
                timed_out = True
        finally:
            done.set()
            if sock is not None:
                _close(sock)
            with contextlib.suppress(docker.errors.NotFound, docker.errors.APIError):
                client.api.remove_container(name, force=True)
            if follower.is_alive():
                follower.join(timeout=10)
    status = _read(meta / "status").strip()
    code = int(status) if status.isdigit() and not timed_out else None
    return StepResult(code, timed_out, "".join(chunks), time.monotonic() - start, name, _read(meta / "toolchain.txt"))


def _close(sock) -> None:  # type: ignore[no-untyped-def]
    """Close the attach socket for real: the SDK hands out a SocketIO over the HTTP response's
    socket, and the file descriptor goes only when every wrapper is closed."""
    for closer in (getattr(getattr(sock, "_response", None), "close", None), getattr(getattr(sock, "_sock", None), "close", None), sock.close):
        if closer is not None:
            with contextlib.suppress(Exception):
                closer()


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def _follow(path: Path, done: threading.Event, chunks: list, on_log: Optional[Callable[[str], None]]) -> None:
    """``tail -f`` of the log file until ``done``, then the rest."""
    import codecs

    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    fh = None
    try:
        while True:
            finished = done.is_set()
            if fh is None and path.exists():
                fh = open(path, "rb")
            data = fh.read() if fh is not None else b""
            if data:
                text = decoder.decode(data)
                chunks.append(text)
                if on_log is not None:
                    on_log(text)
            if finished and not data:
                break
            if not data:
                time.sleep(0.05)
    finally:
        if fh is not None:
            fh.close()
