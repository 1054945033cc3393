"""What the replay engine asks its shell to do: the actions `Replay` returns. Pure values.

They are on the launch path (docs/architecture.md, "Start-up rules").
"""

from __future__ import annotations

from mockmcp._wire.namedtuple import NamedTuple

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["Action", "Cut", "Exit", "Note", "Send", "Wake"]


class Send(NamedTuple):
    """Write these bytes (one or more complete lines) to the host. Over stdio only the bytes matter; over HTTP
    the other fields say where the message goes and how, so that no shell reads back what the engine wrote."""

    data: bytes
    request: Any = None  # the live request it belongs to: the shell's key for it, else its id (None: none)
    final: bool = False  # it is the reply that ends that request
    stream: str | None = None  # the recorded server item's (`model.GET_STREAM`: sent on the session's GET stream)
    method: str | None = None  # a server message's method (None: a reply, or a raw line that is no JSON-RPC)
    code: int | None = None  # a reply's error code, when it is an error response
    batch: tuple[Any, ...] = ()  # the ids a batch's array of responses answers (empty: no batch)
    turn: bool = False  # the recording had it apart from the message before it: the host gets a turn between them


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


class Cut(NamedTuple):
    """The answer to the live request `request` (as `Send.request` names it) breaks off before its reply
    (`drop: cut`): over HTTP that request's stream is cut, and only it; over stdio and in process, no reply."""

    request: Any


Action = Send | Wake | Note | Exit | Cut
