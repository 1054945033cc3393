"""The shape rules of docs/architecture.md, held against the code: sizes, layers, and wings behind facades."""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import pytest
from conftest import ROOT

PACKAGE = ROOT / "mockmcp"
MAX_CLASS_LINES = 300
MAX_CLASS_ATTRIBUTES = 15
MAX_FUNCTION_LINES = 60
MAX_FACADE_LINES = 300
# What still breaks a size rule, with its size today: an entry may only shrink, and goes when the rule holds.
OVER: dict[str, int] = {}
WINGS = ("html", "http", "inprocess", "plugin", "record", "tools", "wrap")


def _sources() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


@functools.cache
def _imports_from() -> tuple[tuple[Path, int, str, tuple[str, ...]], ...]:
    """Every `from X import names` of the package, as (file, line, X, names): parsed once, read by each wing's test."""
    found = []
    for path in _sources():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module:
                found.append((path, node.lineno, node.module, tuple(a.name for a in node.names)))
    return tuple(found)


def _name(path: Path) -> str:
    return ".".join(path.relative_to(ROOT).with_suffix("").parts)


def _attributes(node: ast.ClassDef) -> set[str]:
    """A class's instance attributes: its slots, its fields (annotated names), what its methods set on self."""
    found: set[str] = set()
    for item in node.body:
        if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
            found.add(item.target.id)
        elif isinstance(item, ast.Assign) and any(getattr(t, "id", None) == "__slots__" for t in item.targets):
            names = (e.value for e in ast.walk(item.value) if isinstance(e, ast.Constant))
            found.update(name for name in names if isinstance(name, str))
    for method in (n for n in node.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))):
        for sub in ast.walk(method):
            if isinstance(sub, ast.Assign):
                targets = sub.targets
            elif isinstance(sub, (ast.AnnAssign, ast.AugAssign)):
                targets = [sub.target]
            else:
                continue
            for target in targets:
                for leaf in ast.walk(target):
                    if isinstance(leaf, ast.Attribute) and isinstance(leaf.value, ast.Name) and leaf.value.id == "self":
                        found.add(leaf.attr)
    return found


def _sizes() -> dict[str, int]:
    """Every class and function over a size rule: `module:Qualified.name (what)` -> its size."""
    over: dict[str, int] = {}

    def visit(node: ast.AST, module: str, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef):
                name = f"{module}:{prefix}{child.name}"
                lines = child.end_lineno - child.lineno + 1
                if lines > MAX_CLASS_LINES:
                    over[f"{name} (lines)"] = lines
                count = len(_attributes(child))
                if count > MAX_CLASS_ATTRIBUTES:
                    over[f"{name} (attributes)"] = count
                visit(child, module, f"{prefix}{child.name}.")
            elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                lines = child.end_lineno - child.lineno + 1
                if lines > MAX_FUNCTION_LINES:
                    over[f"{module}:{prefix}{child.name} (lines)"] = lines
                visit(child, module, f"{prefix}{child.name}.")

    for path in _sources():
        visit(ast.parse(path.read_text(encoding="utf-8")), _name(path), "")
    return over


def test_no_class_or_function_outgrows_the_size_rules() -> None:
    over = _sizes()
    grown = {name: size for name, size in over.items() if size > OVER.get(name, 0)}
    rules = f"classes {MAX_CLASS_LINES} lines, {MAX_CLASS_ATTRIBUTES} attributes; functions {MAX_FUNCTION_LINES} lines"
    assert not grown, f"over the size rules ({rules}): {grown}"
    gone = sorted(set(OVER) - set(over))
    assert not gone, f"these hold the rules now: take them out of OVER: {gone}"


@pytest.mark.parametrize("wing", WINGS)
def test_a_wing_is_reached_only_through_its_facade(wing: str) -> None:
    facade = PACKAGE / wing / "__init__.py"
    assert len(facade.read_text(encoding="utf-8").splitlines()) <= MAX_FACADE_LINES
    inside = [p for p in (PACKAGE / wing).rglob("*.py") if p.name != "__init__.py"]
    # a module of a private folder is private (`inprocess/_boot/sitecustomize.py` must have Python's name for it)
    public = [p.name for p in inside if not any(part.startswith("_") for part in p.relative_to(PACKAGE / wing).parts)]
    public = [name for name in public if name != "pytest_plugin.py"]
    assert not public, f"the {wing} wing's modules are private (_name.py): {public}"
    for path, line, module, names in _imports_from():
        if path.is_relative_to(PACKAGE / wing) or path == PACKAGE / "__init__.py":
            continue
        if module.startswith(f"mockmcp.{wing}"):
            private = module != f"mockmcp.{wing}" or any(name.startswith("_") for name in names)
            where = f"{_name(path)}:{line}"
            assert not private, f"{where} reaches into the {wing} wing ({module}): import from its facade"
