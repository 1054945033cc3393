"""What a test's recording must not keep: secrets (redaction rules), values no rule catches, the user's paths.

Redaction and substitutions (`${PROJECT}` by default) travel to the recorder as `RecordOptions`, so they are
done before anything touches the disk; `before_record`, a Python function, is applied to the finished recording.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

from mockmcp._wire.words import placeholder
from mockmcp.cassette.model import Cassette, Interaction
from mockmcp.errors import UsageError
from mockmcp.inprocess import portable
from mockmcp.options import Substitution

__all__ = ["Privacy"]


class Privacy(NamedTuple):
    """A test's rules for what its recordings keep."""

    redact_env: tuple[str, ...] = ()
    redact: tuple[str, ...] = ()
    before_record: Callable[[dict[str, Any]], dict[str, Any]] | None = None
    project: Path | None = None
    substitute: tuple[Substitution, ...] = ()  # (name, value; None: the environment variable's)

    def finish(self, cassette: Cassette) -> Cassette:
        """The recording as it may be kept: before_record applied to each message, meta.server made portable:
        paths relative to the project or from `~/`, this Python as `python`."""
        meta = dict(cassette.meta)
        if isinstance(meta.get("server"), list):
            meta["server"] = [self._portable(str(part)) for part in meta["server"]]
        interactions = cassette.interactions
        if self.before_record is not None:
            interactions = tuple(self._hooked(interaction) for interaction in interactions)
        return cassette._replace(interactions=interactions, meta=meta)

    def _portable(self, written: str) -> str:
        """A word of meta.server as any machine reads it (see `inprocess.portable`), else as the recorder wrote it."""
        part = written
        for name, value in self.substitute:  # the recorder wrote them as placeholders: a path is judged by its value
            if value is not None:
                part = part.replace(placeholder(name), value)
        made = portable(part, self.project)
        return written if made == part else made

    def _hooked(self, interaction: Interaction) -> Interaction:
        server = tuple(
            item._replace(message=self._message(item.message), response=self._message(item.response))
            for item in interaction.server
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
