"""Guards so that no test can touch the real home, caches or Ascend install by accident."""

from __future__ import annotations

import json
import os
import signal
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, Optional

import pytest
from hypothesis import HealthCheck, settings

from ascenv.probe import fs

# Property tests assert what never happens (a raise, a crash), not how fast: on a loaded 2-core CI
# machine example generation can be slow, which must not fail them.
settings.register_profile("ascenv", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("ascenv")

CORPUS = Path(__file__).parent / "data" / "corpus"  # copies of ../shared/corpus (public captures)
SHARED = Path(__file__).resolve().parents[2] / "shared"  # reference-only material, may be absent

# The signal tests send SIGHUP and SIGINT to ascenv and its children and expect what a terminal's
# user gets. A run started under `nohup`, or as a `&` job of a non-interactive shell, ignores them,
# and an ignored disposition is inherited by every child (ascenv rightly keeps it: that is nohup's
# meaning), so those tests would wait on an installer that never hears the signal. A handled
# disposition is reset to the default by exec, so the children start as from a terminal.
signal.signal(signal.SIGHUP, signal.SIG_DFL)
signal.signal(signal.SIGINT, signal.default_int_handler)

pytest_plugins = ["tests.engine_fixtures"]  # engine, builder_image, built: one set for the suite


@pytest.fixture(autouse=True)
def _json_follows_its_schema(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Every JSON document a command prints in-process (``Output.json``) is validated against its
    published schema, ascenv/schemas/<kind>.json; a document without a kind, or one its schema
    refuses, fails the test that printed it (at teardown: the CLI would turn an exception raised
    inside it into exit 3). Commands run in a subprocess are validated where their tests read them
    (tests.json_schemas.assert_valid). A test of Output.json itself, with a document of no command,
    is marked ``any_json``."""
    from ascenv.output import JSON_SCHEMA, Output
    from ascenv.serde import to_data
    from tests.json_schemas import problems

    wrong: list[str] = []
    original = Output.json

    def validating(self: Output, payload: Mapping[str, Any], *, kind: Optional[str] = None) -> None:
        # the document as written: through to_data and JSON, as Output.json encodes it
        document = json.loads(json.dumps(to_data({"schema": JSON_SCHEMA, **payload}), allow_nan=False))
        if request.node.get_closest_marker("any_json") is None:
            wrong.extend(problems(kind, document) if kind else ["a JSON document without a kind (its schema's name)"])
        original(self, payload, kind=kind)

    monkeypatch.setattr(Output, "json", validating)
    yield wrong  # tests/test_schemas.py reads it to show the check fails
    assert not wrong, "JSON output that does not follow its schema:\n" + "\n".join(wrong[:10])


class YouForgotToChooseARoot(AssertionError):
    """A test built a Root over the live file system without the live_host marker."""


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "live_host: the test may read the real machine under /")
    config.addinivalue_line("markers", "any_json: prints JSON of no command (Output.json's own tests): not validated")


@pytest.fixture(autouse=True)
def _isolate(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory
) -> None:
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / ".cache"))
    for name in list(os.environ):
        if name.startswith(("ASCEND_", "ACL_", "ASCENV_")) or name in ("TOOLCHAIN_HOME", "LD_LIBRARY_PATH"):
            monkeypatch.delenv(name, raising=False)
    if request.node.get_closest_marker("live_host") is None:
        original = fs.Root.__init__

        def guarded(self: fs.Root, directory: str | os.PathLike[str] = "/") -> None:
            if os.path.abspath(directory) == "/":
                raise YouForgotToChooseARoot("pass a fixture root, or mark the test live_host")
            original(self, directory)

        monkeypatch.setattr(fs.Root, "__init__", guarded)


def load_capture(path: Path) -> str:
    """A corpus file without its leading metadata lines, byte for byte otherwise
    (corpus/README.md: drop leading '# source:', '# note:', '# what:' lines only)."""
    text = path.read_bytes().decode("utf-8")
    lines = text.splitlines(keepends=True)
    skip = 0
    while skip < len(lines) and lines[skip].startswith(("# source:", "# note:", "# what:")):
        skip += 1
    return "".join(lines[skip:])
