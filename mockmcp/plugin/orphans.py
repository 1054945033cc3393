"""`pytest --mockmcp-orphans`: the cassettes in the cassette folders that no collected test uses.

Each collected test that takes the `mockmcp` fixture names its cassettes by the naming rule, without
running (so the scan works under `--collect-only`); a test that ran adds what it really used, which
covers cassettes that fixtures name. Every `*.yaml` under a cassette folder that neither names is an
orphan; a recording in progress (a hidden staged file) is not a cassette.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from mockmcp.plugin.naming import cassette_name, markers, merge_settings, module_folder, own_cassette

__all__ = ["Used", "report"]


class Used:
    """The cassette folders of the collected test files, and the cassettes their tests use."""

    def __init__(self) -> None:
        self.folders: set[Path] = set()
        self.cassettes: set[Path] = set()

    def collect(self, item: Any, folder_name: str) -> None:
        """Note the cassettes the collected test `item` uses by the naming rule (none if it takes no `mockmcp`)."""
        if "mockmcp" not in getattr(item, "fixturenames", ()):
            return
        test_file = Path(item.path)
        self.folders.add((test_file.parent / folder_name).resolve())
        folder = module_folder(test_file, folder_name)
        settings, _problem = merge_settings({}, markers(item))
        given = settings.get("cassette")
        own = (folder / str(given)).resolve() if given else folder / own_cassette(item)
        servers = settings.get("servers") or {}
        self.cassettes.update(own.with_suffix("") / cassette_name([str(name)]) for name in servers)
        if not servers:
            self.cassettes.add(own)

    def add(self, cassettes: Iterable[Path]) -> None:
        """Cassettes tests used when they ran."""
        self.cassettes.update(Path(path).resolve() for path in cassettes)

    def orphans(self) -> list[Path]:
        """Every cassette under the folders that no test uses, sorted."""
        found = set()
        for folder in self.folders:
            for root, _dirs, names in os.walk(folder):
                found.update(Path(root, n).resolve() for n in names if n.endswith(".yaml") and not n.startswith("."))
        return sorted(found - self.cassettes)


def report(orphans: list[Path], root: Path) -> str:
    """The lines pytest's summary shows: each orphan from the project's folder, or that there is none."""
    if not orphans:
        return "mockmcp: every cassette in the cassette folders is used by a collected test"
    shown = [os.path.relpath(path, root) for path in orphans]
    noun = "cassette" if len(orphans) == 1 else "cassettes"
    return (
        f"mockmcp: {len(orphans)} {noun} that no collected test uses (delete them, or give a test "
        "@pytest.mark.mockmcp(cassette=...) that uses them):\n" + "\n".join(f"  {path}" for path in shown)
    )
