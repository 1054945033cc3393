"""Which cassette a server the host starts belongs to: its identity, a readable name, stable across machines.

A stdio server is its command line and working folder, in portable words (`portable`) with credentials
`[REDACTED]`, as in `meta.server`; an HTTP server its URL without query or credentials. A name the test gives wins.
Interception names the servers a host starts so, and `mockmcp exec --cassettes` the server it is given (the Node
preload's): on the launch path, so nothing costly is imported.
"""

from __future__ import annotations

import hashlib
import re
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from urllib.parse import urlsplit

from mockmcp._wire.credentials import bare_url, server_words
from mockmcp._wire.namedtuple import NamedTuple
from mockmcp._wire.words import placeholder
from mockmcp.errors import UsageError

__all__ = ["Identity", "identify", "portable"]

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
_LONGEST = 80  # characters of a file name made from a command line; longer ones are cut, keeping a hash


class Identity(NamedTuple):
    """A server as the cassette folder knows it: `name` is its cassette's file name without `.yaml`; `words`
    what it was made from (shown in messages and the cassette's `meta.server`)."""

    name: str
    words: tuple[str, ...]


def portable(part: str, project: Path | None, substitutions: Iterable[tuple[str, str | None]] = ()) -> str:
    """One word of a command line as any machine writes it: a substitution's value as `${NAME}`, this Python
    as `python`, a path in the project relative to it, one in the home folder from `~/`."""
    if part == sys.executable:
        return "python"
    for name, value in substitutions:
        if value and len(value) > 1 and value in part and (project is None or value != str(project)):
            part = part.replace(value, placeholder(name))
    path = Path(part)
    if not path.is_absolute():
        return part
    if project is not None and path.is_relative_to(project):
        return path.relative_to(project).as_posix() or "."
    if path.is_relative_to(Path.home()):
        return "~/" + path.relative_to(Path.home()).as_posix()
    return part


def _slug(words: Sequence[str]) -> str:
    whole = " ".join(words)
    name = _UNSAFE.sub("_", "-".join(word.strip("-") for word in words if word.strip("-"))).strip("._") or "server"
    if len(name) > _LONGEST:
        name = name[: _LONGEST - 11].rstrip("._-") + "-" + hashlib.sha1(whole.encode()).hexdigest()[:10]
    return name


def identify(
    command: str | None,
    args: Sequence[str] = (),
    cwd: str | None = None,
    *,
    url: str | None = None,
    names: Mapping[str, str] = {},
    project: Path | None = None,
    substitutions: Iterable[tuple[str, str | None]] = (),
    unsaid: Callable[[str], str] = str,
) -> Identity:
    """The identity of a stdio server (`command`, `args`, `cwd`) or an HTTP one (`url`); `unsaid`: each word of a
    command line with its secrets redacted (a `Redactor`'s `text`: no secret names a cassette, nor its
    meta.server). Raises UsageError when two of `names` claim the server."""
    if url is not None:
        parts = urlsplit(url)
        host = parts.hostname or ""
        words: tuple[str, ...] = (f"{host}:{parts.port}" if parts.port else host, *filter(None, parts.path.split("/")))
        shown: tuple[str, ...] = (bare_url(url),)
        seen = shown[0]
    else:
        subs = tuple(substitutions)
        # No credential names a cassette: its name is made of the words meta.server keeps.
        said = [portable(unsaid(str(part)), project, subs) for part in (command or "", *args)]
        words = tuple(server_words(said))
        if words and "/" in words[0]:
            words = (words[0].rsplit("/", 1)[-1], *words[1:])  # the program, wherever it lies
        if cwd is not None and (project is None or Path(cwd).resolve() != project):
            words += (f"in {portable(str(Path(cwd).resolve()), project, subs)}",)
        shown, seen = words, " ".join(unsaid(part) for part in [command or "", *args])
    claims = [name for name, fragment in names.items() if fragment and fragment in seen]
    if len(claims) > 1:
        raise UsageError(
            f"the server `{seen}` is claimed by {len(claims)} names: {', '.join(claims)}",
            "give each name a fragment of the command line (or URL) that only its server holds",
        )
    if claims:
        return Identity(_slug([claims[0]]), shown)
    return Identity(_slug(words), shown)
