"""The shells: all of mockmcp's process, pipe, socket, signal and clock work, around the pure core.

Names pair up: `stdio_replay` / `stdio_record`, `http_replay` / `http_record`; `live_server`
drives a real server for `mockmcp verify`; `journal` is the recorders' append-only file.
`toolkit` holds the plumbing they share: writing all of a buffer, splitting lines, signals that
set a flag and wake a poll loop, and stopping a child process.
"""

__all__: list[str] = []
