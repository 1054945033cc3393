"""The life of one stream at replay's HTTP endpoint (a request's answer, or a session's GET stream), as a table.

`step(state, event)` gives the next state and the effects, in order, that `endpoint_stream.Stream` carries
out. A request's messages are gathered while the engine's call runs; when it returns, the answer begins as
one JSON body or an SSE stream, or, from a server that answers a lone reply as JSON and has nothing to send
yet, waits until it knows which. Pure: each rule is a row, tested by conversations (tests/test_stream_state.py).
"""

from __future__ import annotations

__all__ = ["ENDED", "RIDING", "SILENT", "step"]

# States.
GATHERING = "gathering"  # the engine's call runs: what it sends is gathered
WHOLE = "whole"  # gathered, and nothing more will come: its reply, or it was ended
UNBEGUN = "unbegun"  # nothing yet: one JSON body if the reply comes alone, else a stream
OPEN = "open"  # an SSE stream that said something since its keep-alive timer began
QUIET = "quiet"  # an SSE stream that said nothing since then
LOST = "lost"  # an SSE stream whose connection closed: what it is sent is numbered and kept to resume, not written
GONE = "gone"  # an answer not begun whose connection closed: what it is sent goes nowhere
DONE = "done"  # all of it written (its end, if it was a stream)
BROKEN = "broken"  # cut off, as a server that dies cuts: resuming it breaks off again

ENDED = frozenset({WHOLE, DONE, BROKEN})
RIDING = frozenset({GATHERING, UNBEGUN, OPEN, QUIET})  # it holds its connection
SILENT = frozenset({LOST, GONE})  # its client left: it holds up nothing

# Events.
MESSAGE, REPLY = "message", "reply"  # a message for it; its reply (the last thing it carries)
SETTLE, SETTLE_ALONE = "settle", "settle alone"  # the call returned; "alone": as JSON, if it can (a lone reply)
FINISH = "finish"  # it ends with no (more) reply: cancelled, its session ended, the cap on GET streams
CUT = "cut"  # its answer breaks off (`drop: cut`, the `exit` knob)
CLOSE = "close"  # its connection closed
RESUME = "resume"  # a client took it up again with Last-Event-ID, on another connection
BEAT = "beat"  # its keep-alive timer fired
OVERFLOW = "overflow"  # a message for a GET stream whose client left more unread than the bound
ANSWERED = "answered"  # the call was answered otherwise (a batch of notifications: 202)
RESENT = "resent"  # events sent before, for a client that resumed it or one that opened it again

# Effects.
GATHER = "gather"  # keep the message for when the answer begins
JSON = "json"  # the reply (or the one message gathered) as one JSON body
HEAD = "head"  # the stream's head, its priming event, what was gathered
SHOWN = "shown"  # as HEAD, when the answer would show by now: something gathered, or a server that streams all
EVENT = "event"  # the message as an SSE event
FRAMES = "frames"  # events encoded before, as they are
END = "end"  # the stream's end
DROP = "drop"  # cut its connection
KEEP = "keep"  # number the message and keep it to resume from
SPILL = "spill"  # say so, cut its connection; the message kept to resume from, else held for the next GET stream
ATTACH = "attach"  # it goes on the new connection
WATCH = "watch"  # its keep-alive timer begins
COMMENT = "comment"  # a keep-alive comment

_TABLE: dict[tuple[str, str], tuple[str, tuple[str, ...]]] = {
    (GATHERING, MESSAGE): (GATHERING, (GATHER,)),
    (GATHERING, REPLY): (WHOLE, (GATHER,)),
    (GATHERING, FINISH): (WHOLE, ()),
    (GATHERING, SETTLE): (QUIET, (HEAD, WATCH)),
    (GATHERING, SETTLE_ALONE): (UNBEGUN, ()),
    (GATHERING, CUT): (BROKEN, (SHOWN, DROP)),
    (GATHERING, CLOSE): (GONE, ()),
    (GATHERING, ANSWERED): (DONE, ()),
    (WHOLE, SETTLE): (DONE, (HEAD, END)),
    (WHOLE, SETTLE_ALONE): (DONE, (JSON,)),
    (WHOLE, FINISH): (WHOLE, ()),
    (WHOLE, CLOSE): (GONE, ()),
    (UNBEGUN, MESSAGE): (OPEN, (HEAD, WATCH, EVENT)),
    (UNBEGUN, REPLY): (DONE, (JSON,)),
    (UNBEGUN, FINISH): (DONE, (HEAD, END)),
    (UNBEGUN, CUT): (BROKEN, (DROP,)),
    (UNBEGUN, CLOSE): (GONE, ()),
    (OPEN, BEAT): (QUIET, (WATCH,)),
    (QUIET, BEAT): (QUIET, (COMMENT, WATCH)),
    (LOST, MESSAGE): (LOST, (KEEP,)),
    (LOST, REPLY): (DONE, (KEEP,)),
    (LOST, FINISH): (DONE, ()),
    (LOST, CUT): (BROKEN, ()),
    (LOST, RESUME): (QUIET, (ATTACH, WATCH)),
}
for _state in (OPEN, QUIET):
    _TABLE.update(
        {
            (_state, MESSAGE): (OPEN, (EVENT,)),
            (_state, REPLY): (DONE, (EVENT, END)),
            (_state, FINISH): (DONE, (END,)),
            (_state, CUT): (BROKEN, (DROP,)),
            (_state, CLOSE): (LOST, ()),
            (_state, RESUME): (QUIET, (DROP, ATTACH, WATCH)),
            (_state, OVERFLOW): (DONE, (SPILL,)),
            (_state, RESENT): (OPEN, (FRAMES,)),
        }
    )
# What comes after its client left or its end changes nothing (a timer let go, a second end, a late message).
for _state in (GONE, DONE, BROKEN, LOST):
    for _event in (MESSAGE, REPLY, SETTLE, SETTLE_ALONE, FINISH, CUT, CLOSE, BEAT):
        _TABLE.setdefault((_state, _event), (_state, ()))


def step(state: str, event: str) -> tuple[str, tuple[str, ...]]:
    """The next state, and what to do in order; ValueError for an event the state cannot take."""
    try:
        return _TABLE[state, event]
    except KeyError:
        raise ValueError(f"a stream {state} cannot take {event!r}") from None
