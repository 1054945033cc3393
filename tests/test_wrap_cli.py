"""`mockmcp wrap --in-place`, `unwrap` and the derived copy: the files, as the command line writes them.

No process runs: the commands are called as `mockmcp.cli.app.main` calls them.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

import mockmcp.wrap._files as wrapping
from mockmcp.cli.app import main
from mockmcp.errors import ConfigError, UsageError
from mockmcp.wrap._files import Wrapping

# CRLF line ends, a byte-order mark, a comment-free JSON the way an editor on another system saves it.
ORIGINAL = (
    '\ufeff{\r\n  "mcpServers": {\r\n    "notes": {"command": "python", "args": ["notes.py"], '
    '"env": {"KEY": "s3cret"}},\r\n    "web": {"url": "https://example.com/mcp"}\r\n  }\r\n}\r\n'
).encode()


@pytest.fixture
def config(tmp_path: Path) -> Path:
    path = tmp_path / ".mcp.json"
    path.write_bytes(ORIGINAL)
    path.chmod(0o600)
    return path


def wrap(config: Path, *options: str) -> None:
    main(["wrap", str(config), *options])


def test_in_place_writes_a_backup_and_unwrap_restores_the_exact_bytes(config: Path) -> None:
    wrap(config, "--in-place")
    backup = Path(str(config) + wrapping.BACKUP)
    assert backup.read_bytes() == ORIGINAL
    wrapped = json.loads(config.read_text(encoding="utf-8-sig"))
    assert wrapped["mcpServers"]["notes"]["args"][:3] == ["-m", "mockmcp", "record"]
    assert wrapped["mcpServers"]["web"]["url"].startswith("http://127.0.0.1:")
    assert config.read_bytes().count(b"\r\n") == ORIGINAL.count(b"\r\n")
    assert (config.stat().st_mode & 0o777, backup.stat().st_mode & 0o777) == (0o600, 0o600)
    with pytest.raises(ConfigError, match="wrapped already"):
        wrapping.wrap_config(str(config), Wrapping(in_place=True))
    main(["unwrap", str(config)])
    assert config.read_bytes() == ORIGINAL
    assert sorted(p.name for p in config.parent.iterdir()) == [".mcp.json"]


def test_in_place_refuses_a_file_changed_after_it_was_read(config: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    derive = wrapping.derive
    by_the_host = ORIGINAL.replace(b'"web"', b'"new": {"command": "x"},\r\n    "web"')

    def meanwhile(*args: object) -> object:
        config.write_bytes(by_the_host)  # a host saves the file while wrap works
        return derive(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(wrapping, "derive", meanwhile)
    with pytest.raises(ConfigError, match="changed after mockmcp read it") as raised:
        wrapping.wrap_config(str(config), Wrapping(in_place=True))
    assert str(config) in raised.value.render() and "how to fix" in raised.value.render()
    assert config.read_bytes() == by_the_host  # the host's change is kept, nothing else written
    assert sorted(p.name for p in config.parent.iterdir()) == [".mcp.json"]


def test_unwrap_keeps_what_a_host_changed_after_the_wrap(config: Path) -> None:
    wrap(config, "--in-place")
    text = config.read_text(encoding="utf-8")
    config.write_text(text.replace('"web"', '"added": {"command": "by-the-host"},\r\n    "web"'), encoding="utf-8")
    main(["unwrap", str(config)])
    restored = json.loads(config.read_text(encoding="utf-8-sig"))
    original = json.loads(ORIGINAL.decode("utf-8-sig"))
    assert restored["mcpServers"]["notes"] == original["mcpServers"]["notes"]
    assert restored["mcpServers"]["web"] == original["mcpServers"]["web"]
    assert restored["mcpServers"]["added"] == {"command": "by-the-host"}
    assert Path(str(config) + wrapping.BACKUP).read_bytes() == ORIGINAL  # kept: the file is not the original


def test_the_derived_copy_is_the_default_and_never_replaces_a_file_it_did_not_write(config: Path) -> None:
    wrap(config, "--replay")
    derived = config.with_name(".mcp.mockmcp.json")
    assert json.loads(derived.read_text(encoding="utf-8-sig"))["mcpServers"]["notes"]["args"][2] == "replay"
    assert config.read_bytes() == ORIGINAL and derived.stat().st_mode & 0o777 == 0o600
    wrap(config)  # its own earlier copy is replaced
    assert "record" in derived.read_text(encoding="utf-8")
    mine = config.with_name("mine.json")
    mine.write_text("{}")
    with pytest.raises(ConfigError, match="mockmcp wrap did not write it"):
        wrapping.wrap_config(str(config), Wrapping(output=str(mine)))
    with pytest.raises(UsageError, match="names the config itself"):
        wrapping.wrap_config(str(config), Wrapping(output=str(config)))
    main(["unwrap", str(derived)])
    assert derived.read_bytes() == ORIGINAL
    with pytest.raises(ConfigError, match="did not write this file"):
        wrapping.unwrap_config(str(config))


def test_cassettes_go_where_asked_and_the_mode_is_passed_on(config: Path, tmp_path: Path) -> None:
    wrap(
        config,
        "--cassettes",
        str(tmp_path / "tapes"),
        "--record-mode",
        "new_episodes",
        "-o",
        str(tmp_path / "out.json"),
    )
    notes = json.loads((tmp_path / "out.json").read_text(encoding="utf-8-sig"))["mcpServers"]["notes"]
    # Claude Code starts the servers of a project's .mcp.json in its folder: the cassette, in it, is written from
    # there (tests/test_wrap.py has the rule's table); the Python that has mockmcp lies elsewhere, and stays absolute.
    assert notes["command"] == sys.executable
    assert notes["args"][3:8] == ["-o", "./tapes/notes.yaml", "--record-mode", "new_episodes", "--redact-env"]
    sidecar = json.loads((tmp_path / ("out.json" + wrapping.SIDECAR)).read_text())
    assert sidecar["mode"] == "new"  # the stored value, as sidecars written before kept it
    assert [r["name"] for r in sidecar["remote"]] == ["web"] and sidecar["remote"][0][
        "url"
    ] == "https://example.com/mcp"
    assert os.path.isabs(sidecar["remote"][0]["cassette"])


def test_the_plugins_derived_config_points_each_server_at_its_mock_server(config: Path, tmp_path: Path) -> None:
    """What `mockmcp.config` writes for `config=`: the stdio command the plugin gives, the remote URL it started."""
    from mockmcp.plugin._mock_server import read_configured

    hosted = read_configured(config, {})
    assert hosted.servers == {"notes": ["python", "notes.py"], "web": ["https://example.com/mcp"]}
    assert hosted.env == {"notes": {"KEY": "s3cret"}}  # a stdio server's variables: redacted from its recording
    out = tmp_path / "derived"
    out.mkdir()
    written = hosted.derived(
        out, {"notes": ["/py", "-m", "mockmcp", "replay", "x.yaml"]}, "http://127.0.0.1:1/{}".format
    )
    servers = json.loads(written.read_text(encoding="utf-8-sig"))["mcpServers"]
    assert servers["notes"] == {
        "command": "/py",
        "args": ["-m", "mockmcp", "replay", "x.yaml"],
        "env": {"KEY": "s3cret"},
    }
    assert servers["web"] == {"url": "http://127.0.0.1:1/web"}


def test_a_config_with_nothing_to_wrap_says_why_and_writes_nothing(tmp_path: Path) -> None:
    config = tmp_path / "mcp.json"
    config.write_text('{"mcpServers": {"old": {"url": "http://127.0.0.1:1/sse"}}}')
    with pytest.raises(ConfigError, match="no server to wrap \\(old: an SSE server") as raised:
        wrapping.wrap_config(str(config), Wrapping())
    assert "how to fix" in raised.value.render() and sorted(p.name for p in tmp_path.iterdir()) == ["mcp.json"]
