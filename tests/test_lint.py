"""`mockmcp lint`: a table of broken cassettes with the exact finding each gets, the shipped
cassettes linting clean, credentials, unreadable files, and the command's output and exit codes."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import MOCKMCP, ROOT, SHIPPED, child_env

from mockmcp._wire import protocol
from mockmcp._wire.words import render_place
from mockmcp.cassette import shapes, yamlfile
from mockmcp.cli.app import cli
from mockmcp.tools import _lint as lint

HEAD = "version: 1\ninteractions:\n"
STATELESS = "version: 1\nmeta: {era: stateless}\ninteractions:\n"
# A tools/list offering one tool, read_file: lines 3-7 of the cassette.
TOOLS = (
    HEAD
    + "- request: {id: 1, method: tools/list}\n  response:\n    result:\n      tools:\n"
    + "      - {name: read_file, inputSchema: {}}\n"
)
CALL = "- request:\n    method: tools/call\n    params: {name: %s}\n  response:\n"  # 4 lines

# Fake credentials, built here so that no secret-shaped literal sits in the repository.
FAKE = {
    "openai": "sk-proj-" + "Ab3d" * 6,
    "anthropic": "sk-ant-api03-" + "Xy9_" * 6,
    "github": "ghp_" + "a1B2" * 9,
    "github_pat": "github_pat_" + "11AB" * 6,
    "aws": "AKIA" + "IOSFODNN7EXAMPLE",
    "slack": "xoxb-" + "1234-5678-abcd",
    "google": "AIza" + "Sy" + "A1b2C3" * 5 + "d4e",
    "jwt": "eyJhbGciOiJIUzI1NiJ9" + ".eyJzdWIiOiIxMjM0NTY3ODkwIn0" + ".dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
    "bearer": "Bearer " + "tok." + "Zz9" * 6,
    "key": "-----BEGIN RSA " + "PRIVATE KEY-----",
}
TEXT_RESULT = "  response:\n    result:\n      content:\n      - type: text\n        text: '%s'\n"  # text on line +4

BROKEN = [
    # (cassette text, line, place, severity, words of the problem) -- the one finding it gets.
    # A substitution replay would fill in from what its user gives: a credential's name, or another one used.
    (
        "version: 1\nmeta:\n  substitute: [PROJECT, GITHUB_TOKEN]\n"
        + HEAD[11:]
        + "- request: {method: x}\n  response: {result: {t: 'token=${GITHUB_TOKEN}'}}\n",
        3,
        "meta.substitute[1]",
        "error",
        "GITHUB_TOKEN reads like a credential's name, and replay puts the value it is given",
    ),
    (  # PWD is the shell's working folder: a machine value, as DATA
        "version: 1\nmeta:\n  substitute: [PWD]\n"
        + HEAD[11:]
        + "- request: {method: x, params: {p: '${PWD}/a'}}\n  response: {result: {}}\n",
        3,
        "meta.substitute[0]",
        "warning",
        "replay refuses the cassette until its user gives PWD",
    ),
    (
        "version: 1\nmeta:\n  substitute: [DATA]\n"
        + HEAD[11:]
        + "- request: {method: x, params: {p: '${DATA}'}}\n  response: {result: {}}\n",
        3,
        "meta.substitute[0]",
        "warning",
        "replay refuses the cassette until its user gives DATA",
    ),
    (  # the eras the recorded server speaks: a list of handshake and stateless
        "version: 1\nmeta:\n  server_eras: [handshake, 2026-07-28]\n"
        + HEAD[11:]
        + "- request: {method: x}\n  response: {result: {}}\n",
        3,
        "meta.server_eras",
        "warning",
        "meta.server_eras lists the eras the recorded server speaks, got ['handshake', '2026-07-28']",
    ),
    # Structure, exactly as replay loads it:
    ("version: 1\ninteractions: [\n", 3, "", "error", "not valid YAML"),
    (
        HEAD + "- request: {method: tools/list}\n  respnse: {result: {}}\n",
        4,
        "interactions[0].respnse",
        "error",
        "unknown key 'respnse'",
    ),
    (HEAD + "- request: {id: null, method: ping}\n", 3, "interactions[0].request.id", "error", "bad `id`"),
    (
        HEAD + "- notification: {id: 1, method: notifications/initialized}\n",
        3,
        "interactions[0].notification.id",
        "error",
        "bad `id`",
    ),
    (
        HEAD + "- request: {method: ping}\n  response: {result: {}, error: {code: 1, message: m}}\n",
        4,
        "interactions[0].response",
        "error",
        "exactly one of `result` and `error`",
    ),
    (
        HEAD + "- request: {method: ping}\n  response:\n    error: {code: '-32601', message: m}\n",
        5,
        "interactions[0].response.error.code",
        "error",
        "must be an integer",
    ),
    # JSON-RPC shapes the format tolerates:
    (
        HEAD + "- request: {id: 1, method: ping}\n  response:\n    id: null\n    result: {}\n",
        5,
        "interactions[0].response.id",
        "error",
        "never null",
    ),
    (
        HEAD + "- request: {id: 1, method: ping}\n  response:\n    id: '1'\n    result: {}\n",
        5,
        "interactions[0].response.id",
        "warning",
        "is not the request's id 1",
    ),
    (
        HEAD + "- request: {method: ping}\n  response:\n    result: 3\n",
        5,
        "interactions[0].response.result",
        "error",
        "a result must be an object",
    ),
    (
        HEAD + "- request: {method: x}\n  response:\n    error:\n      code: -32500\n      message: m\n",
        6,
        "interactions[0].response.error.code",
        "warning",
        "-32500 is in the range JSON-RPC reserves",
    ),
    (
        HEAD + "- request: {method: x}\n  response:\n    error:\n      code: 1\n      message: m\n      detail: d\n",
        8,
        "interactions[0].response.error.detail",
        "warning",
        "unknown key 'detail' in a JSON-RPC error",
    ),
    (
        HEAD + "- request: {method: x}\n  response:\n    result: {}\n    eror: {code: 1, message: m}\n",
        6,
        "interactions[0].response.eror",
        "error",
        "unknown key 'eror' in a JSON-RPC response; did you mean `error`?",
    ),
    (
        HEAD
        + "- request:\n    method: tools/call\n    parms: {name: read_file}\n  response: {result: {content: []}}\n",
        5,
        "interactions[0].request.parms",
        "error",
        "unknown key 'parms' in a JSON-RPC message; did you mean `params`?",
    ),
    (
        HEAD + "- request:\n    method: tools/list\n    params: [1]\n  response: {result: {tools: []}}\n",
        5,
        "interactions[0].request.params",
        "warning",
        "`params` is a list",
    ),
    (
        HEAD + "- request:\n    method: ping\n    jsonrpc: '1.0'\n  response: {result: {}}\n",
        5,
        "interactions[0].request.jsonrpc",
        "error",
        'JSON-RPC 2.0 requires "2.0"',
    ),
    (
        HEAD
        + "- server:\n  - request: {id: 1, method: roots/list}\n    response:\n      error: {code: -32099.5, message: m}\n",  # noqa: E501 (a literal message, as on the wire)
        6,
        "interactions[0].server[0].response.error.code",
        "error",
        "must be an integer",
    ),
    (
        HEAD
        + "- server:\n  - request: {id: 1, method: roots/list}\n    response:\n      error: {code: -32200, message: m}\n",  # noqa: E501 (a literal message, as on the wire)
        6,
        "interactions[0].server[0].response.error.code",
        "warning",
        "-32200 is in the range",
    ),
    # MCP shapes:
    (
        HEAD + CALL % "x" + "    result: [1]\n",
        7,
        "interactions[0].response.result",
        "error",
        "a result must be an object",
    ),
    (
        TOOLS + CALL % "read_file" + "    result: {isError: false}\n",
        12,
        "interactions[1].response.result",
        "error",
        "a tools/call result needs `content`",
    ),
    (
        TOOLS + CALL % "read_file" + "    result:\n      content: hello\n",
        13,
        "interactions[1].response.result.content",
        "error",
        "`content` is a list, not a string",
    ),
    (
        TOOLS + CALL % "read_file" + "    result:\n      content:\n      - text: hi\n",
        14,
        "interactions[1].response.result.content[0]",
        "error",
        "a content block needs a `type` string",
    ),
    (
        TOOLS + CALL % "read_file" + "    result:\n      content: []\n      isError: 'yes'\n",
        14,
        "interactions[1].response.result.isError",
        "error",
        "must be true or false, not 'yes'",
    ),
    (
        HEAD
        + "- request:\n    method: tools/list\n    params:\n      _meta: {io.modelcontextprotocol/protocolVersion: '2026-07-28'}\n"  # noqa: E501 (a literal message, as on the wire)
        "  response:\n    result: {tools: []}\n",
        8,
        "interactions[0].response.result",
        "warning",
        "without `resultType`",
    ),
    (
        STATELESS
        + "- request: {method: tools/list}\n  response:\n    result:\n      tools: []\n      resultType: done\n",
        8,
        "interactions[0].response.result.resultType",
        "error",
        "unknown `resultType` 'done'",
    ),
    (
        STATELESS
        + "- request: {method: tools/call, params: {name: a}}\n  server:\n  - request: {id: 1, method: roots/list}\n"
        "  response:\n    result: {content: [], resultType: complete}\n",
        6,
        "interactions[0].server[0].request",
        "warning",
        "server-to-client request in the 2026-07-28 era",
    ),
    (
        STATELESS + "- request: {method: tools/call, params: {name: a}}\n  server:\n  - notification: {method: n}\n"
        "    stream: get\n  response:\n    result: {content: [], resultType: complete}\n",
        7,
        "interactions[0].server[0].stream",
        "warning",
        "`stream: get` in the 2026-07-28 era, which has no GET stream",
    ),
    # Layer confusion:
    (
        TOOLS + CALL % "read_file" + "    error: {code: -32603, message: disk full}\n",
        12,
        "interactions[1].response.error",
        "warning",
        "offered tool 'read_file' answered with JSON-RPC error -32603",
    ),
    (
        TOOLS + CALL % "read_file" + "    error: {code: -32001, message: upstream said no}\n",
        12,
        "interactions[1].response.error",
        "warning",
        "JSON-RPC error -32001",
    ),
    (
        TOOLS + CALL % "reed_file" + "    result:\n      content: []\n      isError: true\n",
        14,
        "interactions[1].response.result.isError",
        "warning",
        "'reed_file', a tool the cassette's tools/list does not offer",
    ),
    (
        TOOLS
        + "- request:\n    method: tools/call\n    params: {arguments: {}}\n  response:\n    result:\n      content: []\n      isError: true\n",  # noqa: E501 (a literal message, as on the wire)
        14,
        "interactions[1].response.result.isError",
        "warning",
        "no tool `name`",
    ),
    # Duplicate keys, at the second one:
    (
        HEAD + "- request: {method: ping}\n  response:\n    result: {}\n    result: {_meta: {}}\n",
        6,
        "interactions[0].response.result",
        "error",
        "duplicate key 'result' (first on line 5)",
    ),
    ("version: 1\nversion: 1\ninteractions: []\n", 2, "version", "error", "duplicate key 'version'"),
    # Credentials, with the place of the value that holds them:
    *[
        (
            HEAD + "- request: {method: x}\n" + TEXT_RESULT % secret,
            8,
            "interactions[0].response.result.content[0].text",
            "warning",
            kind,
        )
        for secret, kind in [
            (FAKE["openai"], "an OpenAI-style API key (sk-p...)"),
            (FAKE["anthropic"], "an Anthropic API key (sk-a...)"),
            (FAKE["github"], "a GitHub token (ghp_...)"),
            (FAKE["github_pat"], "a GitHub fine-grained token (gith...)"),
            (FAKE["aws"], "an AWS access key id (AKIA...)"),
            (FAKE["slack"], "a Slack token (xoxb...)"),
            (FAKE["google"], "a Google API key (AIza...)"),
            (FAKE["jwt"], "a JSON Web Token (eyJh...)"),
            ("Authorization: " + FAKE["bearer"], "a bearer token (tok....)"),
            (FAKE["key"], "a private key (----...)"),
        ]
    ],
    (
        HEAD
        + "- request:\n    method: tools/call\n    params:\n      name: fetch\n"
        + f"      arguments: {{headers: {{Authorization: '{FAKE['bearer']}'}}}}\n"
        + "  response: {result: {content: []}}\n",
        7,
        "interactions[0].request.params.arguments.headers.Authorization",
        "warning",
        "a bearer token",
    ),
    ("# recorded with " + FAKE["github"] + "\nversion: 1\ninteractions: []\n", 1, "", "warning", "a GitHub token"),
    # A credential in a hand-written meta.server (recording keeps none), at its word:
    *[
        (f"version: 1\nmeta:\n  server:\n  - srv\n  - {word}\ninteractions: []\n", 5, "meta.server[1]", "warning", why)
        for word, why in [
            ("--token=t0ken-of-mine", "the value of --token"),
            ("'postgres://app:hunter2@db/app'", "a URL's password"),
            ("'https://user:pw@example.com/mcp'", "a URL's password"),
            ("'redis://cache/0?password=hunter2'", "a URL's ?password="),
            (FAKE["github"], "a GitHub token (ghp_...)"),  # one finding: the scan's
        ]
    ],
    (
        "version: 1\nmeta: {server: [srv, --api-key, k3y]}\ninteractions: []\n",
        2,
        "meta.server[2]",
        "warning",
        "--api-key",
    ),
]

CLEAN = [
    # (why it is fine, cassette text): no finding at all.
    (
        "a server's command line as recording keeps it",
        "version: 1\nmeta: {server: [srv, --api-key, '[REDACTED]', --token, '${TOKEN}', --sort-key, name,"
        " 'postgres://app:[REDACTED]@db/app', --no-auth, x]}\ninteractions: []\n",
    ),
    (
        "an error with data, and mockmcp's own -32099",
        HEAD + "- request: {method: x}\n  response:\n    error: {code: -32099, message: m, data: {a: 1}}\n",
    ),
    (
        "an application error code outside the reserved range",
        HEAD + "- request: {method: x}\n  response:\n    error: {code: 404, message: m}\n",
    ),
    (
        "an unknown tool answered -32602",
        TOOLS + CALL % "reed_file" + "    error: {code: -32602, message: 'Unknown tool: reed_file'}\n",
    ),
    (
        "a tool error of an offered tool",
        TOOLS + CALL % "read_file" + "    result: {content: [{type: text, text: gone}], isError: true}\n",
    ),
    (
        "no tools/list: whether the tool exists is unknown",
        HEAD + CALL % "x" + "    result: {content: [], isError: true}\n",
    ),
    (
        "input_required has no content yet",
        STATELESS + "- request: {method: tools/call, params: {name: a}}\n  response:\n"
        "    result: {resultType: input_required, inputRequests: {}, requestState: s}\n",
    ),
    (
        "a handshake cassette whose host probed server/discover first",
        HEAD
        + "- request:\n    method: server/discover\n    params: {_meta: {io.modelcontextprotocol/protocolVersion: '2026-07-28'}}\n"  # noqa: E501 (a literal message, as on the wire)
        "  response: {error: {code: -32601, message: Method not found}}\n- request: {method: tools/list}\n  response: {result: {tools: []}}\n",  # noqa: E501 (a literal message, as on the wire)
    ),
    (
        "values already redacted",
        HEAD
        + "- request: {method: x, params: {auth: 'Bearer [REDACTED:TOKEN]', key: '[REDACTED]', k2: 'sk-[REDACTED]'}}\n"
        + "  response: {result: {}}\n",
    ),
    (
        "key-like runs inside longer words",
        HEAD
        + "- request: {method: x, params: {a: task-0123456789abcdefghijklmn, b: mask-0123456789abcdefghijklmnop}}\n"
        + "  response: {result: {}}\n",
    ),
    ("raw lines are whatever the user wrote", HEAD + '- server:\n  - raw: \'{"id": null, "result": 3}\'\n'),
    (
        "PROJECT, and a name no message uses",
        "version: 1\nmeta: {substitute: [PROJECT, MONKEY_DIR]}\n"
        + HEAD[11:]
        + "- request: {method: x, params: {p: '${PROJECT}/a'}}\n  response: {result: {}}\n",
    ),
]


def findings_of(tmp_path: Path, text: str) -> list[lint.Finding]:
    path = tmp_path / "c.yaml"
    path.write_text(text)
    return lint.lint_file(str(path))


@pytest.mark.parametrize(
    ("text", "line", "place", "severity", "problem"), BROKEN, ids=[f"{case[4]}@{case[1]}" for case in BROKEN]
)
def test_a_broken_cassette_gets_exactly_its_finding(
    tmp_path: Path, text: str, line: int, place: str, severity: str, problem: str
) -> None:
    findings = findings_of(tmp_path, text)
    assert [(f.path, f.line, f.place, f.severity) for f in findings] == [
        (str(tmp_path / "c.yaml"), line, place, severity)
    ], findings
    assert problem in findings[0].problem
    assert findings[0].fix


@pytest.mark.parametrize(("why", "text"), CLEAN, ids=[why for why, _text in CLEAN])
def test_a_sound_cassette_gets_no_finding(tmp_path: Path, why: str, text: str) -> None:
    assert findings_of(tmp_path, text) == []


@pytest.mark.parametrize("name", sorted(path.name for path in SHIPPED.glob("*.yaml")))
def test_every_shipped_cassette_lints_clean(name: str) -> None:
    # Not even a warning: the shipped cassettes are the examples people copy.
    assert lint.lint_file(str(SHIPPED / name)) == []


@pytest.mark.parametrize("name", ["notes.yaml", "notes-2026.yaml"])
def test_lines_come_from_one_parse_but_agree_with_line_of(name: str) -> None:
    text = (SHIPPED / name).read_text()
    lines = yamlfile.lines(yamlfile.nodes(yamlfile.compose(text)))
    for place in [*lines, ("interactions", 3, "response", "result", "nowhere", 2)]:
        assert yamlfile.line_in(lines, place) == yamlfile.line_of(text, place), render_place(place)


def test_a_credential_never_shows_more_than_its_first_characters(tmp_path: Path) -> None:
    text = HEAD + "- request: {method: x}\n" + TEXT_RESULT % ("key " + FAKE["anthropic"])
    rendered = "\n".join(finding.render() for finding in findings_of(tmp_path, text))
    assert FAKE["anthropic"][:5] not in rendered and "(sk-a...)" in rendered
    assert "--redact-env NAME" in rendered and "--redact REGEX" in rendered


def test_a_credential_in_a_broken_file_is_still_reported(tmp_path: Path) -> None:
    findings = findings_of(tmp_path, "version: 1\ninteractions: [\n  {a: '" + FAKE["aws"] + "'\n")
    assert [(f.line, f.place, f.severity) for f in findings] == [(3, "", "warning"), (4, "", "error")]
    assert "AWS" in findings[0].problem and "not valid YAML" in findings[1].problem


def test_a_bearer_jwt_is_one_finding(tmp_path: Path) -> None:
    text = HEAD + "- request: {method: x, params: {auth: 'Bearer " + FAKE["jwt"] + "'}}\n  response: {result: {}}\n"
    findings = findings_of(tmp_path, text)
    assert [finding.problem.split(" (")[0] for finding in findings] == ["a bearer token"]


@pytest.mark.parametrize(
    ("make", "problem"),
    [
        (lambda path: None, "no such cassette"),
        (lambda path: path.mkdir(), "cannot read the cassette"),
        (lambda path: path.write_bytes(b"version: 1\n\xff\xfe\n"), "not UTF-8"),
    ],
)
def test_a_file_that_cannot_be_read_is_one_error_finding(
    tmp_path: Path, make: Callable[[Path], object], problem: str
) -> None:
    path = tmp_path / "c.yaml"
    make(path)
    [finding] = lint.lint_file(str(path))
    assert (finding.line, finding.place, finding.severity) == (None, "", "error") and problem in finding.problem


def test_render_is_file_line_place_severity_problem_then_fix() -> None:
    finding = lint.Finding("c.yaml", 7, "interactions[1].response", "warning", "what is wrong", "do this")
    assert finding.render() == "c.yaml:7: interactions[1].response: warning: what is wrong\n  how to fix: do this"
    assert lint.Finding("c.yaml", None, "", "error", "unreadable", "").render() == "c.yaml: error: unreadable"


def test_summary_counts_files_errors_and_warnings() -> None:
    error, warning = lint.Finding("a", 1, "", "error", "p", "f"), lint.Finding("a", 2, "", "warning", "p", "f")
    assert lint.summary([error, warning, warning], 2) == "2 files: 1 error, 2 warnings"
    assert lint.summary([], 1) == "1 file: 0 errors, 0 warnings"
    assert (
        lint.failed([warning], strict=False),
        lint.failed([warning], strict=True),
        lint.failed([error], strict=False),
    ) == (False, True, True)


# --- the command ----------------------------------------------------------------------------------


def run_lint(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*MOCKMCP, "lint", *args], capture_output=True, text=True, timeout=30, env=child_env(), cwd=ROOT
    )


def test_the_command_passes_clean_cassettes() -> None:
    shipped = sorted(str(path) for path in SHIPPED.glob("*.yaml"))
    proc = run_lint(*shipped)
    *serving, summary = proc.stdout.splitlines()
    assert (proc.returncode, summary, proc.stderr) == (0, f"{len(shipped)} files: 0 errors, 0 warnings", "")
    stateless = ("notes-2026.yaml", "notes-session-2026.yaml", "time.yaml")
    eras = dict.fromkeys(stateless, "the 2026-07-28 era")
    assert serving == [
        f"{path}: serves hosts of {eras.get(Path(path).name, 'the handshake era')} only" for path in shipped
    ]


def test_the_command_fails_on_an_error_and_prints_every_finding_sorted(tmp_path: Path) -> None:
    (tmp_path / "b.yaml").write_text(HEAD + "- request: {method: x}\n  respnse: {result: {}}\n")
    (tmp_path / "a.yaml").write_text(
        "# "
        + FAKE["slack"]
        + "\n"
        + STATELESS
        + "- request: {method: tools/list, params: {_meta: {io.modelcontextprotocol/protocolVersion: '2026-07-28'}}}\n"
        + "  response:\n    result: {tools: []}\n"
    )
    proc = run_lint(str(tmp_path / "b.yaml"), str(tmp_path / "a.yaml"))
    assert proc.returncode == 1, proc.stderr
    lines = proc.stdout.splitlines()
    assert [line.split(": ")[0] for line in lines[:-2:2]] == [
        f"{tmp_path}/a.yaml:1",
        f"{tmp_path}/a.yaml:7",
        f"{tmp_path}/b.yaml:4",
    ]
    assert lines[-2] == f"{tmp_path}/a.yaml: serves hosts of the 2026-07-28 era only"  # b.yaml does not load
    assert lines[0].endswith("warning: a Slack token (xoxb...) left in the cassette; cassettes get committed")
    assert lines[4] == f"{tmp_path}/b.yaml:4: interactions[0].respnse: error: unknown key 'respnse'"
    assert all(line.startswith("  how to fix: ") for line in lines[1:6:2])
    assert lines[-1] == "2 files: 1 error, 2 warnings"


def test_warnings_fail_only_with_strict(tmp_path: Path) -> None:
    path = tmp_path / "w.yaml"
    path.write_text(HEAD + "- request: {method: x}\n  response:\n    error: {code: -32500, message: m}\n")
    assert run_lint(str(path)).returncode == 0
    strict = run_lint("--strict", str(path))
    assert strict.returncode == 1 and strict.stdout.endswith("1 file: 0 errors, 1 warning\n")


SECRETS = [  # (cassette, exit status, what `lint --secrets` prints before its summary)
    (HEAD + "- request: {method: x}\n  respnse: {result: {}}\n", 0, []),  # broken, but no credential in it
    (
        HEAD + "- request: {method: x}\n  respnse: {result: {text: '" + FAKE["github"] + "'}}\n",
        1,
        ["c.yaml:4: interactions[0].respnse.result.text: warning: a GitHub token (ghp_...) left in the cassette;"
         " cassettes get committed"],
    ),
    (
        "version: 1\nmeta:\n  server: [srv, --api-key, hunter2hunter2]\ninteractions: []\n",
        1,
        ["c.yaml:3: meta.server[2]: warning: the server's command line holds the value of --api-key;"
         " cassettes get committed"],
    ),
]  # fmt: skip


@pytest.mark.parametrize(("text", "status", "said"), SECRETS, ids=["no-credential", "github-token", "server-flag"])
def test_lint_secrets_checks_credentials_only_and_fails_on_any(
    text: str, status: int, said: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    Path("c.yaml").write_text(text)
    done = CliRunner().invoke(cli, ["lint", "--secrets", "c.yaml"], prog_name="mockmcp")
    assert done.exit_code == status, done.output
    found = [line for line in done.output.splitlines() if not line.startswith("  how to fix: ")]
    assert found == [*said, f"1 file: 0 errors, {len(said)} warning{'' if len(said) == 1 else 's'}"]


def test_an_unreadable_file_is_a_finding_not_a_crash(tmp_path: Path) -> None:
    proc = run_lint(str(tmp_path / "missing.yaml"), str(tmp_path))
    assert proc.returncode == 1 and proc.stderr == ""
    assert f"{tmp_path}/missing.yaml: error: no such cassette" in proc.stdout
    assert proc.stdout.endswith("2 files: 2 errors, 0 warnings\n")


# --- typos inside messages (the keys of the MCP shapes) and several findings in one pass ------------

# (where the typo sits, as a line of YAML inside a cassette) -> the key, what it is in, the fix.
TYPOS = [
    (CALL % "read_file" + "    result:\n      content: []\n      iserror: true\n", "iserror", "isError"),
    (CALL % "read_file" + "    result:\n      content: []\n      IsError: true\n", "IsError", "isError"),
    (CALL % "read_file" + "    result:\n      content: []\n      isErorr: true\n", "isErorr", "isError"),
    (CALL % "read_file" + "    result:\n      content: []\n      structuredcontent: {}\n", "structuredcontent", None),
    (CALL % "read_file" + "    result:\n      content: [{type: text, txt: hi}]\n", "txt", "text"),
    (CALL % "read_file" + "    result:\n      contnet: []\n      content: []\n", "contnet", "content"),
    (
        "- request: {method: initialize}\n  response:\n"
        "    result: {protocolVersion: '2025-11-25', capabilities: {}, serverinfo: {}}\n",
        "serverinfo",
        "serverInfo",
    ),
    (
        "- request: {method: initialize}\n  response:\n    result:\n      capabilities: {tool: {}}\n"
        "      protocolVersion: '2025-11-25'\n      serverInfo: {name: s, version: '1'}\n",
        "tool",
        "tools",
    ),
    ("- request: {method: tools/list}\n  response:\n    result: {tools: [], nextcursor: b}\n", "nextcursor", None),
    (
        "- request: {method: tools/list}\n  response:\n    result:\n      tools:\n"
        "      - {name: a, inputSchema: {}, annotations: {readOnlyhint: true}}\n",
        "readOnlyhint",
        "readOnlyHint",
    ),
    (
        "- request: {method: tools/call, params: {name: a, _meta: {progresstoken: 1}}}\n"
        "  response: {result: {content: []}}\n",
        "progresstoken",
        "progressToken",
    ),
    ("- request: {method: ping}\n  response: {error: {code: -32000, message: busy, dta: 1}}\n", "dta", "data"),
    (
        "- request: {method: tools/call, params: {name: a}}\n  server:\n"
        "  - notification: {method: notifications/progress, params: {progresToken: 1, progress: 1}}\n"
        "  response: {result: {content: []}}\n",
        "progresToken",
        "progressToken",
    ),
    (
        "- request: {method: tools/call, params: {name: a}}\n  server:\n"
        "  - request: {id: 1, method: elicitation/create, params: {message: ok?}}\n"
        "    response: {result: {acton: accept}}\n  response: {result: {content: []}}\n",
        "acton",
        "action",
    ),
]


@pytest.mark.parametrize(("body", "key", "meant"), TYPOS, ids=[typo[1] for typo in TYPOS])
def test_a_typo_inside_a_message_is_an_error_that_names_the_key_meant(body: str, key: str, meant: str | None) -> None:
    findings = lint.lint_text(HEAD + body, "c.yaml")
    assert [(f.severity, f.place.rsplit(".", 1)[-1]) for f in findings] == [("error", key)], findings
    meant = meant or key.replace("content", "Content").replace("cursor", "Cursor")
    assert findings[0].problem.endswith(f"did you mean `{meant}`?")
    # The line is the key's own, whether its value is a scalar or a block.
    assert f"{key}:" in (HEAD + body).splitlines()[findings[0].line - 1]  # type: ignore[operator]


def test_an_unknown_key_far_from_any_known_one_is_a_warning() -> None:
    text = HEAD + CALL % "read_file" + "    result:\n      content: []\n      vendorExtra: 1\n"
    [finding] = lint.lint_text(text, "c.yaml")
    assert (finding.severity, finding.place) == ("warning", "interactions[0].response.result.vendorExtra")
    assert "unknown key 'vendorExtra' in a tools/call result" in finding.problem
    block = "      content: [{type: image, data: eA==, mimeType: image/png, vendorExtra: 1}]\n"
    [finding] = lint.lint_text(HEAD + CALL % "read_file" + "    result:\n" + block, "c.yaml")
    assert "unknown key 'vendorExtra' in an image content block" in finding.problem
    # A _meta key of the sender's own is no finding at all; only near misses of MCP's are.
    text = HEAD + "- request: {method: ping, params: {_meta: {com.example/trace: 1}}}\n  response: {result: {}}\n"
    assert lint.lint_text(text, "c.yaml") == []


def test_a_broken_file_gets_every_problem_in_one_pass_each_at_its_key() -> None:
    text = (
        HEAD
        + "- request: {method: ping}\n  respnse:\n    result: {}\n"  # line 3: an unknown key, its value a block
        + "- request: {method: ping}\n  delay: -1\n"  # line 6
        + "- request: {method: ping}\n  Times: 2\n"  # line 8
        + CALL % "read_file"  # lines 10-13: a sound interaction, still checked deeper
        + "    result:\n      content: []\n      iserror: true\n"
    )
    findings = lint.lint_text(text, "c.yaml")
    assert [(f.line, f.place, f.problem.split(";")[0]) for f in findings] == [
        (4, "interactions[0].respnse", "unknown key 'respnse'"),
        (7, "interactions[1].delay", "`delay` must be a number of seconds, at least 0"),
        (9, "interactions[2].Times", "unknown key 'Times'"),
        (16, "interactions[3].response.result.iserror", "unknown key 'iserror' in a tools/call result"),
    ]
    assert findings[0].fix.startswith("did you mean `response`?")
    assert findings[2].fix.startswith("did you mean `times`?")


@pytest.mark.parametrize(
    ("key", "meant"),
    [("iserror", "isError"), ("isErorr", "isError"), ("isEror", "isError"), ("isErrorr", "isError"), ("a", None)],
)
def test_a_near_miss_is_a_change_of_case_or_one_edit(key: str, meant: str | None) -> None:
    assert shapes.near(key, ("content", "isError", "a", "b")) == meant


@pytest.mark.parametrize(
    ("body", "fix"),
    [
        ("- request: {method: ping}\n  response: {reslt: {}}\n", "did you mean `result`? rename `reslt` to `result`"),
        ("- request: {method: ping}\n  response: {error: {code: 1, mesage: m}}\n", "did you mean `message`?"),
        ("- request: {methd: ping}\n", "did you mean `method`?"),
    ],
)
def test_a_typo_that_breaks_the_structure_says_what_was_meant(body: str, fix: str) -> None:
    [finding] = lint.lint_text(HEAD + body, "c.yaml")
    assert finding.severity == "error" and finding.fix.startswith(fix)


# --- keys by protocol revision ---------------------------------------------------------------------


def init(version: str, asked: str | None = None) -> str:
    """An answered initialize agreeing on version (the client asking `asked`, by default the same)."""
    return (
        f"- request: {{method: initialize, params: {{protocolVersion: '{asked or version}'}}}}\n"
        f"  response: {{result: {{protocolVersion: '{version}', capabilities: {{}},"
        f" serverInfo: {{name: s, version: '1'}}}}}}\n"
    )


def stateless(method: str, params: str = "") -> str:
    """A 2026-07-28 request: its version in its `_meta`."""
    meta = f"_meta: {{{protocol.PROTOCOL_VERSION_KEY}: '2026-07-28'}}"
    return f"- request: {{method: {method}, params: {{{params}{meta}}}}}\n"


DISCOVER = (
    stateless("server/discover")
    + "  response: {result: {supportedVersions: ['2026-07-28'], capabilities: {}, resultType: complete}}\n"
)

# (cassette body, the place of the key, the problem's words): the one finding each gets, a warning.
OTHER_REVISION = [
    (
        init("2025-11-25") + CALL % "a" + "    result: {content: [], resultType: complete}\n",
        "interactions[1].response.result.resultType",
        "`resultType` in a tools/call result is a 2026-07-28 key; this session speaks 2025-11-25",
    ),
    (
        init("2025-06-18") + CALL % "a" + "    result: {content: [], inputRequests: {}}\n",
        "interactions[1].response.result.inputRequests",
        "`inputRequests` in a tools/call result is a 2026-07-28 key; this session speaks 2025-06-18",
    ),
    (
        init("2025-11-25") + "- request: {method: tools/list}\n  response: {result: {tools: [], ttlMs: 0}}\n",
        "interactions[1].response.result.ttlMs",
        "`ttlMs` in a tools/list result is a 2026-07-28 key; this session speaks 2025-11-25",
    ),
    (
        init("2025-03-26")
        + "- request: {method: tools/list}\n  response: {result: {tools: [{name: a, title: A, inputSchema: {}}]}}\n",
        "interactions[1].response.result.tools[0].title",
        "`title` in a tool is a key of 2025-06-18 and later; this session speaks 2025-03-26",
    ),
    (
        "- request: {method: initialize, params: {protocolVersion: '2024-11-05'}}\n"
        "  response: {result: {protocolVersion: '2024-11-05', capabilities: {completions: {}}, serverInfo: {name: s, version: '1'}}}\n",  # noqa: E501
        "interactions[0].response.result.capabilities.completions",
        "`completions` in the server's capabilities is a key of 2025-03-26 and later; this session speaks 2024-11-05",
    ),
    (
        init("2025-06-18")
        + "- request: {method: tools/call, params: {name: a, task: {ttl: 1}}}\n  response: {result: {content: []}}\n",
        "interactions[1].request.params.task",
        "`task` in the params of tools/call is a 2025-11-25 key; this session speaks 2025-06-18",
    ),
    (
        DISCOVER
        + stateless("tools/list")
        + "  response: {result: {resultType: complete,"
        + " tools: [{name: a, inputSchema: {}, execution: {taskSupport: optional}}]}}\n",
        "interactions[1].response.result.tools[0].execution",
        "`execution` in a tool is a 2025-11-25 key; this session speaks 2026-07-28",
    ),
    (
        DISCOVER
        + stateless("tools/call", "name: a, task: {}, ")
        + "  response: {result: {content: [], resultType: complete}}\n",
        "interactions[1].request.params.task",
        "`task` in the params of tools/call is a 2025-11-25 key; this session speaks 2026-07-28",
    ),
    (
        init("2024-11-05")
        + "- request: {method: tools/call, params: {name: a}}\n  server:\n"
        + "  - notification: {method: notifications/progress, params: {progressToken: 1, progress: 1, message: half}}\n"
        + "  response: {result: {content: []}}\n",
        "interactions[1].server[0].notification.params.message",
        "`message` in the params of notifications/progress is a key of 2025-03-26 and later; "
        "this session speaks 2024-11-05",
    ),
]


@pytest.mark.parametrize(
    ("body", "place", "words"), OTHER_REVISION, ids=[case[1].rsplit(".", 1)[-1] for case in OTHER_REVISION]
)
def test_a_key_of_another_revision_is_a_warning_naming_the_revision_that_has_it(
    body: str, place: str, words: str
) -> None:
    [finding] = lint.lint_text(HEAD + body, "c.yaml")
    assert (finding.severity, finding.place, finding.problem) == ("warning", place, words)
    assert finding.fix.startswith("remove it: a ") and finding.fix.endswith(" host does not read it")


# (cassette body, the place, the problem's words, the fix): a method, a `_meta` key or a content type
# of other revisions than the session's, a warning.
OTHER_REVISION_NAMES = [
    (
        DISCOVER + stateless("ping") + "  response: {result: {resultType: complete}}\n",
        "interactions[1].request.method",
        "`ping` is a method of 2024-11-05 to 2025-11-25; this session speaks 2026-07-28",
        "remove it, or record this session against a server that speaks 2024-11-05 to 2025-11-25",
    ),
    (
        init("2025-06-18") + "- request: {method: tasks/list}\n  response: {result: {tasks: []}}\n",
        "interactions[1].request.method",
        "`tasks/list` is a 2025-11-25 method; this session speaks 2025-06-18",
        "remove it, or record this session against a server that speaks 2025-11-25",
    ),
    (
        init("2025-03-26")
        + "- request: {method: tools/call, params: {name: a}}\n  server:\n"
        + "  - request: {id: 0, method: elicitation/create, params: {message: m}}\n"
        + "    response: {result: {action: accept}}\n  response: {result: {content: []}}\n",
        "interactions[1].server[0].request.method",
        "`elicitation/create` is a method of 2025-06-18 to 2025-11-25; this session speaks 2025-03-26",
        "remove it, or record this session against a server that speaks 2025-06-18 to 2025-11-25",
    ),
    (
        init("2025-11-25")
        + "- request: {method: tools/list, params: {_meta: {io.modelcontextprotocol/logLevel: debug}}}\n"
        + "  response: {result: {tools: []}}\n",
        'interactions[1].request.params._meta["io.modelcontextprotocol/logLevel"]',
        "`io.modelcontextprotocol/logLevel` in `_meta` is a 2026-07-28 key; this session speaks 2025-11-25",
        "remove it: a 2025-11-25 host does not read it",
    ),
    (
        DISCOVER
        + stateless("tools/call", "name: a, ")
        + "  response:\n    result:\n      content: []\n      resultType: complete\n"
        + "      _meta: {io.modelcontextprotocol/related-task: {}}\n",
        'interactions[1].response.result._meta["io.modelcontextprotocol/related-task"]',
        "`io.modelcontextprotocol/related-task` in `_meta` is a 2025-11-25 key; this session speaks 2026-07-28",
        "remove it: a 2026-07-28 host does not read it",
    ),
    (
        init("2024-11-05") + CALL % "a" + "    result: {content: [{type: audio, data: AA, mimeType: audio/wav}]}\n",
        "interactions[1].response.result.content[0].type",
        "`audio` in a content block is a content type of 2025-03-26 and later; this session speaks 2024-11-05",
        "use one of 2024-11-05's: text, image, resource",
    ),
    (
        init("2025-03-26") + CALL % "a" + "    result: {content: [{type: resource_link, uri: 'file:///a', name: a}]}\n",
        "interactions[1].response.result.content[0].type",
        "`resource_link` in a content block is a content type of 2025-06-18 and later; this session speaks 2025-03-26",
        "use one of 2025-03-26's: text, image, audio, resource",
    ),
]


@pytest.mark.parametrize(
    ("body", "place", "words", "fix"),
    OTHER_REVISION_NAMES,
    ids=["ping", "tasks", "elicitation", "logLevel", "related-task", "audio", "resource_link"],
)
def test_a_method_meta_key_or_content_type_of_another_revision_is_a_warning(
    body: str, place: str, words: str, fix: str
) -> None:
    [finding] = lint.lint_text(HEAD + body, "c.yaml")
    assert (finding.severity, finding.place, finding.problem, finding.fix) == ("warning", place, words, fix)


def test_the_auto_hosts_discover_probe_in_a_handshake_session_is_its_own_revision() -> None:
    probe = stateless("server/discover") + "  response: {error: {code: -32601, message: Method not found}}\n"
    assert lint.lint_text(HEAD + probe + init("2025-11-25"), "c.yaml") == []


# (cassette body, the place of the key, the problem's words, the fix): the opening answer of one era
# written with a key of the other's.
OTHER_OPENING = [
    (
        stateless("server/discover")
        + "  response: {result: {protocolVersion: '2026-07-28', capabilities: {}, resultType: complete}}\n",
        "interactions[0].response.result.protocolVersion",
        "`protocolVersion` in a server/discover result is a key of the initialize result (2024-11-05 to 2025-11-25); "
        "this session speaks 2026-07-28",
        "write `supportedVersions` instead",
    ),
    (
        stateless("server/discover")
        + "  response: {result: {supportedVersions: ['2026-07-28'], capabilities: {}, serverInfo: {name: s}, resultType: complete}}\n",  # noqa: E501
        "interactions[0].response.result.serverInfo",
        "`serverInfo` in a server/discover result is a key of the initialize result (2024-11-05 to 2025-11-25); "
        "this session speaks 2026-07-28",
        f'write `_meta["{protocol.SERVER_INFO_KEY}"]` instead',
    ),
    (
        "- request: {method: initialize, params: {protocolVersion: '2025-11-25'}}\n"
        "  response: {result: {protocolVersion: '2025-11-25', supportedVersions: ['2025-11-25'], capabilities: {},"
        " serverInfo: {name: s, version: '1'}}}\n",
        "interactions[0].response.result.supportedVersions",
        "`supportedVersions` in an initialize result is a key of the server/discover result (2026-07-28); "
        "this session speaks 2025-11-25",
        "write `protocolVersion` instead",
    ),
]


@pytest.mark.parametrize(("body", "place", "words", "fix"), OTHER_OPENING, ids=["discover", "serverInfo", "initialize"])
def test_a_key_of_the_other_eras_opening_answer_says_what_this_one_says(
    body: str, place: str, words: str, fix: str
) -> None:
    *refused, finding = lint.lint_text(HEAD + body, "c.yaml")
    assert (finding.severity, finding.place, finding.problem, finding.fix) == ("warning", place, words, fix)
    if refused:  # written instead of the key this result needs: a host refuses it, and so does loading
        [(severity, problem, hint)] = [(error.severity, error.problem, error.fix) for error in refused]
        assert severity == "error" and problem == "a server/discover result needs `supportedVersions`"
        assert hint == "`protocolVersion` is the other era's opening answer's key: write `supportedVersions` instead"


# (why it is fine, cassette body): no finding at all.
SAME_REVISION = [
    (
        "a session that names no revision knows every revision's keys",
        CALL % "a" + "    result: {content: [], resultType: complete, structuredContent: {}}\n",
    ),
    (
        "a version mockmcp does not know is not judged",
        init("2099-01-01") + CALL % "a" + "    result: {content: [], resultType: complete}\n",
    ),
    (
        "the initialize request speaks the version it asks, its answer the one agreed",
        "- request:\n    method: initialize\n"
        "    params: {protocolVersion: '2025-11-25', clientInfo: {name: h, version: '1', title: H}}\n"
        "  response:\n    result:\n      protocolVersion: '2025-03-26'\n"
        "      capabilities: {completions: {}}\n      serverInfo: {name: s, version: '1'}\n",
    ),
    (
        "each recorded session by its own revision",
        init("2025-06-18")
        + CALL % "a"
        + "    result: {content: [], structuredContent: {}}\n"
        + DISCOVER.replace("- request:", "- session: 1\n  request:")
        + "- session: 1\n"
        + stateless("tools/list").replace("- request:", "  request:")
        + "  response: {result: {tools: [], resultType: complete, ttlMs: 0, cacheScope: private}}\n",
    ),
]


@pytest.mark.parametrize(("why", "body"), SAME_REVISION, ids=[why for why, _body in SAME_REVISION])
def test_keys_of_the_sessions_own_revision_get_no_finding(why: str, body: str) -> None:
    assert lint.lint_text(HEAD + body, "c.yaml") == []


def test_a_typo_of_a_key_of_another_revision_stays_an_error() -> None:
    text = HEAD + init("2025-11-25") + CALL % "a" + "    result: {content: [], resulttype: complete}\n"
    [finding] = lint.lint_text(text, "c.yaml")
    assert finding.severity == "error" and finding.problem.endswith("did you mean `resultType`?")


def test_the_spans_name_revisions_in_order_and_keys_their_shapes_hold() -> None:
    for scope, spans in shapes.SPANS.items():
        kind, _, method = scope.partition(":")
        table = {"params": shapes.PARAMS, "result": shapes.RESULTS}.get(kind)
        for key, (first, last) in spans.items():
            assert protocol.REVISIONS.index(first) <= protocol.REVISIONS.index(last), (scope, key)
            if table is not None and method:
                assert key in table[method], (scope, key)
            elif table is not None:
                assert any(key in shape for shape in table.values()), (scope, key)
            elif kind == "content" and method:
                assert key in shapes.CONTENT_TYPES[method], (scope, key)
            elif scope == "content_type":
                assert key in shapes.CONTENT_TYPES, key
            elif scope == "meta":
                assert key in shapes.META_KEYS, key
            elif scope == "method":
                assert key in shapes.PARAMS or key.startswith(("tasks/", "notifications/", "subscriptions/")), key
            else:
                assert key in shapes.SHAPES[scope], (scope, key)


# --- a request written without a version in a 2026-07-28 session speaks that era (a recipe) ------


def test_a_stateless_sessions_request_written_without_its_version_lints_clean_as_replay_matches_it() -> None:
    # Replay matches it as a 2026-07-28 request and gives its result `resultType` (tests/test_eras.py).
    text = HEAD + DISCOVER + "- request: {method: tools/list}\n  response: {result: {tools: []}}\n"
    assert lint.lint_text(text, "c.yaml") == []
    # one that names its version is held to the era's rules as written
    text = HEAD + DISCOVER + stateless("tools/list") + "  response: {result: {tools: []}}\n"
    [finding] = lint.lint_text(text, "c.yaml")
    assert (finding.severity, finding.place) == ("warning", "interactions[1].response.result")
    assert "without `resultType`" in finding.problem


def test_a_handshake_session_needs_no_version_in_its_requests() -> None:
    text = HEAD + init("2025-11-25") + "- request: {method: tools/list}\n  response: {result: {tools: []}}\n"
    assert lint.lint_text(text, "c.yaml") == []


def test_expect_fault_keeps_lint_quiet_about_the_warnings_of_a_deliberate_fault_only() -> None:
    fault = "{id: 1, result: {content: [{type: text, text: x}], isError: true, extra: 1}}"
    text = (
        "version: 1\ninteractions:\n"
        f"- request: {{id: 1, method: tools/call, params: {{name: read, arguments: {{}}}}}}\n  response: {fault}\n"
        f"- request: {{id: 2, method: tools/call, params: {{name: read, arguments: {{}}}}}}\n"
        f"  expect: fault\n  response: {fault}\n"
    )
    findings = lint.lint_text(text, "c.yaml")
    assert [(f.place, f.severity) for f in findings] == [("interactions[0].response.result.extra", lint.WARNING)]
    wrong = lint.lint_text(text.replace("expect: fault", "expect: failure"), "c.yaml")
    assert ("interactions[1].expect", lint.ERROR) in [(f.place, f.severity) for f in wrong]
    assert any("use one of: fault" in f.fix for f in wrong)


def test_a_broken_off_answer_is_a_warning_unless_it_is_a_meant_fault_and_a_bad_drop_an_error() -> None:
    call = "- request: {id: %d, method: tools/call, params: {name: read, arguments: {}}}\n  drop: cut\n"
    text = HEAD + call % 1 + call % 2 + "  expect: fault\n" + (call % 3).replace("drop: cut", "drop: yes please")
    findings = [(f.line, f.place, f.severity) for f in lint.lint_text(text, "c.yaml")]
    assert findings == [(4, "interactions[0].drop", lint.WARNING), (9, "interactions[2].drop", lint.ERROR)]
    said = {f.place: f for f in lint.lint_text(text, "c.yaml")}
    assert "breaks off before its reply (`drop: cut`)" in said["interactions[0].drop"].problem
    assert "expect: fault" in said["interactions[0].drop"].fix
    assert "must be true, false or `cut`" in said["interactions[2].drop"].problem


def test_the_recordings_stand_in_for_an_answer_too_long_says_so_not_that_the_layer_is_wrong() -> None:
    stand_in = (
        "    error:\n      code: -32098\n      message: mockmcp recorded no answer to this tools/call request\n"
        "      data: {size: 40000144, limit: 16777216}\n"
    )
    meant = (CALL % "read_file").replace("- request:", "- expect: fault\n  request:")
    text = TOOLS + CALL % "read_file" + stand_in + meant + stand_in
    [finding] = lint.lint_text(text, "c.yaml")
    assert (finding.place, finding.severity) == ("interactions[1].response.error", lint.WARNING)
    assert "(it was 40,000,144 bytes, over the 16,777,216 a recording keeps of one message)" in finding.problem
    assert "write the answer here by hand" in finding.fix and "expect: fault" in finding.fix
    # Another server error answering an offered tool is still the layer confusion it was.
    [other] = lint.lint_text(TOOLS + CALL % "read_file" + stand_in.replace("-32098", "-32097"), "c.yaml")
    assert "a host raises it, the model never reads it" in other.problem


@pytest.mark.parametrize(("status", "why"), [(502, "the server was gone"), (504, "silent past --upstream-timeout")])
def test_the_recordings_stand_in_for_an_answer_the_server_never_gave_says_so_not_that_it_was_too_long(
    status: int, why: str
) -> None:
    stand_in = (
        "    error:\n      code: -32098\n      message: mockmcp recorded no answer to this tools/call request\n"
        f"      data: {{status: {status}}}\n"
    )
    [finding] = lint.lint_text(TOOLS + CALL % "read_file" + stand_in, "c.yaml")
    assert (finding.place, finding.severity) == ("interactions[1].response.error", lint.WARNING)
    assert f"the server gave none (the host got HTTP {status} from the recording proxy" in finding.problem
    assert why in finding.problem and "bytes" not in finding.problem
    assert "record again with the server up" in finding.fix and "a page at a time" not in finding.fix
    assert "write the answer here by hand" in finding.fix and "expect: fault" in finding.fix


@pytest.mark.parametrize(
    ("meta", "said"),
    [
        ("{}", "serves hosts of the 2026-07-28 era only"),
        (
            "{server_eras: [handshake, stateless]}",
            "serves hosts of both eras: the 2026-07-28 era as recorded, the handshake era translated, as its server "
            "speaks both (meta.server_eras)",
        ),
    ],
    ids=["one-era", "a-server-of-both"],
)
def test_lint_says_which_eras_hosts_a_cassette_serves(tmp_path: Path, meta: str, said: str) -> None:
    path = tmp_path / "c.yaml"
    request = (
        "- request: {method: tools/list, params: {_meta: {io.modelcontextprotocol/protocolVersion: '2026-07-28'}}}\n"
    )
    path.write_text(f"version: 1\nmeta: {meta}\ninteractions:\n{request}  response: {{result: {{tools: []}}}}\n")
    assert lint.serves(str(path)) == f"{path}: {said}"
    assert lint.serves(str(tmp_path / "missing.yaml")) == ""
