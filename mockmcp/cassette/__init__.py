"""The cassette: its model (frozen data), validation with located problems, the YAML dialect,
loading and atomic saving, the cache of parsed cassettes, and the journal of a recording.

`model` and `validation` are pure; `store`, `files` and `journal` touch the disk.
"""

__all__: list[str] = []
