"""ascenv.errors is the one error hierarchy: every exception ascenv raises for a user is one of
its classes, each with an exit code from the README's table, and every code of the table can
happen. Read from the source (ast), so a new raise site or a class defined elsewhere fails here."""

from __future__ import annotations

import ast
import builtins
import inspect
import re
from collections.abc import Iterator
from pathlib import Path

from ascenv import errors

PACKAGE = Path(errors.__file__).resolve().parent
README = PACKAGE.parent / "README.md"
# Built-in exceptions mean a bug in ascenv (cli.main turns them into exit 3), never bad input.
PROGRAMMING_ERRORS = {"AssertionError", "TypeError", "ValueError", "LookupError", "KeyboardInterrupt", "SystemExit"}
# Raised where the OS's own errors are handled, as one of them (a descriptor walk refusing "..").
OS_ERRORS = {"OSError"}
# Not failures: success, and Ctrl-C (KeyboardInterrupt, caught by cli.main).
NOT_RAISED = {errors.EXIT_OK, errors.EXIT_INTERRUPTED}


def documented_codes() -> dict[int, str]:
    return {int(c): m for c, m in re.findall(r"^\| (\d+) \| (.+?) \|$", README.read_text(), re.M)}


def error_classes() -> dict[str, type[errors.AscenvError]]:
    return {
        name: cls
        for name, cls in vars(errors).items()
        if inspect.isclass(cls) and issubclass(cls, errors.AscenvError) and cls.__module__ == errors.__name__
    }


# ascenv/guard.py also runs without ascenv, inside a project's package (check --emit-guard): it
# imports nothing of ascenv and fails that package's import with its own ImportError subclass,
# not with an exit code.
STANDALONE = {PACKAGE / "guard.py"}


def modules() -> Iterator[tuple[Path, ast.Module]]:
    for path in sorted(PACKAGE.rglob("*.py")):
        if path not in STANDALONE:
            yield path, ast.parse(path.read_text(encoding="utf-8"), str(path))


def called_name(node: ast.expr) -> str:
    """``X`` of ``X(...)``, ``errors.X(...)``, ``self.x(...)``."""
    func = node.func if isinstance(node, ast.Call) else node
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""


def error_factories(classes: dict) -> set[str]:
    """Functions whose return annotation is an errors class (``versions._bad``, ``compat.fail``)."""
    found = set()
    for _, tree in modules():
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef) and node.returns is not None:
                if called_name(node.returns) in classes:
                    found.add(node.name)
    return found


def interruptions() -> set[str]:
    """errors.py's KeyboardInterrupt kinds (SIGTERM during a write): exit 130, like Ctrl-C."""
    return {n for n, v in vars(errors).items() if inspect.isclass(v) and issubclass(v, KeyboardInterrupt)}


def test_every_raise_site_raises_an_errors_class_with_a_documented_code() -> None:
    classes = error_classes()
    factories = error_factories(classes)
    table = documented_codes()
    wrong = []
    for path, tree in modules():
        for node in ast.walk(tree):
            if not isinstance(node, ast.Raise) or not isinstance(node.exc, ast.Call):
                continue  # a bare re-raise, or `raise failure` of an error made above
            name = called_name(node.exc)
            where = f"{path.relative_to(PACKAGE.parent)}:{node.lineno}: raise {name}"
            if name in classes:
                if classes[name].exit_code not in table:
                    wrong.append(f"{where}: exit code {classes[name].exit_code} is not in the README table")
            elif name not in factories and name not in PROGRAMMING_ERRORS | OS_ERRORS | interruptions():
                wrong.append(f"{where}: not a class of ascenv/errors.py")
    assert wrong == []


def test_no_exception_class_is_defined_outside_errors() -> None:
    exception_names = set(error_classes()) | {n for n, v in vars(builtins).items() if inspect.isclass(v)}
    elsewhere = []
    for path, tree in modules():
        if path.name == "errors.py" and path.parent == PACKAGE:
            continue
        for node in ast.walk(tree):
            # a private class is a module's own control flow (a walk told to stop), never shown
            if isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
                bases = {called_name(b) for b in node.bases}
                if any(
                    b in exception_names and (b in error_classes() or b.endswith(("Error", "Exception"))) for b in bases
                ):
                    elsewhere.append(f"{path.relative_to(PACKAGE.parent)}: class {node.name}")
    assert elsewhere == []


def test_every_documented_code_can_happen() -> None:
    """Each code of the table (but 0 and 130) is carried by an errors class that ascenv creates."""
    classes = error_classes()
    created = set()
    for _, tree in modules():
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and called_name(node) in classes:
                created.add(called_name(node))
    carried = {classes[name].exit_code for name in created}
    assert set(documented_codes()) - NOT_RAISED <= carried
    assert {c.exit_code for c in classes.values()} <= set(documented_codes())
