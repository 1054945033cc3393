#!/usr/bin/env python3
"""The least a Streamable HTTP server can do: answer each request with a canned result, nothing checked.

bench_http.py runs it to show a client's own cost per call (a server can hardly answer faster than
this one). Usage: `python _canned_http.py ANSWERS.json`, where the file maps a method to the result
to answer it with; it prints `canned http://127.0.0.1:PORT/mcp` on stderr and serves until killed.
Standard library only; one selectors loop; every request must have a Content-Length body (the SDK's do).
"""

from __future__ import annotations

import json
import selectors
import socket
import sys


def answer(body: bytes, results: dict[str, object]) -> bytes:
    message = json.loads(body)
    if "id" not in message or "method" not in message:  # a notification or a response: accepted
        return b"HTTP/1.1 202 \r\ncontent-length: 0\r\n\r\n"
    reply = {"jsonrpc": "2.0", "id": message["id"], "result": results[message["method"]]}
    data = json.dumps(reply, separators=(",", ":")).encode() + b"\n"
    return b"HTTP/1.1 200 \r\ncontent-type: application/json\r\ncontent-length: %d\r\n\r\n%s" % (len(data), data)


def main() -> None:
    with open(sys.argv[1]) as file:
        results = json.load(file)
    listener = socket.create_server(("127.0.0.1", 0))
    listener.setblocking(False)
    selector = selectors.DefaultSelector()
    pending: dict[socket.socket, bytes] = {}

    def read(sock: socket.socket) -> None:
        data = sock.recv(1 << 16)
        if not data:
            selector.unregister(sock)
            sock.close()
            return
        buffer = pending[sock] + data
        while (end := buffer.find(b"\r\n\r\n")) >= 0:
            head = buffer[:end].lower()
            length = int(head.split(b"content-length:")[1].split(b"\r\n")[0]) if b"content-length:" in head else 0
            if len(buffer) < end + 4 + length:
                break
            body, buffer = buffer[end + 4 : end + 4 + length], buffer[end + 4 + length :]
            sock.sendall(answer(body, results))
        pending[sock] = buffer

    def accept() -> None:
        sock, _address = listener.accept()
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        pending[sock] = b""
        selector.register(sock, selectors.EVENT_READ, lambda: read(sock))

    selector.register(listener, selectors.EVENT_READ, accept)
    print(f"canned http://127.0.0.1:{listener.getsockname()[1]}/mcp", file=sys.stderr, flush=True)
    while True:
        for key, _mask in selector.select():
            key.data()


if __name__ == "__main__":
    main()
