"""This interpreter without what Windows' Python lacks, so the suite can run mockmcp's portable paths on Linux.

On PYTHONPATH (tests/test_portable.py puts it there) it takes away `select.poll`, `os.pidfd_open` and
`_socket.socketpair` (`socket` then builds its own, over loopback, as on Windows); and from mockmcp's modules,
`fcntl` and `termios`, and `select.select` on a descriptor that is not a socket, which Windows' refuses. The
test runner and the SDK (which imports fcntl on POSIX) keep those two: they are not under test.
"""

import builtins
import os
import select
import stat
import sys

assert "socket" not in sys.modules, "socket already bound _socket.socketpair"
del select.poll
if hasattr(os, "pidfd_open"):
    del os.pidfd_open
import _socket  # noqa: E402

if hasattr(_socket, "socketpair"):
    del _socket.socketpair

_select = select.select


def _sockets_only(rlist, wlist, xlist, timeout=None):  # type: ignore[no-untyped-def]
    if sys._getframe(1).f_globals.get("__name__", "").startswith("mockmcp"):
        for fd in (*rlist, *wlist, *xlist):
            if not stat.S_ISSOCK(os.fstat(fd if isinstance(fd, int) else fd.fileno()).st_mode):
                raise OSError(10038, "An operation was attempted on something that is not a socket")
    return _select(rlist, wlist, xlist, timeout)


select.select = staticmethod(_sockets_only)  # callable, and no method where a class keeps it (selectors)
_import = builtins.__import__


def _without_posix_modules(name, globals=None, locals=None, fromlist=(), level=0):  # type: ignore[no-untyped-def]
    if name in ("fcntl", "termios") and (globals or {}).get("__name__", "").startswith("mockmcp"):
        raise ImportError(f"No module named {name!r}", name=name)
    return _import(name, globals, locals, fromlist, level)


builtins.__import__ = _without_posix_modules
