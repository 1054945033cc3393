"""`mockmcp wrap --in-place`, `unwrap` and the derived copy: the files, as the command line writes them.

No process runs: the commands are called as `mockmcp.cli.app.main` calls them.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import SHIPPED

import mockmcp.wrap._files as wrapping
from mockmcp._wire.words import RecordMode
from mockmcp.cassette.files import mark_run, this_run
from mockmcp.cli.app import main
from mockmcp.errors import ConfigError, UsageError
from mockmcp.wrap._files import Wrapping
from mockmcp.wrap._rules import Remote
from mockmcp.wrap._serve import Served

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
    config.write_text('{"mcpServers": {"old": {"name": "built-in"}}}')
    with pytest.raises(ConfigError, match="no server to wrap \\(old: no command and no URL") as raised:
        wrapping.wrap_config(str(config), Wrapping())
    assert "how to fix" in raised.value.render() and sorted(p.name for p in tmp_path.iterdir()) == ["mcp.json"]


# --- what a repository can plant where wrap writes -----------------------------------------------------------


def sidecar_of(path: Path) -> Path:
    return Path(str(path) + wrapping.SIDECAR)


PLANTED = [  # the link, what it points at, whether wrap is in place, and what it says
    (".mcp.mockmcp.json", "victim", False, "is a symbolic link"),
    (".mcp.mockmcp.json.mockmcp-wrap.json", "victim", False, "is a symbolic link"),
    (".mcp.mockmcp.json", "nowhere", False, "is a symbolic link"),
    (".mcp.json.mockmcp-wrap.json", "nowhere", True, "wrapped already"),
    (".mcp.json.mockmcp-backup", "victim", True, "wrapped already"),
]


@pytest.mark.parametrize(("link", "target", "in_place", "said"), PLANTED)
def test_a_link_planted_where_wrap_writes_is_refused_and_its_target_untouched(
    config: Path, tmp_path: Path, link: str, target: str, in_place: bool, said: str
) -> None:
    """Even with a sidecar that vouches for the link's target (its source, its digest): wrap writes nothing."""
    victim = tmp_path / "victim"
    victim.write_bytes(b"the user's own file\n")
    derived = config.with_name(".mcp.mockmcp.json")
    vouching = {"wrapped_by": "mockmcp wrap", "version": 1, "format": "mcpServers", "source": str(config)}
    vouching |= {"backup": None, "replay": False, "mode": "once", "original_blake2b": "", "edits": [], "remote": []}
    vouching["derived_blake2b"] = wrapping.files.digest(victim.read_bytes())
    if not link.endswith(wrapping.SIDECAR):
        sidecar_of(derived).write_text(json.dumps(vouching))
    (tmp_path / link).symlink_to(tmp_path / target)
    before = sorted(p.name for p in tmp_path.iterdir())
    with pytest.raises(ConfigError, match=said) as raised:
        wrapping.wrap_config(str(config), Wrapping(in_place=in_place))
    assert str(tmp_path / (".mcp.json" if in_place else link)) in raised.value.render()
    assert victim.read_bytes() == b"the user's own file\n" and config.read_bytes() == ORIGINAL
    assert sorted(p.name for p in tmp_path.iterdir()) == before and not (tmp_path / "nowhere").exists()


def test_wrap_replaces_a_file_only_when_its_sidecar_vouches_for_it(config: Path, tmp_path: Path) -> None:
    """A sidecar is trusted when it parses, names this config, and holds the digest of the file beside it."""
    wrap(config)
    derived = config.with_name(".mcp.mockmcp.json")
    sidecar = json.loads(sidecar_of(derived).read_text())
    other = tmp_path / "other.json"
    other.write_bytes(ORIGINAL)
    with pytest.raises(ConfigError, match=r"from another config \(.*\.mcp\.json\)"):
        wrapping.wrap_config(str(other), Wrapping(output=str(derived)))
    derived.write_text(derived.read_text(encoding="utf-8") + " ")  # edited since
    with pytest.raises(ConfigError, match="changed since mockmcp wrap wrote it"):
        wrapping.wrap_config(str(config), Wrapping())
    victim = tmp_path / "victim.json"  # a planted sidecar beside a file of the user's
    victim.write_text('{"mine": 1}')
    planted = {**sidecar, "source": str(config)}
    sidecar_of(victim).write_text(json.dumps(planted))
    with pytest.raises(ConfigError, match="changed since mockmcp wrap wrote it"):
        wrapping.wrap_config(str(config), Wrapping(output=str(victim)))
    del planted["derived_blake2b"]  # as an older sidecar without the digest
    sidecar_of(victim).write_text(json.dumps(planted))
    with pytest.raises(ConfigError, match="records no digest of the file") as raised:
        wrapping.wrap_config(str(config), Wrapping(output=str(victim)))
    assert "delete both and run `mockmcp wrap` again" in raised.value.render()
    sidecar_of(victim).write_text("not json")
    with pytest.raises(ConfigError, match=r"victim\.json\.mockmcp-wrap\.json:1:"):
        wrapping.wrap_config(str(config), Wrapping(output=str(victim)))
    assert victim.read_text() == '{"mine": 1}'


TAMPERED = [
    ("edits", "a list", lambda s: s.update(edits={"a": 1})),
    ("edits.0.place", "a list of keys", lambda s: s["edits"][0].pop("place")),
    ("edits.1", "a mapping", lambda s: s["edits"].__setitem__(1, "x")),
    ("remote.0.port", "a port", lambda s: s["remote"][0].update(port="80")),
    ("mode", "a record mode", lambda s: s.update(mode="sometimes")),
    ("format", "one of mcpServers", lambda s: s.pop("format")),
]


@pytest.mark.parametrize(("field", "must", "tamper"), TAMPERED, ids=[row[0] for row in TAMPERED])
def test_unwrap_and_serve_refuse_a_tampered_sidecar_with_its_field_and_line(
    config: Path, field: str, must: str, tamper: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    wrap(config)
    derived = config.with_name(".mcp.mockmcp.json")
    data = json.loads(sidecar_of(derived).read_text())
    tamper(data)
    sidecar_of(derived).write_text(json.dumps(data, indent=2))
    wrapped = derived.read_bytes()
    capsys.readouterr()
    for command in ("unwrap", "serve"):
        with pytest.raises(SystemExit):
            main([command, str(derived)])
        said = capsys.readouterr().err
        assert f"{sidecar_of(derived)}:" in said and f"{field}: must be {must}" in said, said
        assert "Traceback" not in said and "how to fix" in said
    assert derived.read_bytes() == wrapped


def test_a_sidecar_field_no_record_has_is_left_out(config: Path) -> None:
    """A field the reader does not know (a later mockmcp's), at the top or in an edit or a remote server."""
    wrap(config)
    derived = config.with_name(".mcp.mockmcp.json")
    data = json.loads(sidecar_of(derived).read_text())
    for item in (data, data["edits"][0], data["remote"][0]):
        item["later"] = 1
    sidecar_of(derived).write_text(json.dumps(data))
    main(["unwrap", str(derived)])
    assert derived.read_bytes() == ORIGINAL and not sidecar_of(derived).exists()


def test_unwrap_refuses_a_sidecar_naming_a_backup_elsewhere(config: Path, tmp_path: Path) -> None:
    wrap(config, "--in-place")
    data = json.loads(sidecar_of(config).read_text())
    victim = tmp_path / "victim"
    victim.write_bytes(ORIGINAL)
    data["backup"] = str(victim)
    sidecar_of(config).write_text(json.dumps(data))
    with pytest.raises(ConfigError, match=r"names .*victim as the backup"):
        wrapping.unwrap_config(str(config))
    assert victim.read_bytes() == ORIGINAL


@pytest.mark.parametrize(("saved_by", "serves"), [("this run", "RecordingProxy"), ("another run", "HttpReplay")])
def test_serve_records_on_into_a_remote_cassette_its_run_saved_and_replays_another_runs(
    tmp_path: Path, saved_by: str, serves: str
) -> None:
    """`mockmcp serve` started again by the host whose run saved a remote entry's cassette goes on recording it
    (its sessions are added whole), as a later start of a stdio server does; under `once`, another run's is
    replayed."""
    cassette = tmp_path / "web.yaml"
    shutil.copyfile(SHIPPED / "notes.yaml", cassette)
    mark_run(str(cassette), this_run() if saved_by == "this run" else "1@1/another boot")
    remote = Remote("web", "http://127.0.0.1:9/mcp", 0, "/mcp", str(cassette), ())
    served = Served.start(remote, remote.url, RecordMode.ONCE, replay=False)
    try:
        assert type(served.server).__name__ == serves, served.said
    finally:
        served.abandon()
    assert not Path(f"{cassette}.journal").exists()
