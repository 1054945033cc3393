"""What a replay or a recording was asked to do, and the bounds it keeps: values built once at each edge and
handed on whole (docs/architecture.md, "Options are values"). On the launch path.
"""

from __future__ import annotations

from mockmcp._wire.namedtuple import NamedTuple
from mockmcp._wire.protocol import SESSION_IDLE

__all__ = ["BOUNDS", "Bounds", "RecordOptions", "ReplayOptions", "Substitution"]

TYPE_CHECKING = False
if TYPE_CHECKING:
    Substitution = tuple[str, "str | None"]  # NAME and its value here (None: the environment's NAME)
else:
    Substitution = tuple


class ReplayOptions(NamedTuple):
    """How a cassette is replayed, whatever it is served over."""

    ignores: tuple[str, ...] = ()  # params paths left out of matching
    strict: bool = False  # fail on a miss, an unplayed recording, an answer that differed, a withheld request
    timing: float = 0.0  # 0: answer at once; 1.0: as fast as the recorded server; else that factor of it
    substitutions: tuple[Substitution, ...] = ()  # values on this machine of the cassette's `${NAME}`
    report: str | None = None  # write the session's JSON report here ({pid}: the process id)
    html: str | None = None  # write the session's HTML timeline here ({pid} as in report)
    closed_world: bool = False  # refuse at once a call of a tool no recording answers (as `meta.closed_world`)


class RecordOptions(NamedTuple):
    """How a session is recorded, whatever it is recorded through."""

    mode: str = "once"  # a `words.RecordMode` value
    redact_env: tuple[str, ...] = ()  # environment variables whose values never reach the cassette
    redact_patterns: tuple[str, ...] = ()  # regular expressions whose matches never reach the cassette
    substitutions: tuple[Substitution, ...] = ()  # values of this machine written as `${NAME}`
    grace: float = 2.0  # seconds the server gets to exit after its input closed, and after SIGTERM


class Bounds(NamedTuple):
    """How much a server mockmcp runs holds for what its clients leave open; the defaults are the product's."""

    # Replay over Streamable HTTP (the endpoint).
    session_idle: float | None = SESSION_IDLE  # seconds an idle session lives (None: until DELETE or the end)
    resumable_events: int = 4096  # events kept for Last-Event-ID, all sessions together
    resumable_bytes: int = 16 << 20  # ... and their bytes
    backlog_events: int = 1024  # messages a session keeps for a GET stream while none is open
    backlog_bytes: int = 1 << 20  # ... and their bytes
    finished: int = 64  # reports of ended sessions kept apart before they are folded into one
    keepalive: float | None = 15.0  # seconds an SSE stream may say nothing before it carries a comment (None: never)
    unread_bytes: int = 1 << 20  # bytes a GET stream's client may leave unread before the stream is cut
    streams: int | None = None  # GET streams open at once (None: the shell derives it from its descriptors)
    # The recording proxy.
    upstream_timeout: float = 60.0  # seconds the target may take to start answering (504 after)
    kept_bytes: int = 16 << 20  # the most of one message kept for the cassette (longer: passed on, not kept)
    whole_bytes: int = 1 << 20  # a body up to this goes to the client whole; a longer one as it comes
    after_gone_bytes: int = 64 << 20  # what of a stream whose client left is still read and journaled


BOUNDS = Bounds()  # the product's
