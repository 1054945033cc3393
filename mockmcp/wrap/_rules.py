"""`mockmcp wrap`'s rules: a host's config with every server going through mockmcp, and back again. Pure.

A derived config is the user's text with a few values replaced: a stdio entry's command line by `python -m
mockmcp record -o CASSETTE ... COMMAND ARGS` (or `replay`), a remote entry's URL by where `mockmcp serve` listens.
Each change is an `Edit`, so `restore(derive(x)) == x` byte for byte, and an entry changed since is left as it is.
No secret reaches a cassette: env keys become `--redact-env KEY`, `${...}` references `--substitute NAME=${...}`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple

from mockmcp._wire.words import Place
from mockmcp.errors import ConfigError, UsageError
from mockmcp.wrap._hostconfig import FORMATS, Config, Entry, references

__all__ = ["Edit", "Remote", "cassette_names", "derive", "expand", "local_url", "remote", "restore", "wrapped_command"]


class Edit(NamedTuple):
    """One value wrap changed: its place, the text wrap wrote, and the text it replaced (None: inserted after it)."""

    entry: str
    place: Place
    wrapped: str
    original: str | None


class Remote(NamedTuple):
    """A remote entry as `mockmcp serve` runs it: the original URL (references unexpanded), the local port and
    path, the cassette, and the variables whose values must never reach it."""

    name: str
    url: str
    port: int
    path: str
    cassette: str
    secrets: tuple[str, ...]


def _text(value: Any) -> str:
    """A value as wrap writes it: JSON, which is also a YAML flow value and (for strings and lists) TOML."""
    return json.dumps(value, ensure_ascii=False)


def cassette_names(entries: Iterable[Entry]) -> dict[str, str]:
    """Each wrapped entry's cassette file name, `<name>.yaml`; raises ConfigError when two would share one."""
    names: dict[str, str] = {}
    for entry in entries:
        if entry.kind == "skipped":
            continue
        file = re.sub(r"[^A-Za-z0-9._-]", "_", entry.name)
        file = ("_" + file[1:] if file.startswith(".") else file) + ".yaml"
        other = next((name for name, taken in names.items() if taken == file), None)
        if other is not None:
            problem = f"the servers {other!r} and {entry.name!r} would share the cassette {file}"
            raise ConfigError(problem, fix="rename one of them in the config")
        names[entry.name] = file
    return names


def _listed(config: Config, entry: Entry) -> list[str]:
    """The variables an entry's fields name as holding secrets: its format's `secret_lists`."""
    names: list[str] = []
    for field in FORMATS[config.format].secret_lists:
        value = entry.data.get(field) or []
        names += map(str, value.values() if isinstance(value, dict) else value if isinstance(value, list) else [value])
    return names


def _secrets(config: Config, entry: Entry) -> tuple[list[str], list[tuple[str, str]]]:
    """A stdio entry's secrets: the variables to redact (env keys with a value, listed names), and the
    `${...}` references of its command line as (placeholder name, reference), each name once."""
    names = [key for key, value in entry.env(config.format).items() if value] + _listed(config, entry)
    found: dict[str, str] = {}
    for part in entry.command():
        for written, name in references(part):
            found.setdefault(name, written)
    return list(dict.fromkeys(names)), list(found.items())


def wrapped_command(config: Config, entry: Entry, python: str, cassette: str, replay: bool, mode: str) -> list[str]:
    """The command line a stdio entry runs once wrapped: `python -m mockmcp record ... COMMAND ARGS`, or replay."""
    command = entry.command()
    if "mockmcp" in command[:3] or command[0].endswith("/mockmcp"):
        fix = "run `mockmcp unwrap` on it first, or wrap the original config"
        raise ConfigError(
            f"the server {entry.name!r} runs mockmcp already: this config is wrapped", path=config.path, fix=fix
        )
    redact, substitute = _secrets(config, entry)
    given = [arg for name, written in substitute for arg in ("--substitute", f"{name}={written}")]
    if replay:
        return [python, "-m", "mockmcp", "replay", cassette, *given]
    hidden = [arg for name in redact for arg in ("--redact-env", name)]
    # No `--` before the server's command unless it needs one: `record` reads every word from the command's
    # first on as the server's, and a host may pass a `--` on (the Inspector's CLI ends its own options there).
    dashes = ["--"] if command[0].startswith("-") else []
    mockmcp = [python, "-m", "mockmcp", "record", "-o", cassette, "--record-mode", mode]
    return [*mockmcp, *hidden, *given, *dashes, *command]


def remote(config: Config, entry: Entry, port: int, cassette: str) -> Remote:
    """What `mockmcp serve` needs of a remote entry; the variables its URL and headers name are its secrets."""
    shape = FORMATS[config.format]
    url = str(entry.value(entry.url_place))
    headers = entry.data.get(shape.headers) or {}
    said = [url, *(str(v) for v in headers.values())] if isinstance(headers, dict) else [url]
    names = [name for text in said for _written, name in references(text)] + _listed(config, entry)
    # The local endpoint is always /mcp (a legacy SSE server's stream: /sse): the proxy forwards to the target's own
    # path, which may hold references (`${BASE_URL}/mcp`) only `mockmcp serve` expands.
    path = "/sse" if entry.kind == "sse" else "/mcp"
    return Remote(entry.name, url, port, path, cassette, tuple(dict.fromkeys(names)))


_EXPANDABLE = re.compile(r"\$\{(?:env:)?([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


def expand(text: str, environ: Mapping[str, str], where: str) -> str:
    """text with `${VAR}`, `${env:VAR}`, `${VAR:-default}` taken from environ, as a host takes them from its own;
    raises UsageError (naming `where`) for a variable not set, or a reference only the host knows (`${input:...}`)."""

    def value(found: re.Match[str]) -> str:
        name, default = found.group(1), found.group(2)
        if environ.get(name):
            return environ[name]
        if default is not None:
            return default
        problem = f"{where}: the config names ${{{name}}}, which is not set"
        raise UsageError(problem, f"set {name} here, as for the host")

    expanded = _EXPANDABLE.sub(value, text)
    if "${" in expanded:
        fix = "write the value, or an environment variable"
        raise UsageError(f"{where}: {text!r} holds a reference only the host can expand", fix)
    return expanded


def local_url(port: int, path: str) -> str:
    """Where a remote entry points once wrapped."""
    return f"http://127.0.0.1:{port}{path}"


def derive(config: Config, commands: Mapping[str, list[str]], urls: Mapping[str, str]) -> tuple[str, list[Edit]]:
    """The config's text with the named stdio entries' command lines and remote entries' URLs replaced; its edits."""
    edits: list[tuple[int, Edit]] = []  # (where in the text, the edit)

    def replace(entry: Entry, place: Place, value: Any) -> None:
        start, end = config.spans[place]
        edits.append((start, Edit(entry.name, place, _text(value), config.text[start:end])))

    for entry in config.entries:
        if entry.name in commands and entry.command_place is not None:
            command = commands[entry.name]
            replace(entry, entry.command_place, command[0])
            if entry.args_place is not None:
                replace(entry, entry.args_place, command[1:])
            else:
                inserted = _inserted(config, entry.command_place, _text(command[1:]))
                edits.append(
                    (config.spans[entry.command_place][1], Edit(entry.name, entry.command_place, inserted, None))
                )
        elif entry.name in urls and entry.url_place is not None:
            replace(entry, entry.url_place, urls[entry.name])
    text = config.text
    for where, edit in sorted(edits, key=lambda each: each[0], reverse=True):
        text = text[:where] + edit.wrapped + text[where + len(edit.original or "") :]
    return text, [edit for _where, edit in edits]


def _inserted(config: Config, after: Place, args: str) -> str:
    """The text that adds `args` after the command's value, in the file's own syntax."""
    start = config.spans[after][0]
    before = config.text[config.text.rfind("\n", 0, start) + 1 : start]  # the command's key, on the value's line
    if config.format == "codex":  # `command` or `mcp_servers.x.command`: `args` the same way
        key = re.sub(r"""(command|"command"|'command')$""", "", before.split("=")[0].rstrip())
        return f"\n{key}args = {args}"
    if config.format == "goose":
        if config.text.startswith("{", config.spans[after[:-1]][0]):
            return f", args: {args}"
        return f"\n{before[: len(before) - len(before.lstrip(' '))]}args: {args}"
    return f', "args": {args}'


def restore(config: Config, edits: Iterable[Edit]) -> tuple[str, list[str]]:
    """Undo wrap's edits in a derived config read again: the text, and the entries changed since, left as they are."""
    spans, text = config.spans, config.text
    planned: list[tuple[int, Edit]] = []
    changed: list[str] = []
    for edit in edits:
        span = spans.get(edit.place)
        if span is not None and edit.original is None and text.startswith(edit.wrapped, span[1]):
            planned.append((span[1], edit))  # inserted after the value
        elif span is not None and edit.original is not None and text[span[0] : span[1]] == edit.wrapped:
            planned.append((span[0], edit))
        else:
            changed.append(edit.entry)
    left = list(dict.fromkeys(changed))
    for where, edit in sorted(planned, key=lambda each: each[0], reverse=True):
        if edit.entry in left:
            continue  # an entry is restored whole or not at all
        text = text[:where] + (edit.original or "") + text[where + len(edit.wrapped) :]
    return text, left
