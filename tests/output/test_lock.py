"""ascenv.output.lock: one row per changed package in `lock --check` and `diff` (issue 25: each
upgraded package printed a second ``<pkg>: record-hash`` row, a 130-row table doubled)."""

from __future__ import annotations

import io

from ascenv.lockfile import Change
from ascenv.model import Severity
from ascenv.output import Output
from ascenv.output import diff as diff_render
from ascenv.output.lock import changes_table, package_rows

H1, H2 = "1" * 64, "2" * 64


def upgrade(name: str, old: str = "1.0.0", new: str = "1.1.0") -> tuple[Change, Change]:
    return (
        Change("packages", name, "changed", old, new, Severity.ERROR),
        Change("packages", f"{name}: record-hash", "changed", H1, H2, Severity.WARN),
    )


def drift_of(*changes: Change) -> tuple[Change, ...]:
    """In the core's order: layer, then item (``torch`` and ``torch: record-hash`` are not adjacent)."""
    return tuple(sorted(changes, key=lambda c: (c.layer != "driver", c.item)))


def printed(table: object) -> str:
    stdout = io.StringIO()
    Output(stdout=stdout, stderr=io.StringIO(), interactive=False, color=False).console.print(table)
    return stdout.getvalue()


def test_130_upgraded_packages_are_130_rows_naming_version_and_record_hash() -> None:
    changes = drift_of(*(c for i in range(130) for c in upgrade(f"pkg{i:03d}")))
    assert len(changes) == 260
    rows = package_rows(changes)
    assert len(rows) == 130 and len(changes_table(changes, "locked", "this machine").rows) == 130
    first = next(r for r in rows if r.item.startswith("pkg000"))
    assert first.item == "pkg000: version, record-hash" and first.severity is Severity.ERROR
    assert (first.old, first.new) == (f"1.0.0, record-hash {H1}", f"1.1.0, record-hash {H2}")
    assert "pkg000: record-hash" not in printed(changes_table(changes, "locked", "this machine"))


def test_names_that_sort_apart_from_their_hash_row_still_merge() -> None:
    # "torch-npu" sorts between "torch" and "torch: record-hash" ("-" < ":")
    changes = drift_of(
        *upgrade("torch"), *upgrade("torch-npu"), Change("driver", "version", "changed", "a", "b", Severity.ERROR)
    )
    rows = package_rows(changes)
    assert [(r.layer, r.item) for r in rows] == [
        ("driver", "version"),
        ("packages", "torch-npu: version, record-hash"),
        ("packages", "torch: version, record-hash"),
    ]


def test_added_removed_and_reinstalled_packages_are_one_row_each() -> None:
    added = (
        Change("packages", "new", "added", None, "2.0", Severity.WARN),
        Change("packages", "new: record-hash", "added", None, H2, Severity.WARN),
    )
    removed = (
        Change("packages", "gone", "removed", "3.0", None, Severity.ERROR),
        Change("packages", "gone: record-hash", "removed", H1, None, Severity.WARN),
    )
    reinstalled = (Change("packages", "same: record-hash", "changed", H1, H2, Severity.WARN),)
    rows = {r.item: r for r in package_rows(drift_of(*added, *removed, *reinstalled))}
    assert set(rows) == {"new: version, record-hash", "gone: version, record-hash", "same: record-hash"}
    assert (rows["new: version, record-hash"].kind, rows["new: version, record-hash"].old) == ("added", None)
    assert rows["new: version, record-hash"].new == f"2.0, record-hash {H2}"
    assert (
        rows["gone: version, record-hash"].severity is Severity.ERROR and rows["gone: version, record-hash"].new is None
    )


def test_diff_markdown_and_terminal_show_one_row_per_package() -> None:
    changes = drift_of(*upgrade("torch"), *upgrade("numpy"))
    text = diff_render.pair_markdown("a", "b", changes)
    assert [line.split("|")[2].strip() for line in text.splitlines() if line.startswith("| packages")] == [
        "numpy: version, record-hash",
        "torch: version, record-hash",
    ]
    stdout = io.StringIO()
    diff_render.pair_human(Output(stdout=stdout, stderr=io.StringIO(), interactive=False), "a", "b", changes)
    assert "2 differences in packages" in stdout.getvalue()
