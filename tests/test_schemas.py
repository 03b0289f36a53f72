"""ascenv/schemas/: every --format json document has a published JSON Schema, the shipped files are
what ascenv.schemas.generate writes, each is a valid draft 2020-12 schema, and each accepts a real
document of its kind and refuses a spoilt one. (Every JSON document the test suite prints is
validated against its schema by tests/conftest.py.)"""

from __future__ import annotations

import ast
import copy
import json
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from ascenv import errors, schemas
from ascenv.output import Output
from ascenv.schemas import generate
from tests.json_schemas import assert_valid, problems

PACKAGE = Path(schemas.__file__).resolve().parents[1]


def json_calls() -> list[tuple[str, int, object]]:
    """(file, line, kind) of each ``out.json(...)`` in the renderers."""
    found = []
    for path in sorted((PACKAGE / "output").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "json":
                if isinstance(node.func.value, ast.Name) and node.func.value.id == "out":
                    kinds = [ast.literal_eval(k.value) for k in node.keywords if k.arg == "kind"]
                    found.append((path.name, node.lineno, kinds[0] if kinds else None))
    return found


def test_every_json_output_names_a_shipped_schema():
    calls = json_calls()
    assert len(calls) >= 30
    unnamed = [(f, line) for f, line, kind in calls if kind is None]
    assert not unnamed, f"out.json(...) without kind=: {unnamed}"
    assert {kind for _, _, kind in calls} | set(generate.FILES) == set(schemas.names())


def test_shipped_schemas_are_generated():
    from ascenv.output import JSON_SCHEMA

    assert generate.JSON_SCHEMA == JSON_SCHEMA
    for kind in generate.DOCUMENTS:
        shipped = (generate.HERE / f"{kind}.json").read_text()
        assert shipped == generate.rendered(kind), f"{kind}.json is stale: run python -m ascenv.schemas.generate"
    assert sorted(generate.DOCUMENTS) == schemas.names()


@pytest.mark.parametrize("kind", schemas.names())
def test_schema_is_valid_against_the_metaschema(kind):
    schema = schemas.load(kind)
    Draft202012Validator.check_schema(schema)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["type"] == "object" and schema["additionalProperties"] is False
    assert schema["required"][0] == "schema" and schema["properties"]["schema"] == {"const": 1}
    assert schema["$id"] == f"urn:ascenv:schema:{kind}"


def test_every_object_in_every_schema_is_closed():
    """A schema so loose it accepts anything cannot fail: each object lists its keys or types its
    values (free-keyed tables: package versions, counts per unit)."""

    def walk(node, where):
        if isinstance(node, dict):
            if node.get("type") == "object":
                assert "additionalProperties" in node, where
                if node["additionalProperties"] is False:
                    assert set(node["required"]) <= set(node["properties"]), where
            for key, value in node.items():
                walk(value, f"{where}.{key}")
        elif isinstance(node, list):
            for i, value in enumerate(node):
                walk(value, f"{where}[{i}]")

    for kind in schemas.names():
        walk(schemas.load(kind), kind)


def test_load_refuses_an_unknown_name():
    for name in ("nope", "../pyproject", "doctor.json"):
        with pytest.raises(errors.UsageError):
            schemas.load(name)


def test_schemas_ship_in_the_package_directory():
    assert schemas.DIRECTORY == PACKAGE / "schemas"
    assert (schemas.DIRECTORY / "doctor.json").is_file()


# --- real documents, and spoilt ones -------------------------------------------------------------


def printed(tmp_path: Path, argv: list[str], environ: dict) -> tuple[str, dict]:
    """``ascenv argv`` in-process: the kind it printed its JSON with, and the document."""
    import io

    from ascenv import cli
    from ascenv.commands._common import Context

    kinds: list[str] = []
    out = io.StringIO()
    output = Output("human", stdout=out, stderr=io.StringIO(), interactive=False, color=False)
    original = output.json

    def remember(payload, *, kind=None):
        kinds.append(kind)
        original(payload, kind=kind)

    output.json = remember  # type: ignore[method-assign]
    code = cli.main(argv, ctx=Context(environ=environ, out=output, cwd=str(tmp_path)))
    assert kinds, (code, output.stderr.getvalue() if hasattr(output.stderr, "getvalue") else "")
    (kind,) = kinds
    return kind, json.loads(out.getvalue())


@pytest.fixture(scope="module")
def fixture_host(tmp_path_factory):
    from tests.fixture_hosts import build_host

    return build_host("a2-cann800", tmp_path_factory.mktemp("schema-host"))


def host_argv(host, *argv):
    import sys

    return [*argv, "--root", str(host.root), "--python", sys.executable, "--format", "json"]


@pytest.mark.parametrize(
    ("argv", "kind", "spoil"),
    [
        (["doctor"], "doctor", lambda d: d["findings"][0].update(severity="fatal")),
        (["doctor"], "doctor", lambda d: d["summary"].pop("warn")),
        (["snapshot"], "snapshot", lambda d: d["npu"]["chips"][0].update(npu="0")),
        (["snapshot"], "snapshot", lambda d: d.update(unknown_key=1)),
        (["lock", "-o", "x.lock"], "lock", lambda d: d["lock"]["npu"].update(driver=None)),  # TOML has no null
        (["lock", "-o", "x.lock"], "lock", lambda d: d["lock"]["platform"].update(compute_unit=["a"])),
    ],
    ids=["doctor-severity", "doctor-summary", "snapshot-type", "snapshot-extra", "lock-null", "lock-type"],
)
def test_a_real_document_passes_and_a_spoilt_one_fails(fixture_host, tmp_path, argv, kind, spoil):
    printed_kind, document = printed(tmp_path, host_argv(fixture_host, *argv), dict(fixture_host.environ))
    assert printed_kind == kind
    assert_valid(kind, document)
    spoilt = copy.deepcopy(document)
    spoil(spoilt)
    assert problems(kind, spoilt)


def test_lock_check_and_diff_documents(fixture_host, tmp_path):
    environ = dict(fixture_host.environ)
    printed(tmp_path, host_argv(fixture_host, "lock", "-o", "a.lock"), environ)
    kind, document = printed(tmp_path, host_argv(fixture_host, "lock", "--check", "a.lock"), environ)
    assert kind == "lock-check" and document["in_sync"] is True
    assert_valid(kind, document)
    assert problems(kind, {**document, "in_sync": "yes"})
    kind, document = printed(tmp_path, ["diff", "a.lock", "a.lock", "--format", "json"], environ)
    assert kind == "diff" and document["identical"] is True
    assert_valid(kind, document)
    assert problems(kind, {**document, "inputs": ["a.lock"]})  # a pair is two


def test_report_bundle_members(fixture_host, tmp_path):
    """The report archive: its MANIFEST.json and snapshot.json follow their schemas, and the
    command's summary too."""
    import tarfile

    environ = dict(fixture_host.environ)
    kind, document = printed(tmp_path, host_argv(fixture_host, "report", "-o", "r.tar.gz"), environ)
    assert kind == "report"
    assert_valid(kind, document)
    with tarfile.open(tmp_path / "r.tar.gz") as archive:
        members = {m.name.rsplit("/", 1)[-1]: m for m in archive.getmembers() if m.isfile()}
        read = {name: json.load(archive.extractfile(members[name])) for name in ("MANIFEST.json", "snapshot.json")}
    assert_valid("report-manifest", read["MANIFEST.json"])
    assert_valid("snapshot", read["snapshot.json"])
    spoilt = copy.deepcopy(read["MANIFEST.json"])
    spoilt["members"][0]["sha256"] = "not-a-digest"
    assert problems("report-manifest", spoilt)
    assert problems("report-manifest", {**read["MANIFEST.json"], "kind": "tarball"})


def test_explain_documents(tmp_path):
    kind, document = printed(tmp_path, ["explain", "--format", "json"], {})
    assert kind == "explain" and document["checks"]
    assert_valid(kind, document)
    document["checks"][0]["renamed_from"] = "ASC-OLD"
    assert problems(kind, document)


def test_the_suite_wide_check_reports_a_refused_or_unnamed_document(_json_follows_its_schema):
    """tests/conftest.py's check, seen failing: a document with a key its schema does not list,
    a wrong type, and one printed without a kind."""
    import io

    wrong = _json_follows_its_schema
    out = Output("json", stdout=io.StringIO(), stderr=io.StringIO(), interactive=False, color=False)
    out.json({"op": "add", "target": "cpu", "baseline": "r1"}, kind="bench-baseline")
    assert wrong == []
    out.json({"op": "add", "target": "cpu", "baseline": "r1", "extra": 1}, kind="bench-baseline")
    out.json({"op": "add", "target": "cpu", "baseline": 7}, kind="bench-baseline")
    out.json({"op": "add"})
    assert len(wrong) == 3
    assert "extra" in wrong[0] and "baseline" in wrong[1] and "without a kind" in wrong[2]
    wrong.clear()  # seen: the test itself passes


# --- one real document of each cheap kind: valid, and refused once spoilt ------------------------------
# (the kinds that need a Docker engine, built operators, bench runs or Ansible nodes, and
# clean-cache, which reads the real home, are validated in their own tests by tests/conftest.py)


@pytest.fixture(scope="module")
def workspace(tmp_path_factory) -> dict:
    """A fixture host, its snapshot and lock, a log, a vendor tree with a kept previous one and a
    makeself package: what the commands below need to print (as tests/test_stdout_errors.py)."""
    from tests.cli_helpers import run_cli
    from tests.fixture_hosts import build_host
    from tests.package.pkgbuild import small_package

    tmp = tmp_path_factory.mktemp("documents")
    host = build_host("a2-cann800", tmp / "hosts")
    assert run_cli(["snapshot", "--root", str(host.root), "-o", "snap.json"], host.environ, tmp)[0] == 0
    assert run_cli(["lock", "--from", "snap.json", "-o", "good.lock"], host.environ, tmp)[0] == 0
    (tmp / "app.log").write_text("RuntimeError: EZ3002 the op is not supported\n" * 3)
    for tree in ("opp/vendors/customize", "opp/.ascenv-previous/customize"):
        (tmp / tree).mkdir(parents=True)
        (tmp / tree / "TAG").write_text(tree)
    return {"cwd": tmp, "environ": dict(host.environ), "root": str(host.root), "package": small_package(tmp / "pkg")}


CASES = {
    "doctor": ["doctor", "--from", "snap.json"],
    "triage": ["triage", "app.log", "--from", "snap.json"],
    "explain-code": ["explain", "EZ3002"],
    "diff": ["diff", "snap.json", "good.lock"],
    "diff-fleet": ["diff", "snap.json", "good.lock", "snap.json"],
    "store-ls": ["store", "ls", "--store", "store"],
    "op-check": ["op", "check", "--root", "{root}"],
    "install-rollback": ["install", "--rollback", "customize", "--install-path", "opp"],
    "package-inspect": ["package", "inspect", "{package}"],
}


@pytest.mark.parametrize("kind", sorted(CASES))
def test_real_document_of_each_kind(workspace, kind):
    argv = [a.format(**workspace) for a in CASES[kind]] + ["--format", "json"]
    printed_kind, document = printed(workspace["cwd"], argv, workspace["environ"])
    assert printed_kind == kind
    assert_valid(kind, document)
    # closed: a key the schema does not list is refused; and the first key it requires is required
    assert problems(kind, {**document, "unlisted": True})
    first = next(k for k in schemas.load(kind)["required"] if k != "schema")
    assert problems(kind, {k: v for k, v in document.items() if k != first})
