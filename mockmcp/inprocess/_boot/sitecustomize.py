"""`mockmcp run`'s hook in each Python process of the program it runs (this folder is first on PYTHONPATH).

It starts interception when `MOCKMCP_RUN` is set, then hands over to the `sitecustomize` this one hides,
if the Python has one. A Python that cannot import mockmcp says so and runs unintercepted.
"""

import os
import sys

if os.environ.get("MOCKMCP_RUN"):
    try:
        from mockmcp.inprocess._run import boot_safely
    except ImportError as error:
        said = f"mockmcp run: {sys.executable} cannot import mockmcp ({error}); its MCP servers run live"
        print(said, file=sys.stderr)
    else:
        boot_safely()


def _chain() -> None:
    here = os.path.dirname(os.path.abspath(__file__))
    mine = sys.modules.pop("sitecustomize", None)
    kept = sys.path[:]
    sys.path[:] = [entry for entry in sys.path if os.path.abspath(entry or ".") != here]
    try:
        import sitecustomize  # noqa: F401  # the one this folder hid, if any
    except ImportError:
        if mine is not None:
            sys.modules["sitecustomize"] = mine
    finally:
        sys.path[:] = kept


_chain()
