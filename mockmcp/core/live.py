"""A recorded message as the live session gets it, and a live message as the recording has it. Pure.

Theory of operation. A cassette holds what one host and one server said; a live host chooses its
own request ids and progress tokens. So what replay sends carries the live values where the
recorded ones stood: the reply's id, a progress notification's token, a listen event's subscription
id (the listen request's id), a raw reply's `{{id}}`; and what the host sends is compared with the
recording as the recorder wrote it (a lone surrogate as U+FFFD). The rest of a message keeps what
the recording holds, byte for byte where it was recorded raw.
"""

from __future__ import annotations

from mockmcp import jsonrpc, protocol

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "as_recorded",
    "error_code",
    "line_facts",
    "raw_line",
    "raw_reply",
    "reply_line",
    "reply_tail",
    "server_message",
]


def as_recorded(message: Any) -> Any:
    """A parsed message (or batch) with lone surrogates replaced as the recorder replaced them; ids kept,
    as the reply must carry the id the host sent."""
    if isinstance(message, list):
        return [as_recorded(item) for item in message]
    if isinstance(message, dict):
        return {key: value if key == "id" else jsonrpc.without_lone_surrogates(value) for key, value in message.items()}
    return jsonrpc.without_lone_surrogates(message)


def server_message(message: dict[str, Any], token: Any, reply_id: Any) -> dict[str, Any] | None:
    """A recorded server notification sent for the live request `reply_id`, which asked progress under
    `token`: a progress notification under that token (None: the request asked for no progress, so it is
    not sent), a listen event under the request's id; any other message as recorded."""
    params = message.get("params")
    if message["method"] == protocol.PROGRESS and isinstance(params, dict):
        if token is None:
            return None
        message = {**message, "params": {**params, protocol.PROGRESS_TOKEN: token}}
    meta = protocol.meta(params)
    if protocol.SUBSCRIPTION_ID_KEY in meta:
        message = {**message, "params": {**params, "_meta": {**meta, protocol.SUBSCRIPTION_ID_KEY: reply_id}}}
    return message


def raw_line(text: str) -> bytes:
    """A line recorded raw, as it goes out: its text and one newline."""
    return (text if text.endswith("\n") else text + "\n").encode()


def raw_reply(text: str, reply_id: Any) -> bytes:
    """A raw reply (the `raw_response` knob), with the live request's id wherever it says `{{id}}`."""
    return raw_line(text.replace("{{id}}", jsonrpc.encode(reply_id)[:-1].decode()))


def reply_tail(response: dict[str, Any]) -> bytes:
    """A recorded response encoded without its id and opening brace, for `reply_line` (encoded once per
    interaction: then only the id changes from one reply to the next)."""
    return jsonrpc.encode({k: v for k, v in response.items() if k != "id"})[1:]


def reply_line(reply_id: Any, tail: bytes) -> bytes:
    """The line answering the live request `reply_id` with the recorded response whose `reply_tail` this is."""
    return b'{"jsonrpc":"2.0","id":' + jsonrpc.encode(reply_id)[:-1] + b"," + tail


def error_code(response: Any) -> int | None:
    """The error code of an error response (None: not one, or its code is no integer)."""
    error = response.get("error") if isinstance(response, dict) else None
    code = error.get("code") if isinstance(error, dict) else None
    return code if type(code) is int else None


def line_facts(line: bytes) -> tuple[str | None, int | None]:
    """What a line recorded raw says, when it is a JSON-RPC message: its method, and its error code
    (an HTTP endpoint answers an error with the status the recorded server gave it). Read only for
    lines recorded raw (a fault knob): the engine knows the rest from the message it encoded."""
    try:
        message = jsonrpc.parse(line)
    except ValueError:
        return None, None
    method = message.get("method") if isinstance(message, dict) else None
    return (method if isinstance(method, str) else None), error_code(message)
