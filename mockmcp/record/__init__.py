"""Recording: what a recording proxy saw, made into a cassette that is never lost.

Attaches at `stdio.record` (the stdio proxy), `http` (the recording proxy), `inprocess` (recording in the
host's process) and the command line (`recover`, `verify`).

  _recorder  the stream of observed messages -> a cassette; each server message filed under the request
             that caused it (progress token, subscription, its HTTP stream, else the request answered next)
  _journal   the append-only journal a recording writes (0600, flock'ed, synced at most once a second), and
             the cassette built from it at the end or after a crash: one code path for both; and saved from it
             while the recording runs (`snapshot`), once the host has left
  _merge     `--record-mode new_episodes`: a new session added whole, unless the old cassette answers it alike
  _live      `verify`'s driver of a live server: the recorded requests sent again, the answers recorded
  _stub      `stub`'s driver: a live server (stdio or HTTP) asked only its contract: handshake and listings
"""

from __future__ import annotations

from mockmcp.cassette.files import begun_by_this_run as later_start
from mockmcp.record._journal import Journal, awaited, finish, holder, journal_path, saved, settled, snapshot
from mockmcp.record._live import drive
from mockmcp.record._merge import merged_meta
from mockmcp.record._recorder import CLIENT, SERVER, over_limit, silent, unreached
from mockmcp.record._stub import ask_contract, ask_contract_http

__all__ = [
    "CLIENT",
    "Journal",
    "SERVER",
    "ask_contract",
    "ask_contract_http",
    "awaited",
    "drive",
    "finish",
    "holder",
    "journal_path",
    "later_start",
    "merged_meta",
    "over_limit",
    "saved",
    "settled",
    "silent",
    "snapshot",
    "unreached",
]
