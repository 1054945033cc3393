"""`mockmcp wrap`, `unwrap` and `serve`: a host's config read with its spans, each server entry pointed at
mockmcp, and back.

The wing's facade: what the rest of mockmcp uses of it; its modules are private."""

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
