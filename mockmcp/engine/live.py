"""A recorded message as the live session gets it, and a live message as the recording has it. Pure.

A live host chooses its own ids and progress tokens, so what replay sends carries the live values where the
recorded ones stood (the reply's id, a progress token, a listen event's subscription id, a raw reply's
`{{id}}`, the placeholders' values); what the host sends is read as the recorder wrote it (U+FFFD for a lone
surrogate). The rest is sent as recorded, byte for byte where it was recorded raw.
"""

from __future__ import annotations

from mockmcp._wire import jsonrpc, protocol
from mockmcp.cassette.model import CUT, RAW
from mockmcp.engine.actions import Cut, Send

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from mockmcp.cassette.model import Interaction, ServerItem
    from mockmcp.engine.actions import Action
    from mockmcp.engine.redact import Substitutions

__all__ = ["KEEP", "Writer", "as_recorded", "error_code", "line_facts", "raw_line", "raw_reply", "reply_line"]
__all__ += ["reply_tail", "server_message"]


def as_recorded(message: Any) -> Any:
    """A parsed message (or batch) with lone surrogates replaced as the recorder did; ids kept for the reply."""
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
    """A recorded response encoded without its id and opening brace, once per interaction (`reply_line`)."""
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
    """A raw line's method and error code, when it is a JSON-RPC message (over HTTP an error's code sets the
    status); the engine knows them of every other line from the message it encoded."""
    try:
        message = jsonrpc.parse(line)
    except ValueError:
        return None, None
    method = message.get("method") if isinstance(message, dict) else None
    return (method if isinstance(method, str) else None), error_code(message)


KEEP = object()  # the token of a job answering no live request: its server messages go out as recorded


class Writer:
    """What one live session is sent of the recording: its placeholders (`${PROJECT}`) made the live values,
    the ids and tokens the live session's (above); each `Send` carrying what a shell needs to route it."""

    __slots__ = ("_eras", "_tails", "_values")

    def __init__(self, values: Substitutions | None, tails: dict[int, tuple[bytes, int | None]], eras: Any) -> None:
        """`tails`: interaction -> its reply's tail and error code, shared by all live sessions unless live
        values are written into them; `eras`: each interaction's (`model.written_eras`)."""
        self._values = values or None
        self._tails = tails if self._values is None else {}
        self._eras = eras

    def expanded(self, recorded: Any) -> Any:
        """A recorded message, response or raw line as the host gets it: placeholders made the live values."""
        return recorded if self._values is None else self._values.expand(recorded)

    def question(self, item: ServerItem, asked: Any, request: Any) -> Send:
        """A server request, under the id it goes out under (`branching.Questions`)."""
        body = {k: v for k, v in self.expanded(item.message).items() if k != "id"}
        data = jsonrpc.encode({"jsonrpc": "2.0", "id": asked, **body})
        return Send(data, request, stream=item.stream, method=item.message["method"])

    def notification(self, item: ServerItem, token: Any, reply_id: Any, request: Any) -> list[Action]:
        """A server notification (or a line recorded raw) sent while answering the live request `reply_id`."""
        if item.kind == RAW:
            line = raw_line(self.expanded(item.message))
            return [Send(line, request, stream=item.stream, method=line_facts(line)[0])]
        recorded = self.expanded(item.message)
        message = recorded if token is KEEP else server_message(recorded, token, reply_id)
        if message is None:
            return []  # progress the live request did not ask for
        data = jsonrpc.encode({"jsonrpc": "2.0", **message})
        return [Send(data, request, stream=item.stream, method=message["method"])]

    def reply(
        self, index: int, interaction: Interaction, reply_id: Any, request: Any, version: str | None = None
    ) -> tuple[list[Action], str]:
        """The reply to the live request outside a batch (in one: `response`): the recorded response (`version`:
        an initialize's, in that protocol version), the raw line recorded instead, or what the fault knobs say;
        and the fault, for the report ("": none)."""
        if interaction.drop == CUT:
            cut = "before its reply (`drop: cut`: over HTTP its stream was cut; over stdio, no reply)"
            return [Cut(request)], f"interactions[{index}]: the answer to request {reply_id!r} broke off {cut}"
        if interaction.drop:
            return [], f"interactions[{index}]: the reply to request {reply_id!r} was dropped"
        if interaction.raw_response is not None:
            line = raw_reply(self.expanded(interaction.raw_response), reply_id)
            return [Send(line, request, final=True, code=line_facts(line)[1])], ""
        if interaction.response is None:
            return [], ""
        if version is not None:  # one initialize in a session: encoded afresh
            response = self.response(index, interaction)
            response = {**response, "result": {**response["result"], "protocolVersion": version}}
            return [Send(reply_line(reply_id, reply_tail(response)), request, final=True)], ""
        # The recorded body is encoded once per interaction; only the id changes (a scripted one's: once a play).
        known = None if interaction.answers else self._tails.get(index)
        if known is None:
            response = self.response(index, interaction)
            known = (reply_tail(response), error_code(response))
            if not interaction.answers:
                self._tails[index] = known
        return [Send(reply_line(reply_id, known[0]), request, final=True, code=known[1])], ""

    def response(self, index: int, interaction: Interaction) -> Any:
        """The recorded response as the host gets it: placeholders made the live values; and a hand-written
        request's answer in a stateless session (`model.written_eras`) completed as that era requires."""
        response = self.expanded(interaction.response)
        era = self._eras[index]
        if era == protocol.STATELESS and protocol.params_era(interaction.params) != era:
            return protocol.as_era_requires(interaction.method or "", response)
        return response
