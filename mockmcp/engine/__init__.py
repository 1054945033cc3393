"""The replay engine: a cassette and incoming lines in, actions out; it never reads, writes, sleeps or spawns.

`replay.Replay` plays one live session; each policy it follows has a module of its own (matching,
selection, ordering, emulation, branching, batch, live values, redaction and substitution), and
`report` and `explain` say what the session did and why a request missed. Of the cassette it sees
the model and its validation, never the files.
"""

__all__: list[str] = []
