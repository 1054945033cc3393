"""The MCP configs of hosts: which format a file is, and its server entries with where each value sits. Pure.

- `mcpServers` (Claude Desktop and Code, Cursor, Windsurf, fastmcp, the Inspector): `command`, `args`,
  `env`; remote `url` (Windsurf: `serverUrl`), `headers`.
- `vscode` (`servers`, or `mcp.servers` in settings): the same, `${input:ID}` and `${env:VAR}` references.
- `zed` (`context_servers`): `command` (or the older `command.path`), `args`, `env`; `url`.
- `goose` (YAML `extensions`): `cmd`, `args`, `envs`, `env_keys`; `uri`.
- `codex` (TOML `mcp_servers`): `command`, `args`, `env`, `env_vars`; `url`, `http_headers`, `bearer_token_env_var`.
A format is told by the file's name and shape (`--format` overrides both). An entry whose `type` (or `transport`)
is `sse`, or whose URL's path ends in `/sse`, is a legacy HTTP+SSE server; goose's built-in extensions are
`skipped`, with why.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from pathlib import PurePath
from typing import Any, NamedTuple
from urllib.parse import urlsplit

from mockmcp._wire.words import Place
from mockmcp.errors import ConfigError
from mockmcp.wrap._configtext import Span, read_json, read_toml, read_yaml

__all__ = ["Config", "Entry", "FORMATS", "Shape", "detect", "host_path", "read_config", "references"]


class Shape(NamedTuple):
    """How one format names things: where its servers are, and each field of an entry."""

    roots: tuple[Place, ...]  # where the servers may be, the first found wins
    reader: Callable[[str, str | None], tuple[Any, dict[Place, Span]]]
    command: str = "command"
    env: str = "env"
    urls: tuple[str, ...] = ("url",)
    headers: str = "headers"
    secret_lists: tuple[str, ...] = ()  # fields naming variables that hold secrets (a name, a list, a mapping)


FORMATS: dict[str, Shape] = {
    "mcpServers": Shape((("mcpServers",),), read_json, urls=("url", "serverUrl")),
    "vscode": Shape((("servers",), ("mcp", "servers")), read_json),
    "zed": Shape((("context_servers",),), read_json),
    "goose": Shape((("extensions",),), read_yaml, command="cmd", env="envs", urls=("uri",), secret_lists=("env_keys",)),
    "codex": Shape(
        (("mcp_servers",),),
        read_toml,
        headers="http_headers",
        secret_lists=("env_vars", "bearer_token_env_var", "env_http_headers"),
    ),
}

# `${VAR}`, `${VAR:-default}` (Claude Code), `${env:VAR}`, `${input:id}` (VS Code, Cursor), `${workspaceFolder}`.
_REFERENCE = re.compile(r"\$\{(?:(env|input):)?([^}:]+)(?::-[^}]*)?\}")


def references(text: str) -> list[tuple[str, str]]:
    """The `${...}` references in text: (the reference as written, a placeholder name made of it)."""
    found = []
    for match in _REFERENCE.finditer(text):
        kind, name = match.group(1), re.sub(r"\W", "_", match.group(2).strip())
        name = f"input_{name}" if kind == "input" else name
        found.append((match.group(0), name if not name[:1].isdigit() else f"_{name}"))
    return found


# Where a host resolves a relative path in a stdio entry's command line: (format, the config's folder's name, its
# name; "" for any) -> how many folders up from the config's that base is, and how a path under it is written. VS
# Code and Cursor expand `${workspaceFolder}`; Claude Code starts a project's `.mcp.json` servers in its folder.
# Other hosts start servers in a folder the config does not tell: there a path is written absolute (docs/wrap.md).
_BASES: dict[tuple[str, str, str], tuple[int, str]] = {
    ("vscode", ".vscode", ""): (1, "${workspaceFolder}/"),
    ("mcpServers", ".cursor", "mcp.json"): (1, "${workspaceFolder}/"),
    ("mcpServers", "", ".mcp.json"): (0, "./"),
}


def host_path(fmt: str, config: PurePath, path: PurePath) -> str:
    """The absolute `path` as the config at `config` (absolute) writes it in a command line: relative to the folder
    its host resolves such a path against, where there is one and `path` lies in it; else as it is."""
    keys = ((fmt, config.parent.name, config.name), (fmt, config.parent.name, ""), (fmt, "", config.name))
    found = next((_BASES[key] for key in keys if key in _BASES), None)
    if found is None:
        return str(path)
    up, written = found
    base = config.parents[up]
    if not path.is_relative_to(base) or path == base:
        return str(path)
    return written + path.relative_to(base).as_posix()


class Entry(NamedTuple):
    """One server of a config: stdio (a command), http (a Streamable HTTP URL), sse (a legacy HTTP+SSE URL) or
    skipped (why)."""

    name: str
    kind: str
    place: Place  # of the entry's mapping
    data: Mapping[str, Any]
    command_place: Place | None = None  # the command's value (Zed's object form: its `path`)
    args_place: Place | None = None  # None: the entry has no args
    url_place: Place | None = None
    why: str = ""  # of a skipped entry

    def holder(self) -> Mapping[str, Any]:
        """The mapping that holds the command's args and env: the entry, or Zed's older `command` object."""
        command = self.data.get("command")
        return command if isinstance(command, dict) else self.data

    def command(self) -> list[str]:
        """The command line the host would launch: command and args, as written (references unexpanded)."""
        args = self.holder().get("args") or []
        return [str(self.value(self.command_place)), *(str(arg) for arg in args)]

    def env(self, fmt: str) -> dict[str, str]:
        """What a stdio entry adds to its server's environment, as written (references unexpanded)."""
        key = FORMATS[fmt].env
        env = self.holder().get(key) or self.data.get(key) or {}
        if not isinstance(env, dict):
            return {}
        return {str(name): "" if value is None else str(value) for name, value in env.items()}

    def value(self, place: Place | None) -> Any:
        return _at(self.data, (place or ())[len(self.place) :])


class Config(NamedTuple):
    """A config file read: its format, text, data, the span of each value, and its server entries."""

    format: str
    text: str
    data: Any
    spans: dict[Place, Span]
    entries: tuple[Entry, ...]
    path: str | None = None


def detect(path: str, text: str) -> str:
    """The format of a config by its name and shape; raises ConfigError when neither tells."""
    suffix = PurePath(path).suffix.lower()
    if suffix == ".toml":
        return "codex"
    if suffix in (".yaml", ".yml"):
        return "goose"
    data, _spans = read_json(text, path)
    if isinstance(data, dict):
        for name, shape in FORMATS.items():
            if shape.reader is read_json and any(_at(data, root) is not None for root in shape.roots):
                return name
    raise ConfigError(
        "no MCP servers found: the file has none of the keys hosts keep them under "
        "(mcpServers, servers, mcp.servers, context_servers; extensions in YAML; mcp_servers in TOML)",
        path=path,
        fix="check that this is the host's MCP config, or name its format: --format " + "|".join(FORMATS),
    )


def _at(data: Any, keys: Place) -> Any:
    """The value at keys in data; None where there is none."""
    for key in keys:
        if not isinstance(data, dict) or key not in data:
            return None
        data = data[key]
    return data


def read_config(text: str, fmt: str, path: str | None = None) -> Config:
    """Read a config in a known format and find its server entries; raises ConfigError."""
    shape = FORMATS[fmt]
    try:
        data, spans = shape.reader(text, path)
    except ConfigError as error:  # the file's syntax, or a --format that names another language
        language = {read_json: "JSON", read_yaml: "YAML", read_toml: "TOML"}[shape.reader]
        fix = f"{error.fix}; the {fmt} format is {language}: check --format, if given"
        raise ConfigError(error.problem, path=error.path, line=error.line, fix=fix) from None
    root = next((place for place in shape.roots if isinstance(_at(data, place), dict)), None)
    if root is None:
        where = " or ".join(".".join(map(str, place)) for place in shape.roots)
        fix = f"check the file, or name another format: --format {'|'.join(FORMATS)}"
        raise ConfigError(f"no servers under {where}, where the {fmt} format keeps them", path=path, fix=fix)
    listed = _at(data, root).items()
    entries = tuple(_entry(str(name), (*root, name), body, shape, spans, path, text) for name, body in listed)
    return Config(fmt, text, data, spans, entries, path)


def _entry(
    name: str, place: Place, body: Any, shape: Shape, spans: dict[Place, Span], path: str | None, text: str
) -> Entry:
    def fail(problem: str, fix: str) -> ConfigError:
        line = text.count("\n", 0, spans[place][0]) + 1 if place in spans else None
        return ConfigError(problem, path=path, place=".".join(map(str, place)), line=line, fix=fix)

    if not isinstance(body, dict):
        raise fail("a server entry must be a mapping", "write the server's fields (command, args, env or url) in it")
    kind = str(body.get("type") or body.get("transport") or "").lower()
    command = body.get(shape.command)
    url_key = next((key for key in shape.urls if key in body), None)
    if command is not None:
        nested = isinstance(command, dict)  # Zed's older form: `command: {path, args, env}`
        holder = (*place, shape.command) if nested else place
        command_place = (*holder, "path") if nested else (*place, shape.command)
        if not isinstance(command.get("path") if nested else command, str):
            raise fail(f"`{shape.command}` must be a string (the program to run)", 'write e.g. "command": "npx"')
        args = (command if nested else body).get("args")
        if args is not None and not (isinstance(args, list) and all(isinstance(a, str | int | float) for a in args)):
            raise fail("`args` must be a list of strings", 'write e.g. "args": ["-y", "server"]')
        args_place = (*holder, "args") if args is not None else None
        for needed in (command_place, args_place):
            if needed is not None and needed not in spans:
                raise fail(
                    "this entry's command is written in a way mockmcp cannot change in place "
                    "(a dotted key or a table of its own)",
                    "write `command` and `args` as `key = value` lines under the server's [table] header",
                )
            if needed is not None and not _inside(spans, needed, place):
                # a YAML alias: changing the value where it is written would change its other uses
                elsewhere = f"this entry's `{needed[-1]}` is written elsewhere (a YAML alias)"
                raise fail(elsewhere, "write it in the entry itself")
        return Entry(name, "stdio", place, body, command_place, args_place)
    if url_key is not None:
        url = body[url_key]
        if not isinstance(url, str):
            raise fail(f"`{url_key}` must be a string", 'write e.g. "url": "https://example.com/mcp"')
        if (*place, url_key) not in spans or not _inside(spans, (*place, url_key), place):
            raise fail(
                "this entry's URL is written in a way mockmcp cannot change in place (a dotted key, a YAML alias)",
                f"write `{url_key}` in the entry itself",
            )
        sse = kind == "sse" or urlsplit(url).path.rstrip("/").endswith("/sse")  # the legacy HTTP+SSE transport
        return Entry(name, "sse" if sse else "http", place, body, url_place=(*place, url_key))
    return Entry(name, "skipped", place, body, why=f"no {shape.command} and no URL (a built-in or unknown kind)")


def _inside(spans: dict[Place, Span], value: Place, entry: Place) -> bool:
    """Whether a value's text lies within its entry's (a reader that gives tables no span: yes)."""
    if entry not in spans:
        return True
    return spans[entry][0] <= spans[value][0] and spans[value][1] <= spans[entry][1]
