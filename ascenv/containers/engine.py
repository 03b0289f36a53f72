"""The container engine behind one small interface, through the docker SDK (imported lazily, so
the rest of ascenv works where it is missing).

``connect(environ)`` is the preflight: it tells apart the four ways an engine can be unusable —
SDK missing, daemon unreachable, socket permission denied, engine too old — each its own
``EngineError`` (and exit code). ``Engine.run`` is how ascenv runs every container: no network,
read-only sources, the caller's uid:gid, a timeout, ``ascenv.*`` labels, and the container dies
with ascenv and is removed on every exit path, ascenv's own SIGKILL included:

- ``Container.__exit__`` removes it by name on return, exception, Ctrl-C and SIGTERM
  (``ascenv.signals.termination_as_interrupt``);
- ``AutoRemove``: the engine deletes it as soon as its main process exits;
- a stdin tie (the ``docker run -i --rm`` idiom): its stdin is attached to ascenv with
  ``StdinOnce``; when ascenv dies the kernel closes the socket, the engine closes the container's
  stdin, and a watchdog in the container's shell sees end-of-file and kills the command. PID 1
  exits, the engine removes the container.

The command writes its log and exit status into a bind-mounted directory (``META``), so neither
is lost when the container is removed the instant it exits; the log is streamed to the caller by
following that file.
"""

from __future__ import annotations

import contextlib
import errno
import gc
import os
import shutil
import tempfile
import threading
import time
import uuid
import warnings
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Optional

from ascenv.containers import LABEL_PREFIX, MANAGED_LABEL
from ascenv.errors import (
    EngineError,
    EnginePermissionDenied,
    EngineSdkMissing,
    EngineTooOld,
    EngineUnreachable,
    ImageNotAvailable,
)
from ascenv.signals import termination_as_interrupt

# API 1.41 = Docker 20.10, the oldest engine cibuildwheel accepts too
# (pypa/cibuildwheel@8832cf6b cibuildwheel/oci_container.py::_check_engine_version).
MIN_API = "1.41"
DEFAULT_HOST = "unix:///var/run/docker.sock"
CONTAINER_LABEL = "ascenv.container"  # the container's own name, on every container ascenv runs
DEFAULT_TIMEOUT = 3600.0
META = "/ascenv/meta"  # inside the container: log, status

# $1.. is the command. fd 3 keeps the real stdin: background jobs of a non-interactive shell
# get /dev/null as stdin (POSIX 2.9.3, "Asynchronous Lists"), so the watchdog reads fd 3.
WRAPPER = f"""umask 022
exec 3<&0
"$@" > {META}/log 2>&1 &
child=$!
( while read -r _ <&3; do :; done; kill -KILL "$child" 2>/dev/null ) 3<&3 &
wait "$child"
code=$?
echo "$code" > {META}/status
exit "$code"
"""


@dataclass(frozen=True)
class Mount:
    source: str  # host path
    target: str  # path inside the container
    read_only: bool = True


@dataclass(frozen=True)
class RunResult:
    exit_code: Optional[int]  # None when the container was killed at the timeout
    timed_out: bool
    logs: str  # stdout and stderr, interleaved as the container wrote them
    duration: float
    container: str  # its name (already removed)

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and not self.timed_out


@dataclass(frozen=True)
class ImageInfo:
    id: str
    tags: tuple[str, ...] = ()
    repo_digests: tuple[str, ...] = ()
    labels: dict[str, str] = field(default_factory=dict)
    size: int = 0
    tagged_at: str = ""  # when the engine last tagged it (on load or pull): RFC 3339, sortable


@dataclass(frozen=True)
class ContainerInfo:
    name: str
    state: str  # created, running, paused, restarting, removing, exited, dead
    image: str  # the image ID it was created from
    created: float  # seconds since 1970
    size: int = 0  # bytes it wrote (SizeRw)
    labels: dict[str, str] = field(default_factory=dict)


def _api_tuple(version: str) -> tuple[int, ...]:
    try:
        return tuple(int(p) for p in version.split("."))
    except ValueError:
        return (0,)


def check_api_version(found: str, server_version: str, host: str) -> None:
    if _api_tuple(found) < _api_tuple(MIN_API):
        raise EngineTooOld(
            f"the Docker engine at {host} is version {server_version} (API {found}); "
            f"ascenv needs API {MIN_API} (Docker 20.10) or newer",
            hint="upgrade the engine (Debian/Ubuntu: apt-get install docker.io), then retry",
        )


def _causes(exc: BaseException) -> Iterator[BaseException]:
    """The exception and everything it wraps (``__cause__``, ``__context__``, urllib3 ``reason``,
    exceptions inside ``args``): the SDK buries the OSError that says what happened."""
    seen: set[int] = set()
    todo = [exc]
    while todo:
        current = todo.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        yield current
        nested = [
            current.__cause__,
            current.__context__,
            getattr(current, "reason", None),
            *getattr(current, "args", ()),
        ]
        todo.extend(n for n in nested if isinstance(n, BaseException))


def classify_connection_error(exc: BaseException, host: str) -> EngineError:
    """What the preflight raises for an exception met while talking to the engine."""
    oserrors = [e for e in _causes(exc) if isinstance(e, OSError) and e.errno is not None]
    if any(e.errno in (errno.EACCES, errno.EPERM) for e in oserrors):
        return EnginePermissionDenied(
            f"permission denied on the Docker engine socket {host}",
            hint="add your user to the 'docker' group and log in again, "
            "or point DOCKER_HOST at an engine you may use (rootless docker)",
        )
    reason = oserrors[0].strerror if oserrors else str(exc).splitlines()[0][:200]
    return EngineUnreachable(
        f"no Docker engine answers at {host} ({reason})",
        hint="start the engine (systemctl start docker, or dockerd &), or set DOCKER_HOST to one that runs",
    )


def connect(environ: Mapping[str, str], *, timeout: float = 120) -> Engine:
    """The preflight: an ``Engine`` that answers with a recent enough API, or an ``EngineError``."""
    try:
        import docker
    except ImportError as exc:
        raise EngineSdkMissing(
            f"the docker Python SDK is not installed ({exc})",
            hint="install it beside ascenv: pip install 'docker>=7'",
        ) from None
    host = environ.get("DOCKER_HOST") or DEFAULT_HOST
    client = None
    failure: Optional[EngineError] = None
    # docker/transport/unixconn.py (docker 7.1) does not close its socket when connect() fails;
    # collect it here, quietly, rather than leave a ResourceWarning to whoever runs next.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ResourceWarning)
        try:
            # A fixed API version: no request is made until version() below, which needs no prefix.
            client = docker.from_env(version=MIN_API, environment=dict(environ), timeout=int(timeout))
            info = client.api.version(api_version=False)
            check_api_version(str(info.get("ApiVersion", "0")), str(info.get("Version", "?")), host)
        except EngineTooOld as exc:
            failure = exc
        except Exception as exc:  # noqa: BLE001 - DockerException and requests' errors, classified
            failure = classify_connection_error(exc, host)
        if failure is not None:
            if client is not None:
                client.close()
            gc.collect()
    if failure is not None:
        raise failure
    return Engine(client, host=host, server_version=str(info.get("Version", "?")), arch=str(info.get("Arch", "?")))


def _image_info(image: Any) -> ImageInfo:
    attrs = image.attrs
    return ImageInfo(
        id=image.id,
        tags=tuple(image.tags),
        repo_digests=tuple(attrs.get("RepoDigests") or ()),
        labels=dict((attrs.get("Config") or {}).get("Labels") or {}),
        size=int(attrs.get("Size") or 0),
        tagged_at=str((attrs.get("Metadata") or {}).get("LastTagTime") or ""),
    )


class Engine:
    """The one interface to the engine; tests of pure code use a fake with the same methods."""

    def __init__(self, client: Any, *, host: str, server_version: str, arch: str) -> None:
        self.client = client
        self.host = host
        self.server_version = server_version
        self.arch = arch  # GOARCH names: amd64, arm64

    # images ----------------------------------------------------------------------------------
    def image(self, ref: str) -> Optional[ImageInfo]:
        """The image called ``ref`` (ID, name:tag or name@digest), or None when absent."""
        import docker.errors

        try:
            return _image_info(self.client.images.get(ref))
        except docker.errors.ImageNotFound:
            return None

    def images(self, labels: Mapping[str, str]) -> list[ImageInfo]:
        filters = {"label": [f"{k}={v}" for k, v in labels.items()]}
        return sorted((_image_info(i) for i in self.client.images.list(filters=filters)), key=lambda i: i.id)

    def load(self, archive: Path) -> list[str]:
        """``docker load`` an archive; returns the IDs or names the engine reports."""
        with open(archive, "rb") as fh:
            loaded = self.client.images.load(fh)
        for image in loaded:  # re-tag: the engine then records when (``tagged_at``), load does not
            for tag in image.tags:
                image.tag(*tag.rsplit(":", 1))
        return [image.id for image in loaded]

    def pull(self, ref: str) -> ImageInfo:
        """Pull ``repository:tag`` or ``repository@sha256:…``; ImageNotAvailable when it cannot."""
        import docker.errors

        repository, sep, reference = ref.rpartition("@") if "@" in ref else ref.rpartition(":")
        try:
            image = self.client.images.pull(repository, tag=reference)
        except docker.errors.APIError as exc:
            raise ImageNotAvailable(
                f"cannot pull {ref}: {exc.explanation or exc}",
                hint=f"on a machine that reaches the registry: docker pull {ref} && docker save {ref} -o image.tar; "
                "copy image.tar here and run docker load -i image.tar",
            ) from None
        return _image_info(image)

    def remove_image(self, ref: str) -> None:
        import docker.errors

        with contextlib.suppress(docker.errors.NotFound):
            self.client.images.remove(ref, force=True)

    def images_labelled(self, prefix: str) -> list[ImageInfo]:
        """Images carrying at least one label whose key starts with ``prefix`` (the engine
        filters by exact keys only)."""
        return [i for i in self.images({}) if any(k.startswith(prefix) for k in i.labels)]

    # containers ------------------------------------------------------------------------------
    def containers(self, labels: Mapping[str, str]) -> list[str]:
        """Names of all containers (running or not) carrying these labels. The SDK inspects each
        container after listing it; one the engine listed but does not find on inspection (seen
        for one just created, and so for one removed in between) is left out, not an error."""
        filters = {"label": [f"{k}={v}" for k, v in labels.items()]}
        return sorted(c.name for c in self.client.containers.list(all=True, filters=filters, ignore_removed=True))

    def container_infos(self, labels: Mapping[str, str]) -> list[ContainerInfo]:
        """All containers (running or not) carrying these labels (``{key: ""}``: the key, any value)."""
        filters = {"label": [f"{k}={v}" if v else k for k, v in labels.items()]}
        found = self.client.api.containers(all=True, filters=filters, size=True)
        return sorted(
            (
                ContainerInfo(
                    str(c["Names"][0]).lstrip("/"),
                    str(c.get("State", "")),
                    str(c.get("ImageID", "")),
                    float(c.get("Created") or 0),
                    int(c.get("SizeRw") or 0),
                    dict(c.get("Labels") or {}),
                )
                for c in found
            ),
            key=lambda c: c.name,
        )

    def image_users(self, image_id: str) -> list[str]:
        """Names of the containers (running or not) created from this image."""
        return sorted(c.name for c in self.client.containers.list(all=True, filters={"ancestor": image_id}))

    def remove_container(self, name: str) -> None:
        """Remove a container that is not running (the engine refuses a running one)."""
        import docker.errors

        with contextlib.suppress(docker.errors.NotFound):
            self.client.api.remove_container(name)

    def run(
        self,
        image: str,
        command: Sequence[str],
        *,
        mounts: Sequence[Mount] = (),
        workdir: str = "/",
        env: Optional[Mapping[str, str]] = None,
        user: Optional[str] = None,
        network_disabled: bool = True,
        timeout: float = DEFAULT_TIMEOUT,
        labels: Optional[Mapping[str, str]] = None,
        on_log: Optional[Callable[[str], None]] = None,
        meta: Optional[Path] = None,
    ) -> RunResult:
        """Run ``command`` in a new ``Container`` of ``image`` and wait for it at most ``timeout``
        seconds (then it is killed and the result says ``timed_out``). The arguments are
        ``Container``'s; SIGTERM unwinds like Ctrl-C meanwhile, so the container is removed."""
        start = time.monotonic()
        container = Container(
            self,
            image,
            command,
            mounts=mounts,
            workdir=workdir,
            env=env,
            user=user,
            network_disabled=network_disabled,
            labels=labels,
            on_log=on_log,
            meta=meta,
        )
        with termination_as_interrupt(), container:
            code = container.wait(timeout)
        return RunResult(code, container.timed_out, container.logs, time.monotonic() - start, container.name)


class Container:
    """One container ascenv runs, as a context manager in the manner of cibuildwheel's
    ``OCIContainer`` (https://github.com/pypa/cibuildwheel/blob/main/cibuildwheel/oci_container.py):
    ``__enter__`` creates and starts it, ``__exit__`` always removes it (by name, so one created
    just before an interrupt goes too) and returns only once the engine has forgotten it.

    It runs ``command`` under ``WRAPPER`` with no network, the caller's ``uid:gid`` (``user``
    overrides), ``labels`` (keys must start with ``ascenv.``; ``ascenv.managed`` and
    ``ascenv.container`` are added), ``AutoRemove`` and its stdin tied to ascenv. Its output goes
    to a log file in ``meta`` (an empty host directory mounted at ``META``; by default a temporary
    one, removed on exit), which is followed: ``on_log`` gets each piece as it arrives and ``logs``
    holds it all once the block is left. ``wait`` returns the exit code."""

    def __init__(
        self,
        engine: Engine,
        image: str,
        command: Sequence[str],
        *,
        mounts: Sequence[Mount] = (),
        workdir: str = "/",
        env: Optional[Mapping[str, str]] = None,
        user: Optional[str] = None,
        network_disabled: bool = True,
        labels: Optional[Mapping[str, str]] = None,
        on_log: Optional[Callable[[str], None]] = None,
        meta: Optional[Path] = None,
    ) -> None:
        bad = [k for k in (labels or {}) if not k.startswith(LABEL_PREFIX)]
        if bad:
            raise ValueError(f"container labels must start with {LABEL_PREFIX!r}: {bad}")
        self.engine = engine
        self.image = image
        self.command = list(command)
        self.mounts = list(mounts)
        self.workdir = workdir
        self.env = dict(env or {})
        self.user = user
        self.network_disabled = network_disabled
        self.name = f"ascenv-{uuid.uuid4().hex[:16]}"
        self.labels = {**(labels or {}), MANAGED_LABEL: "true", CONTAINER_LABEL: self.name}
        self.on_log = on_log
        self.meta = meta
        self.timed_out = False
        self._chunks: list[str] = []
        self._done = threading.Event()
        self._follower: Optional[threading.Thread] = None
        self._sock: Any = None
        self._cleanup = contextlib.ExitStack()
        self._started = 0.0
        self._lost = False  # the engine stopped answering: nothing can be removed

    @property
    def logs(self) -> str:
        """stdout and stderr, interleaved as the container wrote them (all of it after the block)."""
        return "".join(self._chunks)

    def __enter__(self) -> Container:
        self._started = time.monotonic()
        try:
            self._create_and_start()
        except BaseException:
            self._remove()
            raise
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._remove()

    def _create_and_start(self) -> None:
        import docker.errors
        import docker.types

        api = self.engine.client.api
        if self.meta is None:
            self.meta = Path(tempfile.mkdtemp(prefix="ascenv-run-"))
            self._cleanup.callback(shutil.rmtree, self.meta, ignore_errors=True)
        if self.user is not None:
            os.chmod(self.meta, 0o777)  # another uid writes the log and status
        binds = [docker.types.Mount(m.target, m.source, type="bind", read_only=m.read_only) for m in self.mounts]
        binds.append(docker.types.Mount(META, str(self.meta), type="bind", read_only=False))
        host_config = api.create_host_config(
            auto_remove=True, network_mode="none" if self.network_disabled else None, mounts=binds
        )
        try:
            api.create_container(
                self.image,
                command=["/bin/sh", "-c", WRAPPER, "ascenv-run", *self.command],
                name=self.name,
                user=self.user or f"{os.getuid()}:{os.getgid()}",
                environment=self.env,
                working_dir=self.workdir,
                labels=self.labels,
                stdin_open=True,
                detach=False,  # with stdin_open this sets StdinOnce (docker.types.ContainerConfig)
                host_config=host_config,
            )
        except docker.errors.ImageNotFound:
            raise ImageNotAvailable(
                f"image {self.image} is not present in the engine at {self.engine.host}",
                hint="build or load it first: ascenv image build NAME",
            ) from None
        # The stdin tie: attached before the start, so the command never runs untied.
        self._sock = api.attach_socket(self.name, params={"stdin": 1, "stream": 1})
        api.start(self.name)
        self._follower = threading.Thread(
            target=_follow, args=(self.meta / "log", self._done, self._chunks, self.on_log), daemon=True
        )
        self._follower.start()

    def wait(self, timeout: float) -> Optional[int]:
        """The command's exit code once it is over; None when it was still running at ``timeout``
        (``timed_out`` is then set; leaving the block kills it). EngineUnreachable when the engine
        stopped answering meanwhile."""
        import docker.errors
        import requests.exceptions

        api = self.engine.client.api
        try:
            # The engine's own exit status survives a kill from outside (137), which the status
            # file does not; the file is for a run over before this call got there.
            return int(api.wait(self.name, timeout=timeout, condition="removed")["StatusCode"])
        except docker.errors.NotFound:  # over, and already removed: its status file says how
            assert self.meta is not None
            status = _read(self.meta / "status").strip()
            return int(status) if status.isdigit() else None
        except requests.exceptions.ReadTimeout:
            self.timed_out = True
            return None
        except requests.exceptions.ConnectionError as exc:
            # docker-py raises wait()'s read timeout as ConnectionError(ReadTimeoutError)
            # (https://github.com/docker/docker-py/issues/1966), as it does for a daemon that died
            # mid-run: only an engine that still answers means the timeout.
            if _answers(api):
                self.timed_out = True
                return None
            self._lost = True
            raise EngineUnreachable(
                f"the Docker engine at {self.engine.host} stopped answering {time.monotonic() - self._started:.0f} s "
                f"into the run (container {self.name} of {self.image}): {str(exc).splitlines()[0][:200]}",
                hint="see why it stopped (journalctl -u docker); once it runs again, "
                f"remove what is left: docker rm -f {self.name}",
            ) from None

    def _remove(self) -> None:
        """Stop following, close the stdin tie, remove the container, drop a temporary ``meta``."""
        import docker.errors

        with self._cleanup:
            self._done.set()
            if self._sock is not None:
                _close(self._sock)
                self._sock = None
            if not self._lost:  # a gone engine can remove nothing: each request would fail
                api = self.engine.client.api
                with contextlib.suppress(docker.errors.NotFound, docker.errors.APIError):
                    api.remove_container(self.name, force=True)
                _wait_gone(api, self.name)
            if self._follower is not None and self._follower.is_alive():
                self._follower.join(timeout=10)


def _answers(api: Any) -> bool:
    """Whether the engine answers a ping (a dead socket fails at once; a hung engine within the
    client's timeout)."""
    try:
        return bool(api.ping())
    except Exception:  # noqa: BLE001 - whatever the failure, the engine did not answer
        return False


def _wait_gone(api: Any, name: str, limit: float = 30.0) -> None:
    """Return only once the engine has forgotten the container. A run over before ``wait`` got
    there leaves AutoRemove's removal in progress (remove_container answers 409 meanwhile), and
    "no container left behind" must hold when ``run`` returns, not a moment later."""
    import docker

    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        try:
            api.inspect_container(name)
        except docker.errors.NotFound:
            return
        except docker.errors.APIError:
            pass
        time.sleep(0.05)


def _close(sock: Any) -> None:
    """Close the attach socket for real: the SDK hands out a SocketIO over the HTTP response's
    socket, and the file descriptor goes only when every wrapper is closed."""
    for closer in (
        getattr(getattr(sock, "_response", None), "close", None),
        getattr(getattr(sock, "_sock", None), "close", None),
        sock.close,
    ):
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
