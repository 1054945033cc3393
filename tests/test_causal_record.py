"""What the recorder keeps so replay can order both sides by time: the host's answer to a server
request keeps its time (`took` on the server item), and the loader, the schema and lint agree on it."""

from __future__ import annotations

import jsonschema
import pytest

from mockmcp.cassette import schema, store, yamlfile
from mockmcp.errors import CassetteError
from mockmcp.tools import lint

ASKED = """\
version: 1
interactions:
- at: 0.5
  request: {id: 1, method: tools/call, params: {name: confirm}}
  server:
  - at: 0.6
    request: {id: 0, method: elicitation/create, params: {message: Sure?, requestedSchema: {type: object}}}
    response: {result: {action: decline}}
    took: 1.25
  response: {result: {content: []}}
  took: 2.0
"""


def test_the_time_of_the_hosts_answer_loads_and_editors_and_lint_accept_it() -> None:
    item = store.loads(ASKED).interactions[0].server[0]
    assert (item.at, item.took) == (0.6, 1.25)
    assert list(jsonschema.Draft7Validator(schema.schema()).iter_errors(yamlfile.load(ASKED))) == []
    assert lint.lint_text(ASKED, "asked.yaml") == []


@pytest.mark.parametrize(
    ("edit", "problem"),
    [
        ("    took: -1\n", "`took` must be a number of seconds, at least 0"),
        ("    took: soon\n", "`took` must be a number of seconds, at least 0"),
    ],
)
def test_a_bad_took_is_refused_with_its_place(edit: str, problem: str) -> None:
    text = ASKED.replace("    took: 1.25\n", edit)
    with pytest.raises(CassetteError) as refused:
        store.loads(text)
    assert problem in refused.value.render()
    assert "interactions[0].server[0].took" in refused.value.render()
    assert list(jsonschema.Draft7Validator(schema.schema()).iter_errors(yamlfile.load(text)))


def test_took_without_the_hosts_answer_is_refused() -> None:
    text = ASKED.replace("    response: {result: {action: decline}}\n", "")
    with pytest.raises(CassetteError) as refused:
        store.loads(text)
    assert "this item has no `response`" in refused.value.render()
    assert list(jsonschema.Draft7Validator(schema.schema()).iter_errors(yamlfile.load(text)))
