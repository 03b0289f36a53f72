"""Fold the nodes' results into one verdict per node. Pure.

Without a cluster lock a node is judged against the fleet's majority stack (``ascenv diff``'s
grouping: the largest group is the reference); with one, against the lock, exactly as
``ascenv lock --check`` judges a machine. A node's snapshot records no image pins, so the
"images" layer is never compared (as ``ascenv diff`` does for snapshots)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Optional

from ascenv import errors
from ascenv.diff import Group, Node, fleet
from ascenv.fleet.results import DRIFT, FAILED, OK, UNREACHABLE, NodeResult
from ascenv.lockfile import LAYERS, Lock, check
from ascenv.model import Severity
from ascenv.words import counted


@dataclass(frozen=True)
class Verdict:
    host: str
    status: str  # ok, drift, unreachable, failed
    differs_in: tuple[str, ...] = ()  # layers where the node differs from the lock / the majority
    message: str = ""
    # each custom vendor and the build it is at: "customize: build <key 12>" when the store
    # knows its ascenv-manifest.toml, "customize: manifest sha256 <12>", or "customize: no manifest"
    builds: tuple[str, ...] = ()


@dataclass(frozen=True)
class FleetAudit:
    nodes: tuple[Verdict, ...]  # outliers and failures first, then the matching nodes; by host
    groups: tuple[Group, ...]  # the reachable nodes grouped by stack (``ascenv diff``'s fold)
    against: str  # "the cluster lock <name>" or "the majority stack"

    @property
    def unreachable(self) -> tuple[Verdict, ...]:
        return tuple(v for v in self.nodes if v.status in (UNREACHABLE, FAILED))

    @property
    def drifted(self) -> tuple[Verdict, ...]:
        return tuple(v for v in self.nodes if v.status == DRIFT)

    @property
    def exit_code(self) -> int:
        if self.unreachable:
            return errors.EXIT_NODES_FAILED
        return errors.EXIT_FINDINGS if self.drifted else errors.EXIT_OK


SHOWN_CHANGES = 6  # drifted items named per node in its verdict; the layers are all named
_ORDER = {DRIFT: 0, FAILED: 1, UNREACHABLE: 2, OK: 3}


def audit(
    results: tuple[NodeResult, ...],
    cluster_lock: Optional[Lock] = None,
    lock_name: str = "",
    known_builds: Mapping[str, str] = {},  # noqa: B006 - read only
) -> FleetAudit:
    """``known_builds``: build keys by the sha256 of their manifest (the store's), which a vendor
    installed by ascenv carries as ascenv-manifest.toml: the build each node's vendors are at.
    Differing builds across the fleet are drift in the vendors layer (the lock records the
    manifest's digest)."""
    reached = [Node(r.host, r.lock, images_known=False) for r in results if r.lock is not None]
    groups = fleet(reached) if reached else ()
    verdicts = []
    layers_of = {}
    if cluster_lock is None:
        for group in groups:
            for host in group.nodes:
                layers_of[host] = group.layers
    for result in results:
        if result.lock is None:
            verdicts.append(Verdict(result.host, result.status, (), result.message))
        elif cluster_lock is not None:
            verdicts.append(_against_lock(result.host, cluster_lock, result.lock))
        else:
            layers = layers_of.get(result.host, ())
            message = "differs from the majority stack" if layers else ""
            verdicts.append(Verdict(result.host, DRIFT if layers else OK, layers, message))
    locks = {r.host: r.lock for r in results if r.lock is not None}
    verdicts = [replace(v, builds=_builds(locks[v.host], known_builds)) if v.host in locks else v for v in verdicts]
    verdicts.sort(key=lambda v: (_ORDER[v.status], v.host))
    against = f"the cluster lock {lock_name}" if cluster_lock is not None else "the majority stack"
    return FleetAudit(tuple(verdicts), groups, against)


def _builds(lock: Lock, known: Mapping[str, str]) -> tuple[str, ...]:
    def build(digest: Optional[str]) -> str:
        if digest is None:
            return "no manifest"
        return f"build {known[digest][:12]}" if digest in known else f"manifest sha256 {digest[:12]}"

    return tuple(f"{v.name}: {build(v.manifest_digest)}" for v in lock.vendors)


def _against_lock(host: str, lock: Lock, machine: Lock) -> Verdict:
    try:
        changes = check(lock, machine, source="the cluster lock")
    except errors.PlatformMismatch as exc:
        return Verdict(host, DRIFT, ("platform",), exc.message)
    errors_only = [c for c in changes if c.layer != "images" and c.severity is Severity.ERROR]
    if not errors_only:
        return Verdict(host, OK)
    layers = tuple(layer for layer in LAYERS if any(c.layer == layer for c in errors_only))
    # every drifted layer named (the first difference alone hid the others), a few items each
    named = [f"{c.layer} {c.item}: {c.old or '-'} -> {c.new or '-'}" for c in errors_only[:SHOWN_CHANGES]]
    more = len(errors_only) - len(named)
    return Verdict(host, DRIFT, layers, "; ".join(named) + (f"; and {more} more" if more > 0 else ""))


def majority_lock(results: tuple[NodeResult, ...]) -> tuple[Lock, Group]:
    """The stack more than half of the reachable nodes share, or FleetSplit naming the groups."""
    reached = [Node(r.host, r.lock, images_known=False) for r in results if r.lock is not None]
    if not reached:
        raise errors.FleetSplit("no node's snapshot came back: there is no stack to lock")
    groups = fleet(reached)
    reference = groups[-1]
    if len(reference.nodes) * 2 <= len(reached):
        named = "; ".join(f"{counted(len(g.nodes), 'node')} {', '.join(g.nodes[:8])}" for g in reversed(groups))
        raise errors.FleetSplit(
            f"no stack is shared by more than half of the {len(reached)} reachable nodes: {named}",
            hint="bring the nodes to one stack, or lock one node's snapshot with ascenv lock --from",
        )
    by_host = {r.host: r.lock for r in results if r.lock is not None}
    lock = by_host[reference.nodes[0]]
    assert lock is not None
    return lock, reference
