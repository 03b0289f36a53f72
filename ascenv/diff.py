"""Compare stacks: two side by side, or a fleet grouped by identical stack. Pure.

Every input (a snapshot or a lock) is first made a ``Lock``, so a snapshot from one node and a
lock from another compare on the same ground; the lock's input hash is the stack's identity, so
grouping 1,000 nodes is one dict lookup each and only one comparison per distinct stack.
"""

from __future__ import annotations

from dataclasses import dataclass

from ascenv.lockfile import LAYERS, Change, Lock, drift


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
