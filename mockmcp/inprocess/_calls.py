"""What the host did: its requests in order, to assert on from a test (`mockmcp.calls`).

Every replay keeps the host's requests in its report (`Report.calls`, `calls` in the --report JSON). In process
(`mockmcp.transport`, interception) they are read live, mid-session; from a replay in another process (stdio, HTTP)
once that process wrote its report, when the host closed the session. A filter holds calls to a tool, and to
arguments as a cassette's recording holds requests: equal, unless `match` rules (regex, subset, type, any) say
otherwise. A failed assertion shows every call that did happen.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, NamedTuple

from mockmcp.cassette.model import REQUEST
from mockmcp.cassette.validation import from_data
from mockmcp.engine.matching import Matcher, short
from mockmcp.engine.report import Report
from mockmcp.engine.rules import Group
from mockmcp.errors import CassetteError, UsageError

__all__ = ["Call", "Calls", "calls_of"]

TOOLS_CALL = "tools/call"


class Call(NamedTuple):
    """One request of the host: its method and params, as they came (after the cassette's redaction)."""

    method: str
    params: Any = None

    @property
    def tool(self) -> str | None:
        """The tool a tools/call names, else None."""
        name = self.params.get("name") if isinstance(self.params, dict) else None
        return name if self.method == TOOLS_CALL and isinstance(name, str) else None

    @property
    def arguments(self) -> dict[str, Any]:
        """A tools/call's (or prompts/get's) arguments; {} when none were sent."""
        found = self.params.get("arguments") if isinstance(self.params, dict) else None
        return found if isinstance(found, dict) else {}

    def __str__(self) -> str:
        if self.tool is not None:
            return f"{self.tool}({short(self.arguments, 100)})"
        return self.method + ("" if not self.params else f" {short(self.params, 100)}")


class Calls:
    """Calls of the host, in order, filtered: `calls(tool="search")`, `.count`, `.called`, `.args`, and
    `assert_called(times=...)` / `assert_not_called()`, whose failure lists every call the host made."""

    def __init__(self, chosen: Iterable[Call], every: tuple[Call, ...] | None = None, what: str = "calls") -> None:
        self.chosen = tuple(chosen)
        self.every = self.chosen if every is None else every
        self.what = what

    def __call__(
        self,
        tool: str | None = None,
        arguments: Mapping[str, Any] | None = None,
        match: Mapping[str, Any] | None = None,
        method: str | None = None,
    ) -> Calls:
        """The calls of `tool` (tools/call; or of `method`), whose arguments are `arguments` (all of them, unless
        match rules say otherwise: `{"arguments.query": {"regex": "mcp.*"}}`, `{"arguments": "subset"}`, any,
        type, unordered: a cassette's `match:`). Raises UsageError naming a bad rule."""
        method = method or TOOLS_CALL
        chosen = [call for call in self.chosen if call.method == method]
        what = [f"method {method}"] if method != TOOLS_CALL or tool is None else []
        if tool is not None:
            chosen = [call for call in chosen if isinstance(call.params, dict) and call.params.get("name") == tool]
            what.append(f"tool {tool!r}")
        if arguments is not None or match:
            group = _group(method, tool, arguments, match)
            chosen = [call for call in chosen if group.accepts(method, _compared(call, tool, arguments))]
            what.append(
                f"arguments {short(dict(arguments or {}), 80)}" + (f" matched by {dict(match)}" if match else "")
            )
        return Calls(chosen, self.every, " with ".join(what) if what else self.what)

    @property
    def count(self) -> int:
        return len(self.chosen)

    @property
    def called(self) -> bool:
        return bool(self.chosen)

    @property
    def args(self) -> list[dict[str, Any]]:
        """Each call's arguments, in order."""
        return [call.arguments for call in self.chosen]

    @property
    def tools(self) -> list[str]:
        """The tools called, in order (one entry a call)."""
        return [call.tool for call in self.chosen if call.tool is not None]

    def assert_called(self, times: int | None = None) -> None:
        """Raises AssertionError, listing the calls that did happen, unless called (`times` times, if given)."""
        if (times is None and not self.chosen) or (times is not None and self.count != times):
            wanted = "at least once" if times is None else f"{times} time{'s' * (times != 1)}"
            raise AssertionError(self._story(f"expected {self.what} {wanted}, found {self.count}"))

    def assert_not_called(self) -> None:
        """Raises AssertionError, listing the calls that did happen, if there is any."""
        if self.chosen:
            raise AssertionError(self._story(f"expected no {self.what}, found {self.count}"))

    def _story(self, headline: str) -> str:
        lines = [headline, f"the host made {len(self.every)} call{'s' * (len(self.every) != 1)}:"]
        chosen = {id(call) for call in self.chosen}
        lines += [f"  {'*' if id(c) in chosen else ' '} {n}. {c}" for n, c in enumerate(self.every, 1)]
        return "\n".join(lines)

    def __iter__(self) -> Iterator[Call]:
        return iter(self.chosen)

    def __len__(self) -> int:
        return len(self.chosen)

    def __getitem__(self, index: int) -> Call:
        return self.chosen[index]

    def __repr__(self) -> str:
        shown = ", ".join(str(call) for call in self.chosen[:10]) + (", ..." if len(self.chosen) > 10 else "")
        return f"<{self.count} {self.what}: [{shown}] of {len(self.every)} calls>"


def _group(
    method: str, tool: str | None, arguments: Mapping[str, Any] | None, match: Mapping[str, Any] | None
) -> Group:
    """The filter as a recording with match rules (checked as a cassette's: a bad rule is a located error)."""
    params: dict[str, Any] = {"name": tool or ""} if method == TOOLS_CALL else {}
    params["arguments"] = dict(arguments or {})
    rules = dict(match or {})
    if arguments is None:
        rules.setdefault("arguments", "any")
    data = {
        "version": 1,
        "interactions": [{REQUEST: {"method": method, "params": params}, "match": rules, "drop": True}],
    }
    try:
        [recorded] = from_data(data).interactions
    except CassetteError as error:  # naming the rule's place
        raise UsageError(f"mockmcp.calls(match={rules!r}): {error}", "write rules as a cassette's `match:`") from None
    return Group.of(Matcher.build(), recorded)


def _compared(call: Call, tool: str | None, arguments: Mapping[str, Any] | None) -> dict[str, Any]:
    """A call's params as the filter compares them: its name (the filter's when it names none) and arguments."""
    params: dict[str, Any] = {"arguments": call.arguments}
    if call.method == TOOLS_CALL:
        params["name"] = call.tool if tool is not None else ""
    return params


def calls_of(source: Any) -> Calls:
    """The host's calls from `source`: a `mockmcp.transport` (live, mid-session too), an interception (every
    server's), a `Report`, a --report JSON file's path or its data, or a list of these. Raises UsageError."""
    return Calls(call for report in _reports(source) for call in _read(report))


def _reports(source: Any) -> Iterator[Any]:
    if isinstance(source, (list, tuple)):
        for one in source:
            yield from _reports(one)
        return
    if isinstance(source, (Report, dict)):
        yield source
        return
    if isinstance(source, (str, os.PathLike)):
        try:
            with open(source, encoding="utf-8") as handle:
                yield json.load(handle)
        except FileNotFoundError:
            raise UsageError(
                f"no report at {os.fspath(source)}: a replay in another process writes it when the host closes the "
                "session",
                "read the calls once the host's session has ended (or replay in process: mockmcp.transport)",
            ) from None
        return
    live = getattr(source, "live_reports", None)
    if live is None:
        raise UsageError(
            f"mockmcp.calls cannot read the calls of {source!r}",
            "give it a mockmcp.transport, an interception, a Report, or a --report JSON file",
        )
    yield from live()


def _read(report: Any) -> Iterator[Call]:
    if isinstance(report, Report):
        yield from (Call(method, params) for method, params in report.calls)
        return
    for entry in report.get("calls") or ():
        yield Call(entry["method"], entry.get("params"))
