"""`mockmcp wrap`, `unwrap` and `serve`: a host's MCP config, each server pointed at mockmcp, and back.

Attaches at the command line and at the plugin's `config=` marker.

  _configtext  a config read with the span of each value (JSON/JSONC, YAML, TOML)
  _hostconfig  the hosts' config formats, detected, and their server entries
  _rules       a config's values replaced in its own text, and back
  _sidecar     the sidecar beside what wrap wrote: its fields, and one read back checked (untrusted text)
  _files       the config's files, its backup and sidecar, written atomically, never through a link
  _serve       one remote server of a wrapped config as `serve` runs it: a recording proxy or an HTTP replay
"""

from __future__ import annotations

from mockmcp.wrap._files import Wrapping, read_text, serve_config, unwrap_config, wrap_config
from mockmcp.wrap._hostconfig import FORMATS, Config, detect, read_config
from mockmcp.wrap._rules import derive, expand

__all__ = [
    "Config",
    "FORMATS",
    "Wrapping",
    "derive",
    "detect",
    "expand",
    "read_config",
    "read_text",
    "serve_config",
    "unwrap_config",
    "wrap_config",
]
