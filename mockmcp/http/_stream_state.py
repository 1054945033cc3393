"""The life of one stream at replay's HTTP endpoint (a request's answer, or a session's GET stream), as a table:
`step(state, event)` is the next state and the effects, in order, that `_stream.Stream` carries out.

States: gathering (the engine's call runs), whole (gathered, nothing more to come), unbegun (a server that
answers a lone reply as JSON has nothing to send yet: JSON if the reply comes alone, else a stream), open (an
SSE stream that said something since its keep-alive timer began), quiet (one that said nothing since), lost
(an SSE stream whose connection closed: its events are kept to resume from), gone (an answer not begun whose
connection closed), done, broken (cut off, as a server that dies cuts: resuming it breaks off again).
Events: message, reply (the last it carries), settle (the call returned; "settle alone": as JSON if the
reply is all it carries), finish (ended with no reply), cut, close (its connection), resume (Last-Event-ID,
on another connection), beat (its keep-alive timer), overflow (its client left too much unread), resent
(events sent before), answered (the call was answered otherwise: 202).
Effects: gather, json, head (its head, priming event and what was gathered), shown (head, when the answer
would show by now: something gathered, or a server that streams every answer), event, frames (events
encoded before), end, drop (cut its connection), keep (to resume from), spill (say so, drop, keep or hold
for the next GET stream), attach (to the new connection), watch (its keep-alive timer), comment.
"""

from __future__ import annotations

__all__ = ["ENDED", "RIDING", "SILENT", "step"]

ENDED = frozenset({"whole", "done", "broken"})
RIDING = frozenset({"gathering", "unbegun", "open", "quiet"})  # it holds its connection
SILENT = frozenset({"lost", "gone"})  # its client left: it holds nothing up

_ROWS = """
gathering message       gathering gather
gathering reply         whole     gather
gathering finish        whole
gathering settle        quiet     head watch
gathering settle-alone  unbegun
gathering cut           broken    shown drop
gathering close         gone
gathering answered      done
whole     settle        done      head end
whole     settle-alone  done      json
whole     finish        whole
whole     close         gone
unbegun   message       open      head watch event
unbegun   reply         done      json
unbegun   finish        done      head end
unbegun   cut           broken    drop
unbegun   close         gone
open|quiet message      open      event
open|quiet reply        done      event end
open|quiet finish       done      end
open|quiet cut          broken    drop
open|quiet close        lost
open|quiet resume       quiet     drop attach watch
open|quiet overflow     done      spill
open|quiet resent       open      frames
open      beat          quiet     watch
quiet     beat          quiet     comment watch
lost      message       lost      keep
lost      reply         done      keep
lost      finish        done
lost      cut           broken
lost      resume        quiet     attach watch
"""
_TABLE = {
    (state, row[1]): (row[2], tuple(row[3:]))
    for row in map(str.split, _ROWS.strip().splitlines())
    for state in row[0].split("|")
}
# After its client left or its end, what comes changes nothing (a timer let go, a second end, a late message).
for _state in ("lost", "gone", "done", "broken"):
    for _event in ("message", "reply", "settle", "settle-alone", "finish", "cut", "close", "beat"):
        _TABLE.setdefault((_state, _event), (_state, ()))


def step(state: str, event: str) -> tuple[str, tuple[str, ...]]:
    """The next state, and what to do in order; ValueError for an event the state cannot take."""
    try:
        return _TABLE[state, event]
    except KeyError:
        raise ValueError(f"a stream {state} cannot take {event!r}") from None
