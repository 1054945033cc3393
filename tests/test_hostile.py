"""Hostile input: no line ends a session, no cassette crashes a tool, the cache serves only the cassette.

Covered:
- deep JSON: a line nested past `MAX_DEPTH` (or past what `json.loads` reads) is -32700 and the
  next request is answered; a 500-level request that misses gets its explanation, also with
  `meta.redact`; NaN, Infinity and 1e400 from the host are -32700, and so is a line over
  `MAX_LINE`; a 400-level result goes through the journal and its finishing, then loads,
  replays, lints and shows; show and lint draw the deepest message loading takes; what the
  recorder forwards but JSON data cannot hold (NaN, 1e400, 600 levels) is saved as its line;
- the report: written for a miss whose id holds a lone surrogate; the first misses kept, the rest counted;
- the loader: an alias bomb is refused in well under a second, with its line; values YAML has and
  JSON has not (binary, set, timestamp, non-string keys, NaN, infinity), a delay past a day and a
  malformed `meta.redact` are located errors; a typed-value fuzz of the shipped cassettes raises
  nothing but CassetteError, lint refuses exactly what loading refuses, and what loads replays;
- the cache: folder 0700, copies with the cassette's mode, no temporary file left; a forged
  cache file (right stamp, edited data; or signed without the key) and an edit that keeps size
  and time are both seen; a FIFO, a link to /dev/zero, a deep, huge or non-JSON cache file is a miss;
- redaction: a secret used as a key and in an id reaches neither journal, cassette nor cache;
- timers: a recorded pace longer than poll can wait does not end the session.
"""

from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path
from typing import Any

import pytest

from mockmcp._wire import jsonrpc, protocol
from mockmcp.cassette import store, yamlfile
from mockmcp.engine.matching import Matcher
from mockmcp.engine.replay import Replay, Send, Wake
from mockmcp.errors import CassetteError
from mockmcp.record import _journal as journal
from mockmcp.record._recorder import CLIENT, SERVER
from mockmcp.tools import _lint as lint
from mockmcp.tools import _show as show

ROOT = Path(__file__).resolve().parent.parent
SHIPPED = sorted((ROOT / "cassettes").glob("*.yaml")) + sorted((ROOT / "examples").glob("*.yaml"))

CASSETTE = """\
version: 1
meta: {%s}
interactions:
- request: {method: tools/call, params: {name: echo, arguments: {x: 1}}}
  response: {result: {content: []}}
"""
CALL = b'{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"x":1}}}'
SLOW_CASSETTE = """\
version: 1
interactions:
- at: 0.1
  request: {method: tools/call, params: {name: echo, arguments: {x: 1}}}
  delay: 5
  response: {result: {content: []}}
  took: 5
"""


def nested(levels: int, leaf: Any = 1) -> Any:
    value = leaf
    for _ in range(levels - 1):
        value = {"a": value}
    return {"x": value}


def sent(engine: Replay, line: bytes) -> list[Any]:
    return [
        json.loads(part)
        for action in engine.receive(line)
        if isinstance(action, Send)
        for part in action.data.splitlines()
    ]


def engine(meta: str = "") -> Replay:
    return Replay(store.loads(CASSETTE % meta), Matcher.build())


# --- deep JSON and numbers JSON has not, from the host ---------------------------------------------


@pytest.mark.parametrize("levels", [jsonrpc.MAX_DEPTH + 1, 995, 5000])
def test_a_line_nested_too_deep_is_a_parse_error_and_the_session_goes_on(levels: int) -> None:
    replay = engine()
    line = b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":' + b'{"a":' * levels + b"1" + b"}" * levels + b"}"
    [reply] = sent(replay, line)
    assert reply["error"]["code"] == jsonrpc.PARSE_ERROR and f"{jsonrpc.MAX_DEPTH} levels" in reply["error"]["message"]
    assert reply["id"] == 1  # found by a shallow scan: the host's call ends now, not at its timeout
    assert sent(replay, CALL % 2) == [{"jsonrpc": "2.0", "id": 2, "result": {"content": []}}]


@pytest.mark.parametrize("meta", ["", "redact: {patterns: ['sk-[a-z]+']}"])
def test_a_deep_request_that_misses_is_explained_and_the_session_goes_on(meta: str) -> None:
    replay = engine(meta)
    params = {"name": "echo", "arguments": nested(500, "sk-secret")}
    line = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}).encode()
    [reply] = sent(replay, line)
    assert reply["error"]["code"] == jsonrpc.NO_MATCH
    assert reply["error"]["data"]["differences"][0].startswith("arguments.x:")
    assert replay.report.misses[0].render()  # the story renders, at any depth
    assert json.dumps(replay.report.to_json())
    assert sent(replay, CALL % 2) == [{"jsonrpc": "2.0", "id": 2, "result": {"content": []}}]


@pytest.mark.parametrize("number", [b"NaN", b"Infinity", b"-Infinity", b"1e400", b"-1e400"])
def test_numbers_json_has_not_are_parse_errors(number: bytes) -> None:
    replay = engine()
    [reply] = sent(replay, b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"x":' + number + b"}}")
    assert reply == {"jsonrpc": "2.0", "id": None, "error": reply["error"]}
    assert reply["error"]["code"] == jsonrpc.PARSE_ERROR
    assert replay.report.misses == []  # never written into --report
    assert sent(replay, CALL % 2)[0]["id"] == 2


# A `notifications/cancelled` whose requestId no request can have: the SDK reads no id in it and ignores it.
ODD_REQUEST_IDS = ['{"id":1}', "[1]", "true", "1.0", "null", '"1"']


@pytest.mark.parametrize("request_id", ODD_REQUEST_IDS)
def test_a_cancel_naming_no_request_id_is_ignored_from_the_host_and_in_a_cassette(request_id: str) -> None:
    # from the host, while request 1 waits out its recorded delay: ignored, and the call is answered all the same
    replay = Replay(store.loads(SLOW_CASSETTE), Matcher.build())
    cancel = b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":%s}}' % request_id.encode()
    [wake] = [action for action in replay.receive(CALL % 1) if isinstance(action, Wake)]
    assert replay.receive(cancel) == []
    assert [json.loads(a.data)["id"] for a in replay.wake(wake.job) if isinstance(a, Send)] == [1]
    # in a cassette: loaded, timed, drawn and linted without a TypeError
    text = (
        SLOW_CASSETTE
        + f"- at: 0.2\n  notification: {{method: notifications/cancelled, params: {{requestId: {request_id}}}}}\n"
    )
    recorded = store.loads(text)
    Replay(recorded, Matcher.build())
    assert "notifications/cancelled" in show.render(recorded, color=False, width=100)
    assert not [f for f in lint.lint_text(text, "c.yaml") if f.severity == lint.ERROR and "requestId" not in f.problem]
    assert protocol.cancelled_request(json.loads(f'{{"requestId": {request_id}}}')) == (
        "1" if request_id == '"1"' else None
    )


def test_a_line_over_the_length_limit_is_a_parse_error_and_the_session_goes_on(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(jsonrpc, "MAX_LINE", 1000)
    replay = engine()
    [reply] = sent(replay, b'{"jsonrpc":"2.0","id":1,"method":"x","params":{"t":"' + b"a" * 1000 + b'"}}')
    assert reply["error"]["code"] == jsonrpc.PARSE_ERROR and "longer than" in reply["error"]["message"]
    assert sent(replay, CALL % 2)[0]["id"] == 2


def test_map_strings_and_depth_walk_any_depth_without_recursion() -> None:
    value = nested(5000, "secret")
    assert jsonrpc.depth(value) == 5000
    changed = jsonrpc.map_strings(value, str.upper, keys=True)
    assert jsonrpc.depth(changed) == 5000 and list(changed) == ["X"]


def test_a_deep_result_is_recorded_saved_through_the_journal_and_played_back(tmp_path: Path) -> None:
    request = b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"deep"}}'
    result = {"content": [{"type": "text", "text": "ok"}], "structuredContent": nested(400)}
    response = json.dumps({"jsonrpc": "2.0", "id": 1, "result": result}).encode()
    path = tmp_path / "deep.yaml"
    log = journal.Journal(journal.journal_path(str(path)), {"mode": "all", "meta": {}})
    log.append(CLIENT, 0.0, [request])
    log.append(SERVER, 0.1, [response])
    log.close()
    saved, _recovered, _notes = journal.finish(str(path))
    assert saved.interactions[0].response == {"result": result}
    loaded = store.load(str(path))
    assert loaded.interactions[0].response == {"result": result}
    [reply] = sent(Replay(loaded, Matcher.build()), request)
    assert reply["result"] == result
    assert not [f for f in lint.lint_file(str(path)) if f.severity == lint.ERROR]
    assert "tools/call" in show.render(store.load(str(path)), color=False, width=100)


def test_a_message_deeper_than_mockmcp_reads_is_a_located_error() -> None:
    deep = json.dumps(nested(jsonrpc.MAX_DEPTH))  # the message adds one more level
    text = CASSETTE % "" + f"- request: {{method: m, params: {deep}}}\n  response: {{result: {{}}}}\n"
    with pytest.raises(CassetteError) as caught:
        store.loads(text, "deep.yaml")
    assert caught.value.line == 6 and caught.value.place.startswith("interactions[1].request.params.x.a")
    assert f"more than {jsonrpc.MAX_DEPTH} levels" in caught.value.problem
    assert store.loads(text.replace('{"a": 1}', "1"), "ok.yaml").interactions[1].method == "m"  # one level less loads


# --- the report ----------------------------------------------------------------------------------


def test_a_report_is_written_for_a_miss_whose_id_holds_a_lone_surrogate() -> None:
    replay = engine()
    [reply] = sent(replay, b'{"jsonrpc":"2.0","id":"x\\ud800","method":"tools/call","params":{"name":"\\udc00"}}')
    assert reply["id"] == "x\ud800" and reply["error"]["code"] == jsonrpc.NO_MATCH
    text = replay.report.json_text()
    text.encode()  # UTF-8 holds it
    assert json.loads(text)["misses"][0]["id"] == "x\ud800"


def test_the_report_keeps_the_first_misses_and_counts_the_rest() -> None:
    from mockmcp.engine.report import KEPT_MISSES

    replay = engine()
    for n in range(KEPT_MISSES + 20):
        sent(replay, b'{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"other"}}' % n)
    assert len(replay.report.misses) == KEPT_MISSES and replay.report.missed == KEPT_MISSES + 20
    assert replay.report.misses[-1].request_id == KEPT_MISSES - 1
    assert json.loads(replay.report.json_text())["missed"] == KEPT_MISSES + 20
    assert "20 more, not kept" in replay.report.summary()
    assert replay.report.strict_failures() == f"{KEPT_MISSES + 20} misses, 1 unplayed interaction"


# --- the loader ----------------------------------------------------------------------------------

BOMB = (
    "version: 1\ninteractions:\n- request:\n    method: tools/call\n    params:\n      a: &a [x,x,x,x,x,x,x,x,x,x]\n"
    + "".join(
        f"      {name}: &{name} [{', '.join([f'*{prev}'] * 10)}]\n"
        for prev, name in zip("abcdefgh", "bcdefghi", strict=True)
    )
    + "  response: {result: {}}\n"
)


def test_an_alias_bomb_is_refused_at_once_with_its_line(tmp_path: Path) -> None:
    assert len(BOMB) < 700
    started = time.perf_counter()
    with pytest.raises(CassetteError) as caught:
        store.loads(BOMB, "bomb.yaml")
    assert time.perf_counter() - started < 1.0  # loose: a bomb took 20 s and 2 GB before
    assert caught.value.line == 6 and "alias" in caught.value.problem
    path = tmp_path / "bomb.yaml"
    path.write_text(BOMB)
    assert [f.line for f in lint.lint_file(str(path)) if f.severity == lint.ERROR] == [6]
    with pytest.raises(CassetteError):
        show.print_show(str(path), "never", 80)


REFUSED = [
    ("      x: !!binary aGVsbG8=", "interactions[0].response.result.x", "binary data"),
    ("      x: !!set {a, b}", "interactions[0].response.result.x", "a set"),
    ("      x: !!timestamp 2025-01-01", "interactions[0].response.result.x", "a date"),
    ("      x: !!timestamp 2025-01-01T10:00:00Z", "interactions[0].response.result.x", "a timestamp"),
    ("      x: {1: a, b: c}", "interactions[0].response.result.x.1", "the key 1"),
    ("      x: {null: b}", "interactions[0].response.result.x.None", "the key None"),
    ("      x: !!float .nan", "interactions[0].response.result.x", "nan is not a JSON number"),
    ("      x: [1, !!float -.inf]", "interactions[0].response.result.x[1]", "-inf is not a JSON number"),
    ("      x: 1e400", "interactions[0].response.result.x", "inf is not a JSON number"),
    ("      x: &a [1]\n      y: *a", "interactions[0].response.result.x", "alias"),
]


@pytest.mark.parametrize(("value", "place", "problem"), REFUSED, ids=[case[2] for case in REFUSED])
def test_values_json_cannot_hold_are_located_errors(value: str, place: str, problem: str) -> None:
    text = f"version: 1\ninteractions:\n- request: {{method: m}}\n  response:\n    result:\n{value}\n"
    with pytest.raises(CassetteError) as caught:
        store.loads(text, "c.yaml")
    assert caught.value.line == 6 and problem in caught.value.problem
    assert caught.value.place == (place if "alias" not in problem else "")


KNOBS = [
    ("  delay: 1e400\n", "interactions[0].delay", "not a JSON number"),
    ("  delay: 3000000\n", "interactions[0].delay", "at most 86400 seconds"),
    ("  at: .inf\n", "interactions[0].at", "must be a number"),
    ("  took: 1e300\n", "interactions[0].took", "at most 86400 seconds"),  # --timing recorded waits it
]
META = [
    ("meta: {redact: [API_KEY]}\n", "meta.redact", "expected a mapping"),
    ("meta: {redact: {env: API_KEY}}\n", "meta.redact.env", "list of strings"),
    ("meta: {redact: {patterns: ['sk-[']}}\n", "meta.redact.patterns[0]", "not a regular expression mockmcp takes"),
    ("meta: {redact: {names: [A]}}\n", "meta.redact.names", "unknown key"),
]


@pytest.mark.parametrize(("knob", "place", "problem"), KNOBS + META, ids=[case[0].strip() for case in KNOBS + META])
def test_knobs_out_of_range_and_a_malformed_redact_are_located_errors(knob: str, place: str, problem: str) -> None:
    head, item = ("version: 1\n" + knob, "") if knob.startswith("meta") else ("version: 1\n", knob)
    text = head + "interactions:\n- request: {method: m}\n" + item + "  response: {result: {}}\n"
    with pytest.raises(CassetteError) as caught:
        store.loads(text, "c.yaml")
    assert caught.value.place == place and problem in caught.value.problem


HOSTILE = [
    "!!binary aGk=",
    "!!set {a}",
    "!!timestamp 2025-01-01",
    "{1: a}",
    "{null: a}",
    "!!float .nan",
    "!!float .inf",
    "1e400",
    "3000000",
    "-1",
    "[1, 2]",
    "{}",
    "null",
    "'text'",
    "true",
]
_SCALAR = re.compile(r"^(\s*(?:- )?[\w/]+: )(?!\||>)(\S.*)$")


def mutants() -> list[tuple[str, str]]:
    """Each scalar `key: value` line of each shipped cassette, with its value replaced by a hostile one."""
    out = []
    for path in SHIPPED:
        lines = path.read_text().splitlines()
        for number, line in enumerate(lines):
            found = _SCALAR.match(line)
            if found is None or line.rstrip().endswith(":"):
                continue
            value = HOSTILE[(number + len(out)) % len(HOSTILE)]
            mutated = [*lines[:number], found.group(1) + value, *lines[number + 1 :]]
            out.append((f"{path.name}:{number + 1}={value}", "\n".join(mutated) + "\n"))
    return out


MUTANTS = mutants()[::5]  # a fifth of them: each one is parsed three times over
SHARDS = 4  # run as four tests, which pytest-xdist can give different workers


@pytest.mark.slow
@pytest.mark.parametrize("shard", range(SHARDS))
def test_a_typed_value_fuzz_of_the_shipped_cassettes_gets_located_errors_or_a_working_replay(
    tmp_path: Path, shard: int
) -> None:
    assert len(MUTANTS[shard::SHARDS]) > 100 // SHARDS
    refused = 0
    for name, text in MUTANTS[shard::SHARDS]:
        path = tmp_path / "c.yaml"
        path.write_text(text)
        errors = [f for f in lint.lint_file(str(path)) if f.severity == lint.ERROR and f.place != "meta"]
        try:
            cassette = store.loads(text, str(path))
        except CassetteError as error:
            refused += 1
            assert error.line is not None, name
            assert errors and errors[0].problem == error.problem, name  # lint agrees with replay
            continue
        # Loaded: replay serves it (every recorded request, as JSON a strict reader takes), and show draws it.
        replay = Replay(cassette, Matcher.build())
        replay.start()
        for index, interaction in enumerate(cassette.interactions):
            if interaction.kind == "request":
                message = {"jsonrpc": "2.0", "id": index, **(interaction.message or {})}
                for action in replay.receive(json.dumps(message, allow_nan=False).encode()):
                    if isinstance(action, Send):
                        jsonrpc.parse(action.data.split(b"\n")[0])
        show.render(cassette, color=False, width=100)
        yamlfile.dump(cassette.to_data())
    assert refused > 20 // SHARDS


# --- the cache of parsed cassettes ------------------------------------------------------------------

NOTES = ROOT / "cassettes" / "notes.yaml"


@pytest.fixture
def cached(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """A cassette loaded once (so cached) in a cache folder of its own: (cassette, its cache file)."""
    monkeypatch.setenv("MOCKMCP_CACHE_DIR", str(tmp_path / "cache"))
    path = tmp_path / "c.yaml"
    path.write_text(NOTES.read_text())
    path.chmod(0o600)
    store.load(str(path))
    [file] = [p for p in (tmp_path / "cache").iterdir() if p.suffix == ".json"]
    return path, file


def first_text(path: Path) -> str:
    """The text of the answer that reads notes.txt."""
    return store.load(str(path)).interactions[3].response["result"]["content"][0]["text"]  # type: ignore[index]


def test_the_cache_folder_is_private_and_a_copy_keeps_the_cassettes_mode(cached: tuple[Path, Path]) -> None:
    _path, file = cached
    assert file.parent.stat().st_mode & 0o777 == 0o700
    assert file.stat().st_mode & 0o777 == 0o600
    assert (file.parent / "key").stat().st_mode & 0o777 == 0o600
    assert sorted(p.name for p in file.parent.iterdir()) == sorted([file.name, "key"])  # no temporary file left


def test_a_forged_cache_file_is_not_served(cached: tuple[Path, Path]) -> None:
    path, file = cached
    truth = first_text(path)
    signature, _, body = file.read_bytes().partition(b"\n")
    forged = body.replace(truth.encode(), b"forged answer")
    assert forged != body
    file.write_bytes(signature + b"\n" + forged)  # the right stamp, edited data
    assert first_text(path) == truth
    from _blake2 import blake2b  # and signed by someone without the key: still a miss

    file.write_bytes(blake2b(forged, digest_size=20).hexdigest().encode() + b"\n" + forged)
    assert first_text(path) == truth


def test_an_edit_that_keeps_size_and_time_is_seen(cached: tuple[Path, Path]) -> None:
    path, _file = cached
    before = path.stat()
    text = path.read_text()
    word = first_text(path)
    path.write_text(text.replace(word, word[::-1]))  # `cp -p`, `rsync -t`: same size, same time
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert path.stat().st_size == before.st_size
    assert first_text(path) == word[::-1]


@pytest.mark.parametrize("kind", ["fifo", "symlink to /dev/zero", "deep", "huge", "not json"])
def test_an_odd_cache_file_is_a_miss(cached: tuple[Path, Path], kind: str) -> None:
    path, file = cached
    truth = first_text(path)
    file.unlink()
    if kind == "fifo":
        os.mkfifo(file)
    elif kind == "symlink to /dev/zero":
        file.symlink_to("/dev/zero")
    elif kind == "deep":
        file.write_bytes(b"x\n" + b"[" * 100_000 + b"]" * 100_000)
    elif kind == "huge":
        file.write_bytes(b"x\n" + b" " * (50 * path.stat().st_size))
    else:
        file.write_bytes(b"\xff\xfe")
    assert first_text(path) == truth  # a miss, answered from the cassette, without hanging


def test_a_cache_that_cannot_be_written_leaves_no_temporary_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MOCKMCP_CACHE_DIR", str(tmp_path / "cache"))
    path = tmp_path / "c.yaml"
    path.write_text(NOTES.read_text())

    def failing_replace(_src: str, _dst: str) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", failing_replace)
    assert first_text(path)
    assert [p.name for p in (tmp_path / "cache").iterdir()] == ["key"]


# --- redaction of keys and ids --------------------------------------------------------------------


def test_a_secret_used_as_a_key_and_in_an_id_reaches_no_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from mockmcp.engine.redact import Redactor

    monkeypatch.setenv("MOCKMCP_CACHE_DIR", str(tmp_path / "cache"))
    secret = "sk-live-0123456789abcdef"
    rules = Redactor.build(("SECRET",), (), {"SECRET": secret})
    request = {"jsonrpc": "2.0", "id": f"call-{secret}", "method": "tools/call"}
    request["params"] = {"name": "t", "arguments": {secret: "v", "nested": [{secret: secret}]}}
    response = {"jsonrpc": "2.0", "id": f"call-{secret}", "result": {"content": [], secret: {"k": 1}}}
    path = tmp_path / "c.yaml"
    log = journal.Journal(journal.journal_path(str(path)), {"mode": "all", "meta": {"redact": rules.rules()}})
    log.append(CLIENT, 0.0, [rules.line(json.dumps(request).encode())])
    log.append(SERVER, 0.1, [rules.line(json.dumps(response).encode())])
    assert secret.encode() not in Path(log.path).read_bytes()
    log.close()
    journal.finish(str(path))
    loaded = store.load(str(path))  # and cached
    files = [path, *(tmp_path / "cache").glob("*.json")]
    assert len(files) == 2 and all(secret.encode() not in file.read_bytes() for file in files)
    assert loaded.interactions[0].message["id"] == "call-[REDACTED:SECRET]"  # type: ignore[index]
    # Replay redacts the host's request alike, so it matches, and answers with the host's own id.
    monkeypatch.setenv("SECRET", secret)
    [reply] = sent(
        Replay(loaded, Matcher.build(), Redactor.from_meta(loaded.meta, {"SECRET": secret})),
        json.dumps(request).encode(),
    )
    assert reply["id"] == f"call-{secret}" and "content" in reply["result"]


def test_show_and_lint_draw_the_deepest_messages_loading_takes(tmp_path: Path) -> None:
    arguments = nested(jsonrpc.MAX_DEPTH - 2)  # the request is the deepest a message may be
    text_block = {"type": "text", "text": "[" * 2000 + "1" + "]" * 2000}  # JSON text deeper than json reads
    request = json.dumps({"method": "tools/call", "params": {"name": "t", "arguments": arguments}})
    response = json.dumps({"result": {"content": [text_block]}})
    path = tmp_path / "deep.yaml"
    path.write_text(f"version: 1\ninteractions:\n- request: {request}\n  response: {response}\n")
    drawn = show.render(store.load(str(path)), color=False, width=100)
    assert "tools/call t {x: {a: {a:" in drawn and "…" in drawn
    assert not [f for f in lint.lint_file(str(path)) if f.severity == lint.ERROR]


@pytest.mark.parametrize("body", [b'{"x": NaN}', b'{"x": 1e400}', b"[" * 600 + b"]" * 600])
def test_what_the_recorder_forwards_but_json_data_cannot_hold_is_saved_raw(body: bytes) -> None:
    from mockmcp.record._recorder import Recorder

    recorder = Recorder()
    recorder.feed(CLIENT, b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t"}}', 0.0)
    reply = b'{"jsonrpc":"2.0","id":1,"result":' + body + b"}"
    recorder.feed(SERVER, reply, 0.1)
    text = store.dump(recorder.cassette())  # saving works: the reply is kept as the line it was
    [interaction] = store.loads(text).interactions
    assert reply.decode() in {interaction.raw_response, *(item.message for item in interaction.server)}


def test_the_longest_recorded_pace_loading_allows_does_not_end_the_session(tmp_path: Path) -> None:
    import subprocess
    import sys

    from conftest import child_env

    path = tmp_path / "c.yaml"
    slow = (
        "- at: 0\n  request: {method: tools/call, params: {name: slow}}\n  took: 86400\n"
        "  response: {result: {content: []}}\n"
    )
    path.write_text(CASSETTE % "" + slow)
    proc = subprocess.Popen(
        [sys.executable, "-m", "mockmcp", "replay", str(path), "--timing", "recorded"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=child_env(),
    )
    try:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(
            b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow"}}\n' + CALL % 2 + b"\n"
        )
        proc.stdin.flush()
        assert json.loads(proc.stdout.readline())["id"] == 2  # answered while the slow one waits
        proc.stdin.write(CALL % 3 + b"\n")  # and the session is still on
        proc.stdin.flush()
        assert json.loads(proc.stdout.readline())["id"] == 3
    finally:
        proc.kill()
        proc.communicate(timeout=30)


DUPLICATES = [  # (the text after `version: 1`, the lines of the two keys, the key)
    ("interactions: []\ninteractions:\n- request: {method: ping}\n  response: {result: {}}\n", (2, 3), "interactions"),
    (
        "interactions:\n- request: {method: tools/list}\n  response: {error: {code: -32603, message: x}}\n"
        "  response: {result: {tools: []}}\n",
        (4, 5),
        "response",
    ),
    ("interactions:\n- request: {method: ping, method: tools/list}\n  response: {result: {}}\n", (3, 3), "method"),
]


@pytest.mark.parametrize(("text", "lines", "key"), DUPLICATES)
def test_a_duplicate_key_is_refused_at_load_naming_both_lines_and_lint_says_it_once(
    text: str, lines: tuple[int, int], key: str, tmp_path: Path
) -> None:
    with pytest.raises(CassetteError) as caught:
        store.loads("version: 1\n" + text, "dup.yaml")
    assert caught.value.line == lines[1]
    assert f"duplicate key {key!r} (lines {lines[0]} and {lines[1]})" in caught.value.problem
    path = tmp_path / "dup.yaml"
    path.write_text("version: 1\n" + text)
    found = [f for f in lint.lint_file(str(path)) if "duplicate key" in f.problem]
    assert [(f.line, f.severity) for f in found] == [(lines[1], lint.ERROR)]
