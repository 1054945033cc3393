"""The project's folder, `${PROJECT}`, for a cassette the pytest plugin recorded, replayed or verified at a shell.

The plugin writes pytest's rootdir as `${PROJECT}`; replay and verify find the same folder above the cassette's
as pytest finds its rootdir, and say so. On the launch path: `os` only, files read as text.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from mockmcp.cassette.model import Cassette

__all__ = ["PROJECT", "project_folder", "with_project"]

PROJECT = "PROJECT"

# pytest's configuration files in its order of precedence, each with the section that makes it one (None:
# the file alone does).
_CONFIGS = (
    ("pytest.toml", None),
    (".pytest.toml", None),
    ("pytest.ini", None),
    (".pytest.ini", None),
    ("pyproject.toml", ("[tool.pytest]", "[tool.pytest.")),
    ("tox.ini", ("[pytest]",)),
    ("setup.cfg", ("[tool:pytest]",)),
)


def project_folder(start: str) -> tuple[str, str] | None:
    """The project's folder above `start` (a folder) as pytest finds its rootdir, with the file that made it
    one; None when there is none."""
    folders = [os.path.abspath(start)]  # and each above it, up to the root
    while os.path.dirname(folders[-1]) != folders[-1]:
        folders.append(os.path.dirname(folders[-1]))
    for folder in folders:
        for name, sections in _CONFIGS:
            path = os.path.join(folder, name)
            if os.path.isfile(path) and (sections is None or _has_section(path, sections)):
                return folder, name
    for wanted in ("setup.py", "pyproject.toml"):
        for folder in folders:
            if os.path.isfile(os.path.join(folder, wanted)):
                return folder, wanted
    return None


def with_project(
    recorded: Cassette, given: tuple[tuple[str, str | None], ...], command: str
) -> tuple[tuple[str, str | None], ...]:
    """The substitutions given, with `PROJECT` the project's folder when the cassette uses `${PROJECT}` and it
    is not given, which a note says (naming `command`, `mockmcp replay` or `mockmcp verify`)."""
    if PROJECT not in (recorded.meta.get("substitute") or ()) or any(name == PROJECT for name, _ in given):
        return given
    from mockmcp.cli.replaying import note
    from mockmcp.engine.redact import mentioned

    if PROJECT not in mentioned(recorded, [PROJECT]):
        return given
    found = project_folder(os.path.dirname(os.path.abspath(recorded.path or "")))
    if found is None:
        note(
            f"{recorded.path} uses ${{{PROJECT}}}, the project's folder, and no folder above it has a pytest "
            "configuration file, setup.py or pyproject.toml to say which it is"
        )
        return given
    folder, why = found
    note(
        f"${{{PROJECT}}} is {folder}, the project's folder as the pytest plugin finds it (pytest's rootdir: the "
        f"folder of {why} above {recorded.path}); {command} --substitute {PROJECT}=PATH gives another"
    )
    return (*given, (PROJECT, folder))


def _has_section(path: str, sections: tuple[str, ...]) -> bool:
    """Whether the file has a line that opens one of the sections (a file that cannot be read has none)."""
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return any(line.strip().startswith(sections) for line in handle)
    except OSError:
        return False
