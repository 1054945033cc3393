"""Where a test's cassettes live, what its marker may say, and which cassettes no test uses.

A test's cassette is `<test dir>/cassettes/<test module>/<Class>.<test>[params].mcp.yaml`: beside, never on,
the `<Class>.<test>[params].yaml` pytest-recording writes. Characters a file name cannot hold become `_`; only
a name too long for a file system is cut, keeping a hash of the whole. A cassette mockmcp wrote under the old
name, `<...>.yaml`, is read while the new one is missing (`legacy`); whose a file is, its content says (`kind`).
"""

from __future__ import annotations

import difflib
import hashlib
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path, PurePath
from typing import Any

__all__ = ["CASSETTE_RULE", "MARKER_ARGUMENTS", "OWN_SUFFIX", "cassette_name", "kind", "legacy", "markers"]
__all__ += ["merge_settings", "module_folder", "orphans", "orphans_report", "server_cassette", "servers_folder"]

# Where a test's cassette is, told in the failure about a missing one (docs/pytest.md "Cassettes" says it too).
CASSETTE_RULE = (
    "<test dir>/<mockmcp_cassette_dir, default cassettes>/<test module>/<cassette=, default "
    "<Class>.<test>[params].mcp.yaml>"
)

_FORBIDDEN = re.compile(r'[\x00-\x1f\x7f/\\:*?"<>|]')
# File systems hold 255 bytes a name; the recording in progress adds `.`, `.<pid>.recording` and `.journal`.
_MAX_BYTES = 200
_SUFFIX = ".yaml"
# A test's own cassette: `.mcp` keeps it off the `<test>.yaml` pytest-recording writes for the same test.
OWN_SUFFIX = ".mcp.yaml"

# Every argument `@pytest.mark.mockmcp(...)` takes; anything else is a typo that would be silently ignored.
MARKER_ARGUMENTS = ("allow", "before_record", "cassette", "closed_world", "config", "ignore", "intercept", "names")
MARKER_ARGUMENTS += ("record", "redact", "redact_env", "server", "servers", "strict", "substitute")  # sorted: as told


def cassette_name(parts: Sequence[str], suffix: str = _SUFFIX) -> str:
    """A file name from the names of a test's classes (outermost first) and itself, or from a server's name."""
    whole = ".".join(parts)
    name = _FORBIDDEN.sub("_", whole)
    if name.startswith("."):  # never a hidden file, never `..`
        name = "_" + name[1:]
    if len(name.encode()) + len(suffix) > _MAX_BYTES:
        digest = hashlib.sha1(whole.encode()).hexdigest()[:10]
        room = _MAX_BYTES - len(suffix) - len(digest) - 1
        name = name.encode()[:room].decode(errors="ignore") + "-" + digest
    return name + suffix


def module_folder(test_file: Path, folder: str) -> Path:
    """A test module's cassette folder: `<folder>/<module>` beside the test file."""
    return (test_file.parent / folder / test_file.stem).resolve()


def servers_folder(own: Path) -> Path:
    """The folder of a test's servers (several, or intercepted), named after its cassette `own`: without
    `.mcp.yaml`, or for a marker's `cassette=` without its last suffix."""
    if own.name.endswith(OWN_SUFFIX) and own.name != OWN_SUFFIX:
        return own.with_name(own.name.removesuffix(OWN_SUFFIX))
    return own.with_suffix("")


def server_cassette(own: Path, name: Any) -> Path:
    """The cassette of the server `name` of a test that talks to several: in a folder named after the test's."""
    return servers_folder(own) / cassette_name([str(name)])


def kind(path: Path) -> str:
    """Whose cassette a file is: `mockmcp` (it loads as one), `vcr` (vcrpy's, which pytest-recording writes), or
    `other` (unreadable, empty, not YAML, or a mockmcp cassette that cannot load)."""
    # Deferred: YAML costs start-up in every pytest run, and only an old-named or unused file is read.
    import yaml

    from mockmcp.cassette import validation, yamlfile
    from mockmcp.errors import CassetteError

    try:
        data = yamlfile.load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError, ValueError):  # ValueError: what YAML cannot hold
        return "other"
    interactions = data.get("interactions") if isinstance(data, dict) else None
    requests = [item.get("request") for item in interactions or () if isinstance(item, dict)]
    if any(isinstance(request, dict) and {"uri", "body", "headers"} & request.keys() for request in requests):
        return "vcr"  # vcrpy writes every request as method, uri, body and headers; mockmcp's have no uri
    if isinstance(data, dict) and not data.get("interactions") and not data.get("meta"):
        return "other"  # nothing of mockmcp's own: it may as well be a VCR cassette with no interactions
    try:
        validation.from_data(data)
    except CassetteError:
        return "other"
    return "mockmcp"


def legacy(own: Path, old: Path) -> Path | None:
    """`old`, the file a test's cassette `own` was written as before `OWN_SUFFIX`, when `own` is missing and `old`
    is a mockmcp cassette: replay reads it, the next recording moves it. Else None."""
    return old if not own.exists() and kind(old) == "mockmcp" else None


def markers(item: Any) -> list[tuple[Sequence[Any], Mapping[str, Any]]]:
    """The (args, kwargs) of a test's `mockmcp` markers, outermost first: a module's, a class's, its own."""
    return [(marker.args, marker.kwargs) for marker in item.iter_markers("mockmcp")][::-1]


def _marker_problem(args: Sequence[Any], kwargs: Mapping[str, Any], where: str = "@pytest.mark.mockmcp") -> str | None:
    """Why a `mockmcp` marker's (or config's) arguments cannot be right (positional, unknown, misspelt), or None."""
    known = ", ".join(f"{name}=" for name in MARKER_ARGUMENTS)
    if args:
        return f"{where} takes keyword arguments only ({known}); got {list(args)!r}"
    for name in kwargs:
        if name not in MARKER_ARGUMENTS:
            close = difflib.get_close_matches(name, MARKER_ARGUMENTS, n=1)
            guess = f" (did you mean {close[0]}=?)" if close else ""
            return f"{where} got an unknown argument {name}={kwargs[name]!r}{guess}; it takes {known}"
    before_record = kwargs.get("before_record")
    if before_record is not None and not callable(before_record):
        return f"{where}: before_record must be a function of one message, got {before_record!r}"
    substitute = kwargs.get("substitute")
    if substitute is not None and not (
        isinstance(substitute, Mapping)
        and all(isinstance(k, str) and (v is None or isinstance(v, str | PurePath)) for k, v in substitute.items())
    ):
        return (
            f"{where}: substitute maps names to the values they stand for, e.g. "
            f"substitute={{'DATA': str(tmp_path)}} (None: the environment variable's value), got {substitute!r}"
        )
    return None


def merge_settings(
    config: Mapping[str, Any], markers: Sequence[tuple[Sequence[Any], Mapping[str, Any]]]
) -> tuple[dict[str, Any], str | None]:
    """A test's settings: the `mockmcp_config` fixture's, then each marker's `(args, kwargs)`, outermost first, a
    nearer one winning argument by argument; and the first problem found (see `_marker_problem`), or None."""
    problems = [_marker_problem((), config, "the mockmcp_config fixture")]
    merged = {key: value for key, value in config.items() if key in MARKER_ARGUMENTS}
    for args, kwargs in markers:
        problems.append(_marker_problem(args, kwargs))
        merged.update((key, value) for key, value in kwargs.items() if key in MARKER_ARGUMENTS)
    return merged, next((problem for problem in problems if problem), None)


def orphans(folders: Iterable[Path], used: Iterable[Path]) -> list[Path]:
    """Every cassette under the folders that is not used, sorted; a recording in progress (hidden) is none, nor
    is a VCR cassette (pytest-recording's, which may share the folders)."""
    found = {path.resolve() for folder in folders for path in folder.rglob("*.yaml") if not path.name.startswith(".")}
    return sorted(path for path in found - {Path(path).resolve() for path in used} if kind(path) != "vcr")


def orphans_report(orphans: list[Path], root: Path) -> str:
    """What `--mockmcp-orphans` shows: each orphan from the project's folder, or that there is none."""
    if not orphans:
        return "mockmcp: every cassette in the cassette folders is used by a collected test"
    noun = "cassette" if len(orphans) == 1 else "cassettes"
    return (
        f"mockmcp: {len(orphans)} {noun} that no collected test uses (delete them, or give a test "
        "@pytest.mark.mockmcp(cassette=...) that uses them):\n"
        + "\n".join(f"  {os.path.relpath(path, root)}" for path in orphans)
    )
