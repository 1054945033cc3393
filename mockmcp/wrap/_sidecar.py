"""The sidecar `mockmcp wrap` writes beside the file it wrote: the edits (for `unwrap`), the remote servers (for
`serve`), the texts' digests. A repository can hold any file at its name, so one is trusted only when every field
has its type and (before wrap replaces the file beside it) it names the config and holds the file's digest; else it
is refused with the field and its line.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

from mockmcp._wire.words import Place, RecordMode
from mockmcp.cassette import files
from mockmcp.errors import ConfigError
from mockmcp.wrap._configtext import read_json
from mockmcp.wrap._hostconfig import FORMATS
from mockmcp.wrap._rules import Edit, Remote

__all__ = ["BACKUP", "SIDECAR", "Sidecar", "read_sidecar", "vouch"]

SIDECAR = ".mockmcp-wrap.json"  # beside the file wrap wrote
BACKUP = ".mockmcp-backup"  # beside a config wrapped in place


def _text(value: Any) -> bool:
    return isinstance(value, str)


def _list_of(check: Callable[[Any], bool]) -> Callable[[Any], bool]:
    return lambda value: isinstance(value, list) and all(check(item) for item in value)


# Each field: its check, and what it must be (said when the check fails).
_Fields = dict[str, tuple[Callable[[Any], bool], str]]
_TOP: _Fields = {
    "wrapped_by": (lambda value: value == "mockmcp wrap", '"mockmcp wrap"'),
    "version": (lambda value: value == 1 and value is not True, "1"),
    "format": (lambda value: value in FORMATS, "one of " + ", ".join(FORMATS)),
    "source": (_text, "a string"),
    "backup": (lambda value: value is None or _text(value), "a string or null"),
    "replay": (lambda value: isinstance(value, bool), "true or false"),
    "mode": (lambda value: value in [mode.value for mode in RecordMode], "a record mode"),
    "original_blake2b": (_text, "a string"),
    "derived_blake2b": (_text, "a string"),
    "edits": (lambda value: isinstance(value, list), "a list"),
    "remote": (lambda value: isinstance(value, list), "a list"),
}
_EDIT: _Fields = {
    "entry": (_text, "a string"),
    "place": (_list_of(lambda key: isinstance(key, str | int) and not isinstance(key, bool)), "a list of keys"),
    "wrapped": (_text, "a string"),
    "original": (lambda value: value is None or _text(value), "a string or null"),
}
_REMOTE: _Fields = {
    "name": (_text, "a string"),
    "url": (_text, "a string"),
    "port": (lambda value: isinstance(value, int) and not isinstance(value, bool) and 0 < value < 65536, "a port"),
    "path": (_text, "a string"),
    "cassette": (_text, "a string"),
    "secrets": (_list_of(_text), "a list of strings"),
}


class Sidecar(NamedTuple):
    """What a sidecar holds, every field checked."""

    format: str
    source: str  # the config wrapped (absolute)
    backup: str | None  # the backup of a config wrapped in place (absolute)
    replay: bool
    mode: RecordMode
    original_blake2b: str  # of the config's text as wrap read it
    derived_blake2b: str  # of the text wrap wrote
    edits: tuple[Edit, ...]
    remote: tuple[Remote, ...]

    def text(self) -> str:
        data = {"wrapped_by": "mockmcp wrap", "version": 1, **self._asdict()}
        data["mode"] = self.mode.value
        data["edits"] = [edit._asdict() for edit in self.edits]
        data["remote"] = [served._asdict() for served in self.remote]
        return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def _problem(where: str, text: str, spans: dict[Place, tuple[int, int]], place: Place, problem: str) -> ConfigError:
    at = next((place[:end] for end in range(len(place), -1, -1) if place[:end] in spans), ())
    line = text.count("\n", 0, spans[at][0]) + 1 if at in spans else None
    shown = ".".join(map(str, place)) or "the sidecar"
    fix = "wrap the original config again; to undo a wrap whose sidecar is gone, restore the file by hand"
    return ConfigError(f"{shown}: {problem}; this is not a sidecar mockmcp wrap wrote", path=where, line=line, fix=fix)


def _checked(data: Any, fields: _Fields, place: Place) -> tuple[Place, str] | None:
    """The place of the first field that is missing or not what it must be, and what it must be; else None."""
    if not isinstance(data, dict):
        return place, "a mapping"
    for key, (check, what) in fields.items():
        if key not in data or not check(data[key]):
            return (*place, key), what
    return None


def read_sidecar(path: str) -> Sidecar:
    """The sidecar beside path, every field checked; raises ConfigError naming the field and its line."""
    where = path + SIDECAR
    if os.path.islink(where):
        raise ConfigError("is a symbolic link, never a sidecar mockmcp wrap wrote", path=where, fix="remove it")
    try:
        text = Path(where).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(
            f"mockmcp wrap did not write this file (there is no {Path(where).name} beside it)",
            path=path,
            fix="give the file `mockmcp wrap` wrote: the derived copy, or the config wrapped --in-place",
        ) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"unreadable ({exc})", path=where, fix="wrap the original config again") from None
    data, spans = read_json(text, where)
    if isinstance(data, dict) and data.get("wrapped_by") == "mockmcp wrap" and "derived_blake2b" not in data:
        raise ConfigError(
            "this sidecar records no digest of the file it stands beside (an older mockmcp wrap's, or one written "
            "by hand), so nothing shows that the file is still what mockmcp wrap wrote",
            path=where,
            fix=f"compare {path} with its config; then delete both and run `mockmcp wrap` again",
        )
    bad = _checked(data, _TOP, ())
    for name, fields in (("edits", _EDIT), ("remote", _REMOTE)):
        for index, item in enumerate(data.get(name, []) if bad is None else []):
            bad = bad or _checked(item, fields, (name, index))
    if bad is not None:
        raise _problem(where, text, spans, bad[0], f"must be {bad[1]}")
    return Sidecar(
        data["format"],
        data["source"],
        data["backup"],
        data["replay"],
        RecordMode(data["mode"]),
        data["original_blake2b"],
        data["derived_blake2b"],
        tuple(_record(Edit, edit) for edit in data["edits"]),
        tuple(_record(Remote, served) for served in data["remote"]),
    )


def _record(kind: Any, data: dict[str, Any]) -> Any:
    """A checked item of the sidecar as its record: its lists as tuples, any field the record lacks left out."""
    return kind(*(tuple(data[key]) if isinstance(data[key], list) else data[key] for key in kind._fields))


def vouch(path: str, source: str) -> None:
    """Refuse to replace path (ConfigError) unless its sidecar is sound, names source, and holds path's digest."""
    if not os.path.lexists(path + SIDECAR):
        raise ConfigError(
            "exists, and mockmcp wrap did not write it: it is left as it is",
            path=path,
            fix="name another file with -o, or move this one away",
        )
    sidecar = read_sidecar(path)
    if sidecar.source != os.path.abspath(source):
        raise ConfigError(
            f"was written by mockmcp wrap from another config ({sidecar.source}): it is left as it is",
            path=path,
            fix="name another file with -o, or unwrap this one first",
        )
    if files.digest(Path(path).read_bytes()) != sidecar.derived_blake2b:
        raise ConfigError(
            "changed since mockmcp wrap wrote it (its digest is not the one its sidecar recorded): it is left as it is",
            path=path,
            fix=f"keep your changes elsewhere, or run `mockmcp unwrap {path}`; then wrap again",
        )
