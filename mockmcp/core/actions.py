"""What the replay engine asks its shell to do: the actions `Replay` returns. Pure values.

Value types on the start-up path are NamedTuples: defining one costs a sixth of a frozen, slotted
dataclass, and replay's start-up time is a feature. They are `mockmcp.namedtuple`'s, which builds
them without importing typing.
"""

from __future__ import annotations

from mockmcp.namedtuple import NamedTuple

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["Action", "Exit", "Note", "Send", "Wake"]


class Send(NamedTuple):
    """Write these bytes (one or more complete lines) to the host.

    `request` is the live request id the message belongs to (None: it belongs to none, like an
    unsolicited notification), `final` marks the reply that ends that request, and `stream` is the
    recorded server item's (`model.GET_STREAM`: the recorded server sent it on the session's GET
    stream): over stdio they do not matter; over HTTP they say which stream carries the message.
    """

    data: bytes
    request: Any = None
    final: bool = False
    stream: str | None = None


class Wake(NamedTuple):
    """Call `Replay.wake(job)` after `after` seconds."""

    after: float
    job: int


class Note(NamedTuple):
    """A diagnostic for stderr; never for the protocol stream."""

    text: str


class Exit(NamedTuple):
    """End the session (the cassette's `exit` knob): over stdio, close stdout and exit with this status;
    over HTTP, end the live session, cutting its open streams."""

    status: int


Action = Send | Wake | Note | Exit
