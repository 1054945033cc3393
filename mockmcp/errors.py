"""The one exception tree of mockmcp.

    MockmcpError              anything mockmcp refuses to do; knows its exit code and renders itself
    ├── CassetteError         a cassette that cannot be read: file, line, place, problem, fix
    ├── ConfigError           a host's MCP config that `mockmcp wrap` cannot read or change: file, line, fix
    ├── UsageError            a bad option or argument (e.g. an --ignore path that does not parse)
    └── StrictFailure         --strict and the session had misses or unplayed interactions

Errors keep their facts as attributes and build their message from them, so the CLI (the only place that turns
errors into exit codes) and the pytest plugin can both show or inspect them.
"""

from __future__ import annotations

__all__ = ["CassetteError", "ConfigError", "MockmcpError", "StrictFailure", "UsageError"]


class MockmcpError(Exception):
    """Base of every error mockmcp raises on purpose."""

    exit_code = 2

    def __init__(self, problem: str, fix: str | None = None) -> None:
        self.problem = problem
        self.fix = fix
        super().__init__(self.render())

    def render(self) -> str:
        """The whole message: what went wrong (and where), then how to fix it."""
        return self._head() if not self.fix else f"{self._head()}\n  how to fix: {self.fix}"

    def _head(self) -> str:
        return self.problem


class _InFile(MockmcpError):
    """An error in a file, told as `path:line: place: problem`."""

    def __init__(
        self, problem: str, *, path: str | None = None, place: str = "", line: int | None = None, fix: str | None = None
    ) -> None:
        self.path, self.place, self.line = path, place, line
        super().__init__(problem, fix)

    def _head(self) -> str:
        where = (self.path or "<cassette>") + ("" if self.line is None else f":{self.line}")
        return f"{where}: {self.place}: {self.problem}" if self.place else f"{where}: {self.problem}"


class CassetteError(_InFile):
    """A cassette could not be loaded or saved; says which file, where, what and how to fix it."""


class ConfigError(_InFile):
    """A host's MCP config (`mockmcp wrap`, `unwrap`, `serve`) that cannot be read or changed."""


class UsageError(MockmcpError):
    """A command-line option or argument that mockmcp cannot use."""


class StrictFailure(MockmcpError):
    """The replay ran, but --strict found misses or unplayed interactions."""

    exit_code = 1
