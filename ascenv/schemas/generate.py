"""Write ascenv/schemas/<kind>.json, the JSON Schema (draft 2020-12) of each ``--format json``
document: ``python -m ascenv.schemas.generate`` after changing an output; tests/test_schemas.py
fails while a shipped file differs from what this writes.

The parts that are dataclasses written with ``serde.to_data`` (the snapshot, findings, lock
changes, store manifests) are derived from their annotations, as ``serde.from_data`` reads them:
every field required (``to_data`` writes them all), no other key (``additionalProperties:
false``), ``Optional`` a null too. The envelopes the renderers build by hand are spelt out below,
their value types read off the same dataclasses (``pick``). Run at development time only: no
command imports it.
"""

from __future__ import annotations

import dataclasses
import enum
import json
import sys
import typing
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Callable, Optional

from ascenv import serde
from ascenv.model import SNAPSHOT_SCHEMA
from ascenv.report.bundle import BUNDLE_SCHEMA

DIALECT = "https://json-schema.org/draft/2020-12/schema"
# ascenv.output.JSON_SCHEMA, the version Output.json adds (the core imports no renderer;
# tests/test_schemas.py holds the two equal)
JSON_SCHEMA = 1
HERE = Path(__file__).resolve().parent

S: dict = {"type": "string"}
I: dict = {"type": "integer"}  # noqa: E741 - the JSON type's initial, as S, N, B
N: dict = {"type": "number"}
B: dict = {"type": "boolean"}
NULL: dict = {"type": "null"}
ANY: dict = {}


def opt(schema: dict) -> dict:
    return {"anyOf": [schema, NULL]}


def arr(items: dict) -> dict:
    return {"type": "array", "items": items}


def table(values: dict) -> dict:
    """An object with free keys (a dict field: package name -> version, unit -> count)."""
    return {"type": "object", "additionalProperties": values}


def obj(properties: Mapping[str, dict], optional: Sequence[str] = ()) -> dict:
    """A closed object: every key in ``properties`` required but those in ``optional``."""
    return {
        "type": "object",
        "properties": dict(properties),
        "required": [k for k in properties if k not in optional],
        "additionalProperties": False,
    }


class Builder:
    """Collects the ``$defs`` of one document while its schema is spelt out."""

    def __init__(self) -> None:
        self.defs: dict[str, dict] = {}

    def of(self, annotation: Any, *, toml: bool = False) -> dict:
        """The schema of what ``serde.to_data`` writes for ``annotation`` (with ``toml``: as
        ``lockfile.lock_data`` writes it, kebab-case keys and no null)."""
        if annotation is Any:
            return ANY
        origin, args = typing.get_origin(annotation), typing.get_args(annotation)
        if origin is typing.Union:
            options = [a for a in args if a is not type(None)]
            schemas = [self.of(a, toml=toml) for a in options]
            schema = schemas[0] if len(schemas) == 1 else {"anyOf": schemas}
            return schema if toml or len(options) == len(args) else opt(schema)
        if origin in (tuple, list, Sequence):
            if origin is tuple and len(args) > 1 and args[1] is not Ellipsis:
                items = [self.of(a, toml=toml) for a in args]
                return {"type": "array", "prefixItems": items, "minItems": len(items), "maxItems": len(items)}
            return arr(self.of(args[0], toml=toml) if args else ANY)
        if origin in (dict, Mapping) or annotation is dict:
            return table(self.of(args[1], toml=toml) if len(args) == 2 else ANY)
        if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
            return {"enum": [m.value for m in annotation]}
        if dataclasses.is_dataclass(annotation):
            return self.dataclass(annotation, toml=toml)
        if annotation is Path:
            return S
        simple = {str: S, int: I, float: N, bool: B}
        if annotation in simple:
            return simple[annotation]
        raise TypeError(f"no JSON schema for {annotation!r}")

    def dataclass(self, cls: Any, *, toml: bool = False) -> dict:
        name = f"{cls.__module__.rsplit('.', 1)[-1]}.{cls.__name__}" + (".toml" if toml else "")
        if name not in self.defs:
            self.defs[name] = {}  # a placeholder: a recursive type refers to itself
            hints = _hints(cls)
            properties, optional = {}, []
            for f in dataclasses.fields(cls):
                key = serde.kebab(f.name) if toml else f.name
                properties[key] = self.of(hints[f.name], toml=toml)
                if toml and _optional(hints[f.name]):
                    optional.append(key)
            self.defs[name] = obj(properties, optional)
        return {"$ref": f"#/$defs/{name}"}

    def pick(self, cls: Any, *names: str, **renamed: str) -> dict[str, dict]:
        """The schemas of fields ``names`` of ``cls`` (``renamed``: JSON key = field name), for an
        envelope that copies them from the dataclass."""
        hints = _hints(cls)
        picked = {n: self.of(hints[n]) for n in names}
        picked.update({key: self.of(hints[field]) for key, field in renamed.items()})
        return picked


def _hints(cls: Any) -> dict:
    return typing.get_type_hints(cls)


def _optional(annotation: Any) -> bool:
    return typing.get_origin(annotation) is typing.Union and type(None) in typing.get_args(annotation)


# --- the documents ---------------------------------------------------------------------------------


def snapshot(b: Builder) -> dict:
    """``snapshot_io.snapshot_to_json``: the Snapshot, with python.packages added (derived)."""
    from ascenv.model import PythonInfo, Snapshot

    ref = b.dataclass(Snapshot)
    b.dataclass(PythonInfo)
    python = b.defs["model.PythonInfo"]
    python["properties"]["packages"] = table(S)
    python["required"].append("packages")
    return ref


def finding(b: Builder) -> dict:
    from ascenv.model import Finding

    return b.dataclass(Finding)


def summary_counts() -> dict:
    from ascenv.model import Severity

    return obj({s.value: I for s in Severity})


def doc_snapshot(b: Builder) -> dict:
    return snapshot(b)


def doc_doctor(b: Builder) -> dict:
    data = obj({"as_of": opt(S), "overlay": arr(S), "overlay_ignored": arr(S)})
    return obj(
        {
            "exit_code": I,
            "summary": summary_counts(),
            "data": data,
            "findings": arr(finding(b)),
            "snapshot": snapshot(b),
        }
    )


def doc_lock(b: Builder) -> dict:
    from ascenv.lockfile import Lock

    return obj({"path": S, "lock": b.dataclass(Lock, toml=True)})


def doc_lock_check(b: Builder) -> dict:
    from ascenv.lockfile import Change

    return obj(
        {
            "lock": S,
            "in_sync": B,
            "exit_code": I,
            "input_hash": obj({"lock": S, "machine": S}),
            "changes": arr(b.dataclass(Change)),
        }
    )


def doc_diff(b: Builder) -> dict:
    from ascenv.lockfile import Change

    return obj(
        {
            "inputs": {"type": "array", "items": S, "minItems": 2, "maxItems": 2},
            "identical": B,
            "changes": arr(b.dataclass(Change)),
        }
    )


def doc_diff_fleet(b: Builder) -> dict:
    from ascenv.diff import Group

    return obj({"nodes": I, "stacks": I, "groups": arr(b.dataclass(Group))})


def doc_fleet_audit(b: Builder) -> dict:
    from ascenv.diff import Group
    from ascenv.fleet.verdicts import Verdict

    verdict = obj({**b.pick(Verdict, "host", "status", "differs_in", "message"), "vendor_builds": arr(S)})
    return obj({"against": S, "results": S, "nodes": arr(verdict), "groups": arr(b.dataclass(Group))})


def doc_fleet_lock(b: Builder) -> dict:
    from ascenv.fleet.results import NodeResult

    return obj(
        {
            "written": S,
            "input_hash": S,
            "nodes": arr(S),
            "not_locked": arr(obj(b.pick(NodeResult, "host", "status", "message"))),
        }
    )


def _line_group() -> dict:
    return obj({"text": S, "count": I, "line": I})


def doc_triage(b: Builder) -> dict:
    from ascenv.triage.rank import Cause
    from ascenv.triage.verdict import Machine

    machine = obj({**b.pick(Machine, "label", "cann", "ascend", "driver", "python"), "python_reason": opt(S)})
    cause = obj(
        {
            **b.pick(Cause, "cause", "detail", "layer", "checks", "confirmed", "evidence", "fix", "weight"),
            "lines": arr(_line_group()),
            "verdicts": arr(obj({"check": S, "verdict": S, "reason": S})),
            **b.pick(Cause, "signatures", "source"),
            "context": arr(_line_group()),
        }
    )
    signature = obj(
        {
            "id": S,
            "layer": S,
            "summary": S,
            "codes": arr(S),
            "count": I,
            "first_line": I,
            "lines": arr(_line_group()),
            "source": arr(S),
        }
    )
    return obj(
        {
            "exit_code": I,
            "checked": B,
            "machine": opt(machine),
            "input": obj({"bytes": I, "lines": I, "binary": B}),
            "recognised": B,
            "causes": arr(cause),
            "signatures": arr(signature),
            "findings": arr(finding(b)),
        }
    )


def doc_explain(b: Builder) -> dict:
    check = obj({"id": S, "layer": S, "title": S, "explain": S, "compat_data_as_of": opt(S), "renamed_from": arr(S)})
    return obj({"checks": arr(check), "compat_data_as_of": opt(S), "error_codes": arr(S)})


def doc_explain_code(b: Builder) -> dict:
    from ascenv.triage.rules import CauseRule, Signature

    cause = obj(b.pick(CauseRule, "cause", "detail", "weight", "checks", "fix"))
    signature = obj({**b.pick(Signature, "id", "layer", "summary", "source"), "causes": arr(cause)})
    return obj({"code": S, "signatures": arr(signature)})


def doc_report(b: Builder) -> dict:
    member = {
        "type": "object",
        "properties": {"name": S, "sha256": S, "size": I},
        "required": ["name"],
        "additionalProperties": False,
    }
    return obj(
        {
            "path": S,
            "sha256": S,
            "size": I,
            "created": S,
            "redacted": B,
            "redactions": table(I),
            "summary": summary_counts(),
            "members": arr(member),
        }
    )


def _record(b: Builder) -> dict[str, dict]:
    from ascenv.bench.records import Record

    fields = (
        "op",
        "input_shapes",
        "input_dtypes",
        "input_formats",
        "task_type",
        "samples",
        "duration_us",
        "duration_min_us",
        "duration_max_us",
        "duration_stat",
    )
    return {
        **b.pick(Record, *fields),
        "spread": N,
        **b.pick(Record, "block_dim", "mix_block_dim"),
        "metrics": table(ANY),
        "metric_set": b.pick(Record, "metric_set")["metric_set"],
        "clock": obj({"current_mhz": opt(N), "rated_mhz": opt(N), "downclocked": opt(B)}),
    }


def doc_bench_import(b: Builder) -> dict:
    return obj({"run": S, "tool": S, "path": S, "records": arr(obj(_record(b))), "left_out": arr(S)})


def doc_bench_import_absent(b: Builder) -> dict:
    """``bench import --op OP`` of a profile without OP: nothing stored, the op types it holds."""
    return obj({"run": NULL, "op": S, "absent": {"const": True}, "op_types": arr(S)})


def doc_test(b: Builder) -> dict:
    """``ascenv test``: the accuracy run as stored (``output.test.run_json``) and where."""
    from ascenv.accuracy.results import TestRun

    fields = {("build" if k == "build_key" else k): v for k, v in b.pick(TestRun, *_field_names(TestRun)).items()}
    fields.pop("id")
    return obj({"run": S, "passed": B, **fields, "path": S})


def doc_compat_update(b: Builder) -> dict:
    from ascenv.compat.overlay import Installed

    return b.dataclass(Installed)


def doc_compat_remove(b: Builder) -> dict:
    from ascenv.compat.overlay import Removed

    return b.dataclass(Removed)


def doc_fleet_rollout(b: Builder) -> dict:
    """``fleet rollout`` and ``--status``: the journal file's path and the journal."""
    from ascenv.fleet.rollout import Journal

    return obj({"journal": S, **b.pick(Journal, *_field_names(Journal))})


def _field_names(cls: Any) -> list[str]:
    return [f.name for f in dataclasses.fields(cls)]


def doc_bench_run(b: Builder) -> dict:
    record = obj({**_record(b), "benchmark": opt(S), "durations_us": arr(N), "tiling": table(ANY)})
    return obj(
        {
            "run": S,
            "op": S,
            "target": S,
            "build": S,
            "tool": S,
            "path": S,
            "warmup": I,
            "repeat": I,
            "benchmarks": arr(obj({"name": S, "measures": S})),
            "fingerprint": obj({"host_cpu": opt(S), "host_cores": opt(I)}),
            "records": arr(record),
        }
    )


def doc_bench_commands(b: Builder) -> dict:
    return obj({"op": S, "build": S, "ran": {"const": False}, "reason": S, "commands": arr(S)})


def doc_bench_compare(b: Builder) -> dict:
    shape = obj(
        {
            "op": S,
            "input_shapes": opt(S),
            "task_type": opt(S),
            "verdict": {"enum": ["faster", "slower", "same", "inconclusive", "undecidable"]},
            "change": N,
            "interval": {"type": "array", "items": N, "minItems": 2, "maxItems": 2},
            "regression": B,
            "samples": {"type": "array", "items": I, "minItems": 2, "maxItems": 2},
            "median_us": {"type": "array", "items": N, "minItems": 2, "maxItems": 2},
            "measure": {"enum": ["duration_us", "duration/peer"]},
            "medians": {"type": "array", "items": N, "minItems": 2, "maxItems": 2},
            "reason": opt(S),
            "against_peer": B,
            "between_runs": obj({"spread": opt(N), "runs": I, "builds": I}),
        }
    )
    return obj(
        {
            "a": S,
            "b": S,
            "picked": obj({"a": opt(S), "b": opt(S)}),
            "threshold": N,
            "shapes": arr(shape),
            "differences": arr(obj({"field": S, "a": ANY, "b": ANY})),
            "only_a": arr(S),
            "only_b": arr(S),
        },
    )


def doc_bench_baseline(b: Builder) -> dict:
    return obj({"op": S, "target": S, "baseline": S})


def doc_bench_history(b: Builder) -> dict:
    from ascenv.bench.history import Row

    row = obj(
        {
            **b.pick(Row, "run", "build_key", "source_commit", "op", "input_shapes", "block_dim", "duration_us"),
            "tiling": table(ANY),
            "spread": N,
            "verdict": b.pick(Row, "verdict")["verdict"],
        }
    )
    return obj({"op": S, "runs": I, "total": I, "history": arr(row)})


def _store_entry(b: Builder) -> dict[str, dict]:
    from ascenv.store import Manifest

    outputs = b.of(_hints(Manifest)["outputs"])
    from ascenv.accuracy.results import BuildTest
    from ascenv.bench.store import BuildRun

    run = obj(b.pick(BuildRun, "id", "created", "tool", "target", "records", "baseline", "damaged", file="name"))
    return {
        "op": S,
        "key": S,
        "path": S,
        "ok": B,
        "problems": arr(S),
        "target": opt(S),
        "finished": opt(S),
        "image_id": opt(S),
        "manifest_sha256": opt(S),
        "outputs": outputs,
        "bench_runs": arr(run),
        "tests": arr(b.dataclass(BuildTest)),
    }


_STRAY = obj({"path": S, "why": S})


def doc_store_ls(b: Builder) -> dict:
    return obj({"store": S, "exists": B, "builds": arr(obj(_store_entry(b))), "not_builds": arr(_STRAY)})


def doc_store_show(b: Builder) -> dict:
    from ascenv.store import Manifest

    return obj({**_store_entry(b), "manifest": opt(b.dataclass(Manifest))})


def doc_store_gc(b: Builder) -> dict:
    return obj(
        {
            "removed": arr(S),
            "kept_referenced": arr(S),
            "kept_baseline": arr(obj({"build": S, "targets": arr(S)})),
            "swept_tmp": arr(S),
            "freed": I,
            "left_alone": arr(_STRAY),
            "not_removed": arr(S),
        }
    )


def doc_build(b: Builder) -> dict:
    from ascenv.store import Manifest

    return obj(
        {
            "op": S,
            "target": S,
            "key": S,
            "reused": B,
            "raced": B,
            "verified": B,
            "replaced": arr(S),
            "seconds": N,
            "build_seconds": arr(N),
            "matched_stored": B,
            "path": S,
            "outputs": b.of(_hints(Manifest)["outputs"]),
        }
    )


def doc_install(b: Builder) -> dict:
    # op and key are null for `install FILE.run`: a package built elsewhere has no store build
    return obj({"op": opt(S), "key": opt(S), "package": S, "install_path": S, "manifests": arr(S), "kept": arr(S)})


def doc_install_rollback(b: Builder) -> dict:
    from ascenv.package.deploy import Rollback

    return obj(
        {
            **b.pick(Rollback, "vendor", "install_path", "live", "kept", "finished_interrupted", "compute_units"),
            "clean_kernel_caches": S,
        }
    )


def doc_op_check(b: Builder) -> dict:
    vendor = obj(
        {
            "name": S,
            "path": S,
            "origin": S,
            "priority": I,
            "exists": B,
            "op_types": arr(S),
            "compute_units": arr(S),
            "compiler_version": opt(S),
        }
    )
    op = obj({"op_type": S, "vendor": S, "atc": B, "runtime": B, "aclnn": B, "shadowed": arr(S)})
    return obj(
        {
            "arch": S,
            "compute_unit": opt(S),
            "vendors": arr(vendor),
            "op_types": arr(op),
            "findings": arr(finding(b)),
            "notes": arr(S),
        }
    )


def doc_package_inspect(b: Builder) -> dict:
    from ascenv.package.makeself import Header

    makeself = obj(
        {
            **b.pick(Header, "version", "label", "target_dir", "date", "compression", "script"),
            "header_lines": I,
            "offset": I,
            "sizes": arr(I),
            "uncompressed_kb": b.pick(Header, "uncompressed_kb")["uncompressed_kb"],
            "checksums": arr(obj({"kind": S, "value": S, "verified": B})),
        }
    )
    member = obj(
        {
            "path": S,
            "type": S,
            "size": I,
            "mode": {"type": "string", "pattern": "^[0-7]{4,}$"},
            "sha256": opt(S),
            "link": S,
            "dangers": {"type": "array", "items": S, "minItems": 1},
        },
        optional=("link", "dangers"),
    )
    library = obj({"kind": S, "path": S, "dir_arch": opt(S), "elf_arch": opt(S)})
    vendor = obj(
        {
            "name": S,
            "op_types": arr(S),
            "compute_units": arr(S),
            "compiler_version": opt(S),
            "ops_info_units": table(arr(S)),
            "kernel_binaries": table(I),
            "libraries": arr(library),
            "aclnn_headers": arr(S),
            "problems": arr(S),
        }
    )
    return obj(
        {"package": S, "makeself": makeself, "files": arr(member), "dangerous_members": I, "vendors": arr(vendor)}
    )


def doc_package_normalize(b: Builder) -> dict:
    from ascenv.package.normalize import Normalized

    return obj(
        {
            "package": S,
            **b.pick(Normalized, "output", "source_sha256", "sha256", "members", "source_date_epoch", "date"),
        }
    )


def doc_clean_cache(b: Builder) -> dict:
    kept = {
        "type": "object",
        "properties": {"rule": S, "files": I, "example": S, "modified": opt(S)},
        "required": ["rule", "files", "example"],
        "additionalProperties": False,
    }
    from ascenv.cache.entry import CacheEntry

    entry = obj(
        {
            **b.pick(CacheEntry, "kind", "path", "root", "source", size="allocated", apparent_size="apparent"),
            **b.pick(CacheEntry, "files", "dirs"),
            "newest": opt(S),
            "oldest": opt(S),
            "age_seconds": opt(N),
            **b.pick(CacheEntry, "soc", "cann_version", "stale", "stale_reasons", "protected", "in_use"),
            **b.pick(CacheEntry, "kept_files", kept_size="kept_bytes"),
            "kept": arr(kept),
            "errors": arr(S),
        }
    )
    plan = obj(
        {
            "entries": arr(S),
            "size": I,
            "files": I,
            "skipped": arr(obj({"path": S, "reason": S})),
            "pins_files": arr(S),
        },
        optional=("pins_files",),
    )
    result = obj(
        {
            "freed": I,
            "files": I,
            "kept_recent": I,
            "kept_foreign": I,
            "deleted": arr(S),
            "partly_deleted": arr(S),
            "skipped": arr(S),
            "errors": arr(S),
            "left_alone": arr(S),
            "journal": opt(S),
        }
    )
    return obj(
        {
            "mode": S,
            "size_unit": S,
            "scan_seconds": N,
            "entries": arr(entry),
            "warnings": arr(S),
            "plan": plan,
            "result": result,
        },
        optional=("plan", "result"),
    )


def doc_image_ls(b: Builder) -> dict:
    from ascenv.containers.images import ImageStatus

    return obj({"images": arr(b.dataclass(ImageStatus))})


def doc_image_verify(b: Builder) -> dict:
    from ascenv.containers.images import ImageStatus

    return b.dataclass(ImageStatus)


def doc_image_build(b: Builder) -> dict:
    from ascenv.containers.images import BuildOutcome

    return b.dataclass(BuildOutcome)


def doc_image_pin(b: Builder) -> dict:
    from ascenv.containers.pins import Pin

    return obj({"name": S, "pin": b.dataclass(Pin)})


def doc_report_manifest(b: Builder) -> dict:
    """MANIFEST.json of a report bundle (a file in the archive, not printed)."""
    member = obj({"name": S, "sha256": {"type": "string", "pattern": "^[0-9a-f]{64}$"}, "size": I, "source": S})
    return obj(
        {
            "kind": {"const": "ascenv-report"},
            "created": S,
            "ascenv_version": S,
            "snapshot_schema": I,
            "redacted": B,
            "redactions": table(I),
            "members": arr(member),
        }
    )


# Documents written as files, not printed: no Output.json names them
FILES = ("report-manifest",)
# Documents that carry their own version as "schema", not Output.json's
OWN_VERSIONS = {"snapshot": SNAPSHOT_SCHEMA, "report-manifest": BUNDLE_SCHEMA}

DOCUMENTS: dict[str, Callable[[Builder], dict]] = {
    name[len("doc_") :].replace("_", "-"): function
    for name, function in sorted(globals().items())
    if name.startswith("doc_")
}


def document(kind: str) -> dict:
    """The schema of the ``kind`` document, with the ``"schema"`` version every one carries."""
    b = Builder()
    body = DOCUMENTS[kind](b)
    if "$ref" in body:  # a dataclass printed whole: its object, with the version added
        name = body["$ref"].rsplit("/", 1)[-1]
        body = json.loads(json.dumps(b.defs[name]))
    # the version Output.json adds; a document's own "schema" (a snapshot's) is what is written
    body["properties"].pop("schema", None)
    version = OWN_VERSIONS.get(kind, JSON_SCHEMA)
    body["properties"] = {"schema": {"const": version}, **body["properties"]}
    body["required"] = ["schema", *(k for k in body["required"] if k != "schema")]
    schema: dict[str, Any] = {
        "$schema": DIALECT,
        "$id": f"urn:ascenv:schema:{kind}",
        "title": f"ascenv {kind.replace('-', ' ')} --format json",
        **body,
    }
    if b.defs:
        schema["$defs"] = dict(sorted(b.defs.items()))
    return schema


def rendered(kind: str) -> str:
    return json.dumps(document(kind), indent=2, ensure_ascii=False) + "\n"


def main(argv: Optional[Sequence[str]] = None) -> int:
    for old in HERE.glob("*.json"):
        if old.stem not in DOCUMENTS:
            old.unlink()
    for kind in DOCUMENTS:
        (HERE / f"{kind}.json").write_text(rendered(kind), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
