"""The pytest plugin: `pytest_plugin` holds the hooks and fixtures pytest loads; the rest is private.

pytest_plugin  hooks, and small fixtures each answering one question, each overridable alone
_mock_server   what a test sees of its mock servers (`mockmcp.MockServer`); the marker's `config=`, a host's config
_harness       one mock server of a test: the command the host launches, the HTTP server it starts, the transport
_story         the test's story in pytest's terms: why it cannot run, the verdict, its sessions as an HTML page
_keeping       a recording staged beside the cassette, kept or discarded (`fate`); what a stopped run left behind
_privacy       what a recording keeps: redaction, substitutions, before_record, a portable meta.server
_naming        a test's cassette name (`.mcp.yaml`, its old name found), whose a file is, the marker, the orphans
_launch        notes each server the host launches (pid, stderr, exit status)
_pairing       a test whose model's API is in a VCR cassette too: the record modes mapped, each side's verdict and file
"""

__all__: list[str] = []
