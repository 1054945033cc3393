"""Package hygiene: every module's public API is an explicit, sorted __all__ of names it defines; and the package
the suite tests is this checkout's, in its own process and in those it starts."""

from __future__ import annotations

import importlib
import importlib.util
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT

import mockmcp

MODULES = sorted(
    name for _finder, name, _pkg in pkgutil.walk_packages(mockmcp.__path__, "mockmcp.") if not name.endswith("__main__")
)


@pytest.mark.parametrize("name", MODULES)
def test_all_is_sorted_and_complete(name: str) -> None:
    module = importlib.import_module(name)
    exported = module.__all__
    assert exported == sorted(exported), f"{name}.__all__ is not sorted"
    missing = [symbol for symbol in exported if not hasattr(module, symbol)]
    assert not missing, f"{name}.__all__ names what it does not define: {missing}"


# The layers, lowest first: a module imports from its own layer and the ones below, never above, so
# the folders show the architecture (see the table in docs/architecture.md). Every import counts, deferred ones too.
LAYERS = {
    "ground": 0,  # mockmcp/{errors,options}.py, mockmcp/_wire/ and the package itself
    "cassette": 1,
    "engine": 2,
    # the shells over stdio and the wings: each wing reached through its facade (tests/test_structure.py)
    "stdio": 3,
    "record": 3,
    "http": 3,
    "inprocess": 3,
    "tools": 3,
    "html": 3,
    # the front doors
    "cli": 4,
    "wrap": 4,
    "plugin": 4,
    "__main__": 5,
}
# The engine does no I/O: of the cassette it sees the data and its validation, never the files.
ENGINE_MAY_USE = {"mockmcp.cassette.model", "mockmcp.cassette.validation"}


def _layer(module: str) -> str:
    parts = module.split(".")
    if len(parts) == 1 or parts[1] not in LAYERS:
        return "ground"  # errors, options, _wire
    return parts[1]


def _imports(name: str) -> set[str]:
    """The mockmcp modules that module `name` imports, anywhere in its body."""
    import ast

    spec = importlib.util.find_spec(name)
    assert spec is not None and spec.origin is not None
    tree = ast.parse(Path(spec.origin).read_text(encoding="utf-8"))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names if alias.name.startswith("mockmcp"))
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("mockmcp"):
            for alias in node.names:  # `from mockmcp.engine import replay` imports mockmcp.engine.replay
                candidate = f"{node.module}.{alias.name}"
                found.add(
                    candidate if importlib.util.find_spec(node.module).submodule_search_locations else node.module
                )
    return found


@pytest.mark.parametrize("name", [*MODULES, "mockmcp.__main__"])
def test_imports_run_down_the_layers(name: str) -> None:
    own = _layer(name)
    for target in sorted(_imports(name)):
        if target == "mockmcp.__version__" or target == "mockmcp":
            continue
        assert LAYERS[_layer(target)] <= LAYERS[own], f"{name} ({own}) imports {target} ({_layer(target)})"
        if own == "engine" and _layer(target) == "cassette":
            assert target in ENGINE_MAY_USE, f"{name} is pure but imports {target}"


def test_the_suite_and_every_process_it_starts_import_this_checkouts_package(tmp_path: Path) -> None:
    # A copy of the checkout keeps a virtual environment whose editable install points at the original: the
    # processes tests start away from the checkout (the plugin's launches in a pytest run inside a test) would
    # import that one and test other code than this, passing or failing for nothing here.
    assert Path(mockmcp.__file__).resolve().parent == ROOT / "mockmcp"
    done = subprocess.run(
        [sys.executable, "-c", "import mockmcp; print(mockmcp.__file__)"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert Path(done.stdout.strip()).resolve().parent == ROOT / "mockmcp"
