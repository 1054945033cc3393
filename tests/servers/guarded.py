"""The example notes server over Streamable HTTP behind credentials, as a hosted server is: every request must
carry `Authorization: Bearer $GUARD_TOKEN` and the URL secret `?key=$GUARD_KEY`, or it is answered 401; the
server also sets a cookie, which a client sends back.

    GUARD_TOKEN=... GUARD_KEY=... python tests/servers/guarded.py --http PORT    (0: any free port)
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import anyio
import uvicorn

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))

from notes_server import server

TOKEN, KEY = os.environ["GUARD_TOKEN"], os.environ["GUARD_KEY"]


def guarded(app: Any) -> Any:
    async def guard(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            headers = dict(scope["headers"])
            query = scope.get("query_string", b"").decode()
            if headers.get(b"authorization") != f"Bearer {TOKEN}".encode() or f"key={KEY}" not in query.split("&"):
                await send(
                    {"type": "http.response.start", "status": 401, "headers": [(b"content-type", b"text/plain")]}
                )
                await send({"type": "http.response.body", "body": b"Unauthorized"})
                return

            async def cookie(message: dict[str, Any]) -> None:
                if message["type"] == "http.response.start":
                    message["headers"] = [*message.get("headers", []), (b"set-cookie", f"seen={TOKEN[::-1]}".encode())]
                await send(message)

            await app(scope, receive, cookie)
            return
        await app(scope, receive, send)

    return guard


async def main(port: int) -> None:
    app = guarded(server.streamable_http_app())
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="info", lifespan="on")
    await uvicorn.Server(config).serve()


if __name__ == "__main__":
    anyio.run(main, int(sys.argv[2]))
