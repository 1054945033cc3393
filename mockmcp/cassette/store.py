"""Loading and saving cassettes, checked both ways: a recorded MCP session as data.

A cassette is a list of interactions in the order they happened. Each interaction is one message
the client sent (a `request` or a `notification`) with everything the server sent because of it
(`server`: notifications, server-to-client requests with the client's recorded response, raw lines),
then, for a request, the `response`. An interaction with only `server` holds messages the server
sent unprompted, at their place in the session. Messages are kept as plain dicts, as on the wire
(without the constant `"jsonrpc": "2.0"`), so nothing a model does not know is lost.

Loading validates everything, and so does saving (a cassette built in code is checked before it is
written, so `save` never writes what `load` would refuse); a problem raises CassetteError naming
the place (`interactions[3].response`) and, when loaded from a file, the file and line. Plain data
becomes a Cassette through `from_data`, the one checked constructor.
"""

from __future__ import annotations

import os

from mockmcp.cassette import files
from mockmcp.cassette.model import FORMAT_VERSION, Cassette, Interaction, ServerItem
from mockmcp.cassette.validation import Problem, from_data
from mockmcp.cassette.validation import cassette as validated
from mockmcp.errors import CassetteError
from mockmcp.protocol import Place, render_place

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "Cassette",
    "FORMAT_VERSION",
    "Interaction",
    "Place",
    "ServerItem",
    "dump",
    "from_data",
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
    import yaml  # deferred, with yamlfile: see `files` on the cache of parsed cassettes

    from mockmcp.cassette import yamlfile

    try:
        return yamlfile.load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = None if mark is None else mark.line + 1
        problem = getattr(exc, "problem", None) or str(exc)
        if isinstance(exc, yamlfile.Refused):
            raise CassetteError(problem, path=path, line=line, fix=exc.fix) from None
        raise CassetteError(
            f"not valid YAML: {problem}", path=path, line=line, fix="correct the YAML syntax at that line"
        ) from None
    except ValueError as exc:  # a scalar its tag cannot hold: an integer of 5000 digits, `!!float 1e`
        raise CassetteError(
            f"a value in the YAML cannot be read: {exc}", path=path, fix="correct or quote that value"
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
            mode = os.fstat(handle.fileno()).st_mode
            raw = handle.read()
    except FileNotFoundError:
        raise CassetteError(
            "no such cassette",
            path=path,
            fix="check the path, or record one with `mockmcp record -o PATH -- SERVER...`",
        ) from None
    except OSError as exc:
        raise CassetteError(f"cannot read the cassette: {exc}", path=path) from None
    data = files.read_cache(path, raw)
    if data is not None:
        try:
            return validated(data, path)
        except Problem:
            pass  # not what this cassette parses to: read the cassette itself, which has the last word
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CassetteError(f"cannot read the cassette: {exc}", path=path) from None
    data = _parse(text, path)
    cassette = _validate(data, text, path)
    files.write_cache(path, raw, data, mode)
    return cassette


def save(cassette: Cassette, path: str) -> None:
    """Check the cassette, then write it atomically (the old file stays whole until the new one is complete).

    Raises CassetteError naming the place of the first problem (and the target file); nothing is written then.
    """
    files.atomic_write(path, dump(cassette._replace(path=path)))


def dump(cassette: Cassette) -> str:
    """The cassette as YAML text, once it is checked; raises CassetteError naming the place of a problem."""
    from mockmcp.cassette import yamlfile

    data = cassette.to_data()
    from_data(data, cassette.path)  # the check `checked` makes, on the very data that is written
    return yamlfile.dump(data)


def now_iso() -> str:
    """The current UTC time as cassettes write it."""
    import datetime  # deferred: only recording needs it

    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
