"""What `mockmcp wrap`, `unwrap` and `serve` do: the files around the pure rules of `_rules`.

`wrap` writes a derived copy, or with `--in-place` the config after a byte-for-byte backup, and a sidecar
beside it. No file changes silently: the bytes read are compared with those on disk just before the atomic
write, so a file changed meanwhile makes wrap refuse; a file wrap chooses is never written through a symbolic
link (a repository could plant one pointing anywhere). `unwrap` restores what wrap changed and keeps what
anyone else did, or the backup's exact bytes when nothing else changed.
"""

from __future__ import annotations

import os
import socket
import sys
from pathlib import Path
from typing import NamedTuple

from mockmcp._wire.words import RecordMode
from mockmcp.cassette import files
from mockmcp.cli.replaying import http_extra, note
from mockmcp.errors import ConfigError, MockmcpError, UsageError
from mockmcp.wrap._hostconfig import Config, detect, host_path, read_config
from mockmcp.wrap._rules import Remote, cassette_names, derive, expand, local_url, remote, restore, wrapped_command
from mockmcp.wrap._sidecar import BACKUP, SIDECAR, Sidecar, read_sidecar, vouch

TYPE_CHECKING = False
if TYPE_CHECKING:
    from mockmcp.stdio.toolkit import Signals

__all__ = ["BACKUP", "SIDECAR", "Wrapping", "read_text", "serve_config", "unwrap_config", "wrap_config"]


def _derived_path(config: str) -> str:
    """The default derived copy: `name.mockmcp.ext` beside the config (`.mcp.json` -> `.mcp.mockmcp.json`)."""
    path = Path(config)
    return str(path.with_name(f"{path.stem}.mockmcp{path.suffix}"))


def _read(path: str) -> tuple[bytes, str]:
    try:
        raw = Path(path).read_bytes()
    except FileNotFoundError:
        raise ConfigError("no such file", path=path, fix="give the path of the host's MCP config") from None
    try:
        return raw, raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"not UTF-8 text (byte {exc.start})", path=path, fix="save the config as UTF-8") from None


def read_text(path: str) -> str:
    """A config's text (UTF-8); raises ConfigError for a missing or undecodable file."""
    return _read(path)[1]


def _not_a_link(path: str) -> None:
    if os.path.islink(path):
        raise ConfigError(
            "is a symbolic link: mockmcp wrap writes this file itself, never through a link (which could point "
            "at any file of yours): nothing was written",
            path=path,
            fix="remove the link (check who put it there), or name another file with -o",
        )


def _write(path: str, text: str, read: bytes | None, mode: int | None = None, linked: bool = False) -> None:
    """Write atomically; `read`: the bytes the file held when read, which it must still hold (None: new file);
    `linked`: path may be a symbolic link (the user's own config, wrapped in place), written at its target."""
    if not linked:
        _not_a_link(path)
    now = _current(path)
    if now != read:
        raise ConfigError(
            "the file changed after mockmcp read it (a host or an editor wrote it meanwhile): nothing was written",
            path=path,
            fix="run the command again",
        )
    made = mode is not None and now is None
    if made:  # made with its mode first: a config's copy may hold secrets
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode))
    try:
        files.atomic_write(path, text)  # (keeps the mode the file has)
    except BaseException:
        if made:
            os.unlink(path)
        raise
    if mode is not None:
        os.chmod(path, mode)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class Wrapping(NamedTuple):
    """What `mockmcp wrap` was asked: how every server goes through mockmcp, and what is written where."""

    replay: bool = False  # every server replays its cassette (else records, in mode)
    mode: RecordMode = RecordMode.ONCE
    output: str | None = None  # the derived config (None: NAME.mockmcp.EXT beside the config)
    in_place: bool = False  # the config itself, after a backup
    cassettes: str | None = None  # their folder (None: cassettes/ beside what is written)
    fmt: str | None = None  # the config's format, when its name and shape do not tell


def wrap_config(path: str, how: Wrapping) -> str:
    """Write the derived config (or wrap the config in place); returns the path written. Raises ConfigError."""
    output, in_place, replay, mode = how.output, how.in_place, how.replay, how.mode
    if in_place and (os.path.lexists(path + BACKUP) or os.path.lexists(path + SIDECAR)):
        raise ConfigError(
            "is wrapped already (its backup is there)", path=path, fix=f"run `mockmcp unwrap {path}` first"
        )
    raw, text = _read(path)
    config = read_config(text, how.fmt or detect(path, text), path)
    out = path if in_place else output or _derived_path(path)
    if not in_place and os.path.abspath(out) == os.path.abspath(path):
        raise UsageError("-o names the config itself", "to change the config, say --in-place (a backup is written)")
    for chosen in [out + SIDECAR] if in_place else [out, out + SIDECAR]:
        _not_a_link(chosen)  # before anything is written
    if os.path.lexists(out) and not in_place:
        vouch(out, path)
    folder = Path(how.cassettes or Path(out).parent / "cassettes").absolute()
    commands, urls, remotes = _wrapped(config, folder, replay, mode)
    derived, edits = derive(config, commands, urls)
    source_mode = os.stat(path).st_mode & 0o777
    backup = path + BACKUP if in_place else None
    if backup is not None:
        _write(backup, text, None, source_mode)
    sidecar = Sidecar(
        config.format,
        os.path.abspath(path),
        backup and os.path.abspath(backup),
        replay,
        mode,
        files.digest(raw),
        files.digest(derived.encode("utf-8")),
        tuple(edits),
        tuple(remotes),
    )
    try:
        _write(out, derived, raw if in_place else _current(out), source_mode, linked=in_place)
    except BaseException:
        if backup is not None:
            os.unlink(backup)
        raise
    _write(out + SIDECAR, sidecar.text(), _current(out + SIDECAR), source_mode)
    _tell(config, out, commands, urls, replay)
    return out


def _wrapped(
    config: Config, folder: Path, replay: bool, mode: RecordMode
) -> tuple[dict[str, list[str]], dict[str, str], list[Remote]]:
    """Each server's new value: a stdio one's command line, a remote one's local URL (and what serve runs)."""
    names = cassette_names(config.entries)
    commands, urls, remotes = {}, {}, []
    source = Path(os.path.abspath(config.path or "."))
    python = host_path(config.format, source, Path(sys.executable))  # where the host resolves it, as the host does
    for entry in config.entries:
        cassette = str(folder / names.get(entry.name, ""))
        if entry.kind == "stdio":
            written = host_path(config.format, source, Path(cassette))
            commands[entry.name] = wrapped_command(config, entry, python, written, replay, mode.word)
        elif entry.kind in ("http", "sse"):
            served = remote(config, entry, _free_port(), cassette)
            urls[entry.name] = local_url(served.port, served.path)
            remotes.append(served)
    if not commands and not urls:
        said = "; ".join(f"{entry.name}: {entry.why}" for entry in config.entries) or "it lists none"
        raise ConfigError(
            f"no server to wrap ({said})",
            path=config.path,
            fix="wrap a config that lists a stdio, Streamable HTTP or SSE server",
        )
    return commands, urls, remotes


def _current(path: str) -> bytes | None:
    return Path(path).read_bytes() if os.path.exists(path) else None


def _tell(config: Config, out: str, commands: dict[str, list[str]], urls: dict[str, str], replay: bool) -> None:
    doing = "replays" if replay else "records"
    for entry in config.entries:
        if entry.name in commands:  # the cassette's absolute path, where the command line names it
            note(f"{entry.name}: {doing} {commands[entry.name][4] if replay else commands[entry.name][5]}")
        elif entry.name in urls:
            note(f"{entry.name}: points at {urls[entry.name]}, which `mockmcp serve {out}` {doing}")
        else:
            note(f"{entry.name}: left as it is ({entry.why})")
    note(f"wrote {out}; `mockmcp unwrap {out}` undoes it")


def unwrap_config(path: str) -> None:
    """Undo `mockmcp wrap` on the file it wrote: the original values, or the backup's bytes. Raises ConfigError."""
    sidecar = read_sidecar(path)
    backup = sidecar.backup
    if backup is not None and backup != os.path.abspath(path + BACKUP):
        raise ConfigError(
            f"names {backup} as the backup, where mockmcp wrap keeps it beside the config: nothing was restored",
            path=path + SIDECAR,
            fix=f"restore {path} by hand; this sidecar is not one mockmcp wrap wrote",
        )
    raw, text = _read(path)
    restored, left = restore(read_config(text, sidecar.format, path), sidecar.edits)
    untouched = files.digest(raw) == sidecar.derived_blake2b
    if untouched and backup and os.path.exists(backup):
        kept = Path(backup).read_bytes()
        if files.digest(kept) != sidecar.original_blake2b:
            raise ConfigError(
                "the backup changed since mockmcp wrap wrote it: nothing was restored",
                path=backup,
                fix=f"compare it with {path} and restore by hand",
            )
        restored = kept.decode("utf-8")
    _write(path, restored, raw, linked=True)
    for entry in left:
        note(f"{entry}: changed since mockmcp wrap, so left as it is")
    if backup and os.path.exists(backup) and (left or not untouched):
        note(f"{path} changed since it was wrapped: its other changes are kept; the backup stays at {backup}")
    elif backup and os.path.exists(backup):
        os.unlink(backup)
    if not left:
        os.unlink(path + SIDECAR)
    note(f"unwrapped {path}")


def serve_config(path: str) -> None:
    """Run the recording proxies (or replays) of every remote server of a wrapped config, until SIGINT or SIGTERM."""
    sidecar = read_sidecar(path)
    remotes = sidecar.remote
    if not remotes:
        raise UsageError(f"{path} has no remote server to serve", "its stdio servers run when the host launches them")
    try:  # h11 is optional (mockmcp[http])
        from mockmcp.http import serve_together
        from mockmcp.wrap._serve import Served
    except ImportError as exc:
        raise http_extra("serving", exc) from None
    running: list[Served] = []
    try:
        for served in remotes:
            target = expand(served.url, os.environ, served.name)
            running.append(Served.start(served, target, sidecar.mode, sidecar.replay))
    except BaseException:
        for each in running:
            each.abandon()
        raise

    def ready() -> None:
        for each in running:
            note(each.said)
        note("serving until Ctrl-C or SIGTERM")

    failures: list[MockmcpError] = []

    def finish(signals: Signals) -> None:
        failures.extend(error for each in running if (error := each.finish(signals)) is not None)

    serve_together([each.server for each in running], ready, finish)
    if failures:
        raise failures[0]
