"""Which recorded session each message through the HTTP recording proxy belongs to. Pure.

The shell tells `Attribution` each request (with its connection, any hashable), each answered initialize, each
closed connection:
1. `initialize` starts a handshake session, tied to its connection;
2. a `Mcp-Session-Id` the target issued names its session;
3. a 2026-07-28 message goes to the one stateless session;
4. with no session id (a `stateless_http` server), the session tied to the connection; a closed
   connection unties it, and the first POST on an untied connection takes up the untied session whose
   latest request id comes just before its own, else the one untied last (of the last UNTIED_KEPT);
5. a session id the target never issued names a session of its own (its 404 is no one else's answer);
6. otherwise the handshake session started last;
7. a legacy HTTP+SSE stream's `endpoint` event starts a session of its own, which the POSTs to the URL it
   announced belong to (a POST to that path naming another URL: a session of its own, as rule 5).
HTTP says no more of who a client is: two clients reconnecting at the same moment and point of their
numbering may swap sessions.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from typing import Any

from mockmcp._wire import protocol

__all__ = ["Attribution", "UNTIED_KEPT", "initializes"]

UNTIED_KEPT = 64  # untied sessions (rule 4) that wait to be taken up by a client that reconnects


def initializes(message: Any) -> bool:
    """Whether a client message is an `initialize` request (rule 1)."""
    return isinstance(message, dict) and message.get("method") == protocol.INITIALIZE


class Attribution:
    """The sessions seen so far, and the ties between client connections and sessions."""

    def __init__(self) -> None:
        self.count = 0  # sessions numbered so far
        self.sessions: dict[str, int] = {}  # Mcp-Session-Id -> session number
        self.named: set[int] = set()  # the sessions the target issued an id for
        self.bound: dict[Hashable, int] = {}  # an open client connection -> its handshake session
        self.untied: list[int] = []  # sessions whose connection closed, the last closed last
        self.last_id: dict[int, Any] = {}  # a handshake session -> the id of its latest request
        self.latest: int | None = None  # the handshake session started last
        self.stateless: int | None = None  # the 2026-07-28 requests' session
        self.strays: dict[str, int] = {}  # a session id the target never issued -> its own session (rule 5)
        self.announced: dict[str, int] = {}  # a legacy SSE message URL (path?query) -> its session (rule 7)
        self.paths: set[str] = set()  # the paths of those URLs

    def request(self, connection: Hashable, verb: str, headers: Mapping[str, str], message: Any) -> int:
        """The session of a client request (`headers` by lowercase name, `message` the JSON-RPC body or None)."""
        if initializes(message):
            number = self.latest = self.bound[connection] = self._new()
        else:
            session_id = headers.get(protocol.SESSION_HEADER)
            if session_id is not None and session_id in self.sessions:
                return self.sessions[session_id]
            if protocol.speaks_stateless(message, headers.get("mcp-protocol-version")):
                if self.stateless is None:
                    self.stateless = self._new()
                return self.stateless
            if session_id is not None:
                if session_id not in self.strays:
                    self.strays[session_id] = self._new()
                return self.strays[session_id]
            found = self.bound.get(connection)
            # Only a POST carries a request whose numbering can tell its client.
            if found is None and verb == "POST" and self.untied:
                found = self.bound[connection] = self._taken_up(message)
            if found is None:
                found = self.latest if self.latest is not None else self._new()
                self.latest = found
            number = found
        request_id = message.get("id") if isinstance(message, dict) and "method" in message else None
        if request_id is not None:
            self.last_id[number] = request_id
        return number

    def announce(self, target: str) -> int:
        """A legacy SSE stream announced where its client POSTs (`target`: path?query): a new session (rule 7)."""
        number = self.announced[target] = self._new()
        self.paths.add(target.partition("?")[0])
        return number

    def posted(self, target: str) -> int | None:
        """The session of a POST to a legacy SSE message URL (path?query; rule 7), None for any other path."""
        if target.partition("?")[0] not in self.paths:
            return None
        if target not in self.announced and target not in self.strays:
            self.strays[target] = self._new()
        return self.announced.get(target, self.strays.get(target))

    def answered(self, session: int, message: Any, session_id: str | None) -> None:
        """The target answered `message` with this `Mcp-Session-Id` (None: none); only an initialize's answer issues
        one (rule 2), and a named session is never untied."""
        if session_id is not None and initializes(message):
            self.sessions[session_id] = session
            self.named.add(session)

    def closed(self, connection: Hashable) -> None:
        """A client connection closed: its session, unless the target named it, waits to be taken up."""
        session = self.bound.pop(connection, None)
        if session is not None and session not in self.named:
            self.untied.append(session)
            del self.untied[:-UNTIED_KEPT]

    def _new(self) -> int:
        self.count += 1
        return self.count - 1

    def _taken_up(self, message: Any) -> int:
        """The untied session whose last request id comes just before this one's (the latest first), else the last."""
        request_id = message.get("id") if isinstance(message, dict) else None
        if isinstance(request_id, int) and not isinstance(request_id, bool):
            for index in range(len(self.untied) - 1, -1, -1):
                if self.last_id.get(self.untied[index]) == request_id - 1:
                    return self.untied.pop(index)
        return self.untied.pop()
