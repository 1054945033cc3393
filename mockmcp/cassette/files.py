"""Files: atomic writes, and the cache of parsed cassettes that keeps YAML off the start-up path.

A cassette's parsed data is kept as JSON, stamped with its path and a hash of its bytes (an edit can keep size
and time), signed with a key only this user can read, and read only from this user's regular files within a
size bound; anything odd is a miss. The cache folder also keeps, per cassette, which run last saved a recording
into it (`runs/`): a run is the host process that starts the recorders (their parent), so a later start of the
same server by the same host records a further session instead of replaying the first (`begun_by_this_run`).
A shell is no host: each command it starts is a run of its own, as is every start without a cache folder.
"""

from __future__ import annotations

import json
import os
import stat
import zlib

try:  # hmac.compare_digest itself, without hashlib's OpenSSL binding that hmac imports (start-up rules)
    from _operator import _compare_digest
except ImportError:  # another Python than CPython
    from hmac import compare_digest as _compare_digest

from mockmcp import __version__

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "atomic_write",
    "begun_by_this_run",
    "digest",
    "file_digest",
    "journal_path",
    "mark_run",
    "read_cache",
    "this_run",
    "write_cache",
]


def atomic_write(path: str, text: str) -> None:
    """Write text to path so that readers see the old file or the new one, never a part, even after a crash
    (synced before the rename, the folder after it). The file keeps its mode; a link's target is replaced."""
    if os.path.islink(path):
        path = os.path.realpath(path)
    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    try:
        mode = os.stat(path).st_mode & 0o7777
    except FileNotFoundError:  # a new file: the umask's
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask
    _replace(path, text.encode("utf-8"), mode, sync=True)
    try:  # the rename made durable; a file system that cannot sync a folder is left as it is
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
    except OSError:
        pass


def _replace(path: str, data: bytes, mode: int, sync: bool) -> None:
    """Put data at path by renaming a fresh file (mkstemp) over it, removed again should anything fail."""
    import tempfile  # deferred: it costs start-up time, and replay writes files only on request

    fd, tmp = tempfile.mkstemp(prefix=".mockmcp-", suffix=".tmp", dir=os.path.dirname(path) or ".")
    try:
        os.fchmod(fd, mode)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            if sync:
                handle.flush()
                os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def journal_path(cassette_path: str) -> str:
    """Where a recording journals a cassette's session before the cassette is written (see `journal`)."""
    return cassette_path + ".journal"


def _cache_folder() -> str | None:
    explicit = os.environ.get("MOCKMCP_CACHE_DIR")
    if explicit is not None:
        return explicit or None
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "mockmcp")


def digest(raw: bytes, key: bytes = b"") -> str:
    """The hash of a cassette's bytes, which tells one version of its file from another (with a key: a signature)."""
    try:  # the hash itself, without hashlib's OpenSSL binding (milliseconds of start-up)
        from _blake2 import blake2b
    except ImportError:  # another Python than CPython
        from hashlib import blake2b
    return blake2b(raw, digest_size=20, key=key).hexdigest()


def _entry(path: str, hashed: str) -> tuple[str | None, dict[str, Any]]:
    """Where the cassette at path is cached, and the stamp its cache file must carry to be served."""
    real = os.path.realpath(path)
    stamp = {"mockmcp": __version__, "source": real, "blake2b": hashed}
    folder = _cache_folder()
    if folder is None:
        return None, stamp
    name = f"{zlib.crc32(real.encode()):08x}-{os.path.basename(real)[:80]}.json"
    return os.path.join(folder, name), stamp


_KEY_FILE = "key"
_KEY_SIZE = 32
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)


def _read_private(file: str, limit: int) -> bytes | None:
    """The bytes of file when it is this user's regular file (no link, no FIFO) within limit; None otherwise."""
    try:
        fd = os.open(file, os.O_RDONLY | _NOFOLLOW | _NONBLOCK)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_uid != os.getuid() or info.st_size > limit:
            return None
        with os.fdopen(os.dup(fd), "rb") as handle:
            return handle.read(limit + 1)
    except OSError:
        return None
    finally:
        os.close(fd)


def _key(folder: str, create: bool) -> bytes | None:
    """This user's secret for the cache folder, made on first use: anyone who can read a cassette can compute
    its hash, so a cache file is served only when signed with this key."""
    key = _read_private(os.path.join(folder, _KEY_FILE), _KEY_SIZE)
    if key is not None or not create:
        return key if key is not None and len(key) == _KEY_SIZE else None
    try:
        fd = os.open(os.path.join(folder, _KEY_FILE), os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o600)
    except OSError:  # another process made it first: its key is read next time
        return None
    with os.fdopen(fd, "wb") as handle:
        key = os.urandom(_KEY_SIZE)
        handle.write(key)
    return key


def read_cache(path: str, raw: bytes, hashed: str) -> Any:
    """The data cached for the cassette at path whose bytes are raw (their `digest`: hashed), or None (a miss)."""
    file, stamp = _entry(path, hashed)
    blob = None if file is None else _read_private(file, 4 * len(raw) + (1 << 16))  # larger: no cache file of ours
    key = None if file is None or blob is None else _key(os.path.dirname(file), create=False)
    if blob is None or key is None:
        return None
    signature, _, body = blob.partition(b"\n")
    try:
        cached = json.loads(body) if _compare_digest(signature, digest(body, key).encode()) else None
    except (ValueError, RecursionError):
        return None
    return cached.get("data") if isinstance(cached, dict) and cached.get("stamp") == stamp else None


def write_cache(path: str, hashed: str, data: Any, mode: int) -> None:
    """Cache the parsed data of the cassette whose bytes have the `digest` hashed, with the cassette's mode, in
    a folder made 0700, under a fresh name (mkstemp) renamed into place; skipped when it cannot be written."""
    file, stamp = _entry(path, hashed)
    if file is None:
        return
    try:
        body = json.dumps({"stamp": stamp, "data": data}, ensure_ascii=False, allow_nan=False).encode()
        os.makedirs(os.path.dirname(file), mode=0o700, exist_ok=True)
        key = _key(os.path.dirname(file), create=True)
        if key is not None:  # not fsynced, unlike atomic_write: a torn cache file is a miss, and first starts count
            _replace(file, digest(body, key).encode() + b"\n" + body, mode & 0o666, sync=False)
    except (OSError, TypeError, ValueError, RecursionError):  # data JSON cannot hold, which loading refuses anyway
        pass


# --- runs -----------------------------------------------------------------------------------------


def is_shell(name: str) -> bool:
    """Whether a process's name (`/proc`'s, or `ps -o comm=`'s: a path, a login shell's `-bash`) is a shell's:
    the commands typed in one terminal are runs of their own, so `record --record-mode rewrite` twice records twice."""
    shells = ("sh", "bash", "dash", "zsh", "ksh", "mksh", "fish", "tcsh", "csh", "nu", "pwsh", "cmd.exe")
    return os.path.basename(name.strip()).lstrip("-").lower() in shells


def this_run() -> str:
    """The run this process belongs to: its parent, named by pid and start (field 22 of /proc/PID/stat and the
    boot's id; else what `ps -o lstart=` says, on macOS and the BSDs; else the pid alone); where the parent is a
    shell, a run of its own."""
    parent = os.getppid()
    try:
        with open(f"/proc/{parent}/stat", "rb") as stat_file:
            name, _, rest = stat_file.read().partition(b" (")[2].rpartition(b")")  # the name may hold spaces
        with open("/proc/sys/kernel/random/boot_id", "rb") as boot_file:
            boot = boot_file.read().strip().decode()
        # Field 22 (the first after the name is field 3), and the name.
        said = [f"{rest.split()[19].decode()}/{boot}", name.decode(errors="replace")]
    except (OSError, IndexError, UnicodeDecodeError):
        import subprocess  # deferred: only where /proc is missing

        try:
            ps = ["ps", "-p", str(parent), "-o"]
            said = [
                subprocess.run([*ps, f"{column}="], capture_output=True, text=True, timeout=10).stdout.strip()
                for column in ("lstart", "comm")
            ]
        except (OSError, subprocess.SubprocessError):
            said = ["", ""]
    if is_shell(said[1]):  # a run no other process belongs to, the same each time this process asks
        return _OWN.setdefault(os.getpid(), f"self {os.getpid()}@{os.urandom(8).hex()}")
    return f"{parent}@{said[0]}" if said[0] else str(parent)


_OWN: dict[int, str] = {}  # by pid: a forked child's run is its own


def _run_file(cassette_path: str) -> str | None:
    folder = _cache_folder()
    if folder is None:
        return None
    real = os.path.realpath(cassette_path)
    return os.path.join(folder, "runs", f"{digest(real.encode())}.json")


def mark_run(cassette_path: str, run: str) -> None:
    """Say that `run` saved the cassette as it now is (skipped when it cannot be written: the next start replays)."""
    file = _run_file(cassette_path)
    saved = file_digest(cassette_path) if file is not None else None
    if file is None or saved is None:
        return
    body = json.dumps({"cassette": os.path.realpath(cassette_path), "run": run, "blake2b": saved})
    try:
        os.makedirs(os.path.dirname(file), mode=0o700, exist_ok=True)
        if not os.path.exists(file):  # a cassette new to the folder: the notes of cassettes since gone go first
            _prune_runs(os.path.dirname(file))
        _replace(file, body.encode() + b"\n", 0o600, sync=False)
    except OSError:
        pass


def _prune_runs(folder: str) -> None:
    """Remove the run notes of cassettes that no longer exist (a test's temporary folder, a plugin's staged file)."""
    for name in (name for name in os.listdir(folder) if name.endswith(".json")):  # not a note being written
        cassette = _note(os.path.join(folder, name)).get("cassette")
        if not isinstance(cassette, str) or not os.path.exists(cassette):
            try:
                os.unlink(os.path.join(folder, name))
            except OSError:
                pass


def _note(file: str | None) -> dict[str, Any]:
    """A run note's data; empty when there is none, or it is no note mockmcp wrote."""
    blob = None if file is None else _read_private(file, 1 << 12)  # a note is a line of JSON
    try:
        note = json.loads(blob) if blob is not None else None
    except ValueError:
        return {}
    return note if isinstance(note, dict) else {}


def begun_by_this_run(cassette_path: str) -> bool:
    """Whether this process's run saved the cassette as it now is: a later start of its server in the run."""
    marked = _note(_run_file(cassette_path))
    if marked.get("cassette") != os.path.realpath(cassette_path) or marked.get("run") != this_run():
        return False
    saved = file_digest(cassette_path)
    return saved is not None and marked.get("blake2b") == saved


def file_digest(path: str) -> str | None:
    """The `digest` of the file's bytes; None when it cannot be read."""
    try:
        with open(path, "rb") as handle:
            return digest(handle.read())
    except OSError:
        return None
