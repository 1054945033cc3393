"""What a test's recording must not keep: secrets (redaction rules), values no rule catches, the user's paths.

Redaction and substitutions (the project's folder as `${PROJECT}` by default) are done by the
recorder itself, before anything touches the disk: they travel to it as `RecordOptions`.
`before_record` is a Python function, which a recorder in another process cannot call: it is
applied to the finished recording, before it becomes the test's cassette. `meta.server` names the
server by paths relative to the project, and `~` for the home folder.
"""

from __future__ import annotations

import copy
import sys
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, NamedTuple

from mockmcp._wire.words import RecordMode, placeholder
from mockmcp.cassette.model import Cassette, Interaction, ServerItem
from mockmcp.errors import UsageError
from mockmcp.options import RecordOptions, Substitution

__all__ = ["Privacy", "problem"]

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
