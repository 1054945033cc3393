"""Recording: the recorder (observed lines -> a cassette), the journal a recording appends to and the
cassette built or recovered from it, `record --record-mode new_episodes`'s merge, and verify's driver of a live server.

The wing's facade: what the rest of mockmcp uses of it; its modules are private."""

from __future__ import annotations

from mockmcp.record._journal import Journal, awaited, finish, holder, journal_path, saved
from mockmcp.record._live import drive
from mockmcp.record._merge import merged_meta
from mockmcp.record._recorder import CLIENT, SERVER, over_limit, silent, unreached

__all__ = [
    "CLIENT",
    "Journal",
    "SERVER",
    "awaited",
    "drive",
    "finish",
    "holder",
    "journal_path",
    "merged_meta",
    "over_limit",
    "saved",
    "silent",
    "unreached",
]
