"""`mockmcp lint`: what would make a cassette replay wrongly, found before a test run trips on it.

A cassette is loaded as replay loads it, so lint never accepts what replay refuses; then come the checks of what
replay serves anyway (message shapes per revision, layer confusion, what the recording could not keep, match rules).
Duplicate keys and credentials are read from the text, because parsing hides them. Errors are what replay would
serve wrongly or a host would reject; warnings are legal but probably not meant.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import Any, NamedTuple

import yaml

try:  # the parser of Python's `re`, which reads a pattern without matching anything
    import re._constants as _constants
    import re._parser as _parser
except ImportError:  # Python 3.10
    import sre_constants as _constants  # type: ignore[no-redef]
    import sre_parse as _parser  # type: ignore[no-redef]

from mockmcp._wire import jsonrpc, protocol
from mockmcp._wire.credentials import EDGE, KINDS, credentials_in, secret_variable
from mockmcp._wire.jsonrpc import is_valid_id
from mockmcp._wire.words import REDACTED, Place, render_place
from mockmcp.cassette import shapes, validation, yamlfile
from mockmcp.cassette.model import CUT, RAW, REQUEST, Cassette, Interaction, ServerItem, session_eras, written_eras
from mockmcp.cassette.store import loads
from mockmcp.engine import eras
from mockmcp.engine.matching import Matcher, locate
from mockmcp.engine.redact import mentioned
from mockmcp.engine.rules import refusal, rules_of
from mockmcp.errors import CassetteError
from mockmcp.record import over_limit, unreached
from mockmcp.tools._contract import required_names
from mockmcp.tools._stub import is_placeholder

__all__ = ["ERROR", "Finding", "NOTE", "WARNING", "failed", "lint_file", "lint_paths", "lint_text", "nested_repeat"]
__all__ += ["serves", "summary"]

ERROR = "error"
WARNING = "warning"
NOTE = "note"  # what lint could not check, or a placeholder to fill in: said, never a failure

_MESSAGE = dict.fromkeys(("jsonrpc", "id", "method", "params"))  # shapes, as `shapes.unknown_keys` reads them
_RESPONSE = dict.fromkeys(("jsonrpc", "id", "result", "error"))
# JSON-RPC reserves -32768..-32000 and defines its own codes; -32000..-32099 is left to
# implementations (MCP's codes sit inside it, and so does mockmcp's NO_MATCH).
_DEFINED_CODES = jsonrpc.CODES | protocol.CODES
_ID_FIX = "remove `id` (replay answers under the caller's id) or copy the request's id"
_SECRETS = tuple((kind, re.compile(EDGE + pattern)) for kind, pattern in KINDS)
_SECRET_FIX = (
    "redact it: re-record with `mockmcp record --redact-env NAME` or `--redact REGEX`, or replace it by hand"
    " with `[REDACTED]` (in a request, also add a pattern to `meta.redact.patterns` so the live value still"
    " matches); revoke it if it is real"
)


class Finding(NamedTuple):
    """One thing lint found: where (file, line, place in the cassette), how bad, what, how to fix."""

    path: str
    line: int | None
    place: str
    severity: str  # ERROR or WARNING
    problem: str
    fix: str

    def render(self) -> str:
        """`FILE:LINE: PLACE: error: PROBLEM`, then `  how to fix: FIX`, as a CassetteError renders."""
        problem = f"{self.severity}: {self.problem}"
        return CassetteError(problem, path=self.path, place=self.place, line=self.line, fix=self.fix).render()


class _Issue(NamedTuple):
    """A finding before it knows its file; `line` is filled from the place unless set already."""

    place: Place
    severity: str
    problem: str
    fix: str
    line: int | None = None


def lint_paths(paths: Iterable[str], secrets_only: bool = False, notes: bool = False) -> list[Finding]:
    """Findings for every file, sorted by file, then line (secrets_only: the credentials alone, `lint --secrets`;
    with notes: `NOTE`s too)."""
    findings = [finding for path in paths for finding in lint_file(path, secrets_only, notes)]
    return sorted(findings, key=lambda finding: (finding.path, finding.line or 0))


def lint_file(path: str, secrets_only: bool = False, notes: bool = False) -> list[Finding]:
    """Findings for the cassette at path (with secrets_only, its credentials alone); a file that cannot be read is
    one error finding."""
    try:
        with open(path, "rb") as handle:
            text = handle.read().decode("utf-8")
    except FileNotFoundError:
        return [Finding(path, None, "", ERROR, "no such cassette", "check the path")]
    except UnicodeDecodeError as exc:
        return [Finding(path, None, "", ERROR, f"not UTF-8 text: {exc}", "save the cassette as UTF-8")]
    except OSError as exc:
        problem = f"cannot read the cassette: {exc.strerror or exc}"
        return [Finding(path, None, "", ERROR, problem, "check the path and its permissions")]
    return lint_text(text, path, secrets_only, notes)


def lint_text(text: str, path: str, secrets_only: bool = False, notes: bool = False) -> list[Finding]:
    """Findings for cassette text (path only names it), sorted by line. A cassette that fails to load
    gets every structural problem and the deeper checks on its valid interactions; credentials always
    (with secrets_only, nothing else). With notes, what lint could not check and what is still to be filled in
    (`NOTE`: never a failure)."""
    nodes = yamlfile.nodes(yamlfile.compose(text))
    findings, issues = ([], []) if secrets_only else _checked(text, path)
    issues = [issue for issue in issues if notes or issue.severity != NOTE]
    secrets = _secrets(text, nodes)
    issues = _one_per_place(issues) + _server_credentials(nodes, {secret.place for secret in secrets})
    lines = yamlfile.lines(nodes)
    issues = [issue if issue.line else issue._replace(line=yamlfile.line_in(lines, issue.place)) for issue in issues]
    issues += [*([] if secrets_only else _duplicate_keys(nodes)), *secrets]
    findings += [
        Finding(path, issue.line, render_place(issue.place), issue.severity, issue.problem, issue.fix)
        for issue in issues
    ]
    return sorted(findings, key=lambda finding: finding.line or 0)


def _checked(text: str, path: str) -> tuple[list[Finding], list[_Issue]]:
    """What loading and the checks of each interaction find in cassette text (credentials and duplicate keys
    apart): a finding where the text is not YAML mockmcp reads, else issues to place."""
    findings: list[Finding] = []
    issues: list[_Issue] = []
    valid: list[tuple[int, Interaction]] = []
    try:
        cassette = loads(text, path)
        valid = list(enumerate(cassette.interactions))
    except CassetteError as error:
        try:
            data = yamlfile.load(text, last_key_wins=True)  # `_duplicate_keys` says where both are
        except (yaml.YAMLError, ValueError):  # not YAML mockmcp reads
            findings.append(Finding(path, error.line, error.place, ERROR, error.problem, error.fix or ""))
        else:
            problems, valid = validation.problems(data)
            issues += [_Issue(problem.place, ERROR, problem.problem, problem.fix) for problem in problems]
            meta = data.get("meta") if isinstance(data, dict) else None
            cassette = Cassette(tuple(i for _index, i in valid), meta if isinstance(meta, dict) else {})
    if valid:
        issues += _check_cassette(cassette, [index for index, _interaction in valid])
        meant = {("interactions", index) for index, interaction in valid if interaction.expect == "fault"}
        issues = [issue for issue in issues if issue.severity == ERROR or tuple(issue.place[:2]) not in meant]
    return findings, issues


def summary(findings: list[Finding], files: int) -> str:
    """`2 files: 1 error, 2 warnings` (`, 1 note` when there are notes)."""
    errors = sum(finding.severity == ERROR for finding in findings)
    notes = sum(finding.severity == NOTE for finding in findings)
    warnings = len(findings) - errors - notes
    said = f"{_count(files, 'file')}: {_count(errors, 'error')}, {_count(warnings, 'warning')}"
    return said + (f", {_count(notes, 'note')}" if notes else "")


def failed(findings: list[Finding], strict: bool) -> bool:
    """Whether lint fails: on any error, and with strict on any warning too (a note never fails it)."""
    return any(finding.severity == ERROR or (strict and finding.severity == WARNING) for finding in findings)


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}" if number == 1 else f"{number} {noun}s"


def _one_per_place(issues: list[_Issue]) -> list[_Issue]:
    """One error per place, no warning where there is an error: loading and the checks below may see the
    same mistake (a key under the wrong parent is an unknown key too), and the error says it best."""
    first: dict[Place, _Issue] = {}
    for issue in issues:
        if issue.severity == ERROR:
            first.setdefault(issue.place, issue)
    return [issue for issue in issues if first.get(issue.place, issue) is issue]


def _check_cassette(cassette: Cassette, indices: list[int]) -> Iterator[_Issue]:
    """Checks of each interaction; indices are their places in the file (the valid ones of a broken file)."""
    tools = protocol.offered_tools((i.message, i.response) for i in cassette.interactions)
    eras = session_eras(cassette)
    for index, interaction, era in zip(indices, cassette.interactions, written_eras(cassette, eras), strict=True):
        # The stateless era's rules hold where meta.era says it, or where replay matches in it (`written_eras`).
        stateless = cassette.meta.get("era") == protocol.STATELESS or era == protocol.STATELESS
        place: Place = ("interactions", index)
        answers = [(place + ("answers", n), interaction.played(n)) for n in range(len(interaction.answers))]
        for turn, (at, played) in enumerate(answers or [(place, interaction)]):
            yield from _check_interaction(
                played, (place, at, turn), eras.get(interaction.session, {}), tools, stateless
            )
    yield from _check_structured(cassette, indices)
    yield from _placeholders(cassette, indices)
    yield from _rule_issues(cassette, indices)
    yield from _check_substitute(cassette)
    yield from _check_server_eras(cassette)
    patterns = (cassette.meta.get("redact") or {}).get("patterns") or ()
    for index, pattern in enumerate(patterns):
        if nested_repeat(pattern):
            yield _nested_issue(("meta", "redact", "patterns", index), pattern)


def _check_server_eras(cassette: Cassette) -> Iterator[_Issue]:
    """`meta.server_eras`: a list of `handshake` and `stateless`, which replay reads (anything else it ignores)."""
    stated = cassette.meta.get(eras.SERVER_ERAS, [])
    known = (protocol.HANDSHAKE, protocol.STATELESS)
    if not isinstance(stated, list) or any(era not in known for era in stated):
        problem = f"meta.{eras.SERVER_ERAS} lists the eras the recorded server speaks, got {stated!r}"
        fix = f"write `{eras.SERVER_ERAS}: [handshake, stateless]` (the eras its server speaks), or remove it"
        yield _Issue(("meta", eras.SERVER_ERAS), WARNING, problem, fix)


def serves(path: str) -> str:
    """`path: serves hosts of ...` for a cassette that loads and shows an era (`engine.eras.in_words`), else ""."""
    try:
        with open(path, encoding="utf-8") as handle:
            words = eras.in_words(loads(handle.read(), path))
    except (OSError, UnicodeDecodeError, CassetteError):
        return ""
    return f"{path}: {words}" if words else ""


def _check_substitute(cassette: Cassette) -> Iterator[_Issue]:
    """`meta.substitute` names other than the plugin's `PROJECT`: replay fills each in only when its user gives
    the value (a warning, so that a reviewer asks what it is), and one named like a credential is an error."""
    names = cassette.meta.get("substitute") or ()
    used = mentioned(cassette, names)
    for index, name in enumerate(names):
        if name == "PROJECT" or not isinstance(name, str):
            continue
        place: Place = ("meta", "substitute", index)
        how = f"replay puts the value it is given (`--substitute {name}`) wherever the recording writes `${{{name}}}`"
        if secret_variable(name):
            problem = f"{name} reads like a credential's name, and {how}{', which it does' if name in used else ''}"
            fix = f"take {name} out of meta.substitute (redact a secret: `meta.redact.env`), and never give its value"
            yield _Issue(place, ERROR, problem + ": the host, its model and its logs would read it", fix)
        elif name in used:
            fix = f"make sure {name} is a value of the machine (a folder), not a secret"
            yield _Issue(place, WARNING, f"{how}: replay refuses the cassette until its user gives {name}", fix)


def _revision(interaction: Interaction, eras: dict[str, str | None]) -> str | None:
    """The protocol revision an interaction speaks (its own, else its session's), None when unknown."""
    params = interaction.params
    if protocol.params_era(params) == protocol.STATELESS:
        return protocol.protocol_version(interaction.message)
    if interaction.method == protocol.INITIALIZE and isinstance(params, dict):
        asked = params.get("protocolVersion")
        return asked if isinstance(asked, str) else None
    return eras.get(protocol.HANDSHAKE) or eras.get(protocol.STATELESS)


def _check_interaction(
    interaction: Interaction,
    places: tuple[Place, Place, int],
    eras: dict[str, str | None],
    tools: frozenset[str] | None,
    stateless: bool,
) -> Iterator[_Issue]:
    """`places`: the interaction's, its answer's (a scripted one's: `answers[n]`), and which answer (the message is
    checked with the first); `eras`: its session's; `tools`: those the cassette's tools/list offers (None: none)."""
    message, response = interaction.message, interaction.response
    revision = _revision(interaction, eras)
    if message is not None and places[2] == 0:
        yield from _check_message(message, places[0] + (interaction.kind,), revision)
    place = places[1]
    # A message that speaks the stateless era is held to its rules whatever the meta says (a refused
    # `server/discover` probe of a handshake-era host has no result to judge).
    stateless = stateless or protocol.speaks_stateless(message)
    # A request written without the era's `_meta` (a recipe) gets `resultType` from replay if it has none.
    versioned = protocol.params_era(interaction.params) == protocol.STATELESS
    for index, item in enumerate(interaction.server):
        yield from _check_server_item(item, place + ("server", index), stateless, revision)
    if interaction.drop == CUT:  # the recorder writes it where the server broke its answer off: a fault of its
        problem = (
            "the answer to this request breaks off before its reply (`drop: cut`): it broke off in the recording "
            "(the server crashed, something between timed out, or the host gave up on the answer), and replay cuts "
            "it again"
        )
        meant = "if the cut is meant (to test the host), mark it `expect: fault`"
        yield _Issue(place + ("drop",), WARNING, problem, f"record again once the server answers whole; {meant}")
    if response is None or message is None:
        return
    yield from _check_not_recorded(response, place + ("response",))
    if interaction.method == protocol.INITIALIZE:
        revision = eras.get(protocol.HANDSHAKE)  # the answer speaks the version the server chose
    yield from _check_response(interaction.method, response, place + ("response",), message.get("id"), revision)
    result = response.get("result")
    if stateless and versioned and isinstance(result, dict) and "resultType" not in result:
        version = protocol.STATELESS_VERSION
        problem = f"a {version} result without `resultType`; hosts of that era expect one on every result"
        fix = "add `resultType: complete` (`input_required` for a multi-round-trip request)"
        yield _Issue(place + ("response", "result"), WARNING, problem, fix)
    if interaction.method == "tools/call":
        yield from _check_layers(response, interaction.params, place + ("response",), tools)


_STRUCTURED = 'the SDK\'s client raises "Tool {name} has an output schema but did not return structured content"'


def _check_structured(cassette: Cassette, indices: list[int]) -> Iterator[_Issue]:
    """A tool's successful result that lacks what the tool's `outputSchema` requires: a host's SDK checks it and
    raises. Without a tools/list in the cassette there are no schemas to check against, which is said once."""
    listed = protocol.listed(((i.message, i.response) for i in cassette.interactions), protocol.TOOLS_LIST)
    schemas = {tool.get("name"): tool.get("outputSchema") for tool in listed or () if isinstance(tool, dict)}
    for index, interaction in zip(indices, cassette.interactions, strict=True):
        if interaction.method != "tools/call" or not isinstance(interaction.params, dict):
            continue
        name = interaction.params.get("name")
        answers = [(("answers", n), interaction.played(n)) for n in range(len(interaction.answers))]
        for at, played in answers or [((), interaction)]:
            result = (played.response or {}).get("result")
            sent = not played.drop and played.raw_response is None
            if not (sent and isinstance(result, dict)) or result.get("isError") is True:
                continue
            if result.get("resultType", protocol.RESULT_TYPES[0]) != protocol.RESULT_TYPES[0]:
                continue  # a question to the host, not the tool's result (or a resultType found wrong elsewhere)
            place: Place = ("interactions", index, *at, "response", "result")
            if listed is None:
                problem = (
                    "no tools/list in the cassette, so lint cannot check this result against the tool's outputSchema"
                )
                yield _Issue(place, NOTE, problem, "add the server's tools/list answer (`mockmcp stub` writes one)")
                return
            schema = schemas.get(name)
            if isinstance(schema, dict):
                yield from _structured_flaws(str(name), schema, result, place)


def _placeholders(cassette: Cassette, indices: list[int]) -> Iterator[_Issue]:
    """Each answer still the placeholder `mockmcp stub` wrote: a note, as the host would read the placeholder."""
    for index, interaction in zip(indices, cassette.interactions, strict=True):
        if is_placeholder(interaction):
            name = (interaction.params or {}).get("name")
            problem = f"the answer of {name!r} is still the placeholder `mockmcp stub` wrote"
            fix = "write what the tool answers in `content` (and `structuredContent`, if it has them)"
            yield _Issue(("interactions", index, "response", "result"), NOTE, problem, fix)


def _structured_flaws(name: str, schema: dict[str, Any], result: dict[str, Any], place: Place) -> Iterator[_Issue]:
    content = result.get("structuredContent")
    if not isinstance(content, dict):
        problem = f"the tool {name!r} declares an outputSchema, and this result has no `structuredContent`: "
        fields = ", ".join(f"{key}: ..." for key in required_names(schema))
        yield _Issue(place, ERROR, problem + _STRUCTURED.format(name=name), f"add `structuredContent: {{{fields}}}`")
        return
    required = [key for key in required_names(schema) if key not in content]
    if required:
        problem = f"`structuredContent` lacks {', '.join(required)}, which the outputSchema of {name!r} requires: "
        fix = f"add {', '.join(f'`{key}`' for key in required)} as the tool's outputSchema describes"
        yield _Issue(place + ("structuredContent",), ERROR, problem + "the SDK's client refuses the result", fix)


def _check_not_recorded(response: dict[str, Any], place: Place) -> Iterator[_Issue]:
    """The recording's stand-in (`jsonrpc.NOT_RECORDED`) for an answer too long to keep or never given
    (`recorder.unreached`): replay answers the error, so a test of the real answer needs it written in."""
    error = response.get("error")
    if not (isinstance(error, dict) and error.get("code") == jsonrpc.NOT_RECORDED):
        return
    by_hand = "write the answer here by hand (`result:` in place of `error:`)"
    meant = "if the error is meant (to test the host), mark it `expect: fault`"
    data = error.get("data")
    if unreached(response):
        why = "was silent past --upstream-timeout" if data["status"] == 504 else "was gone"
        problem = (
            f"the recording kept no answer to this request: the server gave none (the host got HTTP {data['status']} "
            f"from the recording proxy: the server {why}); replay answers the stand-in error {jsonrpc.NOT_RECORDED} in "
            "its place, at once"
        )
        fix = f"record again with the server up and answering, or {by_hand}; {meant}"
    else:
        size, limit = (data.get("size"), data.get("limit")) if isinstance(data, dict) else (None, None)
        how_long = f" (it was {over_limit(size, limit)})" if isinstance(size, int) and isinstance(limit, int) else ""
        problem = (
            f"the recording kept no answer to this request{how_long}: replay answers the stand-in error "
            f"{jsonrpc.NOT_RECORDED} in its place, never what the server answered"
        )
        fix = f"{by_hand}, or record again with the server sending less in one message (a page at a time, say)"
        fix += f"; {meant}"
    yield _Issue(place + ("error",), WARNING, problem, fix)


def _check_message(message: dict[str, Any], place: Place, revision: str | None = None) -> Iterator[_Issue]:
    for found in shapes.unknown_keys(message, _MESSAGE, place, "a JSON-RPC message"):
        yield _unknown(found)
    method = message.get("method")
    revisions = shapes.defined_in(("method",), method) if isinstance(method, str) else ()
    if revision in protocol.REVISIONS and revisions and revision not in revisions:  # `ping` in 2026-07-28
        problem = f"`{method}` is {shapes.revision_note(revisions, 'method')}; this session speaks {revision}"
        fix = f"remove it, or record this session against a server that speaks {shapes.revision_span(revisions)}"
        yield _Issue(place + ("method",), WARNING, problem, fix)
    if method in shapes.PARAMS:
        params = message.get("params")
        what, scopes = f"the params of {method}", ("params", f"params:{method}")
        for found in shapes.unknown_keys(params, shapes.PARAMS[method], place + ("params",), what, revision, scopes):
            yield _unknown(found, revision=revision)
    if message.get("jsonrpc", "2.0") != "2.0":
        problem = f'`jsonrpc` is {message["jsonrpc"]!r}; JSON-RPC 2.0 requires "2.0"'
        fix = "remove `jsonrpc` (mockmcp adds it) or write `jsonrpc: '2.0'`"
        yield _Issue(place + ("jsonrpc",), ERROR, problem, fix)
    if isinstance(message.get("params"), list):
        problem = "`params` is a list; MCP params are always an object"
        yield _Issue(place + ("params",), WARNING, problem, "write the params as `key: value` lines")


def _check_server_item(item: ServerItem, place: Place, stateless: bool, revision: str | None) -> Iterator[_Issue]:
    if item.stream is not None and stateless:
        problem = f"`stream: {item.stream}` in the {protocol.STATELESS_VERSION} era, which has no GET stream"
        yield _Issue(place + ("stream",), WARNING, problem, "remove `stream`: replay sends it on the request's stream")
    if item.kind == RAW:
        return  # an exact line, meant to be whatever the user wrote
    yield from _check_message(item.message, place + (item.kind,), revision)
    if item.kind == REQUEST and stateless:
        problem = f"a server-to-client request in the {protocol.STATELESS_VERSION} era, which has none"
        fix = "answer the client's request with `resultType: input_required` and `inputRequests`"
        yield _Issue(place + ("request",), WARNING, problem, fix)
    if item.response is not None:
        method, asked = item.message.get("method"), item.message.get("id")
        yield from _check_response(method, item.response, place + ("response",), asked, revision)


def _check_response(
    method: Any, response: dict[str, Any], place: Place, request_id: Any, revision: str | None
) -> Iterator[_Issue]:
    for found in shapes.unknown_keys(response, _RESPONSE, place, "a JSON-RPC response"):
        yield _unknown(found, "use result or error; put anything else inside them")
    answer_id = response.get("id")
    if "id" in response and not is_valid_id(answer_id):
        shown = "null" if answer_id is None else repr(answer_id)
        yield _Issue(place + ("id",), ERROR, f"a response id is a string or an integer, never {shown}", _ID_FIX)
    elif "id" in response and request_id is not None and (type(answer_id), answer_id) != (type(request_id), request_id):
        problem = f"the response id {answer_id!r} is not the request's id {request_id!r} (same value, same JSON type)"
        yield _Issue(place + ("id",), WARNING, problem, _ID_FIX)
    if "error" in response:
        for found in shapes.unknown_keys(response["error"], shapes.ERROR, place + ("error",), "a JSON-RPC error"):
            yield _unknown(found, "use code, message and data; put anything else under `data`")
        code = response["error"]["code"]
        if -32768 <= code <= -32000 and code not in _DEFINED_CODES and not -32099 <= code <= -32000:
            problem = f"error code {code} is in the range JSON-RPC reserves (-32768..-32000) but has no defined meaning"
            fix = (
                "use -32700, -32600, -32601, -32602 or -32603, a server error in -32000..-32099, "
                "or a code outside -32768..-32000"
            )
            yield _Issue(place + ("error", "code"), WARNING, problem, fix)
    elif not isinstance(response["result"], dict):
        yield _Issue(place + ("result",), ERROR, *shapes.NOT_AN_OBJECT)
    if method in shapes.RESULTS:
        result = response.get("result")
        what, scopes, at = shapes.result_label(method), ("result", f"result:{method}"), place + ("result",)
        for found in shapes.unknown_keys(result, shapes.RESULTS[method], at, what, revision, scopes):
            yield _other_opening(method, found, at, revision) or _unknown(found, revision=revision)


def _other_opening(method: str, found: shapes.Unknown, at: Place, revision: str | None) -> _Issue | None:
    """A key of the other era's opening answer (`protocolVersion` in a server/discover result), or None."""
    revisions, others = shapes.OPENINGS.get(method, ((), {}))
    instead = others.get(found.key)
    if instead is None or found.place != at + (found.key,):
        return None
    other = next(name for name in shapes.OPENINGS if name != method)
    problem = (
        f"`{found.key}` in {found.what} is a key of the {other} result "
        f"({shapes.revision_span(shapes.OPENINGS[other][0])}); "
        f"this session speaks {revision or shapes.revision_span(revisions)}"
    )
    return _Issue(found.place, WARNING, problem, f"write `{instead}` instead")


def _unknown(found: shapes.Unknown, fix: str = "", revision: str | None = None) -> _Issue:
    """A key no shape knows: an error for a typo of a known one, else a warning naming the revisions that have it."""
    if found.revisions:
        note = shapes.revision_note(found.revisions, found.noun)
        problem = f"`{found.key}` in {found.what} is {note}; this session speaks {revision}"
        if found.noun != "key":
            return _Issue(found.place, WARNING, problem, f"use one of {revision}'s: {', '.join(found.known)}")
        return _Issue(found.place, WARNING, problem, f"remove it: a {revision} host does not read it")
    typo = found.typo()
    if typo is not None:
        return _Issue(found.place, ERROR, *typo)
    problem = f"unknown key {found.key!r} in {found.what} (replayed as it is, but no host reads it)"
    return _Issue(found.place, WARNING, problem, fix or f"use one of: {', '.join(found.known)}")


def _check_layers(
    response: dict[str, Any], params: Any, place: Place, tools: frozenset[str] | None
) -> Iterator[_Issue]:
    """A failure in the wrong layer: a host raises a JSON-RPC error; the model reads `isError: true` and recovers."""
    name = params.get("name") if isinstance(params, dict) else None
    name = name if isinstance(name, str) else None
    offered = name is not None and tools is not None and name in tools
    code = (response.get("error") or {}).get("code")
    # The recording's stand-in for an answer too long to keep is no failure at all (`_check_not_recorded`).
    wrong_layer = code is not None and code != jsonrpc.NOT_RECORDED and (code == -32603 or -32099 <= code <= -32000)
    if offered and wrong_layer:
        problem = (
            f"a call of the offered tool {name!r} answered with JSON-RPC error {code}: "
            "a host raises it, the model never reads it"
        )
        fix = "if the tool ran and failed, answer `result: {content: [{type: text, text: ...}], isError: true}` instead"
        yield _Issue(place + ("error",), WARNING, problem, fix)
    result = response.get("result")
    unknown = name is None or (tools is not None and name not in tools)
    if unknown and isinstance(result, dict) and result.get("isError") is True:
        what = f"{name!r}, a tool the cassette's tools/list does not offer," if name else "no tool `name`"
        problem = f"a tools/call of {what} answered as a tool error; a malformed request is a protocol error"
        message = f"'Unknown tool: {name}'" if name else "'Missing tool name'"
        fix = f"answer `error: {{code: -32602, message: {message}}}` (invalid params)"
        yield _Issue(place + ("result", "isError"), WARNING, problem, fix)


def _duplicate_keys(nodes: list[tuple[Place, yaml.Node]]) -> Iterator[_Issue]:
    for place, node in nodes:
        if not isinstance(node, yaml.MappingNode):
            continue
        first: dict[str, int] = {}
        for key, _value in node.value:
            name, line = str(key.value), key.start_mark.line + 1
            if name not in first:
                first[name] = line
                continue
            problem = f"duplicate key {name!r} (first on line {first[name]}); YAML silently keeps only the last one"
            yield _Issue(place + (name,), ERROR, problem, "remove one of them, or merge the two", line)


def _server_credentials(nodes: list[tuple[Place, yaml.Node]], scanned: set[Place]) -> list[_Issue]:
    """A credential in meta.server's command line (hand-written: recording keeps none) the key-shape scan missed."""
    words = [
        (place, str(node.value))
        for place, node in nodes
        if place[:2] == ("meta", "server") and len(place) == 3 and isinstance(node, yaml.ScalarNode)
    ]
    fix = f"write {REDACTED} in its place (recording does); revoke it if it is real"
    found = credentials_in([word for _place, word in words])
    problems = [
        (words[index][0], f"the server's command line holds {why}; cassettes get committed") for index, why in found
    ]
    return [_Issue(place, WARNING, problem, fix) for place, problem in problems if place not in scanned]


def _secrets(text: str, nodes: list[tuple[Place, yaml.Node]]) -> list[_Issue]:
    """Credentials of known shapes in the raw text (comments, keys and a file that does not parse too), each once,
    placed among the YAML nodes (no place: a comment). Only a secret's first 4 characters are shown: the report
    may end up in a CI log."""
    matches = sorted(
        (match.start(), -match.end(), rank, kind, match)
        for rank, (kind, pattern) in enumerate(_SECRETS)
        for match in pattern.finditer(text)
    )
    scalars = [(place, node) for place, node in nodes if isinstance(node, yaml.ScalarNode)]
    for place, node in nodes:  # a mapping's keys, since a secret can be a key
        if isinstance(node, yaml.MappingNode):
            scalars += [(place + (str(k.value),), k) for k, _value in node.value if isinstance(k, yaml.ScalarNode)]
    found: list[_Issue] = []
    end = -1
    for start, neg_end, _rank, kind, match in matches:
        if start < end:
            continue  # inside a secret already reported (a JWT after `Bearer`, sk-ant- as sk-)
        end = -neg_end
        value = match.group("secret") if "secret" in match.re.groupindex else match.group()
        # libyaml's mark index counts characters, like the offsets of `re`; the value check guards that.
        held = (
            p for p, node in scalars if node.start_mark.index <= start < node.end_mark.index and value in node.value
        )
        problem = f"{kind} ({value[:4]}...) left in the cassette; cassettes get committed"
        found.append(_Issue(next(held, ()), WARNING, problem, _SECRET_FIX, text.count("\n", 0, start) + 1))
    return found


def _rule_issues(cassette: Cassette, indices: list[int]) -> Iterator[_Issue]:
    """Each request's match rules against the recorded request beside them: a rule that refuses the very values it
    stands beside (an error: never answered), a path that leads nowhere in it (a warning, naming the path meant)."""
    matcher = Matcher.build((), cassette.meta)
    for index, interaction in zip(indices, cassette.interactions, strict=True):
        if not interaction.match:
            continue
        params = matcher.normalize(interaction.method or "", interaction.params)
        for rule in rules_of(interaction.match):
            place: Place = ("interactions", index, "match", rule.text)
            found = locate(params, rule.path)
            if rule.kind == "regex" and nested_repeat(rule.argument.pattern):
                yield _nested_issue(place, rule.argument.pattern)
            if not found and rule.kind != "any":
                meant = shapes.near(rule.text, _paths(params))
                nowhere = f"`{rule.text}` leads nowhere in the recorded request"
                problem = f"{nowhere}, so its rule accepts only a request without that value"
                fix = (
                    f"did you mean `{meant}`?" if meant else "name a path the recorded params have (relative to params)"
                )
                yield _Issue(place, WARNING, problem, fix)
            for where, value in sorted(found.items(), key=lambda item: render_place(item[0])):
                why = refusal(rule, value, value)
                if rule.kind == "subset" and not isinstance(value, dict):
                    why = f"{render_place(where)}: `subset` compares objects, and this is not one"
                elif rule.kind == "unordered" and not isinstance(value, list):
                    why = f"{render_place(where)}: `unordered` compares lists, and this is not one"
                if why is not None:
                    problem = (
                        f"the rule `{rule.render()}` refuses the recorded value itself ({why}), so no request, "
                        "not even the one recorded, is answered by this interaction"
                    )
                    fix = "fix the rule (a regex must match the whole recorded string) or the recorded params"
                    yield _Issue(place, ERROR, problem, fix)


def _paths(value: object) -> list[str]:
    """Every path into value's objects (the leaves and what holds them), as rules write them."""
    out: list[str] = []
    stack: list[tuple[tuple[str | int, ...], object]] = [((), value)]
    while stack:
        place, item = stack.pop()
        if place:
            out.append(render_place(place))
        if isinstance(item, dict):
            stack.extend((place + (key,), child) for key, child in item.items())
    return out


def nested_repeat(pattern: str) -> bool:
    """Whether the pattern repeats something that repeats itself (`(\\w+\\s?)+`), read by Python's parser (a
    pattern it cannot read, RE2's own `\\pL`, is not judged)."""
    try:
        parsed = _parser.parse(pattern)
    except Exception:
        return False
    return _repeats(parsed, inside=False)


def _nested_issue(place: Place, pattern: str) -> _Issue:
    problem = (
        f"the pattern `{pattern}` repeats a repetition: mockmcp's RE2 matches it in linear time, but in a "
        "backtracking engine (Python's `re`, where such a pattern is copied to) it can run for ages"
    )
    return _Issue(place, WARNING, problem, "write it flat, e.g. `(\\w+\\s?)+` as `[\\w\\s]+`")


_REPEATS = {_constants.MAX_REPEAT, _constants.MIN_REPEAT, getattr(_constants, "POSSESSIVE_REPEAT", None)}


def _repeats(parsed: Any, inside: bool) -> bool:
    """Whether a repetition of more than one sits inside another (`inside`: within one already)."""
    for op, av in parsed:
        if op in _REPEATS:
            _low, high, sub = av
            many = high is _constants.MAXREPEAT or high > 1
            if (many and inside) or _repeats(sub, inside or many):
                return True
        elif op is _constants.SUBPATTERN or op is getattr(_constants, "ATOMIC_GROUP", None):
            if _repeats(av[-1] if op is _constants.SUBPATTERN else av, inside):
                return True
        elif op is _constants.BRANCH and any(_repeats(branch, inside) for branch in av[1]):
            return True
    return False
