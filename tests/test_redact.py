"""Redaction works on values, never on the JSON around them: ids and structure stay intact."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from conftest import MOCKMCP, ROOT, child_env

from mockmcp.cassette.store import loads
from mockmcp.engine.matching import Matcher
from mockmcp.engine.redact import Redactor
from mockmcp.engine.replay import Replay, Send

RULES = Redactor.build(
    ("API_KEY",),
    (r"\d{6,}", r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"),
    {"API_KEY": 'sk-"quoted"'},
)


def test_values_are_redacted_and_ids_are_not() -> None:
    message = {
        "jsonrpc": "2.0",
        "id": 1234567,
        "method": "m",
        "params": {"key": 'use sk-"quoted" now', "n": "phone 5551234567"},
    }
    assert RULES.message(message) == {
        "jsonrpc": "2.0",
        "id": 1234567,
        "method": "m",
        "params": {"key": "use [REDACTED:API_KEY] now", "n": "phone [REDACTED]"},
    }
    uuid = "3f2b8c1e-9a4d-4e6f-8b2a-1c3d5e7f9a0b"
    line = json.dumps({"jsonrpc": "2.0", "id": uuid, "result": {"t": uuid}}).encode()
    assert json.loads(RULES.line(line)) == {"jsonrpc": "2.0", "id": uuid, "result": {"t": "[REDACTED]"}}
    assert RULES.line(b"not json: 12345678") == b"not json: [REDACTED]"
    assert Redactor().line(b'{"a": 1}') == b'{"a": 1}'  # no rules: the line as it came


def test_replay_redacts_before_matching_and_answers_under_the_callers_own_id() -> None:
    cassette = loads(
        "version: 1\nmeta: {redact: {patterns: ['\\d{6,}']}}\ninteractions:\n"
        "- request: {method: lookup, params: {phone: 'tel [REDACTED]'}}\n  response: {result: {found: true}}\n"
    )
    engine = Replay(cassette, Matcher.build(), Redactor.from_meta(cassette.meta, {}))
    sent = engine.receive(b'{"jsonrpc":"2.0","id":1234567,"method":"lookup","params":{"phone":"tel 5551234567"}}')
    [answer] = [json.loads(action.data) for action in sent if isinstance(action, Send)]
    assert answer == {"jsonrpc": "2.0", "id": 1234567, "result": {"found": True}}


def test_verify_applies_the_cassettes_redaction(tmp_path: Path) -> None:
    """The live server echoes the secret: verify must neither report it as drift nor print it."""
    out = tmp_path / "c.yaml"
    secret = "sk-live-5f2b9c8e1a7d4e3f"
    env = {**child_env(), "API_KEY": secret}
    server = [sys.executable, str(ROOT / "tests" / "servers" / "scripted.py"), "--echo-env", "API_KEY"]
    line = b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"whoami"}}\n'
    recorded = subprocess.run(
        [*MOCKMCP, "record", "--record-mode", "rewrite", "--redact-env", "API_KEY", "-o", str(out), "--", *server],
        input=line,
        capture_output=True,
        timeout=60,
        env=env,
    )
    assert recorded.returncode == 0 and secret.encode() not in out.read_bytes()
    proc = subprocess.run(
        [*MOCKMCP, "verify", str(out), "--", *server], capture_output=True, text=True, timeout=60, env=env
    )
    assert proc.returncode == 0, proc.stdout
    assert secret not in proc.stdout + proc.stderr
