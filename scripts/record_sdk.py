"""Record real ACP v1 traffic between the official Python SDK's client and agent classes.

    python scripts/record_sdk.py [--out-dir tests/fixtures]

Needs the SDK: ``pip install agent-client-protocol==0.12.1`` (import name ``acp``).

A tiny agent (``python scripts/record_sdk.py agent``, built on the SDK's
agent side: ``acp.run_agent`` -> ``AgentSideConnection``) answers
``initialize``, ``session/new`` and ``session/prompt``: each prompt streams two
``agent_message_chunk`` ``session/update`` notifications and returns
``{"stopReason": "end_turn"}``; a prompt whose text contains "fail" is answered
with a JSON-RPC error instead. A tiny client (the SDK's client side:
``acp.spawn_agent_process`` -> ``ClientSideConnection``) spawns the agent
*through* ``acplab trace record``, so the capture holds what crossed the wire:

    sdk_v1_normal_turn.jsonl        initialize, session/new, one prompt -> end_turn
    sdk_v1_error_turn.jsonl         initialize, session/new, one prompt -> JSON-RPC error
    sdk_v1_identical_prompts.jsonl  initialize, session/new, two prompts with the same text, one after the other
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
WORKSPACE = "/home/user/project"  # the cwd sent in session/new (no local paths in the fixtures)

try:
    import acp
    from acp import PROTOCOL_VERSION, RequestError, text_block, update_agent_message_text
    from acp.schema import AgentCapabilities, Implementation, InitializeResponse, NewSessionResponse, PromptResponse
except ImportError:  # pragma: no cover
    sys.exit("record_sdk.py needs the ACP Python SDK: pip install agent-client-protocol==0.12.1")


# --------------------------------------------------------------------------- the tiny agent


class TinyAgent:
    """An ACP v1 agent: echoes the prompt back in two chunks; a prompt containing "fail" errors."""

    def __init__(self) -> None:
        self._conn: Any = None
        self._sessions = 0

    def on_connect(self, conn: Any) -> None:
        self._conn = conn

    async def initialize(self, protocol_version: int, client_capabilities: Any = None, client_info: Any = None,
                         **kwargs: Any) -> InitializeResponse:
        return InitializeResponse(protocol_version=PROTOCOL_VERSION, agent_capabilities=AgentCapabilities(),
                                  agent_info=Implementation(name="tiny-sdk-agent", version="0.1.0"))

    async def new_session(self, cwd: str, mcp_servers: Any = None, **kwargs: Any) -> NewSessionResponse:
        self._sessions += 1
        return NewSessionResponse(session_id=f"sess-{self._sessions}")

    async def prompt(self, session_id: str, prompt: list[Any], **kwargs: Any) -> PromptResponse:
        text = " ".join(getattr(block, "text", "") for block in prompt)
        if "fail" in text:
            raise RequestError.internal_error({"reason": "scripted failure"})
        await self._conn.session_update(session_id, update_agent_message_text("You said: "))
        await self._conn.session_update(session_id, update_agent_message_text(text))
        return PromptResponse(stop_reason="end_turn")

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        return None


async def run_tiny_agent() -> None:
    await acp.run_agent(TinyAgent())


# --------------------------------------------------------------------------- the tiny client


class TinyClient:
    """An ACP v1 client that collects the agent's message chunks."""

    def __init__(self) -> None:
        self.chunks: list[str] = []

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        content = getattr(update, "content", None)
        self.chunks.append(getattr(content, "text", ""))

    async def request_permission(self, *args: Any, **kwargs: Any) -> Any:
        raise RequestError.method_not_found("session/request_permission")


async def session(out: Path, prompts: list[str]) -> list[str]:
    """One recorded connection: initialize, session/new, the prompts in turn. Returns what happened."""
    client = TinyClient()
    log = []
    command = [sys.executable, "-m", "acplab.model.app.cli", "trace", "record", "--force", "--out", str(out), "--",
               sys.executable, str(Path(__file__).resolve()), "agent"]
    async with acp.spawn_agent_process(client, command[0], *command[1:], cwd=ROOT,
                                       transport_kwargs={"stderr": None}) as (conn, proc):
        init = await conn.initialize(protocol_version=PROTOCOL_VERSION,
                                     client_info=Implementation(name="tiny-sdk-client", version="0.1.0"))
        log.append(f"initialize -> protocolVersion {init.protocol_version}")
        new = await conn.new_session(cwd=WORKSPACE, mcp_servers=[])
        log.append(f"session/new -> {new.session_id}")
        for text in prompts:
            try:
                resp = await conn.prompt(session_id=new.session_id, prompt=[text_block(text)])
                log.append(f"session/prompt {text!r} -> stopReason {resp.stop_reason}")
            except RequestError as err:
                log.append(f"session/prompt {text!r} -> error {err.code} {err}")
    log.append(f"chunks: {client.chunks}")
    return log


SCENARIOS = {
    "sdk_v1_normal_turn": ["Hello, agent"],
    "sdk_v1_error_turn": ["please fail this turn"],
    "sdk_v1_identical_prompts": ["same text", "same text"],
}


async def record_all(out_dir: Path) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    for name, prompts in SCENARIOS.items():
        path = out_dir / f"{name}.jsonl"
        log = await session(path, prompts)
        print(f"{path}:", *log, sep="\n  ")


def main() -> None:
    if sys.argv[1:2] == ["agent"]:
        asyncio.run(run_tiny_agent())
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out-dir", type=Path, default=ROOT / "tests" / "fixtures")
    args = parser.parse_args()
    asyncio.run(record_all(args.out_dir))


if __name__ == "__main__":
    main()
