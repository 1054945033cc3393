"""Replay and record over stdio: the shells that carry out what the engine and the recorder decide.

`replay` serves a cassette on stdin/stdout; `record` is the transparent proxy between a host and a
real server; `toolkit` holds the plumbing they and the other shells share (writing all of a buffer,
splitting lines, signals as a flag, stopping a child).
"""

__all__: list[str] = []
