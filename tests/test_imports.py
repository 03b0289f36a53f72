"""The layering rules of the package, checked on its source (README: "Development").

- only ``ascenv.cli`` imports a command; a command imports no other command, only
  ``ascenv.commands._common``;
- only ``cli`` and the commands import ``ascenv.output`` (the core never renders);
- the core never imports ``ascenv.commands``;
- the probe (the I/O edge that reads a machine) stands on the floor: it reaches, directly or
  through other modules, only ascenv's base modules (``ascenv/*.py``), the probe itself and
  ``ascenv.abi`` (ELF reading), never ``package``, ``checks`` or anything else built on it;
- no import cycle between modules, counting imports under ``if TYPE_CHECKING:`` too: they are not
  run, but the two modules still know each other (issue #25: ``ascenv.store`` <-> ``ascenv.bench.store``).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "ascenv"


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(path: Path, module: str, typing: bool = False) -> set[str]:
    """Every ascenv module ``module`` imports at run time (at the top or inside functions), and with
    ``typing`` also those it imports for the type checker only."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _is_type_checking(child) and not typing:
                for other in child.orelse:
                    visit(other)
                continue
            if isinstance(child, ast.Import):
                found.update(alias.name for alias in child.names if alias.name.split(".")[0] == "ascenv")
            elif isinstance(child, ast.ImportFrom):
                if child.level:
                    base = package.split(".")[: len(package.split(".")) - child.level + 1]
                    source = ".".join(base + ([child.module] if child.module else []))
                else:
                    source = child.module or ""
                if source.split(".")[0] == "ascenv":
                    found.add(source)
                    # `from ascenv import cli` / `from ascenv.commands import _common` import modules
                    found.update(
                        f"{source}.{alias.name}" for alias in child.names if _is_module(f"{source}.{alias.name}")
                    )
            visit(child)

    visit(tree)
    found.discard(module)
    return found


def _is_module(name: str) -> bool:
    relative = Path(*name.split(".")[1:])
    return (PACKAGE / relative).with_suffix(".py").is_file() or (PACKAGE / relative / "__init__.py").is_file()


def _graph(typing: bool = False) -> dict[str, set[str]]:
    return {_module_name(p): _imports(p, _module_name(p), typing) for p in sorted(PACKAGE.rglob("*.py"))}


GRAPH = _graph()
TYPED_GRAPH = _graph(typing=True)


# Being rewritten to the new shape on another branch: expected to fail until that lands (strict, so
# the first passing run says to empty this set).
def _within(name: str, package: str) -> bool:
    return name == package or name.startswith(package + ".")


@pytest.mark.parametrize("module", sorted(GRAPH))
def test_only_cli_imports_commands(module):
    targets = {t for t in GRAPH[module] if _within(t, "ascenv.commands") and t != "ascenv.commands"}
    if module == "ascenv.cli":
        return
    if _within(module, "ascenv.commands"):
        targets.discard("ascenv.commands._common")
    assert not targets, f"{module} imports {sorted(targets)}: only ascenv.cli imports commands"


@pytest.mark.parametrize("module", sorted(GRAPH))
def test_only_commands_import_output(module):
    if module == "ascenv.cli" or _within(module, "ascenv.commands") or _within(module, "ascenv.output"):
        return
    targets = {t for t in GRAPH[module] if _within(t, "ascenv.output")}
    assert not targets, f"{module} imports {sorted(targets)}: the core never renders"


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    # Packages import their parents implicitly; an edge to a parent package is not a cycle.
    edges = {m: {t for t in ts if t in graph and not _within(m, t)} for m, ts in graph.items()}
    seen: dict[str, int] = {}  # 1: on the current path, 2: done
    cycles = []

    def walk(node: str, path: list[str]) -> None:
        seen[node] = 1
        for target in sorted(edges[node]):
            if seen.get(target) == 1:
                cycles.append(path[path.index(target) :] + [target] if target in path else [node, target])
            elif target not in seen:
                walk(target, path + [target])
        seen[node] = 2

    for module in sorted(edges):
        if module not in seen:
            walk(module, [module])
    return cycles


def _describe(cycles: list[list[str]]) -> str:
    return "import cycles: " + "; ".join(" -> ".join(c) for c in cycles)


def test_no_import_cycles():
    cycles = _cycles(TYPED_GRAPH)
    assert not cycles, _describe(cycles)


def test_the_cycle_checker_sees_a_cycle_through_a_type_checking_import():
    # the shape issue #25 found: one side imports inside a function, the other for types only
    graph = {"ascenv.a": {"ascenv.b"}, "ascenv.b": {"ascenv.a"}, "ascenv.c": {"ascenv.a"}}
    assert _cycles(graph) == [["ascenv.a", "ascenv.b", "ascenv.a"]]
    assert _cycles({"ascenv.a": {"ascenv.b"}, "ascenv.b": set()}) == []


def test_type_checking_imports_count_for_cycles_only(tmp_path: Path):
    source = tmp_path / "m.py"
    source.write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ascenv.store import Store\n"
        "def f():\n    from ascenv import names\n"
    )
    assert _imports(source, "ascenv.m") == {"ascenv", "ascenv.names"}
    assert _imports(source, "ascenv.m", typing=True) == {"ascenv", "ascenv.names", "ascenv.store"}


# What the probe may stand on: the base modules and ELF reading. package/ reads the same vendor
# trees as the probe, so what both need (ascenv.vendor_layout, ascenv.probe.vendor_tree) lives
# down here and package/ imports it, never the other way (issue #25: probe.vendors -> package.tree).
PROBE_FLOOR = ("ascenv.probe", "ascenv.abi")


def _base(name: str) -> bool:
    return name == "ascenv" or (name.count(".") == 1 and (PACKAGE / name.split(".")[1]).with_suffix(".py").is_file())


def _below_the_floor(module: str, graph: dict[str, set[str]]) -> list[str]:
    """What ``module`` reaches, directly or through other modules (a base module such as
    ascenv.installer may itself import package/), that is above the probe's floor."""
    reached: set[str] = set()
    pending = [module]
    while pending:
        for target in graph.get(pending.pop(), ()):
            if target not in reached:
                reached.add(target)
                pending.append(target)
    return sorted(t for t in reached if not _base(t) and not any(_within(t, p) for p in PROBE_FLOOR))


@pytest.mark.parametrize("module", sorted(m for m in GRAPH if _within(m, "ascenv.probe")))
def test_the_probe_imports_nothing_built_on_it(module):
    above = _below_the_floor(module, TYPED_GRAPH)
    assert not above, f"{module} imports {above}: the probe imports only base modules, ascenv.probe and ascenv.abi"


def test_the_floor_check_names_an_import_of_package_from_the_probe():
    graph = {"ascenv.probe.vendors": {"ascenv.package.tree", "ascenv.model", "ascenv.probe.fs", "ascenv.abi.tree"}}
    assert _below_the_floor("ascenv.probe.vendors", graph) == ["ascenv.package.tree"]


def test_the_floor_check_follows_imports_through_base_modules():
    # the variant: probe -> a core module (ascenv.installer) -> package/, and probe -> probe -> checks
    graph = {
        "ascenv.probe.vendors": {"ascenv.installer", "ascenv.probe.fs"},
        "ascenv.installer": {"ascenv.package.deploy"},
        "ascenv.probe.fs": {"ascenv.checks.vendors"},
    }
    assert _below_the_floor("ascenv.probe.vendors", graph) == ["ascenv.checks.vendors", "ascenv.package.deploy"]


@pytest.mark.parametrize("path", sorted((PACKAGE / "commands").glob("*.py")), ids=lambda p: p.name)
def test_commands_leave_the_format_to_their_renderer(path):
    # parse -> core -> output.<command>.render(out, result, format): the renderer chooses
    source = path.read_text(encoding="utf-8")
    assert "format ==" not in source and '"schema"' not in source, f"{path.name} renders itself"
