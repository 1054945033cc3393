"""Loading and saving cassettes, checked both ways: `save` never writes what `load` would refuse. On the launch path.

A problem raises CassetteError naming the place and, from a file, the line. Loading goes through the cache
of parsed cassettes (`files`); saving over a file rewrites it in place (`yamledit`), comments kept.
"""

from __future__ import annotations

import os

from mockmcp._wire.words import render_place
from mockmcp.cassette import files
from mockmcp.cassette.model import Cassette
from mockmcp.cassette.validation import Problem, from_data
from mockmcp.cassette.validation import cassette as validated
from mockmcp.errors import CassetteError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from mockmcp.cassette.model import Interaction

__all__ = ["Cassette", "dump", "from_data", "load", "loads", "now_iso", "save"]


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
        fix = "correct the YAML syntax at that line"
        raise CassetteError(f"not valid YAML: {problem}", path=path, line=line, fix=fix) from None


def _validate(data: Any, text: str, path: str | None) -> Cassette:
    try:
        return validated(data, path)
    except Problem as problem:
        from mockmcp.cassette.yamlfile import line_of

        line = line_of(text, problem.place)
        place = render_place(problem.place)
        raise CassetteError(problem.problem, path=path, place=place, line=line, fix=problem.fix) from None


def load(path: str) -> Cassette:
    """Read and validate the cassette at path (through the cache of parsed cassettes); raises CassetteError."""
    try:
        with open(path, "rb") as handle:
            mode = os.fstat(handle.fileno()).st_mode
            raw = handle.read()
    except FileNotFoundError:
        if os.path.exists(files.journal_path(path)):
            problem = "no such cassette, but the journal of an interrupted recording of it exists"
            fix = f"run `mockmcp recover {path}` to turn {files.journal_path(path)} into the cassette"
            raise CassetteError(problem, path=path, fix=fix) from None
        fix = "check the path, or record one with `mockmcp record -o PATH -- SERVER...`"
        raise CassetteError("no such cassette", path=path, fix=fix) from None
    except OSError as exc:
        raise CassetteError(f"cannot read the cassette: {exc}", path=path) from None
    digest = files.digest(raw)
    known = _loaded.get(path)
    if known is not None and known[0] == digest:
        return known[1]
    cassette = _load(path, raw, digest, mode)
    if len(_loaded) >= _KEEP_LOADED:
        del _loaded[next(iter(_loaded))]  # the oldest
    _loaded[path] = (digest, cassette)
    return cassette


# The cassettes this process loaded, by path, with the hash of their bytes: one loaded again (a host's tests
# replaying in process) is validated only once; a cassette is immutable, so it can be handed out again.
_loaded: dict[str, tuple[str, Cassette]] = {}
_KEEP_LOADED = 64


def _load(path: str, raw: bytes, digest: str, mode: int) -> Cassette:
    """The cassette these bytes hold, through the cache of parsed cassettes; raises CassetteError."""
    data = files.read_cache(path, raw, digest)
    if data is not None:
        try:
            # Cached only once these very bytes passed every check, the checks of what replay serves
            # included: those are left out here, off the launch path (see `validation.served_problems`).
            return validated(data, path, served=False)
        except Problem:
            pass  # not what this cassette parses to: read the cassette itself, which has the last word
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CassetteError(f"cannot read the cassette: {exc}", path=path) from None
    data = _parse(text, path)
    cassette = _validate(data, text, path)
    files.write_cache(path, digest, data, mode)
    return cassette


def save(cassette: Cassette, path: str) -> None:
    """Check the cassette, then write it atomically; a file already at path is rewritten in place, only what
    changed written anew. Raises CassetteError naming the place of the first problem (nothing is written)."""
    cassette = cassette._replace(path=path)
    try:
        with open(path, "rb") as handle:
            old = handle.read().decode("utf-8")
    except (OSError, UnicodeDecodeError):  # no file to keep
        old = None
    if old is None:
        files.atomic_write(path, dump(cassette))
        return
    from mockmcp.cassette import yamledit

    data = cassette.to_data()
    from_data(data, path)  # the check `dump` makes
    try:
        old_data = _parse(old, path)
    except CassetteError:  # not YAML mockmcp reads: there is nothing to keep
        old_data = None
    edited = yamledit.rewrite(old, _as_written(old_data, data, cassette), old_data)
    files.atomic_write(path, edited if edited is not None else dump(cassette))


def _as_written(old_data: Any, data: dict[str, Any], cassette: Cassette) -> dict[str, Any]:
    """The cassette's data, holding the old file's own data wherever it means the same (`exit: 1` stays so): each
    new interaction takes the first old one not taken yet that is the same, else that has its client message,
    and keeps the old entries whose values did not change, in their order."""
    from mockmcp.cassette.yamledit import canonical, same

    def field(interaction: Interaction, key: str) -> Any:
        return getattr(interaction, "message" if key in ("request", "notification") else key)

    try:
        old = validated(old_data, None)
    except Problem:
        return data
    if same(old.meta, cassette.meta):
        data["meta"] = old_data.get("meta")
    exact: dict[str, list[int]] = {}
    by_message: dict[str, list[int]] = {}
    for index, interaction in enumerate(old.interactions):
        exact.setdefault(canonical(interaction.to_data()), []).append(index)
        by_message.setdefault(canonical((interaction.kind, interaction.message)), []).append(index)
    taken: set[int] = set()
    for number, (new, item) in enumerate(zip(cassette.interactions, data["interactions"], strict=True)):
        index = _take(taken, exact.get(canonical(item), []), by_message.get(canonical((new.kind, new.message)), []))
        if index is not None:
            was, raw = old.interactions[index], old_data["interactions"][index]
            kept = {key: value for key, value in raw.items() if same(field(was, key), field(new, key))}
            data["interactions"][number] = {**kept, **{key: value for key, value in item.items() if key not in kept}}
    return data


def _take(taken: set[int], *queues: list[int]) -> int | None:
    """The first index not taken yet of the first queue that has one, now taken; None when there is none."""
    for queue in queues:
        while queue and queue[0] in taken:
            queue.pop(0)
        if queue:
            taken.add(queue[0])
            return queue.pop(0)
    return None


def dump(cassette: Cassette) -> str:
    """The cassette as YAML text (its first line naming the JSON Schema for editors), once it is checked;
    raises CassetteError naming the place of a problem."""
    from mockmcp.cassette import yamlfile
    from mockmcp.cassette.schema import MODELINE

    data = cassette.to_data()
    from_data(data, cassette.path)  # the check, on the very data that is written
    return MODELINE + "\n" + yamlfile.dump(data)


def now_iso() -> str:
    """The current UTC time as cassettes write it."""
    import datetime  # deferred: only recording needs it

    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
