"""Package hygiene: every module's public API is an explicit, sorted __all__ of names it defines."""

from __future__ import annotations

import importlib
import pkgutil

import pytest

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
