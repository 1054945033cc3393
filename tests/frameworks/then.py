"""`python then.py HOST.py A B`: the host program run with argument A, then again in the same process with B.

The matrix replays A (recorded) and asks B (not recorded) in one run: the framework is imported once, and
the run's verdict explains B's miss. What B raises is the host's own business: the verdict tells it.
"""

import runpy
import sys
import traceback

host, first, *rest = sys.argv[1:]
sys.argv = [host, first]
runpy.run_path(host, run_name="__main__")
sys.stdout.flush()
for argument in rest:
    sys.argv = [host, argument]
    try:
        runpy.run_path(host, run_name="__main__")
    except BaseException:  # a host that gives up on a refused call: the verdict says why
        traceback.print_exc()
