"""Tools built on cassettes: lint, show (with one-line message summaries), drift, secrets scan."""

__all__: list[str] = []
