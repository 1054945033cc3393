"""Replay and record over stdio: the shells that carry out what the engine and the recorder decide.

replay     serve a cassette on stdin/stdout: one loop over the host's input, the signal descriptor, the timers
record     the transparent recording proxy between a host and a real server, journaled as it goes
toolkit    what every shell shares: lines, signals as a flag on a descriptor, pipes written whole without
           blocking where a signal cannot reach (select, or a thread per pipe where it takes only sockets)
processes  waiting for a child (pidfd, else a thread and a socket) and ending it; file locks (flock, else msvcrt)
spool      notes a thread writes, so a server's loop never waits on stderr
"""

__all__: list[str] = []
