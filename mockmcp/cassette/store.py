"""The cassette: a recorded MCP session as data, validated when it is built.

A cassette is a list of interactions in the order they happened. Each interaction is one message
the client sent (a `request` or a `notification`) with everything the server sent because of it
(`server`: notifications, server-to-client requests with the client's recorded response, raw lines),
then, for a request, the `response`. An interaction with only `server` holds messages the server
sent unprompted, at their place in the session. Messages are kept as plain dicts, as on the wire
(without the constant `"jsonrpc": "2.0"`), so nothing a model does not know is lost.

Building a Cassette validates everything; a problem raises CassetteError naming the place
(`interactions[3].response`) and, when loaded from a file, the file and line.
"""

from __future__ import annotations

import os
from typing import Any

from mockmcp.cassette import files
from mockmcp.cassette.model import FORMAT_VERSION, Cassette, Interaction, Place, ServerItem, render_place
from mockmcp.cassette.validation import Problem
from mockmcp.cassette.validation import cassette as validated
from mockmcp.errors import CassetteError

__all__ = [
    "Cassette",
    "FORMAT_VERSION",
    "Interaction",
    "Place",
    "ServerItem",
    "dump",
    "load",
    "loads",
    "now_iso",
    "render_place",
    "save",
]


def loads(text: str, path: str | None = None) -> Cassette:
    """Parse and validate cassette text; errors carry the file, the line and the place."""
    return _validate(_parse(text, path), text, path)


def _parse(text: str, path: str | None) -> Any:
    from mockmcp.cassette import yamlfile  # deferred: see `files` on the cache of parsed cassettes

    try:
        return yamlfile.load(text)
    except Exception as exc:  # yaml.YAMLError; kept broad so that no parser failure escapes unexplained
        mark = getattr(exc, "problem_mark", None)
        line = None if mark is None else mark.line + 1
        problem = getattr(exc, "problem", None) or str(exc)
        raise CassetteError(
            f"not valid YAML: {problem}", path=path, line=line, fix="correct the YAML syntax at that line"
        ) from None


def _validate(data: Any, text: str | None, path: str | None) -> Cassette:
    try:
        return validated(data, path)
    except Problem as problem:
        from mockmcp.cassette import yamlfile

        raise CassetteError(
            problem.problem,
            path=path,
            place=render_place(problem.place),
            line=None if text is None else yamlfile.line_of(text, problem.place),
            fix=problem.fix,
        ) from None


def load(path: str) -> Cassette:
    """Read and validate the cassette at path (through the cache of parsed cassettes); raises CassetteError."""
    try:
        with open(path, "rb") as handle:
            stat = os.fstat(handle.fileno())
            data = files.read_cache(path, stat)
            if data is not None:
                return _validate(data, None, path)
            text = handle.read().decode("utf-8")
    except FileNotFoundError:
        raise CassetteError(
            "no such cassette",
            path=path,
            fix="check the path, or record one with `mockmcp record -o PATH -- SERVER...`",
        ) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise CassetteError(f"cannot read the cassette: {exc}", path=path) from None
    data = _parse(text, path)
    cassette = _validate(data, text, path)
    files.write_cache(path, stat, data)
    return cassette


def save(cassette: Cassette, path: str) -> None:
    """Write the cassette atomically (the old file stays whole until the new one is complete)."""
    files.atomic_write(path, dump(cassette))


def dump(cassette: Cassette) -> str:
    """The cassette as YAML text."""
    from mockmcp.cassette import yamlfile

    return yamlfile.dump(cassette.to_data())


def now_iso() -> str:
    """The current UTC time as cassettes write it."""
    import datetime  # deferred: only recording needs it

    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
