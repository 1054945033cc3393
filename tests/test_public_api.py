"""The curated API at the top of the package: what users' fixtures and helpers import, and only that."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from conftest import SHIPPED

import mockmcp


def test_a_helper_loads_edits_and_saves_a_cassette_through_the_top_level_names(tmp_path: Path) -> None:
    cassette = mockmcp.load(str(SHIPPED / "notes-session.yaml"))
    assert isinstance(cassette, mockmcp.Cassette)
    assert all(isinstance(i, mockmcp.Interaction) for i in cassette.interactions)
    slow = [i._replace(delay=1.5) if i.method == "tools/call" else i for i in cassette.interactions]
    target = tmp_path / "slow.yaml"
    mockmcp.save(cassette._replace(interactions=tuple(slow)), str(target))
    again = mockmcp.loads(target.read_text(), str(target))
    assert [i.delay for i in again.interactions if i.method == "tools/call"] == [1.5] * len(
        [i for i in slow if i.method == "tools/call"]
    )


def test_bad_input_raises_the_public_errors() -> None:
    with pytest.raises(mockmcp.CassetteError) as raised:
        mockmcp.loads("version: 1\ninteractions: {}\n", "bad.yaml")
    assert isinstance(raised.value, mockmcp.MockmcpError) and "bad.yaml" in str(raised.value)
    assert issubclass(mockmcp.UsageError, mockmcp.MockmcpError)
    assert issubclass(mockmcp.StrictFailure, mockmcp.MockmcpError)


def test_every_public_name_resolves_and_nothing_else_does() -> None:
    assert all(getattr(mockmcp, name) is not None for name in mockmcp.__all__)
    assert mockmcp.MockServer.__module__ == "mockmcp.plugin._mock_server"  # a private home, a public name
    assert dir(mockmcp) == sorted(mockmcp.__all__)  # no TYPE_CHECKING, annotations or private tables shown
    assert issubclass(mockmcp.ConfigError, mockmcp.MockmcpError)
    with pytest.raises(AttributeError, match="no attribute 'replay'"):
        mockmcp.replay  # noqa: B018


def test_importing_the_package_imports_none_of_what_it_exports() -> None:
    code = "import sys, mockmcp; print(sorted(m for m in sys.modules if m.startswith(('mockmcp.', 'yaml'))))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=30, check=True)
    assert out.stdout.strip() == "[]"
