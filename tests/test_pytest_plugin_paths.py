"""Where the plugin's cassettes are: `<test>.mcp.yaml`, beside pytest-recording's `<test>.yaml`, never on it.

A cassette mockmcp wrote under the old name is still replayed, and moves on the next recording; a
VCR cassette at that name is told apart by its content, and never read as a cassette nor touched.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from conftest import SHIPPED
from test_pytest_plugin import OLD_NAMED, VCR_CASSETTE, run, write_host_tests

from mockmcp.plugin._naming import OWN_SUFFIX, cassette_name, kind, legacy, server_cassette, servers_folder

pytest_plugins = ["pytester"]

# A mockmcp cassette without meta: its interactions make it mockmcp's.
MINIMAL = """version: 1
interactions:
- request: {id: 1, method: tools/list}
  response: {result: {tools: []}}
"""


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (MINIMAL, "mockmcp"),
        (OLD_NAMED, "mockmcp"),  # no interactions, but meta: mockmcp's own
        (VCR_CASSETTE, "vcr"),
        (VCR_CASSETTE.replace("    body: null\n", "    body: '{\"a\": 1}'\n", 1), "vcr"),  # a POST's body
        # a VCR request is a mapping with `method`; only its uri, body and headers tell it from mockmcp's
        (VCR_CASSETTE.replace("    uri: https://api.example.com/notes/1\n", ""), "vcr"),
        ("interactions: []\nversion: 1\n", "other"),  # a VCR cassette with nothing in it is never taken for one
        ("", "other"),
        ("\x00\x01 not: [yaml", "other"),
        ("- a\n- list\n", "other"),
        ("version: 1\ninteractions: &a [*a]\n", "other"),  # refused by the dialect (an alias)
        (MINIMAL.replace("response:", "respnse:"), "other"),  # mockmcp's shape, but it cannot load
    ],
)
def test_whose_cassette_a_file_is_is_decided_by_its_content(text: str, expected: str, tmp_path: Path) -> None:
    (tmp_path / "c.yaml").write_text(text, encoding="utf-8")
    assert kind(tmp_path / "c.yaml") == expected
    assert kind(tmp_path / "missing.yaml") == "other"
    (tmp_path / "latin1.yaml").write_bytes(b"version: 1\ninteractions: [caf\xe9]\n")
    assert kind(tmp_path / "latin1.yaml") == "other"


@pytest.mark.parametrize(
    ("own", "folder"),
    [
        ("c/test_x.mcp.yaml", "c/test_x"),  # never with_suffix(""): that leaves `.mcp`
        ("c/TestMilk.test_read[a.b].mcp.yaml", "c/TestMilk.test_read[a.b]"),
        ("c/shared.yaml", "c/shared"),  # a marker's cassette= loses its last suffix, as it always did
        ("c/notes.v2.yaml", "c/notes.v2"),
        ("c/.mcp.yaml", "c/.mcp"),  # a name that is the suffix alone is no test's
    ],
)
def test_a_tests_servers_folder_is_its_cassette_without_the_suffix(own: str, folder: str) -> None:
    assert servers_folder(Path(own)) == Path(folder)
    assert server_cassette(Path(own), "notes") == Path(folder, "notes.yaml")


def test_a_tests_own_cassette_name_ends_in_mcp_yaml_and_fits_a_file_system() -> None:
    assert cassette_name(["TestMilk", "test_read[a/b]"], OWN_SUFFIX) == "TestMilk.test_read[a_b].mcp.yaml"
    long = cassette_name(["test_y[" + "z" * 300 + "]"], OWN_SUFFIX)
    assert long.startswith("test_y[zzz") and long.endswith(".mcp.yaml") and len(long.encode()) <= 200
    assert long != cassette_name(["test_y[" + "z" * 300 + "!]"], OWN_SUFFIX)  # the hash of the whole tells them apart


def test_the_old_name_is_read_only_while_the_new_one_is_missing_and_only_when_it_is_mockmcps(tmp_path: Path) -> None:
    own, old = tmp_path / "test_x.mcp.yaml", tmp_path / "test_x.yaml"
    assert legacy(own, old) is None  # neither
    old.write_text(VCR_CASSETTE)
    assert legacy(own, old) is None
    old.write_bytes(b"\xff\xfe not UTF-8")
    assert legacy(own, old) is None
    old.write_text(MINIMAL)
    assert legacy(own, old) == old
    own.write_text(MINIMAL)
    assert legacy(own, old) is None  # the new one wins


def test_a_name_cut_for_length_is_found_under_its_old_cut_name(pytester: pytest.Pytester) -> None:
    """A long name is cut to fit with its suffix, so the old name is the old rule's, not the new one's stem."""
    test = "test_long_" + "z" * 190
    pytester.makepyfile(test_host=f"def {test}(mockmcp):\n    pass\n")
    folder = pytester.path / "cassettes" / "test_host"
    folder.mkdir(parents=True)
    old = folder / cassette_name([test])
    assert old.name.removesuffix(".yaml") != cassette_name([test], OWN_SUFFIX).removesuffix(OWN_SUFFIX)
    old.write_text(OLD_NAMED)
    result = run(pytester)
    result.assert_outcomes(passed=1, warnings=1)
    result.stdout.fnmatch_lines([f"*mockmcp: replayed {old}, this test's cassette under its old name*"])
    orphans = run(pytester, "--collect-only", "-q", "--mockmcp-orphans")  # in use: no orphan
    assert orphans.ret == pytest.ExitCode.OK, orphans.stdout.str()


@pytest.mark.parametrize("mode", ["rewrite", "new_episodes"])
def test_a_cassette_under_the_old_name_replays_with_a_note_and_the_next_recording_moves_it(
    pytester: pytest.Pytester, mode: str
) -> None:
    write_host_tests(pytester)
    folder = pytester.path / "cassettes" / "test_host"
    folder.mkdir(parents=True)
    old, new = folder / "test_reads_a_note.yaml", folder / "test_reads_a_note.mcp.yaml"
    old.write_text("# kept by hand\n" + (SHIPPED / "notes-session.yaml").read_text())
    result = run(pytester)
    result.assert_outcomes(passed=1, warnings=1)
    result.stdout.fnmatch_lines(
        [f"*mockmcp: replayed {old}, this test's cassette under its old name*moves it to {new.name}"]
    )
    assert old.exists() and not new.exists()  # replay moves nothing
    run(pytester, f"--mockmcp-record-mode={mode}").assert_outcomes(passed=1)
    assert new.exists() and not old.exists()
    assert new.read_text().startswith("# kept by hand\n")  # edited in place, as a re-recording of the new one is
    assert kind(new) == "mockmcp"
    assert sorted(p.name for p in folder.iterdir()) == [new.name]  # nothing staged, copied or journaled is left
    result = run(pytester)
    result.assert_outcomes(passed=1)
    assert "old name" not in result.stdout.str()


def test_a_vcr_cassette_at_the_old_name_is_never_read_nor_touched(pytester: pytest.Pytester) -> None:
    write_host_tests(pytester)
    folder = pytester.path / "cassettes" / "test_host"
    folder.mkdir(parents=True)
    vcr = folder / "test_reads_a_note.yaml"
    vcr.write_text(VCR_CASSETTE)
    os.utime(vcr, (1_000_000_000, 1_000_000_000))
    result = run(pytester)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*no cassette at *test_reads_a_note.mcp.yaml; record it by running this test*"])
    assert "old name" not in result.stdout.str()
    for mode in ("once", "rewrite"):  # recorded beside it, then again over its own
        run(pytester, f"--mockmcp-record-mode={mode}").assert_outcomes(passed=1)
        assert (folder / "test_reads_a_note.mcp.yaml").exists()
        assert vcr.read_text() == VCR_CASSETTE and vcr.stat().st_mtime == 1_000_000_000
    orphans = run(pytester, "--mockmcp-orphans")  # pytest-recording's is no orphan of mockmcp's
    assert orphans.ret == pytest.ExitCode.OK, orphans.stdout.str()
    orphans.stdout.fnmatch_lines(["mockmcp: every cassette in the cassette folders is used by a collected test"])


def test_a_failed_recording_leaves_the_cassette_under_its_old_name(pytester: pytest.Pytester) -> None:
    write_host_tests(pytester)
    folder = pytester.path / "cassettes" / "test_host"
    folder.mkdir(parents=True)
    old = folder / "test_reads_a_note.yaml"
    shutil.copyfile(SHIPPED / "notes-session.yaml", old)
    before = old.read_bytes()
    body = (pytester.path / "test_host.py").read_text().replace('== "remember to buy milk"', '== "something else"')
    write_host_tests(pytester, body)
    run(pytester, "--mockmcp-record-mode=rewrite").assert_outcomes(failed=1)
    assert old.read_bytes() == before and sorted(p.name for p in folder.iterdir()) == [old.name]
