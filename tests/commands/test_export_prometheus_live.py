"""A real Prometheus scrapes what `ascenv export prometheus` writes: node-exporter (Debian's
prometheus-node-exporter) serves the textfile directory, Prometheus (Debian's prometheus) scrapes
it every second on loopback ports, and the test asks Prometheus's HTTP API
(https://prometheus.io/docs/prometheus/latest/querying/api/). Both servers are stopped by the
fixture. Under CI=true a missing server is a failure (.ci/run installs both)."""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Callable

import pytest

from tests.commands.test_export_cmd import ascenv as on_host
from tests.commands.test_export_cmd import drift_driver
from tests.commands.test_lock_fixtures import host_with_site
from tests.engine_fixtures import unavailable

pytestmark = pytest.mark.slow

# Generous on a loaded 2-core machine: Prometheus starts in about a second, then scrapes every 1 s.
DEADLINE = 90.0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def program(name: str) -> str:
    found = shutil.which(name)
    if found is None:
        unavailable(f"{name} is not installed (Debian: prometheus, prometheus-node-exporter)")
    return str(found)


def start(argv: list[str], log: Path) -> subprocess.Popen:
    with open(log, "wb") as sink:
        return subprocess.Popen(argv, stdout=sink, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)


def stop(process: subprocess.Popen) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=30)


class Prometheus:
    def __init__(self, url: str, logs: list[Path], processes: list[subprocess.Popen]) -> None:
        self.url, self.logs, self.processes = url, logs, processes

    def query(self, promql: str) -> list[dict]:
        address = f"{self.url}/api/v1/query?" + urllib.parse.urlencode({"query": promql})
        with urllib.request.urlopen(address, timeout=10) as answer:  # noqa: S310 - a loopback URL of this test
            body = json.load(answer)
        assert body["status"] == "success", body
        return list(body["data"]["result"])

    def wait_for(self, promql: str, accept: Callable[[list[dict]], bool]) -> list[dict]:
        """The result of ``promql`` once ``accept`` takes it, polled until DEADLINE."""
        end, last, error = time.monotonic() + DEADLINE, None, None
        while time.monotonic() < end:
            for process in self.processes:
                assert process.poll() is None, self.tail()
            try:
                last = self.query(promql)
                if accept(last):
                    return last
            except OSError as exc:  # not listening yet
                error = exc
            time.sleep(0.5)
        raise AssertionError(f"{promql}: last result {last}, error {error}\n{self.tail()}")

    def tail(self) -> str:
        return "\n".join(f"--- {log.name}\n" + log.read_text(errors="replace")[-2000:] for log in self.logs)


@pytest.fixture
def textfile_dir(tmp_path: Path) -> Path:
    directory = tmp_path / "textfile"
    directory.mkdir()
    return directory


@pytest.fixture
def prometheus(tmp_path: Path, textfile_dir: Path) -> Iterator[Prometheus]:
    exporter_bin, prometheus_bin = program("prometheus-node-exporter"), program("prometheus")
    exporter_port, prometheus_port = free_port(), free_port()
    config = tmp_path / "prometheus.yml"
    config.write_text(
        "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
        "scrape_configs:\n  - job_name: node\n    static_configs:\n"
        f"      - targets: ['127.0.0.1:{exporter_port}']\n"
    )
    logs = [tmp_path / "node-exporter.log", tmp_path / "prometheus.log"]
    processes: list[subprocess.Popen] = []
    try:
        processes.append(
            start(
                [
                    exporter_bin,
                    "--collector.disable-defaults",  # only what ascenv writes
                    "--collector.textfile",
                    f"--collector.textfile.directory={textfile_dir}",
                    f"--web.listen-address=127.0.0.1:{exporter_port}",
                ],
                logs[0],
            )
        )
        processes.append(
            start(
                [
                    prometheus_bin,
                    f"--config.file={config}",
                    f"--storage.tsdb.path={tmp_path / 'tsdb'}",
                    f"--web.listen-address=127.0.0.1:{prometheus_port}",
                ],
                logs[1],
            )
        )
        yield Prometheus(f"http://127.0.0.1:{prometheus_port}", logs, processes)
    finally:
        for process in processes:
            stop(process)


def test_prometheus_sees_the_stack_and_the_drift(prometheus, tmp_path, textfile_dir):
    host = host_with_site("a2-cann800", tmp_path, torch_npu="2.7.1")

    def ascenv(*argv: str) -> None:
        code, _, err = on_host(host, tmp_path, *argv)
        assert code == 0, err

    ascenv("lock", "-o", "cluster.lock")
    target = str(textfile_dir / "ascenv.prom")
    ascenv("export", "prometheus", "-o", target, "--lock", "cluster.lock")

    (series,) = prometheus.wait_for("ascenv_stack_info", bool)
    labels = series["metric"]
    assert {k: labels.get(k) for k in ("driver", "firmware", "cann", "torch_npu", "soc")} == {
        "driver": "25.0.rc1.1",
        "firmware": "7.7.0.1.231",
        "cann": "8.0.0",
        "torch_npu": "2.7.1",
        "soc": "ascend910b",
    }
    assert "nnal" not in labels  # an empty label is no label
    assert series["value"][1] == "1"
    (in_sync,) = prometheus.wait_for("ascenv_lock_in_sync", bool)
    assert in_sync["metric"]["lock"] == "cluster.lock" and in_sync["value"][1] == "1"
    assert prometheus.query("ascenv_lock_in_sync == 0") == []  # the README's drift query: none yet

    drift_driver(host)
    ascenv("export", "prometheus", "-o", target, "--lock", "cluster.lock")
    (drifted,) = prometheus.wait_for("ascenv_lock_in_sync == 0", bool)
    assert drifted["metric"]["lock"] == "cluster.lock"
    (by_driver,) = prometheus.wait_for('count by (driver) (ascenv_stack_info{driver="25.2.0"})', bool)
    assert by_driver["value"][1] == "1"

    # promtool, the check Prometheus ships, passes on the very file the collector read
    with open(target, "rb") as written:
        done = subprocess.run([program("promtool"), "check", "metrics"], stdin=written, capture_output=True, timeout=60)
    assert done.returncode == 0, (done.stdout, done.stderr)
