"""A host of the SDK's 1.x line (httpx) beside vcrpy, for tests/test_beside_vcr.py: a model's request and an MCP
session over Streamable HTTP inside one `vcr.use_cassette`, the MCP server either one mockmcp serves (as the
plugin's HTTP mock server is: `serve_beside_vcr`) or one it intercepts and records.

    python sdk1_vcr_host.py MCP_URL MODEL_URL VCR_CASSETTE VCR_MODE served|intercept FOLDER
"""

import contextlib
import json
import sys

import anyio
import httpx
import vcr
from mcp import ClientSession
from mcp.client.streamable_http import streamablehttp_client

import mockmcp
from mockmcp import inprocess

URL, MODEL, CASSETTE, MODE, HOW, FOLDER = sys.argv[1:7]


async def main() -> None:
    if HOW == "served":
        inprocess.serve_beside_vcr(URL)
    mcp = mockmcp.intercepting(FOLDER, "once") if HOW == "intercept" else contextlib.nullcontext()
    with vcr.use_cassette(CASSETTE, record_mode=MODE), mcp:
        async with httpx.AsyncClient() as http:
            said = (await http.post(MODEL, json={"prompt": "hi", "n": 1})).json()
        async with streamablehttp_client(URL) as (read, write, _), ClientSession(read, write) as session:
            await session.initialize()
            result = await session.call_tool("read_file", {"path": "notes.txt"})
    print(json.dumps({"answer": said["answer"], "text": result.content[0].text}))


anyio.run(main)
