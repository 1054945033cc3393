"""The marker's `config=`: the servers of a host's own MCP config, each a mock server of the test.

`config=".mcp.json"` (from pytest's rootpath), in any format `mockmcp wrap` reads, gives each server
it lists to the test as `mockmcp[name]`, as `servers=` does; a stdio server's `env` goes to its mock
server's environment, its keys redacted from the recording. `mockmcp.config` is the config again with
every server going through its mock server, for a host that takes a config file.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, NamedTuple

from mockmcp.wrap import Config, derive, detect, expand, read_config

__all__ = ["Configured", "config_path", "read_configured"]


class Configured(NamedTuple):
    """A host's config read for a test: each server to record from, its environment, and its secrets."""

    path: Path
    config: Config
    servers: dict[str, list[str]]  # name -> command line, or [URL]
    env: dict[str, dict[str, str]]  # name -> what its entry adds to the environment
    secrets: dict[str, tuple[str, ...]]  # name -> the variables whose values never reach its cassette

    def derived(self, folder: Path, commands: Mapping[str, list[str]], url: Callable[[str], str]) -> Path:
        """Write the config with every server going through its mock server into folder; returns its path."""
        urls = {name: url(name) for name in self.servers if self._remote(name)}
        stdio = {name: commands[name] for name in self.servers if not self._remote(name)}
        text, _edits = derive(self.config, stdio, urls)
        out = folder / self.path.name
        out.write_text(text, encoding="utf-8")
        return out

    def _remote(self, name: str) -> bool:
        return next(entry.kind for entry in self.config.entries if entry.name == name) == "http"


def read_configured(path: Path, environ: Mapping[str, str]) -> Configured:
    """Read a host's config for the plugin; raises MockmcpError (ConfigError, UsageError) saying what to fix."""
    from mockmcp.wrap import read_text

    text = read_text(str(path))
    config = read_config(text, detect(str(path), text), str(path))
    servers, env, secrets = {}, {}, {}
    for entry in config.entries:
        where = f"{path.name}: {entry.name}"
        if entry.kind == "http":
            servers[entry.name] = [expand(str(entry.value(entry.url_place)), environ, where)]
        elif entry.kind == "stdio":
            servers[entry.name] = [expand(part, environ, where) for part in entry.command()]
            given = entry.env(config.format).items()
            env[entry.name] = {k: expand(v, environ, where) for k, v in given if v}
            secrets[entry.name] = tuple(env[entry.name])
    return Configured(path, config, servers, env, secrets)


def config_path(rootpath: Path, given: Any) -> Path:
    """Where the marker's `config=` is: a path from the project's folder (an absolute one as it is)."""
    return Path(rootpath, os.fspath(given))
