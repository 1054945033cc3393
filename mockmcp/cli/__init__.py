"""The command line: the click application, and the commands it adapts its options to."""

__all__: list[str] = []
