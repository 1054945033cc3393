"""`mockmcp replay --state FILE`: which recorded sessions earlier replays of a cassette took, so that a host
starting one server process per call meets the recorded sessions in turn (`engine.selection`). JSON,
`{"cassette": "/abs/path.yaml", "taken": [0, 1]}`, written atomically when a replay ends. Imported only for --state.
"""

from __future__ import annotations

import json
import os

from mockmcp.cassette.files import atomic_write
from mockmcp.errors import UsageError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable

__all__ = ["read_taken", "write_taken"]


def read_taken(path: str, cassette: str) -> tuple[int, ...]:
    """The recorded sessions of `cassette` that earlier replays took; () when the file does not exist yet.
    Raises UsageError for a file that is not a state file, or one kept for another cassette."""
    try:
        with open(path, encoding="utf-8") as file:
            text = file.read()
    except FileNotFoundError:
        return ()
    fix = f"delete {path} to start again from the first recorded session"
    try:
        data = json.loads(text)
        named, taken = data["cassette"], data["taken"]
        if not isinstance(named, str) or not isinstance(taken, list):
            raise ValueError("`cassette` must be a string and `taken` a list")
        if not all(type(session) is int and session >= 0 for session in taken):
            raise ValueError("`taken` must list recorded session numbers")
    except (ValueError, KeyError, TypeError) as exc:  # another file: never ask to delete it
        raise UsageError(
            f"{path}: not a mockmcp replay state file ({exc})",
            f"give --state a file of its own (one that does not exist yet); if {path} is a state file spoiled by "
            f"hand, {fix}",
        ) from None
    if named != os.path.abspath(cassette):
        raise UsageError(
            f"{path}: holds the recorded sessions taken from {named}, not from {cassette}",
            f"give each cassette its own --state file, or {fix}",
        )
    return tuple(taken)


def write_taken(path: str, cassette: str, taken: Iterable[int]) -> None:
    """Say in the state file that these recorded sessions of `cassette` are taken (atomically)."""
    data = {"cassette": os.path.abspath(cassette), "taken": sorted(set(taken))}
    atomic_write(path, json.dumps(data) + "\n")
