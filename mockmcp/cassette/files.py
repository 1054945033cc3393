"""Files: atomic writes, and the cache of parsed cassettes that keeps YAML off the start-up path.

Theory of operation for the cache. Parsing YAML is the slowest part of starting a replay (importing
PyYAML alone costs more than the rest of mockmcp), and a host's test suite starts the same
cassettes again and again. So the data parsed from a cassette is kept as JSON in a cache folder,
stamped like Python's own bytecode cache with the cassette's path, size and modification time;
a stamp that does not match is a miss. The cached data is validated again on every load, exactly
like freshly parsed data, so the cache can make loading faster but never different.

The folder is `$MOCKMCP_CACHE_DIR`, else `$XDG_CACHE_HOME/mockmcp`, else `~/.cache/mockmcp`; set
`MOCKMCP_CACHE_DIR` to an empty string to turn the cache off. A cache that cannot be written is
silently skipped: it is only ever an optimization.
"""

from __future__ import annotations

import json
import os
import zlib

from mockmcp import __version__

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["atomic_write", "journal_path", "read_cache", "write_cache"]


def atomic_write(path: str, text: str) -> None:
    """Write text to path so that readers see the old file or the new one, never a part.

    The data is flushed to disk before the rename, and the folder after it, so a crash cannot
    leave a half-written file under the real name nor lose the rename; on any failure the
    temporary file is removed and the old file kept. The file keeps the mode it had (a new one
    gets the umask's). A path that is a symbolic link is written through: its target is replaced,
    the link stays.
    """
    import tempfile  # deferred: it costs start-up time, and replay writes files only on request

    if os.path.islink(path):
        path = os.path.realpath(path)
    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".mockmcp-", suffix=".tmp", dir=folder)
    try:
        os.fchmod(fd, _mode_for(path))
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    _sync_folder(folder)


def _sync_folder(folder: str) -> None:
    """Make a rename in folder durable; a file system that cannot sync a folder is left as it is."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def journal_path(cassette_path: str) -> str:
    """Where a recording journals a cassette's session before the cassette is written (see `journal`)."""
    return cassette_path + ".journal"


def _mode_for(path: str) -> int:
    """The permissions the file would have if written in place: the old file's, or the umask's."""
    try:
        return os.stat(path).st_mode & 0o7777
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def _cache_folder() -> str | None:
    explicit = os.environ.get("MOCKMCP_CACHE_DIR")
    if explicit is not None:
        return explicit or None
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "mockmcp")


def _stamp(path: str, stat: os.stat_result) -> tuple[str | None, dict[str, Any]]:
    real = os.path.realpath(path)
    stamp = {"mockmcp": __version__, "source": real, "size": stat.st_size, "mtime_ns": stat.st_mtime_ns}
    folder = _cache_folder()
    if folder is None:
        return None, stamp
    name = f"{zlib.crc32(real.encode()):08x}-{os.path.basename(real)[:80]}.json"
    return os.path.join(folder, name), stamp


def read_cache(path: str, stat: os.stat_result) -> Any:
    """The data cached for this cassette, or None when there is none or it is stale."""
    file, stamp = _stamp(path, stat)
    if file is None:
        return None
    try:
        with open(file, "rb") as handle:
            blob = json.load(handle)
    except (OSError, ValueError):
        return None
    if not isinstance(blob, dict) or blob.get("stamp") != stamp:
        return None
    return blob.get("data")


def write_cache(path: str, stat: os.stat_result, data: Any) -> None:
    """Cache the parsed data of a cassette, when it is plain JSON data (it nearly always is)."""
    file, stamp = _stamp(path, stat)
    if file is None:
        return
    try:
        text = json.dumps({"stamp": stamp, "data": data}, ensure_ascii=False, allow_nan=False)
        # YAML can hold what JSON cannot (non-string keys, explicit tags): such data is not cached.
        if json.loads(text)["data"] != data:
            return
        # Not atomic_write: a cache needs no fsync (a torn file only fails to parse, a miss), and
        # this runs on the first start of every cassette, where time counts.
        os.makedirs(os.path.dirname(file), exist_ok=True)
        tmp = f"{file}.{os.getpid()}.tmp"
        with open(tmp, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(tmp, file)
    except (OSError, TypeError, ValueError):
        pass
