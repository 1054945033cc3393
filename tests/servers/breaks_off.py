"""A Streamable HTTP MCP server (handshake era) that breaks some answers off, as a server
that crashes mid-answer or a front end that times out does: its connection ends after the answer's
head and before the HTTP message's end. Written on raw HTTP, since a real server's framework never
lets a tool cut its own connection.

    python tests/servers/breaks_off.py --http PORT [--ids]    (0: any free port; the first line says the URL)

With --ids its events have ids (as a server with an event store gives them), so that a client may try to
resume a broken stream with `Last-Event-ID`; it offers no GET stream to resume it on.

Its tools, all without arguments:
- `halfway`: an SSE stream that carries a log message, then breaks off (no reply);
- `ends`: an SSE stream that carries a log message, then ends as a stream ends, without a reply;
- `at_once`: a JSON body that breaks off after its first bytes;
- `whole`: answered, as one JSON body (the session goes on after a cut);
- `dies`: the server exits at once, answering nothing (every later request finds no server).
"""

from __future__ import annotations

import json
import os
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

SESSION = "breaks-off-1"
TOOLS = [{"name": name, "inputSchema": {"type": "object"}} for name in ("halfway", "ends", "at_once", "whole", "dies")]


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # connections are kept, and an SSE stream is chunked

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        self._whole(405, b"", "text/plain")  # no GET stream

    def do_DELETE(self) -> None:
        self._whole(200, b"", "text/plain")

    def do_POST(self) -> None:
        message = json.loads(self.rfile.read(int(self.headers["content-length"])))
        method, params = message.get("method"), message.get("params") or {}
        if "id" not in message:  # a notification
            self._whole(202, b"", "text/plain")
        elif method == "initialize":
            self._reply(
                message,
                {
                    "protocolVersion": params["protocolVersion"],
                    "capabilities": {"tools": {}, "logging": {}},
                    "serverInfo": {"name": "breaks-off", "version": "1"},
                },
            )
        elif method == "tools/list":
            self._reply(message, {"tools": TOOLS})
        elif params.get("name") in ("halfway", "ends"):
            self._head(200, "text/event-stream", chunked=True)
            log = {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "halfway"}}
            event_id = b"id: 1\r\n" if "--ids" in sys.argv else b""
            event = b"event: message\r\n" + event_id + b"data: " + json.dumps(log).encode() + b"\r\n\r\n"
            self.wfile.write(b"%x\r\n%s\r\n" % (len(event), event))
            if params["name"] == "ends":
                self.wfile.write(b"0\r\n\r\n")  # the stream's end, the reply never sent
            else:
                self.close_connection = True  # and never the last chunk
        elif params.get("name") == "dies":
            os._exit(0)
        elif params.get("name") == "at_once":
            body = json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": {"content": []}}).encode()
            self._head(200, "application/json", length=len(body))
            self.wfile.write(body[:10])  # and never the rest
            self.close_connection = True
        else:
            self._reply(message, {"content": [{"type": "text", "text": "whole"}]})

    def _reply(self, message: dict[str, Any], result: Any) -> None:
        body = json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}).encode()
        self._whole(200, body, "application/json")

    def _whole(self, status: int, body: bytes, content_type: str) -> None:
        self._head(status, content_type, length=len(body))
        self.wfile.write(body)

    def _head(self, status: int, content_type: str, length: int | None = None, chunked: bool = False) -> None:
        self.send_response(status)
        self.send_header("content-type", content_type)
        self.send_header("mcp-session-id", SESSION)
        if chunked:
            self.send_header("transfer-encoding", "chunked")
        else:
            self.send_header("content-length", str(length))
        self.end_headers()


if __name__ == "__main__":
    httpd = ThreadingHTTPServer(("127.0.0.1", int(sys.argv[2])), Handler)
    print(f"listening on http://127.0.0.1:{httpd.server_address[1]}/mcp", flush=True)
    httpd.serve_forever()
