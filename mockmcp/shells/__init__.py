"""The shells: all of mockmcp's process, pipe, socket, signal and clock work, around the pure core.

Names pair up: `stdio_replay` / `stdio_record`, `http_replay` / `http_record`; `live_server`
drives a real server for `mockmcp verify`.
"""

__all__: list[str] = []
