"""The HTML timeline: a session's messages beside what the host did, as one self-contained page.

Attaches at `replay --html`, `show --html` and the plugin's pages of failed tests.

  _view  the page's data: show's words, the reports' facts, each miss with its closest recordings; a test's model
         beside its servers, its exchanges placed among theirs in time
  _page  the page written from it (`page/`: template, style, script; a strict CSP, no script from data)
"""

from __future__ import annotations

from mockmcp.html._page import lane_for, write_page, write_replay_page, write_show_page
from mockmcp.html._view import Model

__all__ = ["Model", "lane_for", "write_page", "write_replay_page", "write_show_page"]
