"""Which session a message through the HTTP recording proxy belongs to (`http/_attribution.py`), sans-IO.

Each row is a conversation with one `Attribution`: requests on named client connections (literal
JSON-RPC bodies and headers as on the wire), each with the session it must be filed under; the
target's answers to initializes with the `Mcp-Session-Id` they issued; connections closed. One row
per rule of the module docstring, and one per limit it names (what it gets wrong, on purpose).
"""

from __future__ import annotations

from typing import Any

import pytest

from mockmcp.http._attribution import UNTIED_KEPT, Attribution, initializes


def call(request_id: int, name: str = "read_file") -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": {"name": name, "arguments": {}}}


def init(request_id: int = 0) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "host", "version": "1"}},
    }


INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
MODERN_CALL = {
    "jsonrpc": "2.0",
    "id": 7,
    "method": "tools/call",
    "params": {
        "name": "read_file",
        "arguments": {},
        "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"},
    },
}
DISCOVER = {"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {}}
MODERN_HEADER = {"mcp-protocol-version": "2026-07-28"}
OLD_HEADER = {"mcp-protocol-version": "2025-11-25"}

Step = tuple[Any, ...]


def post(connection: str, message: Any, session: int, headers: dict[str, str] | None = None) -> Step:
    return ("POST", connection, message, headers or {}, session)


def get(connection: str, session: int, headers: dict[str, str] | None = None) -> Step:
    return ("GET", connection, None, headers or {}, session)


def answered(session: int, message: Any, session_id: str | None) -> Step:
    return ("answered", session, message, session_id)


def closed(connection: str) -> Step:
    return ("closed", connection)


def sid(value: str) -> dict[str, str]:
    return {"mcp-session-id": value}


def converse(steps: list[Step]) -> None:
    """Play the steps; every request must be filed under its row's session (all compared at once)."""
    attribution = Attribution()
    seen, expected = [], []
    for step in steps:
        if step[0] == "answered":
            attribution.answered(*step[1:])
        elif step[0] == "closed":
            attribution.closed(step[1])
        else:
            verb, connection, message, headers, session = step
            seen.append(attribution.request(connection, verb, headers, message))
            expected.append(session)
    assert seen == expected


RULES = [
    pytest.param(
        [post("a", init(), 0), post("b", init(), 1), post("a", INITIALIZED, 0), post("b", call(1), 1)],
        id="1: each initialize starts a session, tied to its connection",
    ),
    pytest.param(
        [post("a", init(), 0), post("a", call(1), 0), post("a", init(), 1), post("a", call(1), 1)],
        id="1: a second initialize on a connection starts another session and ties the connection to it",
    ),
    pytest.param(
        [
            post("a", init(), 0),
            answered(0, init(), "s-a"),
            post("b", init(), 1),
            answered(1, init(), "s-b"),
            post("c", call(1), 0, sid("s-a")),
            post("c", call(2), 1, sid("s-b")),
            get("d", 0, sid("s-a")),
            post("b", call(3), 0, sid("s-a")),
        ],
        id="2: a session id the target issued names its session, whatever the connection",
    ),
    pytest.param(
        [post("a", init(), 0), answered(0, call(1), "s-x"), post("b", init(), 1), post("c", call(2), 2, sid("s-x"))],
        id="2: only the answer to an initialize issues a session id (another is a stray's: rule 5)",
    ),
    pytest.param(
        [
            post("a", init(), 0),
            answered(0, init(), None),
            post("b", init(), 1),
            post("c", call(1), 2, sid("s-a")),
            post("d", call(2), 2, sid("s-a")),
            post("c", call(1), 3, sid("s-b")),
            post("b", call(3), 1),
        ],
        id="5: an id the target never issued names a session of its own, never another client's",
    ),
    pytest.param(
        [
            post("a", init(), 0),
            answered(0, init(), "s-a"),
            post("b", MODERN_CALL, 0, sid("s-a")),
            post("b", MODERN_CALL, 1),
        ],
        id="2 before 3: a known session id wins over the 2026-07-28 era",
    ),
    pytest.param(
        [
            post("a", init(), 0),
            post("a", MODERN_CALL, 1),
            post("b", MODERN_CALL, 1),
            post("a", call(1), 0),
            post("c", call(2), 0),
        ],
        id="3: a 2026-07-28 request (its _meta) goes to the one stateless session, never a handshake one",
    ),
    pytest.param(
        [post("a", init(), 0), post("a", call(1), 1, MODERN_HEADER), post("a", call(2), 0, OLD_HEADER)],
        id="3: the MCP-Protocol-Version header naming 2026-07-28 (only that value) makes it stateless",
    ),
    pytest.param(
        [post("a", DISCOVER, 0), post("b", init(), 1), post("b", DISCOVER, 0)],
        id="3: server/discover goes to the stateless session",
    ),
    pytest.param(
        [post("a", MODERN_CALL, 0), post("b", call(1), 1), post("c", call(2), 1)],
        id="3: the stateless session is never the handshake session started last",
    ),
    pytest.param(
        [post("a", init(), 0), post("b", init(), 1), post("a", call(1), 0), get("a", 0), post("b", call(1), 1)],
        id="4: a connection tied to a session keeps it, the latest started notwithstanding",
    ),
    pytest.param(
        [
            post("a1", init(), 0),
            post("b1", init(), 1),
            post("a1", call(1), 0),
            post("a1", call(2), 0),
            post("b1", call(1), 1),
            closed("a1"),
            closed("b1"),
            post("b2", call(2), 1),
            post("a2", call(3), 0),
            post("a2", call(4), 0),
            post("b2", call(3), 1),
        ],
        id="4: a reconnected client takes up the untied session its request numbering continues, and keeps it",
    ),
    pytest.param(
        [
            post("a1", init(), 0),
            post("b1", init(), 1),
            closed("a1"),
            closed("b1"),
            post("c", call(9), 1),
            post("d", INITIALIZED, 0),
            post("e", call(9), 1),
        ],
        id="4: no numbering continued: the session untied last is taken up first; none left: rule 6",
    ),
    pytest.param(
        [
            post("a1", init(), 0),
            post("b1", init(), 1),
            closed("a1"),
            get("a2", 1),
            post("a2", call(1), 0),
        ],
        id="4: only a POST takes up an untied session (a GET stream names no request)",
    ),
    pytest.param(
        [post("a1", init(), 0), post("b1", init(), 1), closed("a1"), post("a2", call(1), 2, sid("s-?"))],
        id="4: a request naming an unknown session id takes up no untied session (rule 5)",
    ),
    pytest.param(
        [
            post("a1", init(), 0),
            answered(0, init(), "s-a"),
            post("a1", call(1), 0, sid("s-a")),
            post("b1", init(), 1),
            answered(1, init(), "s-b"),
            closed("a1"),
            post("c", call(2), 1),
        ],
        id="4: a session the target named is never untied (its client names it)",
    ),
    pytest.param(
        [post("b", init(), 0), post("a", init(), 1), post("c", call(1), 1), post("c", call(2), 1)],
        id="5: otherwise the handshake session started last",
    ),
    pytest.param(
        [post("c", call(1), 0), post("d", call(2), 0), post("e", init(), 1), post("d", call(3), 1)],
        id="5: no handshake session yet: a new one, which is then the latest",
    ),
]


@pytest.mark.parametrize("steps", RULES)
def test_each_rule_files_the_message_under_its_session(steps: list[Step]) -> None:
    converse(steps)


def test_7_a_legacy_sse_stream_starts_a_session_its_announced_url_names() -> None:
    attribution = Attribution()
    assert attribution.request("g", "GET", {}, None) == 0  # its stream, until its endpoint event comes
    assert attribution.announce("/messages/?session_id=x") == 1
    assert attribution.announce("/messages/?session_id=y") == 2
    posted = [
        "/messages/?session_id=y",
        "/messages/?session_id=x",
        "/messages/?session_id=z",
        "/messages/?session_id=z",
    ]
    assert [attribution.posted(target) for target in posted] == [2, 1, 3, 3]  # another URL: a stray's own session
    assert attribution.posted("/mcp") is None  # no announced path: the other rules
    assert attribution.request("c", "POST", {}, call(1)) == 0  # which announcing never made the latest


LIMITS = [
    pytest.param(
        [
            post("a1", init(), 0),
            post("b1", init(), 1),
            post("a1", call(1), 0),
            post("b1", call(1), 1),
            closed("b1"),
            closed("a1"),
            post("b2", call(2), 0),
            post("a2", call(2), 1),
        ],
        id="two clients dropping at the same point of their numbering may take up each other's session",
    ),
    pytest.param(
        [post("a1", init(), 0), post("b1", init(), 1), post("a1", call(1), 0), post("a2", call(2), 1)],
        id="a second connection of a client, for a request in flight together, is filed under another session",
    ),
]


@pytest.mark.parametrize("steps", LIMITS)
def test_each_limit_is_what_the_docstring_says(steps: list[Step]) -> None:
    converse(steps)


def test_only_the_sessions_untied_last_can_be_taken_up() -> None:
    """Of more untied sessions than are kept, the oldest is not taken up even when its numbering fits."""
    steps = [step for n in range(UNTIED_KEPT + 1) for step in (post(f"c{n}", init(n * 10), n), closed(f"c{n}"))]
    # Session 0's last request id is 0 and session 1's is 10: id 1 continues only session 0's numbering,
    # which was let go; so it is the one untied last that is taken up.
    converse([*steps, post("late", call(1), UNTIED_KEPT)])
    fits_a_kept_one = [*steps, post("late", call(11), 1)]
    converse(fits_a_kept_one)


@pytest.mark.parametrize(
    ("message", "expected"),
    [(init(), True), (call(1), False), ({"jsonrpc": "2.0", "method": "initialize"}, True), (None, False), ([], False)],
    ids=["initialize request", "a call", "an initialize without id", "no body", "a batch"],
)
def test_initializes(message: Any, expected: bool) -> None:
    assert initializes(message) is expected
