"""The cassette: its model (frozen data), validation with located problems, the YAML dialect,
loading and atomic saving, and the cache of parsed cassettes.

`model` and `validation` are pure; `store` and `files` touch the disk. (The journal a recording
appends to is a shell's file: `mockmcp.record._journal`.)
"""

__all__: list[str] = []
