"""`mockmcp wrap`'s pure rules, as tables: every host's format read, wrapped, and unwrapped to the same bytes.

No process runs here: `tests/test_wrap_cli.py` runs the command's files, `tests/test_wrap_hosts.py` real hosts.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import PurePosixPath
from typing import Any

import pytest
import yaml

from mockmcp.errors import ConfigError, UsageError
from mockmcp.wrap._configtext import read_json, read_toml, read_yaml
from mockmcp.wrap._hostconfig import detect, host_path, read_config, references
from mockmcp.wrap._rules import cassette_names, derive, expand, local_url, remote, restore, wrapped_command

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

PY = "/opt/py/bin/python"
MOCKMCP = [PY, "-m", "mockmcp"]

# One config per host, as people write them: comments where the format has them, trailing commas,
# unknown keys, env, cwd, disabled flags, a remote server, one mockmcp leaves alone.
CONFIGS: dict[str, tuple[str, str]] = {
    "claude_desktop": (
        "claude_desktop_config.json",
        """{
  "mcpServers": {
    "notes": {
      "command": "python",
      "args": ["notes_server.py", "--root", "${HOME}/notes"],
      "env": {"NOTES_KEY": "s3cret", "EMPTY": ""}
    },
    "time": {"command": "uvx", "args": ["mcp-server-time"]}
  },
  "globalShortcut": "Ctrl+Space"
}
""",
    ),
    "claude_code": (
        ".mcp.json",
        '{"mcpServers":{"github":{"type":"stdio","command":"npx","args":["-y","@modelcontextprotocol/server-github"],'
        '"env":{"GITHUB_TOKEN":"${GITHUB_TOKEN}"}},"api":{"type":"http",'
        '"url":"${API_BASE_URL:-https://api.example.com}/mcp","headers":{"Authorization":"Bearer ${API_KEY}"}}}}',
    ),
    "cursor": (
        "mcp.json",
        """{
    "mcpServers": {
        "files": {
            "command": "node",
            "args": [
                "server.js"
            ],
            "env": {"TOKEN": "${env:FILES_TOKEN}"},
            "disabled": true
        },
        "remote": {"url": "https://mcp.example.com/mcp", "headers": {"X-Key": "${env:REMOTE_KEY}"}},
        "legacy": {"url": "https://old.example.com/sse"}
    }
}
""",
    ),
    "windsurf": (
        "mcp_config.json",
        """{
  "mcpServers": {
    "search": {"serverUrl": "https://search.example.com/mcp/", "disabledTools": ["x"]},
    "db": {"command": "db-mcp", "cwd": "/srv/db"}
  }
}
""",
    ),
    "fastmcp": (
        "fastmcp.json",
        """{"mcpServers": {"weather": {"url": "http://127.0.0.1:8000/mcp", "transport": "http"},
 "local": {"command": "python", "args": ["./server.py", "--verbose"], "env": {"LOG_LEVEL": "DEBUG"},
           "cwd": "/tmp", "keep_alive": false}}}
""",
    ),
    "inspector": (
        "inspector.json",
        """{
  "mcpServers": {
    "everything": {"type": "stdio", "command": "npx", "args": ["@modelcontextprotocol/server-everything"]},
    "http": {"type": "streamable-http", "url": "http://localhost:3001/mcp"},
    "events": {"type": "sse", "url": "http://localhost:3002/events"}
  }
}
""",
    ),
    "vscode": (
        "mcp.json",
        """// .vscode/mcp.json
{
  "inputs": [
    {"type": "promptString", "id": "api-key", "description": "API key", "password": true},
  ],
  "servers": {
    /* the team's server */
    "perplexity": {
      "type": "stdio",
      "command": "npx",
      "args": ["-y", "server-perplexity-ask", "--key", "${input:api-key}", "--dir", "${workspaceFolder}"],
      "env": {"PERPLEXITY_API_KEY": "${input:api-key}"},
      "envFile": "${workspaceFolder}/.env", // read by VS Code
    },
    "github": {"type": "http", "url": "https://api.githubcopilot.com/mcp/"},
  },
}
""",
    ),
    "vscode_settings": (
        "settings.json",
        """{
  "editor.fontSize": 14,
  "mcp": {"servers": {"fetch": {"command": "uvx", "args": ["mcp-server-fetch"]}}}
}
""",
    ),
    "zed": (
        "settings.json",
        """// Zed settings
{
  "theme": "One Dark",
  "context_servers": {
    "postgres": {
      "source": "custom",
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-postgres", "postgres://localhost/db"],
      "env": {}
    },
    "old-style": {
      "command": {"path": "/usr/local/bin/mcp-old", "env": {"OLD_KEY": "k"}}
    },
    "remote": {"url": "https://zed.example.com/mcp", "headers": {"Authorization": "Bearer token"}},
  },
}
""",
    ),
    "goose": (
        "config.yaml",
        """# goose config
GOOSE_PROVIDER: openai
extensions:
  github:
    name: GitHub
    cmd: npx   # the runner
    args:
      - -y
      - "@modelcontextprotocol/server-github"
    enabled: true
    envs: {GITHUB_PERSONAL_ACCESS_TOKEN: "ghp_x"}
    env_keys: [GITHUB_PERSONAL_ACCESS_TOKEN]
    type: stdio
    timeout: 300
  tool:
    cmd: tool-server
    enabled: false
    type: stdio
  web:
    type: streamable_http
    uri: http://localhost:8000/mcp
    enabled: true
  developer:
    type: builtin
    name: developer
""",
    ),
    "codex": (
        "config.toml",
        """# Codex
model = "o3"

[mcp_servers.docs]
command = "npx" # runner
args = [
  "-y", # yes
  "docs-server",
]
env = { "API_KEY" = "value" }
enabled = true

[mcp_servers."time server"]
command = 'uvx'
cwd = "/srv"

[[hooks]]  # an array of tables: its `command` is no server's
command = "notify"

[mcp_servers.figma]
url = "https://mcp.figma.com/mcp"
bearer_token_env_var = "FIGMA_OAUTH_TOKEN"
http_headers = { "X-Region" = "us" }
""",
    ),
    "codex_dotted": (
        "codex.toml",
        """mcp_servers.notes.command = "notes"   # dotted keys
mcp_servers.notes.env.NOTES_KEY = "k"

[mcp_servers.more]
  "command" = "more"
""",
    ),
}

FORMAT = {
    "codex_dotted": "codex",
    "claude_desktop": "mcpServers",
    "claude_code": "mcpServers",
    "cursor": "mcpServers",
    "windsurf": "mcpServers",
    "fastmcp": "mcpServers",
    "inspector": "mcpServers",
    "vscode": "vscode",
    "vscode_settings": "vscode",
    "zed": "zed",
    "goose": "goose",
    "codex": "codex",
}


def wrapped(host: str, replay: bool = False) -> tuple[str, Any, list[Any]]:
    """The derived text of a host's config, the config read, and the edits."""
    path, text = CONFIGS[host]
    config = read_config(text, detect(path, text), path)
    names = cassette_names(config.entries)
    commands = {
        e.name: wrapped_command(config, e, PY, f"/c/{names[e.name]}", replay, "once")
        for e in config.entries
        if e.kind == "stdio"
    }
    urls = {
        e.name: local_url(9000 + n, remote(config, e, 9000 + n, "x").path)
        for n, e in enumerate(config.entries)
        if e.kind in ("http", "sse")
    }
    derived, edits = derive(config, commands, urls)
    return derived, config, edits


def load(fmt: str, text: str) -> Any:
    if fmt == "goose":
        return yaml.safe_load(text)
    if fmt == "codex":
        return tomllib.loads(text)
    return read_config(text, fmt).data


def servers(fmt: str, data: Any) -> dict[str, Any]:
    key = {"mcpServers": "mcpServers", "vscode": "servers", "zed": "context_servers", "goose": "extensions"}
    if fmt == "codex":
        return dict(data["mcp_servers"])
    if fmt == "vscode" and "mcp" in data:
        return dict(data["mcp"]["servers"])
    return dict(data[key[fmt]])


@pytest.mark.parametrize("host", sorted(CONFIGS))
def test_each_format_is_detected_by_name_and_shape(host: str) -> None:
    path, text = CONFIGS[host]
    assert detect(path, text) == FORMAT[host]


@pytest.mark.parametrize("replay", [False, True], ids=["record", "replay"])
@pytest.mark.parametrize("host", sorted(CONFIGS))
def test_wrap_then_unwrap_gives_the_same_bytes(host: str, replay: bool) -> None:
    derived, config, edits = wrapped(host, replay)
    assert derived != config.text
    again = read_config(derived, config.format, "derived")
    restored, left = restore(again, edits)
    assert (restored, left) == (config.text, [])
    assert restored.encode() == CONFIGS[host][1].encode()


@pytest.mark.parametrize("host", sorted(CONFIGS))
def test_the_derived_config_keeps_everything_but_the_wrapped_values(host: str) -> None:
    derived, config, _edits = wrapped(host)
    before, after = load(config.format, config.text), load(config.format, derived)
    kept = {
        k: v
        for k, v in before.items()
        if k not in ("mcpServers", "servers", "context_servers", "extensions", "mcp_servers", "mcp")
    }
    assert {k: after[k] for k in kept} == kept  # settings around the servers, in order
    if config.format == "vscode" and "inputs" in before:
        assert after["inputs"] == before["inputs"]
    old, new = servers(config.format, before), servers(config.format, after)
    assert list(new) == list(old)  # the servers, in their order
    for entry in config.entries:
        changed = {"command", "cmd", "args", "url", "serverUrl", "uri"}
        order = list(old[entry.name])
        if entry.kind == "stdio" and entry.args_place is None and not isinstance(old[entry.name].get("command"), dict):
            order.insert(order.index(entry.command_place[-1]) + 1, "args")  # args go right after the command
        assert list(new[entry.name]) == order
        assert {k: v for k, v in new[entry.name].items() if k not in changed} == {
            k: v for k, v in old[entry.name].items() if k not in changed
        }
    for comment in ("// .vscode/mcp.json", "/* the team's server */", "// read by VS Code", "# goose config"):
        assert (comment in config.text) == (comment in derived)
    assert ("# the runner" in config.text) == ("# the runner" in derived) and ("# yes" in derived) is False


def entry_of(host: str, name: str) -> dict[str, Any]:
    derived, config, _edits = wrapped(host)
    found: dict[str, Any] = servers(config.format, load(config.format, derived))[name]
    return found


# Each kind of entry, and what it becomes: the command line the derived entry runs (or its URL).
ENTRIES = [
    # stdio with args and env: every env key with a value is redacted; ${HOME} stays a reference, substituted
    (
        "claude_desktop",
        "notes",
        [*MOCKMCP, "record", "-o", "/c/notes.yaml", "--record-mode", "once", "--redact-env", "NOTES_KEY"]
        + ["--substitute", "HOME=${HOME}", "python", "notes_server.py", "--root", "${HOME}/notes"],
    ),
    # no args: args are added
    ("windsurf", "db", [*MOCKMCP, "record", "-o", "/c/db.yaml", "--record-mode", "once", "db-mcp"]),
    # VS Code: ${input:...} and ${workspaceFolder} in args, an input in env
    (
        "vscode",
        "perplexity",
        [*MOCKMCP, "record", "-o", "/c/perplexity.yaml", "--record-mode", "once", "--redact-env", "PERPLEXITY_API_KEY"]
        + ["--substitute", "input_api_key=${input:api-key}", "--substitute", "workspaceFolder=${workspaceFolder}"]
        + ["npx", "-y", "server-perplexity-ask", "--key", "${input:api-key}", "--dir", "${workspaceFolder}"],
    ),
    # goose: envs and env_keys
    (
        "goose",
        "github",
        [
            *MOCKMCP,
            "record",
            "-o",
            "/c/github.yaml",
            "--record-mode",
            "once",
            "--redact-env",
            "GITHUB_PERSONAL_ACCESS_TOKEN",
        ]
        + ["npx", "-y", "@modelcontextprotocol/server-github"],
    ),
    # codex: a quoted table name, a literal string
    ("codex", "time server", [*MOCKMCP, "record", "-o", "/c/time_server.yaml", "--record-mode", "once", "uvx"]),
    # zed's older form: command.path
    (
        "zed",
        "old-style",
        [
            *MOCKMCP,
            "record",
            "-o",
            "/c/old-style.yaml",
            "--record-mode",
            "once",
            "--redact-env",
            "OLD_KEY",
            "/usr/local/bin/mcp-old",
        ],
    ),
]


@pytest.mark.parametrize(("host", "name", "expected"), ENTRIES, ids=[f"{h}-{n}" for h, n, _e in ENTRIES])
def test_a_stdio_entry_becomes_a_record_command_in_front_of_its_own(host: str, name: str, expected: list[str]) -> None:
    entry = entry_of(host, name)
    holder = entry["command"] if isinstance(entry.get("command"), dict) else entry
    command = holder.get("command", holder.get("cmd", holder.get("path")))
    assert [command, *holder["args"]] == expected


def test_replay_runs_the_cassette_with_the_same_substitutions() -> None:
    derived, _config, _edits = wrapped("claude_desktop", replay=True)
    entry = servers("mcpServers", load("mcpServers", derived))["notes"]
    assert [entry["command"], *entry["args"]] == [*MOCKMCP, "replay", "/c/notes.yaml", "--substitute", "HOME=${HOME}"]
    assert entry["env"] == {"NOTES_KEY": "s3cret", "EMPTY": ""}


REMOTES = [
    ("claude_code", "api", "url", "http://127.0.0.1:9001/mcp", ("API_BASE_URL", "API_KEY")),
    ("cursor", "remote", "url", "http://127.0.0.1:9001/mcp", ("REMOTE_KEY",)),
    ("windsurf", "search", "serverUrl", "http://127.0.0.1:9000/mcp", ()),
    ("fastmcp", "weather", "url", "http://127.0.0.1:9000/mcp", ()),
    ("inspector", "http", "url", "http://127.0.0.1:9001/mcp", ()),
    ("vscode", "github", "url", "http://127.0.0.1:9001/mcp", ()),
    ("zed", "remote", "url", "http://127.0.0.1:9002/mcp", ()),
    ("goose", "web", "uri", "http://127.0.0.1:9002/mcp", ()),
    ("codex", "figma", "url", "http://127.0.0.1:9002/mcp", ("FIGMA_OAUTH_TOKEN",)),
]


@pytest.mark.parametrize(("host", "name", "key", "url", "hidden"), REMOTES, ids=[f"{r[0]}-{r[1]}" for r in REMOTES])
def test_a_remote_entry_points_at_a_local_port_and_names_its_secrets(
    host: str, name: str, key: str, url: str, hidden: tuple[str, ...]
) -> None:
    entry = entry_of(host, name)
    assert entry[key] == url
    path, text = CONFIGS[host]
    config = read_config(text, detect(path, text), path)
    found = next(e for e in config.entries if e.name == name)
    assert remote(config, found, 1, "c").secrets == hidden
    assert (
        entry.get("headers", entry.get("http_headers"))
        == next(v for k, v in servers(config.format, config.data)[name].items() if k in ("headers", "http_headers"))
        if hidden and host != "codex"
        else True
    )


def test_built_in_entries_are_left_as_they_are() -> None:
    _derived, config, _edits = wrapped("goose")
    entry = next(e for e in config.entries if e.name == "developer")
    assert entry.kind == "skipped" and "built-in" in entry.why
    assert entry_of("goose", "developer") == servers(config.format, config.data)["developer"]


@pytest.mark.parametrize(("host", "name"), [("cursor", "legacy"), ("inspector", "events")])
def test_an_sse_entry_by_its_type_or_its_url_points_at_a_local_sse_endpoint(host: str, name: str) -> None:
    _derived, config, _edits = wrapped(host)
    entry = next(e for e in config.entries if e.name == name)
    assert entry.kind == "sse"
    assert remote(config, entry, 1, "c").path == "/sse"
    wrapped_entry = entry_of(host, name)
    assert re.fullmatch(r"http://127\.0\.0\.1:\d+/sse", wrapped_entry["url"])
    assert {k: v for k, v in wrapped_entry.items() if k != "url"} == {
        k: v for k, v in servers(config.format, config.data)[name].items() if k != "url"
    }  # its `type` and the rest as they were


def test_unwrap_keeps_an_entry_changed_since_and_restores_the_others() -> None:
    derived, config, edits = wrapped("claude_desktop")
    data = json.loads(derived)
    by_hand = data["mcpServers"]["time"]["args"][-1]
    edited = derived.replace(json.dumps(by_hand), json.dumps("mcp-server-time==2025.1"))
    edited = edited.replace('"globalShortcut"', '"added": 1, "globalShortcut"')
    restored, left = restore(read_config(edited, "mcpServers"), edits)
    assert left == ["time"]
    result = json.loads(restored)
    assert result["mcpServers"]["notes"] == json.loads(config.text)["mcpServers"]["notes"]
    assert result["mcpServers"]["time"]["args"][-1] == "mcp-server-time==2025.1" and result["added"] == 1


REFERENCES = [
    ("${HOME}/x", [("${HOME}", "HOME")]),
    ("${env:TOKEN}", [("${env:TOKEN}", "TOKEN")]),
    ("${input:api-key}", [("${input:api-key}", "input_api_key")]),
    ("${API_URL:-https://x}", [("${API_URL:-https://x}", "API_URL")]),
    ("${workspaceFolder}/a ${1x}", [("${workspaceFolder}", "workspaceFolder"), ("${1x}", "_1x")]),
    ("plain $HOME", []),
]


@pytest.mark.parametrize(("text", "found"), REFERENCES)
def test_references_and_their_placeholder_names(text: str, found: list[tuple[str, str]]) -> None:
    assert references(text) == found


BAD = [
    ("mcp.json", '{"mcpServers": {"a": {"command": "x",}\n', "mcp.json:2:", "expected `,` or `}`"),
    ("mcp.json", '{"mcpServers": {"a": {"command": 3}}}', "`command` must be a string", ""),
    ("mcp.json", '{"mcpServers": {"a": {"command": "x", "args": "y"}}}', "`args` must be a list", ""),
    ("mcp.json", '{"mcpServers": {"a": "npx"}}', "must be a mapping", ""),
    ("mcp.json", '{"theme": "dark"}', "no MCP servers found", ""),
    ("config.toml", "[mcp_servers.a]\ncommand = \n", "TOML cannot read it", ""),
    ("config.yaml", "extensions: [\n", "YAML cannot read it", ""),
    ("config.toml", '[mcp_servers]\na = { command = "x" }\n', "cannot change in place", "mcp_servers.a"),
    (
        "config.yaml",
        "common: &npx [-y, x]\nextensions:\n  a: {cmd: npx, args: *npx}\n",
        "a YAML alias",
        "config.yaml:3:",
    ),
    # Untrusted text: nesting deep enough to exhaust the readers' recursion, and YAML's alias bombs.
    ("mcp.json", '{"mcpServers":\n' + "[" * 5000 + "]" * 5000 + "}", "nesting depth", "mcp.json:2:"),
    ("mcp.json", "[" * 101 + "]" * 101, "nesting depth", "mcp.json:1:"),
    # (libyaml, where PyYAML has it, refuses this one itself: "exceeded maximum nesting depth")
    ("config.yaml", "extensions:\n  a: " + "[" * 5000 + "]" * 5000, "nesting depth", "config.yaml:2:"),
    ("config.yaml", "".join("  " * i + "- \n" for i in range(5000)), "nesting depth passes 100", "config.yaml:101:"),
    ("config.toml", "[mcp_servers.a]\nargs = " + "[" * 5000 + "]" * 5000, "nesting depth passes 100", "config.toml:2:"),
    ("config.toml", 'a = "[[[["\nb = ' + "{x = " * 101 + "1" + "}" * 101, "nesting depth passes 100", "config.toml:2:"),
    ("config.toml", 's = """\\"""x"""\nb = ' + "[" * 5000 + "]" * 5000, "nesting depth passes 100", "config.toml:2:"),
    (
        "config.yaml",
        "a: &a [x, x, x, x, x, x, x, x, x]\n"
        + "".join(f"{c}: &{c} [{', '.join(['*' + p] * 9)}]\n" for p, c in zip("abcde", "bcdef", strict=True))
        + "extensions: {}\n",
        "expand it to more than 100,000 values",
        "config.yaml:6:",
    ),
    ("config.yaml", "extensions: &a {a: {cmd: x, args: [*a]}}\n", "inside the value it names", "config.yaml:1:"),
]


@pytest.mark.parametrize(("path", "text", "problem", "also"), BAD)
def test_a_config_that_cannot_be_wrapped_says_where_and_how_to_fix(
    path: str, text: str, problem: str, also: str
) -> None:
    with pytest.raises(ConfigError) as raised:
        read_config(text, detect(path, text), path)
    said = raised.value.render()
    assert problem in said and path in said and "how to fix" in said and also in said


def test_nesting_and_aliases_within_the_bounds_are_read() -> None:
    """100 levels, and aliases that expand to a few values, read as before."""
    deep, less = "[" * 100 + "]" * 100, "[" * 99 + "]" * 99
    assert read_json(deep)[0] == read_yaml(deep)[0] == [read_toml(f'a = ["#[", {less}]')[0]["a"][1]]
    data, spans = read_yaml("x: &x [1, 2]\ny: [*x, *x, *x]\n")
    assert data["y"] == [[1, 2]] * 3 and spans[("y", 2, 1)] == spans[("x", 1)]


def test_a_wrapped_config_and_two_servers_sharing_a_cassette_are_refused() -> None:
    derived, _config, _edits = wrapped("windsurf")
    config = read_config(derived, "mcpServers", "wrapped.json")
    db = next(e for e in config.entries if e.name == "db")
    with pytest.raises(ConfigError, match="runs mockmcp already"):
        wrapped_command(config, db, PY, "/c/db.yaml", False, "once")
    shared = read_config('{"mcpServers": {"a/b": {"command": "x"}, "a:b": {"command": "y"}}}', "mcpServers")
    with pytest.raises(ConfigError, match=r"would share the cassette a_b\.yaml"):
        cassette_names(shared.entries)


@pytest.mark.parametrize("host", sorted(CONFIGS))
def test_references_stay_references_in_the_derived_config(host: str) -> None:
    """The host expands them, in the derived config as in the original: every one is still there, unexpanded,
    but in a remote server's URL, which points at `mockmcp serve` (that expands the real URL itself)."""
    derived, config, _edits = wrapped(host)
    urls = " ".join(str(e.value(e.url_place)) for e in config.entries if e.kind == "http")
    for written, _name in references(config.text):
        kept = config.text.count(written) - urls.count(written)
        assert derived.count(written) >= kept, written


EXPANSIONS = [
    ("${BASE}/mcp", {"BASE": "https://x.example"}, "https://x.example/mcp"),
    ("${env:BASE}/mcp", {"BASE": "https://x.example"}, "https://x.example/mcp"),
    ("${BASE:-https://default.example}/mcp", {}, "https://default.example/mcp"),
    ("${BASE:-https://default.example}/mcp", {"BASE": "https://x.example"}, "https://x.example/mcp"),
    ("https://plain.example/mcp", {}, "https://plain.example/mcp"),
]


@pytest.mark.parametrize(("text", "environ", "expected"), EXPANSIONS)
def test_what_serve_and_the_plugin_expand_as_the_host_would(text: str, environ: dict[str, str], expected: str) -> None:
    assert expand(text, environ, "web") == expected


@pytest.mark.parametrize(
    ("text", "said"), [("${BASE}/mcp", "BASE}, which is not set"), ("${input:key}", "only the host")]
)
def test_a_reference_that_cannot_be_expanded_is_refused(text: str, said: str) -> None:
    with pytest.raises(UsageError, match=re.escape(said)) as raised:
        expand(text, {}, "web")
    assert raised.value.render().startswith("web: ") and "how to fix" in raised.value.render()


# A path in a wrapped stdio entry's command line, as the config writes it: (format, the config, the path) -> written.
HOST_PATHS = [
    # VS Code and Cursor expand ${workspaceFolder}: the folder that holds .vscode/ or .cursor/
    ("vscode", "/p/.vscode/mcp.json", "/p/cassettes/git.yaml", "${workspaceFolder}/cassettes/git.yaml"),
    ("vscode", "/p/.vscode/settings.json", "/p/.venv/bin/python", "${workspaceFolder}/.venv/bin/python"),
    (
        "mcpServers",
        "/p/.cursor/mcp.json",
        "/p/.cursor/cassettes/a b.yaml",
        "${workspaceFolder}/.cursor/cassettes/a b.yaml",
    ),
    # Claude Code starts a project's .mcp.json servers in that file's folder
    ("mcpServers", "/p/.mcp.json", "/p/cassettes/time.yaml", "./cassettes/time.yaml"),
    ("mcpServers", "/p/.mcp.json", "/p/.venv/bin/python", "./.venv/bin/python"),
    # outside that folder, or the folder itself: absolute, as before
    ("mcpServers", "/p/.mcp.json", "/usr/bin/python3", "/usr/bin/python3"),
    ("mcpServers", "/p/.mcp.json", "/pp/cassettes/x.yaml", "/pp/cassettes/x.yaml"),
    ("vscode", "/p/.vscode/mcp.json", "/p", "/p"),
    # hosts whose config does not tell where their servers start: absolute
    ("mcpServers", "/p/mcp.json", "/p/cassettes/x.yaml", "/p/cassettes/x.yaml"),  # fastmcp, the Inspector
    ("mcpServers", "/p/.mcp.mockmcp.json", "/p/cassettes/x.yaml", "/p/cassettes/x.yaml"),
    ("mcpServers", "/h/Library/Application Support/Claude/claude_desktop_config.json", "/h/c/x.yaml", "/h/c/x.yaml"),
    (
        "mcpServers",
        "/h/.codeium/windsurf/mcp_config.json",
        "/h/.codeium/windsurf/c/x.yaml",
        "/h/.codeium/windsurf/c/x.yaml",
    ),
    ("vscode", "/h/.config/Code/User/settings.json", "/h/.config/Code/User/c/x.yaml", "/h/.config/Code/User/c/x.yaml"),
    ("vscode", "/h/.config/Code/User/mcp.json", "/h/.config/Code/User/c/x.yaml", "/h/.config/Code/User/c/x.yaml"),
    ("zed", "/p/.zed/settings.json", "/p/c/x.yaml", "/p/c/x.yaml"),
    ("goose", "/h/.config/goose/config.yaml", "/h/.config/goose/c/x.yaml", "/h/.config/goose/c/x.yaml"),
    ("codex", "/p/.codex/config.toml", "/p/.codex/c/x.yaml", "/p/.codex/c/x.yaml"),
    # another format's well-known name does not count: the rule is the format's
    ("zed", "/p/.mcp.json", "/p/c/x.yaml", "/p/c/x.yaml"),
    ("vscode", "/p/.cursor/mcp.json", "/p/c/x.yaml", "/p/c/x.yaml"),
]


@pytest.mark.parametrize(("fmt", "config", "path", "written"), HOST_PATHS)
def test_a_wrapped_command_line_names_paths_as_its_host_resolves_them(
    fmt: str, config: str, path: str, written: str
) -> None:
    assert host_path(fmt, PurePosixPath(config), PurePosixPath(path)) == written
