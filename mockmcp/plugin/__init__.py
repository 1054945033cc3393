"""The pytest plugin: hooks and fixtures (`pytest_plugin`) over one test's mock server (`mock_server`)."""

__all__: list[str] = []
