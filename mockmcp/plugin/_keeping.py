"""Keeping a test's recording: where it waits for the verdict, how it becomes the cassette, what is left behind.

A recording waits in a staged file beside the cassette, so keeping it is one rename, under a lock on the
folder. Over a cassette it keeps what `mockmcp verify --update` keeps (the fault knobs of the interactions
the session pairs with); one in which no message changed leaves the file as it was, and an empty one never
replaces a cassette that has interactions. A journal a stopped run left (`leftovers`) waits beside the
cassette for `mockmcp recover` until a recording of the cassette is kept.
"""

from __future__ import annotations

import contextlib
import glob
import os
import time
import warnings
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from mockmcp.cassette import files
from mockmcp.stdio.processes import lock_file

if TYPE_CHECKING:
    from mockmcp.cassette.model import Cassette

__all__ = ["alive", "discard", "fate", "journal", "keep", "leftovers", "lock", "staged_path"]

# The meta keys that only say when: kept by a re-recording in which no message changed, so the file stays byte
# for byte as it was (`drift.updated` keeps the interactions' own `at` and `took`).
_DATES = ("recorded_at", "updated_at")
_SAVING = 10.0  # seconds a recorder that has ended may still take to save


@contextlib.contextmanager
def lock(folder: Path) -> Iterator[None]:
    """An exclusive lock on a cassette folder, across processes (pytest-xdist workers included)."""
    folder.mkdir(parents=True, exist_ok=True)
    fd = os.open(folder, os.O_RDONLY)
    try:
        lock_file(fd)
        yield
    finally:
        os.close(fd)  # closing releases the lock


def alive(pid: int) -> bool:
    """Whether a process `pid` exists (a zombie not yet waited for counts)."""
    try:
        os.kill(pid, 0)
    except OSError as error:  # PermissionError: another user's process
        return not isinstance(error, ProcessLookupError)
    return True


def staged_path(cassette: Path, pid: int) -> Path:
    """Where the test run `pid` writes a recording of `cassette` before the verdict decides."""
    return cassette.with_name(f".{cassette.stem}.{pid}.recording.yaml")


def journal(staged: Path) -> Path:
    """The recorder's journal of a staged recording."""
    return Path(files.journal_path(str(staged)))


def fate(launched: bool, problem: bool, passed: bool, keep_failed: bool, handed_out: bool) -> str:
    """What becomes of a test's recording once the test is over: `keep` it as the cassette, `discard` it, `leave`
    it (the test could not run as asked, and fails saying why), or `unlaunched`: discard it, and fail the test,
    which took the command and never launched it (it would pass with no cassette, and fail on its next run)."""
    if not launched:  # nothing recorded (in mode new, the staged copy of the cassette goes)
        return "unlaunched" if handed_out and passed and not problem else "discard"
    if problem:
        return "leave"
    return "keep" if passed or keep_failed else "discard"


def keep(
    staged: Path,
    cassette: Path,
    finish: Callable[[Cassette], Cassette],
    ignores: Sequence[str],
    legacy: Path | None = None,
) -> bool:
    """Make a finished recording the cassette, `finish` applied to it, over the cassette or, when it is missing,
    over `legacy` (the cassette under its old name), which moves; False when there was none to keep."""
    deadline = time.monotonic() + _SAVING
    while journal(staged).exists() and time.monotonic() < deadline:  # the recorder is still saving
        time.sleep(0.02)
    if not staged.exists() or journal(staged).exists():
        return False
    from mockmcp.cassette import store  # deferred: YAML costs start-up in every run that never records

    live = finish(store.load(str(staged)))
    with lock(cassette.parent):
        old = legacy if legacy is not None and legacy.exists() and not cassette.exists() else None
        if old is not None:  # moved in one rename (its comments stay), and back if the recording cannot be saved
            os.replace(old, cassette)
        try:
            replaced = _save(live, cassette, ignores)
        except BaseException:
            if old is not None:
                os.replace(cassette, old)
            raise
        if replaced:
            _superseded(cassette)
    staged.unlink()
    return True


def _save(live: Cassette, cassette: Path, ignores: Sequence[str]) -> bool:
    """Save the recording over the cassette (atomically, as an edit of its text); False when it was kept as it was."""
    # Deferred: YAML and the drift comparison cost start-up time in every pytest run that never records.
    from mockmcp.cassette import store
    from mockmcp.engine.matching import Matcher
    from mockmcp.errors import CassetteError
    from mockmcp.tools import compare, updated

    try:
        recorded = store.load(str(cassette)) if cassette.exists() else None
    except CassetteError:  # nothing in it to keep: the recording replaces it
        recorded = None
    if recorded is None:
        store.save(live, str(cassette))
        return True
    if not live.interactions and recorded.interactions:
        warnings.warn(
            f"mockmcp: the host sent nothing, so {cassette} was kept as it was rather than emptied", stacklevel=1
        )
        return False
    # What stays keeps its knobs and, as store.save edits the file in place, its comments; what the host no longer
    # asked goes.
    drift = compare(recorded, live, Matcher.build(tuple(ignores), recorded.meta))
    gone = {entry.recorded for entry in drift.entries if entry.other is None}
    kept, _notes = updated(recorded, live, drift)
    kept = kept._replace(interactions=tuple(it for i, it in enumerate(kept.interactions) if i not in gone))
    if kept.interactions == recorded.interactions:  # no message changed: the dates as recorded (none added), in place
        dates = {key: recorded.meta[key] for key in _DATES if key in recorded.meta}
        meta = {key: dates.get(key, value) for key, value in kept.meta.items() if key not in _DATES or key in dates}
        kept = kept._replace(meta=meta | dates)
    store.save(kept, str(cassette))
    return True


def _superseded(cassette: Path) -> None:
    """A journal beside the cassette that no recorder holds (`leftovers`) holds a session this recording
    replaces: it goes, said in a warning, so no later replay or `recover` takes it for the cassette's."""
    from mockmcp.record import holder  # deferred, as in `keep`

    beside = journal(cassette)
    if beside.exists() and holder(str(beside)) is None:
        beside.unlink()
        warnings.warn(
            f"mockmcp: removed {beside}, the session of a run stopped mid-recording: this recording of {cassette} "
            "replaces it",
            stacklevel=1,
        )


def discard(staged: Path) -> None:
    """Forget a recording the test's verdict did not keep (the cassette stays as it was)."""
    for leftover in (staged, journal(staged)):
        leftover.unlink(missing_ok=True)


def leftovers(cassette: Path) -> list[str]:
    """Clear what recordings of `cassette` by test runs that died mid-way left behind; returns what to say.

    Such a recording never had its verdict: its staged file goes, as a failed test's would; its journal
    moves beside the cassette as `CASSETTE.journal` for `mockmcp recover`, unless one is there already.
    """
    pattern = glob.escape(f".{cassette.stem}.") + "*" + glob.escape(".recording.yaml")
    said = []
    for path in [*cassette.parent.glob(pattern), *cassette.parent.glob(pattern + ".journal")]:
        pid = path.name[len(cassette.stem) + 2 :].split(".", 1)[0]
        if not pid.isdigit() or int(pid) == os.getpid() or alive(int(pid)):
            continue
        if path.suffix == ".journal":
            beside = journal(cassette)
            if not beside.exists():
                with contextlib.suppress(FileNotFoundError):
                    path.rename(beside)
                    path = beside
            said.append(
                f"a test run stopped mid-recording left its session in {path}: `mockmcp recover {cassette}` "
                "makes it the cassette (delete the journal to forget it)"
                if path == beside
                else f"a test run stopped mid-recording left its session in {path} (a journal is beside the "
                f"cassette already): rename it to {beside.name} once that one is recovered, then `mockmcp recover "
                f"{cassette}`"
            )
            continue
        path.unlink(missing_ok=True)
        said.append(f"removed {path}, left by a test run stopped mid-recording")
    return said
