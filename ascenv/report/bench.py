"""The bench runs a report carries: for each installed vendor whose build is in the store (or
whose operator has runs there), the baseline run of each target and the latest run of that
operator, and the latest accuracy check (``ascenv test``) of the installed build, as the data of
the bundle's ``bench.json``. Reads the store only."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Optional

from ascenv import serde
from ascenv.accuracy.results import BuildTest, build_tests
from ascenv.bench.records import Run, record_json
from ascenv.bench.store import BenchStore, StoredRun
from ascenv.errors import InputError, UsageError
from ascenv.model import Snapshot
from ascenv.store import Store, loads_manifest


@dataclass(frozen=True)
class VendorRuns:
    vendor: str
    op: str
    build_key: Optional[str]  # the installed build, from the vendor's ascenv-manifest.toml
    build_in_store: bool
    baselines: tuple[Run, ...] = ()  # one per target, in target order
    latest: Optional[Run] = None
    problem: Optional[str] = None  # why the op's runs could not be read
    accuracy: Optional[BuildTest] = None  # the installed build's newest accuracy check


@dataclass(frozen=True)
class InstalledRuns:
    store: str
    vendors: tuple[VendorRuns, ...]
    note: Optional[str] = None  # why there is nothing, when there is nothing

    def data(self) -> Optional[dict[str, Any]]:
        """What ``bench.json`` holds; None when no vendor has runs to carry."""
        if not self.vendors:
            return None
        return {"store": self.store, "vendors": [_vendor_data(v) for v in self.vendors]}


def installed_runs(snapshot: Snapshot, store: Store, manifests: Mapping[str, bytes]) -> InstalledRuns:
    """``manifests``: vendor name -> the ascenv-manifest.toml read beside it (none from a saved
    snapshot); a vendor is tied to its build by that file's sha256, which `ascenv install` copies
    byte for byte from the store entry, else by the op and key it names."""
    where = str(store.root)
    if not store.root.is_dir():
        return InstalledRuns(where, (), f"no build store at {where}")
    by_digest = {e.manifest_sha256: e for e in store.entries() if e.manifest is not None}
    bench = BenchStore(store)
    found: list[VendorRuns] = []
    seen: set[str] = set()
    for vendor in snapshot.vendors:
        if vendor.name in seen or not vendor.manifest_digest:
            continue
        seen.add(vendor.name)
        entry = by_digest.get(vendor.manifest_digest)
        if entry is not None:
            op, key = entry.op, entry.key
        elif vendor.name in manifests:
            try:
                manifest = loads_manifest(manifests[vendor.name].decode("utf-8", "replace"), vendor.name)
            except InputError:
                continue  # doctor reports a damaged vendor manifest; here it only ties no op
            op, key = manifest.op, manifest.key
        else:
            continue
        try:
            runs = bench.runs(op)
            chosen = bench.baselines(op)
        except (InputError, UsageError) as exc:  # a damaged run, an op that is not a directory name
            found.append(VendorRuns(vendor.name, op, key, entry is not None, problem=exc.message))
            continue
        if not runs and entry is None:
            continue
        checks = [t for t in build_tests(entry.path) if not t.damaged] if entry is not None else []
        found.append(
            VendorRuns(
                vendor.name,
                op,
                key,
                entry is not None,
                _baselines(runs, chosen),
                runs[0].run if runs else None,
                accuracy=checks[0] if checks else None,
            )
        )
    if not any(v.latest or v.problem or v.accuracy for v in found):
        return InstalledRuns(where, (), f"no installed vendor's operator has bench runs in {where}")
    return InstalledRuns(where, tuple(found))


def _baselines(runs: list[StoredRun], chosen: Mapping[str, str]) -> tuple[Run, ...]:
    by_id = {s.run.id: s.run for s in runs}
    return tuple(by_id[chosen[t]] for t in sorted(chosen) if chosen[t] in by_id)


def _vendor_data(v: VendorRuns) -> dict[str, Any]:
    return {
        "vendor": v.vendor,
        "op": v.op,
        "build": v.build_key,  # not "build_key": the redactor takes a "..._key" for a credential
        "build_in_store": v.build_in_store,
        "baselines": {r.target: run_data(r) for r in v.baselines},
        "latest": run_data(v.latest) if v.latest else None,
        "problem": v.problem,
        "accuracy": serde.to_data(v.accuracy) if v.accuracy else None,
    }


def run_data(run: Run) -> dict[str, Any]:
    """A run as `ascenv bench import --format json` shows it, with its fingerprint and without
    every launch's duration (the median, min, max and sample count stay). The fingerprint's
    ``build_key`` is called ``build`` here, as the redactor would take a "..._key" for a credential."""
    fingerprint = serde.to_data(run.fingerprint)
    fingerprint["build"] = fingerprint.pop("build_key")
    return {
        "run": run.id,
        "created": run.created,
        "tool": run.tool,
        "target": run.target,
        "source": run.source,
        "fingerprint": fingerprint,
        "records": [record_json(r) for r in run.records],
    }
