"""Start the suite's SDK servers without paying for the SDK's import each time.

Importing `mcp` costs about a second of CPU, and the suite starts the SDK's servers (examples/notes_server.py and
the like) dozens of times. `python forkserver.py serve SOCKET` imports the SDK once and waits; `python
forkserver.py run SCRIPT ARGS...` (or `run -m MODULE ARGS...`: a test's server command starts with conftest's
`SDK_PYTHON`) hands its stdin, stdout and stderr, its environment, folder and arguments to it. The forked child
runs SCRIPT as `__main__` on those pipes; the launcher stays as the process its host sees: it passes on the
signals it gets (SIGKILL to it kills the child) and exits as the child did. With no fork server listening (a
run that never started one), or from another environment's interpreter, `run` becomes `python SCRIPT ARGS...`.

Only the scripts that start as ordinary SDK servers go through it; a test about a process itself (its signals,
its exit, a server that ignores EOF) starts its own interpreter.
"""

from __future__ import annotations

import json
import os
import select
import signal
import socket
import sys

SOCKET = "MOCKMCP_TEST_FORKSERVER"  # the environment variable naming the fork server's socket
FORWARDED = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1, signal.SIGUSR2)


def run(path: str | None, argv: list[str]) -> None:
    """Run the script `argv[0]` through the fork server at `path`, or in this interpreter if none answers."""
    connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        if path is None:
            raise OSError
        connection.connect(path)
    except OSError:
        connection.close()
        os.execv(sys.executable, [sys.executable, *argv])
    spec = json.dumps({"argv": argv, "cwd": os.getcwd(), "env": dict(os.environ), "prefix": sys.prefix}).encode()
    socket.send_fds(connection, [spec], [0, 1, 2])
    if connection.recv(1) != b"+":  # another environment's interpreter (an SDK 1.x one), or no fork: on its own
        connection.close()
        os.execv(sys.executable, [sys.executable, *argv])
    quiet = os.open(os.devnull, os.O_RDWR)
    os.dup2(quiet, 0)
    os.dup2(quiet, 1)  # the child alone holds the pipes now: their ends close when it ends
    for number in FORWARDED:
        signal.signal(number, lambda number, frame: connection.sendall(f"{number}\n".encode()))
    said = b""
    while not said.endswith(b"\n") or said.count(b"\n") < 2:
        try:
            chunk = connection.recv(64)
        except InterruptedError:
            continue
        if not chunk:
            os._exit(70)  # the fork server went away: EX_SOFTWARE
        said += chunk
    status = int(said.split(b"\n")[1])
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        signal.signal(number, signal.SIG_DFL)
        os.kill(os.getpid(), number)
    os._exit(os.waitstatus_to_exitcode(status))


def serve(path: str) -> None:
    """Import the SDK, then fork a child for each launcher that connects, until SIGTERM or its parent is gone."""
    import mcp
    import mcp.server.mcpserver  # noqa: F401
    import mcp_types  # noqa: F401

    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(64)
    wake_read, wake_write = os.pipe()
    os.set_blocking(wake_write, False)
    signal.set_wakeup_fd(wake_write)
    signal.signal(signal.SIGCHLD, lambda number, frame: None)
    children: dict[int, socket.socket] = {}  # child pid -> its launcher's connection
    parent = os.getppid()
    print("ready", flush=True)
    while os.getppid() == parent:  # a run killed before it could stop this one leaves no fork server behind
        # A closed connection: its launcher went and its child, killed, is not reaped yet.
        waiting = [connection for connection in children.values() if connection.fileno() != -1]
        ready, _, _ = select.select([listener, wake_read, *waiting], [], [], 1.0)
        for source in ready:
            if source is listener:
                connection, _ = listener.accept()
                pid = _fork(connection, listener)
                if pid is None:
                    connection.sendall(b"-")
                    connection.close()
                    continue
                connection.sendall(f"+{pid}\n".encode())
                children[pid] = connection
            elif source == wake_read:
                os.read(wake_read, 512)
                _reap(children)
            else:
                pid = next(p for p, c in children.items() if c is source)
                asked = source.recv(64)
                try:
                    for line in asked.split() or [b"9"]:  # nothing: the launcher is gone, and so goes its child
                        os.kill(pid, int(line))
                except ProcessLookupError:
                    pass
                if not asked:
                    source.close()


def _fork(connection: socket.socket, listener: socket.socket) -> int | None:
    """Fork a child that runs the launcher's script on the launcher's pipes; in the parent, the child's pid (None:
    the launcher is another environment's interpreter, whose SDK is not the one imported here)."""
    message, fds, _, _ = socket.recv_fds(connection, 1 << 20, 3)
    spec = json.loads(message)
    if spec["prefix"] != sys.prefix:
        for fd in fds:
            os.close(fd)
        return None
    pid = os.fork()
    if pid:
        for fd in fds:
            os.close(fd)
        return pid
    status = 1
    try:
        listener.close()
        connection.close()
        signal.set_wakeup_fd(-1)
        for number in (signal.SIGCHLD, *FORWARDED):
            signal.signal(number, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
            os.close(fd)
        os.chdir(spec["cwd"])
        os.environ.clear()
        os.environ.update(spec["env"])
        import runpy

        if spec["argv"][0] == "-m":  # `-m MODULE ARGS...`, as `python -m` runs it
            sys.argv = spec["argv"][1:]
            sys.path[0] = spec["cwd"]
            runpy.run_module(sys.argv[0], run_name="__main__", alter_sys=True)
        else:
            sys.argv = spec["argv"]
            sys.path[0] = os.path.dirname(os.path.abspath(sys.argv[0]))
            runpy.run_path(sys.argv[0], run_name="__main__")
        status = 0
    except SystemExit as exit:
        status = exit.code if isinstance(exit.code, int) else (0 if exit.code is None else 1)
        if not isinstance(exit.code, int) and exit.code is not None:
            print(exit.code, file=sys.stderr)
    except BaseException:
        import traceback

        traceback.print_exc()
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):
                pass
        os._exit(status)


def _reap(children: dict[int, socket.socket]) -> None:
    """Tell each launcher whose child ended how it ended."""
    while children:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if not pid:
            return
        connection = children.pop(pid, None)
        if connection is not None and connection.fileno() != -1:
            try:
                connection.sendall(f"{status}\n".encode())
            except OSError:
                pass
            connection.close()


if __name__ == "__main__":
    if sys.argv[1] == "serve":
        serve(sys.argv[2])
    else:
        run(os.environ.get(SOCKET), sys.argv[2:])
