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
    """Write these bytes (one or more complete lines) to the host.

    Over stdio only the bytes matter. Over HTTP the other fields say where the message goes and how,
    so that no shell reads back (or rewrites) what the engine wrote:

    - `request`: the live request the message belongs to, by the shell's key for it (`Replay.receive`'s
      `key`), else by its id; None: it belongs to none, like an unsolicited notification.
    - `final`: this is the reply that ends that request.
    - `stream`: the recorded server item's (`model.GET_STREAM`: the recorded server sent it on the
      session's GET stream).
    - `method`: a server message's method (None: a reply, or a raw line that is no JSON-RPC message).
    - `code`: a reply's error code, when it is an error response (None: it is not).
    - `batch`: the ids a batch's array of responses answers (empty: it answers no batch).
    """

    data: bytes
    request: Any = None
    final: bool = False
    stream: str | None = None
    method: str | None = None
    code: int | None = None
    batch: tuple[Any, ...] = ()


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
    """The answer to the live request `request` (named as `Send.request` names it) breaks off here, before its
    reply (the cassette's `drop: cut`). Over Streamable HTTP, the connection of that request's stream is cut,
    and only it: the session goes on. Over stdio and in process, where every request shares one stream,
    nothing is sent: the host sees no reply, as with `drop: true`."""

    request: Any


Action = Send | Wake | Note | Exit | Cut
