"""Cassette loading, validation with located errors, the YAML dialect, and atomic saves."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import SHIPPED, child_env

from mockmcp._wire.patterns import SYNTAX
from mockmcp.cassette import store as cassette
from mockmcp.cassette import validation, yamlfile
from mockmcp.cassette.model import Interaction, ServerItem
from mockmcp.errors import CassetteError
from mockmcp.record._recorder import CLIENT, SERVER, Recorder

HEAD = "version: 1\ninteractions:\n"

BROKEN = [
    # (cassette text, line, place, problem, words of the fix)
    ("version: 1\ninteractions: [\n", 3, "", "not valid YAML", "correct the YAML syntax"),
    ("- just a list\n", 1, "", "expected a mapping, got a list", "a cassette is a mapping"),
    (
        "version: 2\ninteractions: []\n",
        1,
        "version",
        "unknown cassette version 2; this mockmcp reads version 1",
        "set `version: 1`",
    ),
    ("interactions: []\n", 1, "version", "unknown cassette version None", "set `version: 1`"),
    ("version: 1\ninteractions: {}\n", 2, "interactions", "`interactions` must be a list", "- request"),
    ("version: 1\nvesion: 1\ninteractions: []\n", 2, "vesion", "unknown key 'vesion'", "version, meta, interactions"),
    (
        HEAD + "- request: {method: tools/list}\n  respnse: {result: {}}\n",
        4,
        "interactions[0].respnse",
        "unknown key 'respnse'",
        "use one of: at, request",
    ),
    (
        HEAD + "- request: {params: {}}\n",
        3,
        "interactions[0].request",
        "a message needs a `method` string",
        "method: tools/call",
    ),
    (
        HEAD + "- request: {method: tools/list}\n  response: {}\n",
        4,
        "interactions[0].response",
        "exactly one of `result` and `error`",
        "keep the one",
    ),
    (
        HEAD + "- request: {method: x}\n  response: {error: {code: '1', message: m}}\n",
        4,
        "interactions[0].response.error.code",
        "must be an integer",
        "-32602",
    ),
    (
        HEAD + "- request: {method: x}\n  response: {error: {code: 1}}\n",
        4,
        "interactions[0].response.error.message",
        "needs a `message` string",
        "message:",
    ),
    (
        HEAD + "- notification: {method: x}\n  response: {result: {}}\n",
        4,
        "interactions[0].response",
        "only a request gets a response",
        "remove `response`",
    ),
    (
        HEAD + "- notification: {method: x, id: 3}\n",
        3,
        "interactions[0].notification.id",
        "bad `id`",
        "a notification has none",
    ),
    (
        HEAD + "- request: {method: x, id: null}\n",
        3,
        "interactions[0].request.id",
        "bad `id`",
        "a string or an integer",
    ),
    (HEAD + "- {}\n", 3, "interactions[0]", "empty interaction", "add the client's message"),
    (HEAD + "- request: {method: x}\n  delay: soon\n", 4, "interactions[0].delay", "number of seconds", "delay: 0.5"),
    (
        HEAD + "- request: {method: x}\n  server: [{notification: {method: y}, raw: z}]\n",
        4,
        "interactions[0].server[0]",
        "exactly one of",
        "split",
    ),
    (
        HEAD + "- request: {method: x}\n  server:\n  - raw: {a: 1}\n",
        5,
        "interactions[0].server[0].raw",
        "exact line to send",
        "quote",
    ),
    (
        HEAD + "- request: {method: x}\n  server:\n  - notification: {method: y}\n    stream: post\n",
        6,
        "interactions[0].server[0].stream",
        "unknown `stream` 'post'",
        "`stream: get` for the session's GET stream, or leave it out",
    ),
    (
        HEAD + "- request: {method: x, params: [1]}\n  response: {result: {}}\n- request: {method: y, params: 3}\n",
        5,
        "interactions[1].request.params",
        "must be a mapping",
        "key: value",
    ),
]


@pytest.mark.parametrize(("text", "line", "place", "problem", "fix"), BROKEN)
def test_a_broken_cassette_says_file_line_place_problem_and_fix(
    tmp_path: Path, text: str, line: int, place: str, problem: str, fix: str
) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(text)
    with pytest.raises(CassetteError) as raised:
        cassette.load(str(path))
    error = raised.value
    assert (error.path, error.line, error.place) == (str(path), line, place)
    assert problem in error.problem
    assert error.fix is not None and fix in error.fix
    rendered = error.render()
    assert rendered.startswith(f"{path}:{line}: ") and "how to fix:" in rendered


# --- the format's table: each kind of field, its exact words ---------------------------------------------

ANSWERED = HEAD + "- request: {method: tools/call, params: {name: a}}\n  response: {result: {content: []}}\n"
TOOK_FIX = "write the seconds the answer took, e.g. `took: 0.25` (`--timing recorded` waits that long)"
EXIT_FIX = "write `exit: 1` (after the reply) or `exit: {status: 1, when: before}`"
ANSWER_FIX = "write e.g. `{status: 404, error: {code: -32001, message: Session not found}}`"
STATUS_FIX = "write e.g. `error_status: [{code: -32602, status: 400}, {code: -32601, status: 404}]`"
NAMES_FIX = "write `substitute: [PROJECT]`: the names, whose values replay is given on the machine it runs on"
# (what is added to the answered request, or `meta:` / `version:` of an empty cassette; place, problem, fix)
FIELDS = [
    ("  delay: soon", "delay", "`delay` must be a number of seconds, at least 0", "write e.g. `delay: 0.5`"),
    ("  took: 100000", "took", "`took` is at most 86400 seconds (a day), not 100000", TOOK_FIX),
    ("  session: -1", "session", "`session` must be a whole number, at least 0", "write e.g. `session: 1`"),
    ("  times: 0", "times", "`times` must be a whole number, at least 1, or `any`", "write e.g. `times: 2`"),
    ("  after: never", "after", "unknown `after` 'never'", "use one of: repeat, unmatched"),
    (
        "  drop: 1",  # a number is no flag
        "drop",
        "`drop` must be true, false or `cut`, not 1",
        "write `drop: true` (the reply never comes) or `drop: cut` (the answer breaks off there)",
    ),
    ("  exit: 300", "exit.status", "an exit `status` is a whole number from 0 to 255", EXIT_FIX),
    ("  exit: {status: 1, when: later}", "exit.when", "unknown `when` 'later'", "use one of: after, before"),
    ("  exit: {status: 1, wen: x}", "exit.wen", "unknown key 'wen'", "did you mean `when`? use one of: status, when"),
    ("  raw_response: 3", "raw_response", "`raw_response` is the exact line to send, as a string", "quote the line"),
    ("  expect: faults", "expect", "unknown `expect` 'faults'", "use one of: fault"),
    (
        "  server: {a: 1}",
        "server",
        "`server` must be a list of messages",
        "write each as `- notification: {...}`, `- request: {...}` or `- raw: ...`",
    ),
    (
        "  server: [{request: {method: m}, took: 1}]",
        "server[0].took",
        "`took` is the time the host took to answer a server request: this item has no `response`",
        "remove `took`, or add the host's `response`",
    ),
    (
        "  server: [{notification: {method: m}, stream: post}]",
        "server[0].stream",
        "unknown `stream` 'post': it names the stream a Streamable HTTP server sent this on",
        "write `stream: get` for the session's GET stream, or leave it out for the request's own",
    ),
    (
        "  server: [{notification: {params: {}}, response: {result: {}}}]",  # the message's own problem first
        "server[0].notification",
        "a message needs a `method` string",
        "add e.g. `method: tools/call`",
    ),
    (
        "  times: any\n  after: repeat",
        "after",
        "`after` never applies to an interaction with `times: any`, which is never used up",
        "remove `after`, or give `times` a number",
    ),
    # Refused since the table: the loader took these for empty, the schema never did.
    (
        "meta: []",
        "meta",
        "expected a mapping, got a list",
        "`meta` holds free-form facts about the recording as a mapping",
    ),
    ("version: true", "version", "unknown cassette version True; this mockmcp reads version 1", "set `version: 1`"),
    ("meta: {redact: {env: [1]}}", "meta.redact.env", "`env` must be a list of strings", "write `env: [...]`"),
    ("meta: {http: {priming: 'yes'}}", "meta.http.priming", "`priming` must be true or false", "write `priming: true`"),
    (
        "meta: {http: {framing: xml}}",
        "meta.http.framing",
        "`framing` is json or sse, not 'xml'",
        "write `framing: sse` (an SSE stream for every request) or `framing: json` (a JSON body when it can)",
    ),
    (
        "meta: {http: {session_errors: {unknown: {status: 200, error: {code: 1, message: m}}}}}",
        "meta.http.session_errors.unknown.status",
        "`status` must be an HTTP error status (400-599), not 200",
        ANSWER_FIX,
    ),
    (
        "meta: {http: {session_errors: {missing: {status: 404, error: {code: 1}}}}}",
        "meta.http.session_errors.missing.error.message",
        "`message` must be a string",
        ANSWER_FIX,
    ),
    (
        "meta: {http: {error_status: [{code: x, status: 400}]}}",
        "meta.http.error_status[0].code",
        "`code` must be an integer (a JSON-RPC error code)",
        STATUS_FIX,
    ),
    (
        "meta: {substitute: [PROJECT, 1abc]}",
        "meta.substitute[1]",
        "substitute '1abc': a substitution's name is letters, digits and `_`, not starting with a digit",
        NAMES_FIX,
    ),
    (
        "meta: {redact: {patterns: ['sk-[']}}",
        "meta.redact.patterns[0]",
        "'sk-[' is not a regular expression mockmcp takes: missing ]: [",
        f"fix the pattern ({SYNTAX})",
    ),
    (  # a lookahead, which RE2 (linear time) does not take
        "meta: {redact: {patterns: ['(?=sk-)sk']}}",
        "meta.redact.patterns[0]",
        "'(?=sk-)sk' is not a regular expression mockmcp takes: invalid perl operator: (?=",
        f"fix the pattern ({SYNTAX})",
    ),
]


@pytest.mark.parametrize(("line", "place", "problem", "fix"), FIELDS, ids=[row[0].strip() for row in FIELDS])
def test_each_kind_of_field_says_its_place_problem_and_fix(line: str, place: str, problem: str, fix: str) -> None:
    if line.startswith(("meta", "version")):
        text = "version: 1\n" * line.startswith("meta") + line + "\ninteractions: []\n"
    else:
        text, place = ANSWERED + line + "\n", f"interactions[0].{place}"
    with pytest.raises(CassetteError) as raised:
        validation.from_data(yamlfile.load(text))
    assert (raised.value.place, raised.value.problem) == (place, problem)
    assert raised.value.fix is not None and raised.value.fix.startswith(fix)


def test_what_the_table_takes_becomes_the_model() -> None:
    text = ANSWERED.replace(
        "response:",
        "delay: 2\n  times: any\n  drop: cut\n  exit: 3\n  session: 1\n  server: [{raw: x, at: 1}]\n  response:",
    )
    [interaction] = validation.from_data(yamlfile.load(text)).interactions
    assert interaction == Interaction(
        "request",
        {"method": "tools/call", "params": {"name": "a"}},
        (ServerItem("raw", "x", at=1.0),),
        {"result": {"content": []}},
        delay=2.0,
        times="any",
        drop="cut",
        exit=(3, "after"),
        session=1,
    )


def test_a_missing_cassette_says_how_to_record_one(tmp_path: Path) -> None:
    with pytest.raises(CassetteError, match="no such cassette") as raised:
        cassette.load(str(tmp_path / "nope.yaml"))
    assert "mockmcp record" in (raised.value.fix or "")


@pytest.mark.parametrize("path", sorted(SHIPPED.glob("*.yaml")), ids=lambda p: p.name)
def test_shipped_cassettes_load_and_survive_a_round_trip(path: Path) -> None:
    loaded = cassette.load(str(path))
    assert loaded.interactions
    again = cassette.loads(cassette.dump(loaded))
    assert again.interactions == loaded.interactions and again.meta == loaded.meta


@pytest.mark.parametrize(
    ("yaml_text", "value"),
    [
        ("2025-11-25", "2025-11-25"),  # a date in YAML 1.1; a protocol version here
        ("yes", "yes"),
        ("on", "on"),
        ("012", "012"),
        ("1:20", "1:20"),
        (".inf", ".inf"),
        ("0x10", "0x10"),
        ("1", 1),
        ("-7", -7),
        ("1.5", 1.5),
        ("1e3", 1000.0),
        ("true", True),
        ("null", None),
        ("", None),
    ],
)
def test_scalars_are_read_as_json_would(yaml_text: str, value: object) -> None:
    loaded = yamlfile.load(f"a: {yaml_text}\n")["a"]
    assert loaded == value and type(loaded) is type(value)


STRINGS = [
    "plain",
    "2025-11-25",
    "yes",
    "multi\nline\ntext\n",
    "no final newline\nhere",
    "  leading spaces\nand trailing  \n",
    "tabs\tand \\ backslashes",
    "a long sentence " * 20,
    "x" * 300,
    "unicode: café ✓ 🚀",
    "\x00 control \x07 chars",
    "",
    " ",
    "- looks like a list",
    "key: value",
    "# not a comment",
    "'quoted'",
    '"double"',
]


@pytest.mark.parametrize("text", STRINGS)
def test_every_string_survives_dump_and_load(text: str) -> None:
    data = {"s": text, "nested": [{"t": text}]}
    assert yamlfile.load(yamlfile.dump(data)) == data


def test_multiline_strings_are_literal_blocks() -> None:
    assert "s: |\n  line one\n  line two\n" in yamlfile.dump({"s": "line one\nline two\n"})


def test_save_is_atomic_and_keeps_the_old_file_on_failure(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "c.yaml"
    good = cassette.load(str(SHIPPED / "notes.yaml"))
    cassette.save(good, str(target))
    before = target.read_bytes()

    def broken_replace(src: str, dst: str) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(OSError, match="disk full"):
        cassette.save(cassette.loads(HEAD + "- request: {method: x}\n  response: {result: {}}\n"), str(target))
    assert target.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["c.yaml"], "the temporary file is removed"


def test_a_second_load_comes_from_the_cache_of_parsed_cassettes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MOCKMCP_CACHE_DIR", str(tmp_path / "cache"))
    path = tmp_path / "c.yaml"
    path.write_text((SHIPPED / "notes.yaml").read_text())
    first = cassette.load(str(path))
    assert len(list((tmp_path / "cache").glob("*.json"))) == 1

    def no_yaml(_text: str) -> None:
        raise AssertionError("YAML was parsed although the cache is fresh")

    monkeypatch.setattr(yamlfile, "load", no_yaml)
    assert cassette.load(str(path)).interactions == first.interactions


def test_a_changed_cassette_is_parsed_again_and_a_bad_edit_still_gets_its_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MOCKMCP_CACHE_DIR", str(tmp_path / "cache"))
    path = tmp_path / "c.yaml"
    path.write_text(HEAD + "- request: {method: a}\n  response: {result: {}}\n")
    assert cassette.load(str(path)).interactions[0].method == "a"
    path.write_text(HEAD + "- request: {method: b}\n  response: {result: {}}\n")
    assert cassette.load(str(path)).interactions[0].method == "b"
    path.write_text(HEAD + "- request: {method: b}\n  typo: 1\n  response: {result: {}}\n")
    with pytest.raises(CassetteError) as raised:
        cassette.load(str(path))
    assert raised.value.line == 4 and raised.value.place == "interactions[0].typo"


def test_the_cache_can_be_turned_off(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MOCKMCP_CACHE_DIR", "")
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    path = tmp_path / "c.yaml"
    path.write_text(HEAD + "- request: {method: a}\n  response: {result: {}}\n")
    cassette.load(str(path))
    assert [p.name for p in tmp_path.iterdir()] == ["c.yaml"]


def test_save_keeps_the_permissions_a_file_would_have(tmp_path: Path) -> None:
    good = cassette.load(str(SHIPPED / "notes.yaml"))
    fresh = tmp_path / "fresh.yaml"
    old_umask = os.umask(0o022)
    try:
        cassette.save(good, str(fresh))
    finally:
        os.umask(old_umask)
    assert fresh.stat().st_mode & 0o777 == 0o644
    fresh.chmod(0o640)
    cassette.save(good, str(fresh))
    assert fresh.stat().st_mode & 0o777 == 0o640


@pytest.mark.parametrize(
    "text", ["1e3", "12e45", "1.5e3", "0e5", "-2E-7", "0", "+1", "1.0", "true", "False", "~", "null"]
)
def test_strings_that_look_like_json_scalars_stay_strings(text: str) -> None:
    data = {"s": text, "list": [text]}
    assert yamlfile.load(yamlfile.dump(data)) == data


# --- valid by construction ------------------------------------------------------------------------

BUILT_WRONG = [
    # (an interaction built in code, the place, words of the problem)
    (Interaction("request", {"method": "tools/list"}, times=0), "interactions[1].times", "at least 1"),
    (Interaction("request", {"method": 3}), "interactions[1].request", "`method` string"),
    (Interaction("request", {"method": "x"}, response={}), "interactions[1].response", "exactly one of"),
    (Interaction("notification", {"method": "x", "id": 1}), "interactions[1].notification.id", "bad `id`"),
    (
        Interaction("request", {"method": "x"}, answers=(Interaction("request", None),)),
        "interactions[1].answers[0]",
        "a request without a `response`",
    ),
    (Interaction("request", None), "interactions[1]", "empty interaction"),
    (
        Interaction("request", {"method": "x"}, server=(ServerItem("notification", {"params": {}}),)),
        "interactions[1].server[0].notification",
        "`method` string",
    ),
]


@pytest.mark.parametrize(("interaction", "place", "problem"), BUILT_WRONG)
def test_a_cassette_built_in_code_that_load_would_refuse_is_never_saved(
    tmp_path: Path, interaction: Interaction, place: str, problem: str
) -> None:
    good = cassette.load(str(SHIPPED / "notes.yaml"))
    target = tmp_path / "c.yaml"
    cassette.save(good, str(target))
    before = target.read_bytes()
    bad = good._replace(interactions=(good.interactions[0], interaction))
    with pytest.raises(CassetteError) as error:
        cassette.save(bad, str(target))
    assert (error.value.place, error.value.path) == (place, str(target)) and problem in error.value.problem
    assert target.read_bytes() == before, "the old cassette stays as it was"
    with pytest.raises(CassetteError) as checked:
        validation.from_data(bad.to_data(), bad.path)
    assert checked.value.place == place
    with pytest.raises(CassetteError):
        cassette.save(bad, str(tmp_path / "new.yaml"))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.yaml"], "nothing written, no temporary file left"


def test_the_checked_constructor_raises_at_once_with_the_place() -> None:
    data = {"version": 1, "interactions": [{"request": {"method": "x"}, "response": {"result": {}, "error": {}}}]}
    with pytest.raises(CassetteError) as error:
        cassette.from_data(data, "built.yaml")
    assert error.value.render() == (
        "built.yaml: interactions[0].response: a response has exactly one of `result` and `error`\n"
        "  how to fix: keep the one the server sent"
    )
    built = cassette.from_data(
        {"version": 1, "interactions": [{"request": {"method": "x"}, "response": {"result": {}}}]}
    )
    assert validation.from_data(built.to_data(), built.path) == built
    assert cassette.loads(cassette.dump(built)).interactions == built.interactions


def test_the_model_imports_no_validation() -> None:
    # The model is what validation builds; importing validation from the model made a cycle.
    code = "import sys, mockmcp.cassette.model; print(sorted(m for m in sys.modules if m.startswith('mockmcp')))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=30, env=child_env())
    assert done.returncode == 0, done.stderr
    assert "mockmcp.cassette.validation" not in done.stdout and "mockmcp.cassette.store" not in done.stdout


# --- what is and is not "not valid YAML" -----------------------------------------------------------


def test_a_value_the_yaml_cannot_hold_is_a_located_cassette_error() -> None:
    with pytest.raises(CassetteError) as error:
        cassette.loads(HEAD + "- request: {method: x, params: {n: " + "1" * 5000 + "}}\n", "big.yaml")
    assert error.value.path == "big.yaml" and "cannot be read" in error.value.problem
    with pytest.raises(CassetteError, match="not valid YAML"):
        cassette.loads(HEAD + "- request: {method: x, params: {n: !!binary xx}}\n")


def test_a_bug_of_ours_while_parsing_is_not_called_bad_yaml(monkeypatch: pytest.MonkeyPatch) -> None:
    def buggy(text: str) -> object:
        raise KeyError("a bug")

    monkeypatch.setattr(yamlfile, "load", buggy)
    with pytest.raises(KeyError):
        cassette.loads(HEAD)


LINES = """\
version: 1
interactions:
- request:
    method: tools/call
    params: {name: a}
  response: {result: {}}
- request: {method: x}
  request: {method: y}
"""


@pytest.mark.parametrize(
    ("place", "line"),
    [
        ((), 1),
        (("interactions",), 2),  # a mapping entry is where its key is
        (("interactions", 0, "request", "params", "name"), 5),
        (("interactions", 0, "response", "result", "nowhere", 2), 6),  # the deepest parent that exists
        (("interactions", 1, "request"), 8),  # a duplicated key: the last, as loading keeps it
        (("interactions", 9), 2),
        (("nowhere",), 1),
    ],
)
def test_the_line_of_a_place(place: tuple[str | int, ...], line: int) -> None:
    assert yamlfile.line_of(LINES, place) == line
    assert yamlfile.line_of("version: [\n", place) is None


@pytest.mark.parametrize("header", ['{"mockmcp_journal": 2}', "[1]", '"text"', "{not json"])
def test_a_file_that_is_no_journal_is_refused_even_under_python_o(tmp_path: Path, header: str) -> None:
    # `python -O` removes asserts: the check must not be one.
    (tmp_path / "c.yaml.journal").write_text(header + "\n")
    done = subprocess.run(
        [sys.executable, "-O", "-m", "mockmcp", "recover", str(tmp_path / "c.yaml")],
        capture_output=True,
        text=True,
        timeout=30,
        env=child_env(),
    )
    assert done.returncode == 2 and "c.yaml.journal:1: not a mockmcp journal" in done.stderr, done.stderr
    assert not (tmp_path / "c.yaml").exists()


def test_what_a_server_adds_to_a_response_is_recorded_saved_and_loaded(tmp_path: Path) -> None:
    recorder = Recorder()
    recorder.feed(CLIENT, b'{"jsonrpc":"2.0","id":1,"method":"x"}', 0.0)
    recorder.feed(SERVER, b'{"jsonrpc":"2.0","id":1,"result":{},"vendor":{"trace":"t"}}', 0.1)
    target = tmp_path / "c.yaml"
    cassette.save(recorder.cassette(), str(target))
    assert cassette.load(str(target)).interactions[0].response == {"result": {}, "vendor": {"trace": "t"}}


def test_atomic_write_keeps_the_mode_writes_through_a_link_and_syncs_file_and_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import stat

    from mockmcp.cassette import files

    elsewhere = tmp_path / "shared"
    elsewhere.mkdir()
    target = elsewhere / "c.yaml"
    target.write_text("old\n")
    target.chmod(0o600)
    link = tmp_path / "c.yaml"
    link.symlink_to(target)
    synced: list[bool] = []
    real_fsync = os.fsync

    def fsync(fd: int) -> None:
        synced.append(stat.S_ISDIR(os.fstat(fd).st_mode))
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    files.atomic_write(str(link), "new\n")
    assert link.is_symlink() and os.readlink(link) == str(target)  # the link stays, its target is replaced
    assert target.read_text() == "new\n" and stat.S_IMODE(target.stat().st_mode) == 0o600
    assert synced == [False, True]  # the file before the rename, its folder after it
    assert sorted(p.name for p in elsewhere.iterdir()) == ["c.yaml"]  # no temporary file left
