"""What the `mockmcp` fixture hands a test: the mock server to launch (or connect to) instead of the real one.

The marker's `config=` (a host's config, in any format `mockmcp wrap` reads) gives each server it lists to the
test as `mockmcp[name]`; a stdio server's `env` goes to its mock server's environment, its keys redacted from
the recording; `mockmcp.config` is the config again with every server going through its mock server.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from mockmcp.plugin._harness import Harness
from mockmcp.wrap import Config, derive, detect, expand, read_config, read_text

if TYPE_CHECKING:
    from pytest import TempPathFactory

__all__ = ["Configured", "MockServer", "MockServers", "read_configured"]


class MockServer:
    """The mock server of one test: `command` and `env` (or `stdio_params`) to launch it, as often as the host
    likes; `start_http()` to serve it over Streamable HTTP until the test ends; `transport` in process."""

    __slots__ = ("_harness",)

    def __init__(self, harness: Harness) -> None:
        self._harness = harness

    @property
    def cassette(self) -> Path:
        """The test's cassette: the file replayed (until it is recorded again, the one under its old name), or
        where its recording goes if the test passes."""
        harness = self._harness
        return harness.cassette if harness.recording else harness.source

    @property
    def command(self) -> list[str]:
        """The command line the host launches instead of the real server."""
        return self._harness.command()

    @property
    def env(self) -> dict[str, str]:
        """The environment to launch `command` with (the test's own, whole: the real server may need its keys)."""
        return self._harness.env

    @property
    def stdio_params(self) -> Any:
        """The same, as the official SDK's `StdioServerParameters` (command, args, env)."""
        from mcp import StdioServerParameters  # the SDK is the user's, not a dependency of mockmcp

        command = self.command
        return StdioServerParameters(command=command[0], args=command[1:], env=self.env)

    @property
    def transport(self) -> Any:
        """The test's mock server in this process, a transport the SDK's `Client` takes: `Client(mockmcp.transport)`.

        It replays the cassette (`mockmcp.transport`), or passes the session to the real server when recording
        (`mockmcp.recording`), which may then be an SDK server object such as an `MCPServer`.
        """
        return self._harness.transport()

    @property
    def calls(self) -> Any:
        """What the host did, its requests in order (`mockmcp.Calls`: `calls(tool="search")`, `.count`, `.called`,
        `.args`, `assert_called`). In process read live; from a replay the host launched once the host closed that
        session; over HTTP, reading them stops the test's HTTP mock server. Raises UsageError."""
        return self._harness.calls()

    def start_http(self) -> str:
        """Start the test's mock server over Streamable HTTP (once; it stops after the test); returns its URL,
        `http://127.0.0.1:PORT/mcp`. Recording, it is a proxy in front of the real server's URL. Raises UsageError."""
        return self._harness.start_http()

    @property
    def url(self) -> str:
        """Deprecated: `start_http()`. Reading an attribute should not start a server; this goes in a later release."""
        said = "mockmcp.url is deprecated: call mockmcp.start_http(), which starts the HTTP mock server and returns"
        warnings.warn(f"{said} its URL", DeprecationWarning, stacklevel=2)
        return self.start_http()

    def __repr__(self) -> str:
        return f"<MockServer {self.cassette}>"


class MockServers(dict[str, MockServer]):
    """The mock servers of a test that talks to several, by name: `mockmcp["notes"].stdio_params`; with the
    marker's `config=`, `config` is the host's config with every server going through its mock server."""

    def __init__(self, mocks: dict[str, Harness], hosted: Configured | None, temp: TempPathFactory) -> None:
        super().__init__((name, MockServer(mock)) for name, mock in mocks.items())
        self._hosted, self._temp, self._config = hosted, temp, None

    @property
    def config(self) -> Path:
        """The test's host config, derived: each stdio server launches its mock server, each remote one points at
        its mock server over HTTP (started now). Written once, in the test's own folder."""
        if self._hosted is None:
            raise AttributeError("mockmcp.config is for a test marked with config=: @pytest.mark.mockmcp(config=PATH)")
        if self._config is None:
            commands = {name: self[name].command for name in self._hosted.env}  # the stdio servers
            url = lambda name: self[name].start_http()  # noqa: E731
            self._config = self._hosted.derived(self._temp.mktemp("config"), commands, url)
        return self._config

    def __missing__(self, name: str) -> MockServer:
        known = ", ".join(repr(key) for key in self) or "none"
        raise KeyError(f"this test has no mock server named {name!r}; its marker's servers= names {known}")


class Configured(NamedTuple):
    """A host's config read for a test: each server to record from, and its environment (whose values never reach
    its cassette)."""

    path: Path
    config: Config
    servers: dict[str, list[str]]  # name -> command line, or [URL]
    env: dict[str, dict[str, str]]  # name -> what a stdio server's entry adds to the environment

    def derived(self, folder: Path, commands: Mapping[str, list[str]], url: Callable[[str], str]) -> Path:
        """Write the config with every server going through its mock server into folder; returns its path."""
        urls = {name: url(name) for name in self.servers if name not in self.env}
        out = folder / self.path.name
        out.write_text(derive(self.config, {name: commands[name] for name in self.env}, urls)[0], encoding="utf-8")
        return out


def read_configured(path: Path, environ: Mapping[str, str]) -> Configured:
    """Read a host's config for the plugin; raises MockmcpError (ConfigError, UsageError) saying what to fix."""
    text = read_text(str(path))
    config = read_config(text, detect(str(path), text), str(path))
    servers, env = {}, {}
    for entry in config.entries:
        where = f"{path.name}: {entry.name}"
        if entry.kind == "http":
            servers[entry.name] = [expand(str(entry.value(entry.url_place)), environ, where)]
        elif entry.kind == "stdio":
            servers[entry.name] = [expand(part, environ, where) for part in entry.command()]
            given = entry.env(config.format).items()
            env[entry.name] = {k: expand(v, environ, where) for k, v in given if v}
    return Configured(path, config, servers, env)
