"""Compare stacks: two side by side, or a fleet grouped by identical stack. Pure.

Every input (a snapshot or a lock) is first made a ``Lock``, so a snapshot from one node and a
lock from another compare on the same ground; the lock's input hash is the stack's identity, so
grouping 1,000 nodes is one dict lookup each and only one comparison per distinct stack.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from typing import Any

from ascenv import __version__, lockfile
from ascenv.lockfile import LAYERS, Change, Lock, drift
from ascenv.model import Snapshot
from ascenv.snapshot_io import snapshot_from_json


@dataclass(frozen=True)
class Node:
    name: str  # what the user passed (a file path)
    lock: Lock
    images_known: bool = True  # False for a snapshot: it records no image pins, which is not "none"


@dataclass(frozen=True)
class Group:
    """Nodes with the identical stack; ``changes`` go from the reference stack to this one."""

    nodes: tuple[str, ...]
    input_hash: str
    reference: bool
    layers: tuple[str, ...] = ()  # the layers where this group differs from the reference
    changes: tuple[Change, ...] = ()


def pair(a: Node, b: Node) -> tuple[Change, ...]:
    """What differs from ``a`` to ``b``, layer by layer (empty when the stacks are identical)."""
    if a.lock.input_hash == b.lock.input_hash:
        return ()
    return _comparable(drift(a.lock, b.lock), a, b)


def _comparable(changes: tuple[Change, ...], a: Node, b: Node) -> tuple[Change, ...]:
    if a.images_known and b.images_known:
        return changes
    return tuple(c for c in changes if c.layer != "images")


def fleet(nodes: list[Node]) -> tuple[Group, ...]:
    """Group by identical stack; the largest group (first seen on a tie) is the reference.
    Outliers come first, smallest group first, each with the layers where it differs."""
    by_hash: dict[str, list[Node]] = {}
    for node in nodes:
        by_hash.setdefault(node.lock.input_hash, []).append(node)
    members = list(by_hash.values())
    reference = max(members, key=len)  # max keeps the first of equal sizes
    groups = []
    for group in members:
        names = tuple(n.name for n in group)
        if group is reference:
            groups.append(Group(names, group[0].lock.input_hash, reference=True))
            continue
        changes = _comparable(drift(reference[0].lock, group[0].lock), reference[0], group[0])
        layers = tuple(layer for layer in LAYERS if any(c.layer == layer for c in changes))
        groups.append(Group(names, group[0].lock.input_hash, reference=False, layers=layers, changes=changes))
    return tuple(sorted(groups, key=lambda g: (g.reference, len(g.nodes), g.nodes[0])))


# Only the parts a lock is made of are read (not env, devices, npu-smi processes and errors), and
# a part whose JSON was already seen (a fleet's python, cann, driver sections) is reused, not
# validated and built again: whole snapshots made a 1,000-node diff take 2.5 s, not well under 2.
_LOCKED_PARTS = ("host", "npu", "driver", "firmware", "cann", "python", "vendors")
_LOCKED_NPU = ("driver_version", "chips", "boards")


class StackReader:
    """Snapshots (and their locks) of many nodes, built from their JSON sharing identical parts."""

    def __init__(self) -> None:
        self._built: dict[tuple[str, str], object] = {}
        self._locks: dict[tuple[int, ...], Lock] = {}

    def lock(self, data: dict, name: str) -> Lock:
        """The node's lock; nodes made of the very same (reused) parts share one lock build, only
        ``created`` and ``source`` (outside the input hash) are the node's own."""
        snapshot = self.snapshot(data, name)
        key = tuple(id(getattr(snapshot, part)) for part in _LOCKED_PARTS)
        built = self._locks.get(key)
        if built is None:
            built = lockfile.lock_from_snapshot(snapshot, generator_version=__version__, source=name)
            self._locks[key] = built
        return replace(built, created=snapshot.created, source=name)

    def snapshot(self, data: dict, name: str) -> Snapshot:
        head = {k: data[k] for k in ("schema", "created") if k in data}
        parts: dict[str, Any] = {}
        for key in _LOCKED_PARTS:
            if key not in data:
                continue
            value = data[key]
            if key == "npu" and isinstance(value, dict):
                value = {k: value[k] for k in _LOCKED_NPU if k in value}
            seen = (key, json.dumps(value, sort_keys=True))
            if seen not in self._built:
                self._built[seen] = getattr(snapshot_from_json({**head, key: value}, name), key)
            parts[key] = self._built[seen]
        return replace(snapshot_from_json(head, name), **parts)
