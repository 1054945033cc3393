"""The Go helper of docs/other-languages.md, run as written: its blocks become a module with one more test,
which must fail with mockmcp's explanation of its miss. Skips, saying why, where `go` is not installed.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT

PAGE = ROOT / "docs" / "other-languages.md"
# the echo host's session, recorded by the TypeScript helper's own tests (the Go test speaks the same)
RECORDED = ROOT / "integrations" / "node" / "test" / "cassettes" / "helper.node"
MISS = """package host

import "testing"

func TestMiss(t *testing.T) {
	cmd := MockServer(t)
	stdin, _ := cmd.StdinPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	call := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"bye"}}}`
	stdin.Write([]byte(call + "\\n"))
	stdin.Close()
	cmd.Wait()
}
"""


@pytest.mark.slow
def test_the_documented_go_helper_replays_and_fails_a_test_with_the_explanation(tmp_path: Path) -> None:
    go = shutil.which("go")
    if go is None:
        pytest.skip("go is not installed (Debian's golang-go provides it): the Go helper of the docs cannot run")
    blocks = re.findall(r"^```go\n(.*?)^```$", PAGE.read_text(encoding="utf-8"), re.M | re.S)
    assert len(blocks) == 2, "docs/other-languages.md: the helper and its example test"
    for block in blocks:
        name = block.split("\n", 1)[0].removeprefix("// ").split(":")[0]
        (tmp_path / name).write_text(block)
    (tmp_path / "miss_test.go").write_text(MISS)
    (tmp_path / "go.mod").write_text("module host\n\ngo 1.19\n")
    cassettes = tmp_path / "testdata" / "cassettes"
    cassettes.mkdir(parents=True)
    for test in ("TestEcho", "TestMiss"):
        shutil.copyfile(RECORDED / "echo.replays the cassette named after the test.yaml", cassettes / f"{test}.yaml")
    env = {key: value for key, value in os.environ.items() if not key.startswith("MOCKMCP_RECORD")}
    # `mockmcp` on PATH is this environment's, installed from the checkout; no module is fetched
    env.update(PATH=f"{Path(sys.executable).parent}{os.pathsep}{env['PATH']}", GOPROXY="off", GOFLAGS="-mod=mod")
    done = subprocess.run(
        [go, "test", "-json", "./..."], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=240
    )
    events = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    outcomes = {e["Test"]: e["Action"] for e in events if e.get("Test") and e["Action"] in ("pass", "fail")}
    assert outcomes == {"TestEcho": "pass", "TestMiss": "fail"}, done.stdout + done.stderr
    said = "".join(e.get("Output", "") for e in events if e.get("Test") == "TestMiss")
    assert "mockmcp: no recorded interaction matches this tools/call request" in said
    assert 'arguments.text: recorded "hello", incoming "bye"' in said and "how to fix:" in said
