"""A JSON-RPC batch being answered (revision 2025-03-26): its responses go out together, as one array. Pure.

Members are read one by one, and some are answered by jobs that wait, so the array goes once the batch is
*sealed* (every member read) and no job that ends in a JSON response (or breaks off, `drop: cut`) is pending.
"""

from __future__ import annotations

from mockmcp._wire import jsonrpc
from mockmcp.cassette.model import CUT
from mockmcp.engine.actions import Send

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from mockmcp.cassette.model import Interaction
    from mockmcp.engine.actions import Action

__all__ = ["Batch", "answers_in_batch", "array"]


def answers_in_batch(interaction: Interaction) -> bool:
    """Whether playing this interaction ends in a JSON response, which a batch must wait for."""
    if interaction.drop == CUT:
        return True  # the batch waits for it, and then breaks off with it
    return (
        interaction.response is not None
        and not interaction.drop
        and interaction.raw_response is None
        and (interaction.exit is None or interaction.exit[1] == "after")
    )


def array(responses: list[dict[str, Any]] | None) -> list[Action]:
    """What to send of a batch's responses (`Batch`'s methods return them once the array is whole)."""
    if responses is None:
        return []
    return [Send(jsonrpc.encode(responses), batch=tuple(response.get("id") for response in responses))]


class Batch:
    """One batch's responses; each method returns the array to send once it is whole (None: not yet)."""

    __slots__ = ("pending", "responses", "sealed")

    def __init__(self) -> None:
        self.pending = 0  # jobs whose response the array waits for
        self.responses: list[dict[str, Any]] = []
        self.sealed = False

    def expect(self, interaction: Interaction) -> None:
        """A job begins playing this interaction for a member of the batch."""
        if answers_in_batch(interaction):
            self.pending += 1

    def add(self, response: dict[str, Any], expected: bool = False) -> list[dict[str, Any]] | None:
        """A member's response; `expected`: the one of a job the batch waits for."""
        self.responses.append(response)
        if expected:
            self.pending -= 1
        return self.whole()

    def cancelled(self, interaction: Interaction) -> list[dict[str, Any]] | None:
        """The host cancelled a member's request: its job will add nothing."""
        if answers_in_batch(interaction):
            self.pending -= 1
            return self.whole()
        return None

    def seal(self) -> list[dict[str, Any]] | None:
        """Every member has been read."""
        self.sealed = True
        return self.whole()

    def whole(self) -> list[dict[str, Any]] | None:
        """The array, once sealed and no expected response is pending; then empty again."""
        if not self.sealed or self.pending > 0 or not self.responses:
            return None
        responses, self.responses = self.responses, []
        return responses
