"""Credentials in text mockmcp keeps: the shapes of known keys, and a server's command line or URL as a
cassette names it (its `meta.server` and its name get committed).

Each secret becomes `[REDACTED]`: the value of a flag named for one (`--api-key X`, `--token=X`), a URL's
password and the values of its query keys named for one (`postgres://app:PASS@db`, `?key=...`), anything
shaped like a known key (`ghp_...`, `sk-...`); the server's own URL is kept bare (no credentials, query or
fragment). Recording, interception's cassette names and lint all ask here.
"""

from __future__ import annotations

import re

from mockmcp._wire.words import REDACTED

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["EDGE", "KINDS", "REDACTED", "bare_url", "credentials_in", "secret_variable", "server_words"]

EDGE = r"(?<![A-Za-z0-9_-])"  # a key starts at a word's edge, not inside a longer identifier
# Most specific first: on the same span the earlier kind wins (an Anthropic key is also `sk-...`).
KINDS = (
    ("an Anthropic API key", r"sk-ant-[A-Za-z0-9_-]{20,}"),
    ("an OpenAI-style API key", r"sk-[A-Za-z0-9_-]{20,}"),
    ("a GitHub token", r"gh[pousr]_[A-Za-z0-9]{30,}"),
    ("a GitHub fine-grained token", r"github_pat_[A-Za-z0-9_]{22,}"),
    ("an AWS access key id", r"(?:AKIA|ASIA)[0-9A-Z]{16}(?![0-9A-Za-z])"),
    ("a Slack token", r"xox[baprs]-[A-Za-z0-9-]{10,}"),
    ("a Google API key", r"AIza[0-9A-Za-z_-]{35}"),
    ("a JSON Web Token", r"eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*"),
    ("a bearer token", r"(?i:bearer)\s+(?P<secret>[A-Za-z0-9._~+/-]{16,}=*)"),
    ("a private key", r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----"),
)
_SHAPES = re.compile("|".join(f"{EDGE}(?:{pattern.replace('?P<secret>', '')})" for _kind, pattern in KINDS))

# A name that says its value is a secret (a flag's, a query key's): ending in one of the first words (`--x-api-key`,
# `--github-token`), or one of the short ones alone (`--key`, not `--sort-key`); `--no-...` switches something off.
_SECRET_NAME = re.compile(
    r"(?i)^(?!no[-_])(?:(?:.*[-_])?(?:api[-_]?key|access[-_]?key|secret(?:[-_]?key)?|token|password|passwd|pwd"
    r"|credentials?|private[-_]?key|signature)|key|pass|auth|sig)$"
)
_FLAG = re.compile(r"^(--?)([A-Za-z][A-Za-z0-9_-]*)(=(.*))?$", re.S)
_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")


def secret_variable(name: str) -> bool:
    """Whether an environment variable's name (`GITHUB_TOKEN`) says its value is a secret, as a flag's would; but
    for the shell's working folder, `PWD`, which a flag would name a password."""
    return name != "PWD" and _SECRET_NAME.match(name) is not None


def bare_url(url: str) -> str:
    """A server's URL as a cassette names it: without credentials (userinfo), query or fragment."""
    from urllib.parse import urlsplit  # deferred: a recording needs it, a replay beside a journal does not

    parts = urlsplit(url)
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme}://{parts.hostname or ''}{port}{parts.path}"


def _url(word: str) -> tuple[str, str]:
    """A URL in a server's arguments with its password and secret query values replaced, and what was."""
    from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

    try:
        parts = urlsplit(word)
        password = parts.password
    except ValueError:  # not a URL after all (a bad port, a bracket)
        return word, ""
    why = []
    if password:
        parts = parts._replace(netloc=parts.netloc.replace(f":{password}@", f":{REDACTED}@", 1))
        why.append("a URL's password")
    query = parse_qsl(parts.query, keep_blank_values=True)
    secret = [key for key, value in query if value and _SECRET_NAME.match(key)]
    if secret:
        why.append("a URL's " + ", ".join(f"?{key}=" for key in secret))
        kept = [(key, REDACTED if value and key in secret else value) for key, value in query]
        parts = parts._replace(query=urlencode(kept, safe="[]"))
    return urlunsplit(parts), " and ".join(why)


def _judged(words: Sequence[str]) -> list[tuple[str, str]]:
    """Each word as a cassette keeps it, and what credential it held ("" for none)."""
    if len(words) == 1 and words[0].startswith(("http://", "https://")):  # a remote server: named by its bare URL
        return [(bare_url(words[0]), "a URL's credentials or query" if bare_url(words[0]) != words[0] else "")]
    judged: list[tuple[str, str]] = []
    after: str | None = None  # the flag named for a secret whose value is the next word
    for word in words:
        flag = _FLAG.match(word)
        secret_flag = flag.group(1) + flag.group(2) if flag and _SECRET_NAME.match(flag.group(2)) else None
        if after is not None and not word.startswith("-") and not _placeheld(word):
            judged.append((REDACTED, f"the value of {after}"))
        elif secret_flag and flag and flag.group(4) and not _placeheld(flag.group(4)):
            judged.append((f"{secret_flag}={REDACTED}", f"the value of {secret_flag}"))
        elif flag and flag.group(4):  # --url=VALUE: the value judged as a word of its own
            value, why = _value(flag.group(4))
            judged.append((f"{flag.group(1)}{flag.group(2)}={value}", why))
        else:
            judged.append(_value(word))
        after = secret_flag if flag and flag.group(3) is None else None
    return judged


def _value(word: str) -> tuple[str, str]:
    """A word that is no flag (or a flag's value): a URL with its password and secret query values replaced,
    known key shapes replaced; what it held."""
    word, why = _url(word) if _URL.match(word) else (word, "")
    if _SHAPES.search(word):
        return _SHAPES.sub(REDACTED, word), " and ".join(filter(None, (why, "a known key's shape")))
    return word, why


def _placeheld(word: str) -> bool:
    return word.startswith(("${", "[REDACTED"))


def server_words(words: Sequence[str]) -> list[str]:
    """A server's command line (or its URL, alone) as a cassette names it: every credential `[REDACTED]`."""
    return [word for word, _why in _judged(words)]


def credentials_in(words: Sequence[str]) -> list[tuple[int, str]]:
    """Where a server's command line holds a credential: (the word's index, what it is)."""
    return [(index, why) for index, (_word, why) in enumerate(_judged(words)) if why]
