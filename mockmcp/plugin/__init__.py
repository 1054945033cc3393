"""The pytest plugin: `pytest_plugin` holds the hooks and fixtures pytest loads; the rest is private.

`mockmcp.MockServer` is what a test's `mockmcp` fixture gives it.
"""

__all__: list[str] = []
