"""The HTML timeline: its data, and the self-contained page written from it (`page/`).

The wing's facade: what the rest of mockmcp uses of it; its modules are private."""

from __future__ import annotations

from mockmcp.html._page import lane_for, write_page, write_replay_page, write_show_page

__all__ = ["lane_for", "write_page", "write_replay_page", "write_show_page"]
