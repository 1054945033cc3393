"""Keeping a test's recording: what it must not keep, where it waits for the verdict, how it becomes the cassette.

Redaction and substitutions (the project's folder as `${PROJECT}` by default) are done by the
recorder itself, before anything touches the disk: they travel to it as `RecordOptions`.
`before_record` is a Python function, which a recorder in another process cannot call: it is
applied to the finished recording (`Privacy.finish`), which also names the server in `meta.server`
by paths relative to the project, and `~` for the home folder.

A recording waits in a staged file beside the cassette, so keeping it is one rename, under a lock on
the folder (no lock file is left). Over a cassette it keeps the fault knobs of the interactions the
session pairs with, as `mockmcp verify --update` does; a recording in which no message changed
leaves the file as it was, and an empty one never replaces a cassette that has interactions.
"""

from __future__ import annotations

import contextlib
import copy
import fcntl
import glob
import os
import sys
import time
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from mockmcp._wire.words import RecordMode, placeholder
from mockmcp.cassette import files
from mockmcp.cassette.model import Cassette, Interaction, ServerItem
from mockmcp.errors import UsageError
from mockmcp.options import RecordOptions, Substitution

__all__ = ["Privacy", "alive", "discard", "fate", "journal", "keep", "leftovers", "lock", "problem", "staged_path"]

# The meta keys that only say when: kept as they were by a re-recording in which no message changed,
# so that it leaves the file byte for byte as it was (the interactions' own `at`/`took` stay too, as
# `drift.updated` keeps every interaction judged the same).
_DATES = ("recorded_at", "updated_at")


@contextlib.contextmanager
def lock(folder: Path) -> Iterator[None]:
    """An exclusive lock on a cassette folder, across processes (pytest-xdist workers included)."""
    folder.mkdir(parents=True, exist_ok=True)
    fd = os.open(folder, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the lock


def alive(pid: int) -> bool:
    """Whether a process `pid` exists (a zombie not yet waited for counts)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
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
    staged: Path, cassette: Path, finish: Callable[[Cassette], Cassette], ignores: Sequence[str], wait: float = 10.0
) -> bool:
    """Make a finished recording the cassette, `finish` applied to it; False when there was none to keep."""
    deadline = time.monotonic() + wait
    while journal(staged).exists() and time.monotonic() < deadline:  # the recorder is still saving
        time.sleep(0.02)
    if not staged.exists() or journal(staged).exists():
        return False
    # Deferred: YAML and the drift comparison cost start-up time in every pytest run that never records.
    from mockmcp.cassette import store
    from mockmcp.engine.matching import Matcher
    from mockmcp.errors import CassetteError
    from mockmcp.tools import compare, updated

    live = finish(store.load(str(staged)))
    with lock(cassette.parent):
        try:
            recorded = store.load(str(cassette)) if cassette.exists() else None
        except CassetteError:  # nothing in it to keep: the recording replaces it
            recorded = None
        if recorded is not None and not live.interactions and recorded.interactions:
            warnings.warn(
                f"mockmcp: the host sent nothing, so {cassette} was kept as it was rather than emptied", stacklevel=1
            )
        elif recorded is not None:
            # The recorded cassette with the live answers: what stays keeps its knobs and, as store.save edits
            # the file in place, its comments; what the host no longer asked goes.
            drift = compare(recorded, live, Matcher.build(tuple(ignores), recorded.meta))
            gone = {entry.recorded for entry in drift.entries if entry.other is None}
            kept, _notes = updated(recorded, live, drift)
            kept = kept._replace(interactions=tuple(it for i, it in enumerate(kept.interactions) if i not in gone))
            if kept.interactions == recorded.interactions:  # no message changed: no date churns in the diff
                dates = {key: recorded.meta[key] for key in _DATES if key in recorded.meta}
                kept = kept._replace(meta={**kept.meta, **dates})
            store.save(kept, str(cassette))  # atomic, with the old file's permissions
        else:
            store.save(live, str(cassette))  # atomic, with the old file's permissions if there is one
    staged.unlink()
    return True


def discard(staged: Path) -> None:
    """Forget a recording the test's verdict did not keep (the cassette stays as it was)."""
    for leftover in (staged, journal(staged)):
        with contextlib.suppress(FileNotFoundError):
            leftover.unlink()


def leftovers(cassette: Path) -> list[str]:
    """Clear what recordings of `cassette` by test runs that died mid-way left behind; returns what to say.

    Such a recording never had its verdict: its staged file goes, as a failed test's would. Its journal
    holds the session and is never thrown away: it moves beside the cassette as `CASSETTE.journal`, for
    `mockmcp recover`, unless one is there already (then it stays, named in the warning).
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
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
        said.append(f"removed {path}, left by a test run stopped mid-recording")
    return said


Hook = Callable[[dict[str, Any]], dict[str, Any]]


class Privacy(NamedTuple):
    """A test's rules for what its recordings keep."""

    redact_env: tuple[str, ...] = ()
    redact: tuple[str, ...] = ()
    before_record: Hook | None = None
    project: Path | None = None
    substitute: tuple[Substitution, ...] = ()  # (name, value; None: the environment variable's)

    @classmethod
    def substitutions(cls, project: Path, *given: Iterable[Substitution]) -> tuple[Substitution, ...]:
        """`PROJECT` for the project's folder, then each source given (the ini option's, the marker's), a later
        one winning by name."""
        chosen: dict[str, str | None] = {} if len(str(project)) < 2 else {"PROJECT": str(project)}
        for source in given:
            chosen.update(source)
        return tuple(chosen.items())

    def options(self, mode: str) -> RecordOptions:
        """The recorder's options in record mode `mode`; raises UsageError for an unknown mode."""
        parsed = RecordMode.parse(mode, allow_none=True).value
        return RecordOptions(parsed, self.redact_env, self.redact, self.substitute)

    def finish(self, cassette: Cassette) -> Cassette:
        """The recording as it may be kept: before_record applied to each message, meta.server made portable."""
        meta = dict(cassette.meta)
        if isinstance(meta.get("server"), list):
            meta["server"] = [self._portable(str(part)) for part in meta["server"]]
        interactions = cassette.interactions
        if self.before_record is not None:
            interactions = tuple(self._hooked(interaction) for interaction in interactions)
        return cassette._replace(interactions=interactions, meta=meta)

    def _portable(self, part: str) -> str:
        written = part  # as the recorder wrote it: values of this machine are placeholders already
        for name, value in self.substitute:
            if value is not None:
                part = part.replace(placeholder(name), value)
        if part == sys.executable:
            return "python"
        path = Path(part)
        if not path.is_absolute():
            return part
        if self.project is not None and path.is_relative_to(self.project):
            return path.relative_to(self.project).as_posix()
        if path.is_relative_to(Path.home()):
            return "~/" + path.relative_to(Path.home()).as_posix()
        return written

    def _hooked(self, interaction: Interaction) -> Interaction:
        server = tuple(
            item._replace(message=self._message(item.message), response=self._message(item.response))
            for item in interaction.server
            if isinstance(item, ServerItem)
        )
        return interaction._replace(
            message=self._message(interaction.message), response=self._message(interaction.response), server=server
        )

    def _message(self, message: Any) -> Any:
        if not isinstance(message, dict) or self.before_record is None:
            return message  # a raw line, or nothing
        changed = self.before_record(copy.deepcopy(message))
        if not isinstance(changed, dict):
            raise UsageError(
                f"before_record must return the message it was given (a dict), changed or not; "
                f"it returned {changed!r} for {message.get('method') or 'a response'}"
            )
        return changed


def problem(options: RecordOptions, env: Mapping[str, str]) -> str | None:
    """Why recording with these options would leak or redact nothing: a variable not set, or None."""
    unset = [name for name in options.redact_env if not env.get(name)]
    if unset:
        return (
            f"redact_env names {', '.join(unset)}, which {'is' if len(unset) == 1 else 'are'} not set, so its "
            "value could not be kept out of the cassette: set it to the real secret for the recording"
        )
    unset = [name for name, value in options.substitutions if value is None and not env.get(name)]
    if unset:
        return (
            f"substitute names {', '.join(unset)} without a value, and the environment variable is not set: "
            f"give the value (substitute={{{unset[0]!r}: '/path'}}) or set {unset[0]}"
        )
    return None
