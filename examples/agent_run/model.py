"""A stand-in for a model provider: a small OpenAI-compatible chat-completions endpoint, scripted.

It answers as a model would in a short agent run: asked a question, it calls the tools the question needs
(`read_file` for the note it names, `forecast` for the city it names); given their results, it answers in one
sentence. Its answers follow from the messages alone, so recording it twice gives the same cassette. It stands
in for a provider while the test records; replay needs it no more than it needs the provider.

Run it alone with ``python examples/agent_run/model.py`` (it prints its URL).
"""

from __future__ import annotations

import contextlib
import http.server
import json
import re
import threading
from collections.abc import Callable, Iterator
from typing import Any

NOTE = re.compile(r"\b[\w-]+\.(?:txt|md)\b")
CITY = re.compile(r"weather in ([A-Z][a-z]+)")


def reply(request: dict[str, Any]) -> dict[str, Any]:
    """The chat completion the stand-in gives for a request (its `messages` and `tools`)."""
    messages = request["messages"]
    results = [message for message in messages if message["role"] == "tool"]
    if results:
        said = " ".join(str(message["content"]) for message in results)
        message = {"role": "assistant", "content": f"Here is what I found: {said}"}
    else:
        question = str(messages[-1]["content"])
        calls = [("read_file", {"path": path}) for path in NOTE.findall(question)]
        calls += [("forecast", {"city": city}) for city in CITY.findall(question)]
        message = {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": f"call_{n}", "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}
                for n, (name, args) in enumerate(calls)
            ],
        }
    finish = "tool_calls" if message.get("tool_calls") else "stop"
    return {
        "id": "chatcmpl-stand-in",
        "object": "chat.completion",
        "created": 0,  # no clock: the same messages, the same answer
        "model": request.get("model", "stand-in"),
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
    }


class _Server(http.server.ThreadingHTTPServer):
    answer: Callable[[dict[str, Any]], dict[str, Any]]  # what a request is answered with (`serving`)


class _Handler(http.server.BaseHTTPRequestHandler):
    server: _Server

    def do_POST(self) -> None:
        request = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))))
        body = json.dumps(self.server.answer(request)).encode()
        self.send_response_only(200)  # no Date header: the same answer is the same recording
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@contextlib.contextmanager
def serving(answer: Callable[[dict[str, Any]], dict[str, Any]] = reply) -> Iterator[str]:
    """The stand-in on a port the system picks, while the block runs: its base URL (`.../v1`). `answer`: what it
    answers a request with (the scripted chat completion, `reply`)."""
    server = _Server(("127.0.0.1", 0), _Handler)
    server.answer = answer
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


if __name__ == "__main__":
    with serving() as url:
        print(url, flush=True)
        threading.Event().wait()
