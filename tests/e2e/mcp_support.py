"""Helpers for the MCP end-to-end tests: start `codeseek mcp` with the SDK's own stdio client."""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.types import CallToolResult, TextContent

CODESEEK = Path(sys.executable).parent / "codeseek"


def environment(tmp: Path) -> dict[str, str]:
    """What the server process needs: this checkout's code, an offline hub, a private cache dir (the
    static model is shared: building it again would take minutes)."""
    env = {"HF_HUB_OFFLINE": "1", "XDG_CACHE_HOME": str(tmp / "cache"), "HOME": str(tmp / "home")}
    for name in ("PYTHONPATH", "CODESEEK_MODEL_DIR"):  # the model `make setup` built (tests/conftest.py)
        if os.environ.get(name):
            env[name] = os.environ[name]
    (tmp / "home").mkdir(exist_ok=True)
    return env


@asynccontextmanager
async def mcp_session(command: str, args: list[str], env: dict[str, str], cwd: Path,
                      errlog: Any = None) -> AsyncIterator[ClientSession]:
    params = StdioServerParameters(command=command, args=args, env=env, cwd=str(cwd))
    async with stdio_client(params, errlog=errlog or sys.stderr) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            yield session


def text_of(result: CallToolResult) -> str:
    assert result.content and isinstance(result.content[0], TextContent)
    return result.content[0].text


async def call(session: ClientSession, tool: str, **arguments: Any) -> dict[str, Any]:
    """A tool call that must succeed; its JSON answer (text and structured content agree)."""
    result = await session.call_tool(tool, arguments)
    assert not result.is_error, text_of(result)
    doc: dict[str, Any] = json.loads(text_of(result))
    assert result.structured_content == doc
    return doc


async def wait_indexed(session: ClientSession, timeout: float = 120.0,
                       states: tuple[str, ...] = ("text-only", "ready")) -> dict[str, Any]:
    """Poll the status tool until the first refresh is done (and the state is one of `states`)."""
    deadline = time.monotonic() + timeout
    while True:
        status = await call(session, "status")
        if status["state"] in states and not status["refreshing"]:
            return status
        assert time.monotonic() < deadline, status
        await asyncio.sleep(0.1)
