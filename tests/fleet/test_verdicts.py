"""The audit's fold (ascenv.fleet.verdicts): the vendor build each node is at, and differing
operator builds across the fleet as drift in the vendors layer."""

from __future__ import annotations

from dataclasses import replace

from ascenv import lockfile
from ascenv.fleet.results import OK, NodeResult
from ascenv.fleet.verdicts import audit
from ascenv.model import Vendor
from tests.lock_samples import a2

OLD, NEW = "1" * 64, "2" * 64  # sha256 of two builds' manifest.toml


def _node(host: str, digest: str | None) -> NodeResult:
    vendor = Vendor(name="customize", path="/opt/opp/vendors/customize", priority=0, origin="ASCEND_CUSTOM_OPP_PATH")
    snap = replace(a2(), vendors=(replace(vendor, manifest="m" if digest else None, manifest_digest=digest),))
    return NodeResult(host, OK, lock=lockfile.lock_from_snapshot(snap, generator_version="t", source=host))


def test_each_node_names_its_vendor_build_and_the_odd_build_out_is_drift_in_vendors():
    nodes = (_node("n1", NEW), _node("n2", NEW), _node("n3", OLD), _node("n4", None))
    result = audit(nodes, known_builds={NEW: "b" * 64})
    verdicts = {v.host: v for v in result.nodes}
    assert verdicts["n1"].builds == ("customize: build bbbbbbbbbbbb",) and verdicts["n1"].status == "ok"
    assert verdicts["n3"].builds == ("customize: manifest sha256 111111111111",)  # not in the store
    assert verdicts["n4"].builds == ("customize: no manifest",)
    assert verdicts["n3"].status == verdicts["n4"].status == "drift"
    assert verdicts["n3"].differs_in == ("vendors",)


def test_a_node_drifted_from_the_cluster_lock_is_named_with_every_drifted_layer():
    base = a2()
    cluster = lockfile.lock_from_snapshot(base, generator_version="t", source="lock")
    drifted = replace(
        base, driver=replace(base.driver, version="25.2.0"), firmware=replace(base.firmware, version="7.7.7.7")
    )
    one = replace(base, driver=replace(base.driver, version="25.2.0"))
    nodes = tuple(
        NodeResult(host, OK, lock=lockfile.lock_from_snapshot(snap, generator_version="t", source=host))
        for host, snap in (("same", base), ("two-layers", drifted), ("one-layer", one))
    )
    verdicts = {v.host: v for v in audit(nodes, cluster, "cluster.lock").nodes}
    assert verdicts["same"].status == "ok"
    two = verdicts["two-layers"]
    assert two.status == "drift" and set(two.differs_in) == {"driver", "firmware"}
    assert "driver" in two.message and "firmware" in two.message and "25.2.0" in two.message  # both named
    assert verdicts["one-layer"].message.startswith("driver") and ";" not in verdicts["one-layer"].message
