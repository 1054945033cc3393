"""mockmcp: record and replay Model Context Protocol sessions to test MCP hosts.

The public API, for fixtures and helpers users write; every other module is internal:

- `load(path)`, `loads(text, path=None)`, `save(cassette, path)`: read, parse and write cassettes
  (validated, with located errors; `save` writes atomically and keeps the file's permissions);
- `Cassette`, `Interaction`, `ServerItem`: the cassette types (immutable; `._replace` to edit);
- `MockServer`: what the pytest plugin's `mockmcp` fixture hands a test;
- `transport(cassette, ignore=(), strict=False, timing=0.0, substitute=None, closed_world=False)`: replay in
  the host's process, a transport the MCP SDK's `Client` takes (`Client(mockmcp.transport("cassettes/x.yaml"))`);
- `recording(real, cassette, mode="once", ...)`: record in the host's process, a transport that passes
  the session to the real server (`Client(mockmcp.recording(server, "cassettes/x.yaml"))`);
- `intercepting(folder, mode="none", names=None, allow=())`: while the block runs, every MCP server this
  process's SDK client starts over stdio is replayed from (or recorded into) `folder/<server>.yaml`,
  the host's code unchanged (`Interception` is what it yields: reports, verdict);
- `calls(source)`: what the host did, its requests in order (`Calls`: filter by tool and arguments with a
  cassette's matchers, `.count`, `.called`, `.args`, `assert_called`), from a `transport` (live), an
  interception, or a --report file; the plugin's fixture has its own `mockmcp.calls`;
- `json_body`: a vcrpy matcher comparing two requests' bodies as JSON, for a model's VCR cassette beside
  mockmcp's (docs/agent-run.md; the pytest plugin registers it with pytest-recording as `"json_body"`);
- `MockmcpError` and its kinds `CassetteError`, `ConfigError`, `UsageError`, `StrictFailure`.

Each name is imported on first use (a module `__getattr__`): a replay over stdio imports this
package on every launch, and must not pay for YAML or the plugin it never uses. This package sits
above every layer: it only re-exports, and nothing inside mockmcp imports these names from here.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from mockmcp.cassette.model import Cassette, Interaction, ServerItem
    from mockmcp.cassette.store import load, loads, save
    from mockmcp.errors import CassetteError, ConfigError, MockmcpError, StrictFailure, UsageError
    from mockmcp.inprocess import Calls, Interception, calls, intercepting, recording, transport
    from mockmcp.plugin._mock_server import MockServer
    from mockmcp.plugin._pairing import json_body

__all__ = [
    "Calls",
    "Cassette",
    "CassetteError",
    "ConfigError",
    "Interaction",
    "Interception",
    "MockServer",
    "MockmcpError",
    "ServerItem",
    "StrictFailure",
    "UsageError",
    "__version__",
    "calls",
    "intercepting",
    "json_body",
    "load",
    "loads",
    "recording",
    "save",
    "transport",
]

__version__ = "0.1.0"

_HOMES = {
    "Cassette": "mockmcp.cassette.model",
    "Interaction": "mockmcp.cassette.model",
    "ServerItem": "mockmcp.cassette.model",
    "load": "mockmcp.cassette.store",
    "loads": "mockmcp.cassette.store",
    "save": "mockmcp.cassette.store",
    "MockmcpError": "mockmcp.errors",
    "CassetteError": "mockmcp.errors",
    "ConfigError": "mockmcp.errors",
    "UsageError": "mockmcp.errors",
    "StrictFailure": "mockmcp.errors",
    "MockServer": "mockmcp.plugin._mock_server",
    "json_body": "mockmcp.plugin._pairing",
    "transport": "mockmcp.inprocess",
    "recording": "mockmcp.inprocess",
    "intercepting": "mockmcp.inprocess",
    "Interception": "mockmcp.inprocess",
    "calls": "mockmcp.inprocess",
    "Calls": "mockmcp.inprocess",
}


def __getattr__(name: str) -> object:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'mockmcp' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(home), name)
    globals()[name] = value  # found once
    return value


def __dir__() -> list[str]:
    return sorted(__all__)  # the curated names only: what users touch
