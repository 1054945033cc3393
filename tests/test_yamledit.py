"""Rewriting cassette text in place: what did not change keeps its bytes, comments and key order."""

from __future__ import annotations

import copy
import difflib
import random
from pathlib import Path
from typing import Any

import pytest
from conftest import SHIPPED

from mockmcp.cassette import store, yamledit, yamlfile

COMMENTED = """\
# The weather server, with a tool error injected by hand.
version: 1
meta:
  description: weather   # what this is
  recorded_at: '2026-12-02T13:56:29Z'
interactions:
- request:
    id: 1
    method: initialize
    params: {protocolVersion: '2025-11-25', capabilities: {}, clientInfo: {name: mcp, version: 0.1.0}}
  response:
    result:
      protocolVersion: '2025-11-25'
      capabilities: {tools: {}}
      serverInfo: {name: weather, version: 1.0.0}

# The forecast fails: the host must show the tool error, not crash.
- request:
    id: 2
    method: tools/call
    params:
      name: forecast    # the tool under test
      arguments: {city: Paris}
  exit: 1               # short form, written by hand
  delay: 0.5
  response:   # edited: was a sunny forecast
    result:
      content:
      - type: text
        text: |
          upstream said no
          (quota)
      isError: true
- request: {id: 3, method: ping}
  response: {result: {}}
"""


def changed(data: dict[str, Any], change: Any) -> dict[str, Any]:
    new = copy.deepcopy(data)
    change(new)
    return new


def changed_lines(old: str, new: str) -> list[str]:
    return [line for line in difflib.ndiff(old.splitlines(), new.splitlines()) if line[:1] in "+-"]


def test_the_same_data_gives_the_same_bytes() -> None:
    assert yamledit.rewrite(COMMENTED, yamlfile.load(COMMENTED), yamlfile.load(COMMENTED)) == COMMENTED
    for path in sorted(SHIPPED.glob("*.yaml")):
        text = path.read_text()
        assert yamledit.rewrite(text, yamlfile.load(text), yamlfile.load(text)) == text, path.name


def set_text(data: dict[str, Any]) -> None:
    data["interactions"][1]["response"]["result"]["content"][0]["text"] = "upstream said yes"


def add_ping(data: dict[str, Any]) -> None:
    data["interactions"].append({"request": {"id": 4, "method": "ping"}, "response": {"result": {}}})


def insert_first(data: dict[str, Any]) -> None:
    data["interactions"].insert(0, {"notification": {"method": "notifications/initialized"}})


def drop_delay(data: dict[str, Any]) -> None:
    del data["interactions"][1]["delay"]


def add_meta(data: dict[str, Any]) -> None:
    data["meta"]["updated_at"] = "2026-12-03T00:00:00Z"


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (
            set_text,
            [
                "-         text: |",
                "-           upstream said no",
                "-           (quota)",
                "+         text: upstream said yes",
            ],
        ),
        (
            add_ping,
            ["+ - request: {id: 4, method: ping}", "+   response:", "+     result: {}"],
        ),
        (insert_first, ["+ - notification: {method: notifications/initialized}"]),
        (drop_delay, ["-   delay: 0.5"]),
        (add_meta, ["+   updated_at: '2026-12-03T00:00:00Z'"]),
    ],
    ids=["answer", "append", "insert", "remove-knob", "add-key"],
)
def test_only_what_changed_is_written_again(change: Any, expected: list[str]) -> None:
    data = changed(yamlfile.load(COMMENTED), change)
    text = yamledit.rewrite(COMMENTED, data, yamlfile.load(COMMENTED))
    assert yamledit.same(yamlfile.load(text), data)
    assert sorted(line.rstrip() for line in changed_lines(COMMENTED, text) if line.strip("+- ")) == sorted(expected)


def test_a_comment_after_a_key_whose_block_is_replaced_stays() -> None:
    error = {"error": {"code": -32603, "message": "internal error"}}
    data = changed(yamlfile.load(COMMENTED), lambda d: d["interactions"][1].update(response=error))
    text = yamledit.rewrite(COMMENTED, data, yamlfile.load(COMMENTED))
    assert "  response:   # edited: was a sunny forecast\n    error: {code: -32603, message: internal error}\n" in text
    assert "# The forecast fails" in text and "# the tool under test" in text and "exit: 1  " in text
    # A value of another shape is written whole, and the comment stays on its key's line.
    data = changed(data, lambda d: d["interactions"][1].update(response="gone"))
    assert "  response: gone  # edited: was a sunny forecast\n" in yamledit.rewrite(
        COMMENTED, data, yamlfile.load(COMMENTED)
    )


def test_a_change_the_text_cannot_take_in_place_replaces_the_item_and_keeps_the_rest() -> None:
    # The first key of a list item carries its dash: removing it rewrites that item, nothing else.
    data = changed(yamlfile.load(COMMENTED), lambda d: d["interactions"][2].pop("request"))
    text = yamledit.rewrite(COMMENTED, data, yamlfile.load(COMMENTED))
    assert yamledit.same(yamlfile.load(text), data)
    assert "# The forecast fails" in text and "# what this is" in text


def mutations(data: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    """data with a few random edits of the kinds the tools make: values replaced, items added and removed."""
    new = copy.deepcopy(data)
    for _ in range(rng.randint(1, 4)):
        items = new["interactions"]
        choice = rng.randrange(6)
        index = rng.randrange(len(items))
        if choice == 0:
            items[index]["took"] = round(rng.random(), 4)
        elif choice == 1 and "response" in items[index]:
            items[index]["response"] = {"result": {"content": [{"type": "text", "text": f"v{rng.random()}\nx"}]}}
        elif choice == 2:
            items.insert(index, {"request": {"id": rng.randrange(99), "method": "ping"}, "response": {"result": {}}})
        elif choice == 3 and len(items) > 1:
            del items[index]
        elif choice == 4 and isinstance(items[index].get("response", {}).get("result"), dict):
            items[index]["response"]["result"] = {}
        else:
            new["meta"][f"k{rng.randrange(9)}"] = [rng.randrange(9), {"a": "b"}]
    return new


@pytest.mark.parametrize("path", sorted(SHIPPED.glob("*.yaml")), ids=lambda p: p.name)
def test_random_edits_of_every_shipped_cassette_give_exactly_the_new_data(path: Path) -> None:
    text = "# kept: the rewrite is an edit, not a fresh dump\n" + path.read_text()
    data = yamlfile.load(text)
    rng = random.Random(path.name)
    for _ in range(30):
        new = mutations(data, rng)
        rewritten = yamledit.rewrite(text, new, data)
        assert yamledit.same(yamlfile.load(rewritten), new)
        assert rewritten.startswith("# kept")


def test_save_over_a_commented_cassette_keeps_short_forms_and_comments(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(COMMENTED)
    loaded = store.load(str(path))
    answer = {"result": {"content": [{"type": "text", "text": "sunny"}], "isError": False}}
    call = loaded.interactions[1]._replace(response=answer, took=0.01)
    store.save(loaded._replace(interactions=(loaded.interactions[0], call, loaded.interactions[2])), str(path))
    text = path.read_text()
    assert store.load(str(path)).interactions[1] == call
    # Its request, its knobs (`exit: 1` as written) and every comment stay; the answer and `took` are new.
    assert [line for line in changed_lines(COMMENTED, text) if line.startswith("-")] == [
        "-         text: |",
        "-           upstream said no",
        "-           (quota)",
        "-       isError: true",
    ]
    assert "  exit: 1               # short form, written by hand\n" in text
    assert text.endswith("  took: 0.01\n- request: {id: 3, method: ping}\n  response: {result: {}}\n")
