"""Record real ACP v1 traffic between the official Python SDK's client and agent classes.

Run it from an environment of its own that has the SDK (acplab does not need to be
installed there: the recorder is acplab's own command, found in the project's
``.venv`` or on ``PATH``, or given with ``--acplab``)::

    python3 -m venv /tmp/acp-sdk && /tmp/acp-sdk/bin/pip install agent-client-protocol==0.12.1
    /tmp/acp-sdk/bin/python scripts/record_sdk.py [--out-dir acplab-out/sdk-captures] [--acplab .venv/bin/acplab]

The captures go to ``./acplab-out/sdk-captures`` unless ``--out-dir`` says otherwise;
the committed fixtures in ``tests/fixtures`` change only when you name that folder.

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
import shutil
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
WORKSPACE = "/home/user/project"  # the cwd sent in session/new (no local paths in the fixtures)
DEFAULT_OUT = Path("acplab-out") / "sdk-captures"
SDK = "agent-client-protocol==0.12.1"


def sdk():
    """The SDK's modules (import name ``acp``); a one-line exit when this environment lacks it."""
    try:
        import acp
        import acp.schema
    except ImportError:
        sys.exit(f"record_sdk.py needs the ACP Python SDK in the Python that runs it ({sys.executable}): "
                 f"pip install {SDK}")
    return acp, acp.schema


def acplab_command(given: str | None) -> list[str]:
    """How to run ``acplab``: ``--acplab``, else the project's ``.venv``, else ``acplab`` on PATH."""
    for candidate in ([given] if given else [str(ROOT / ".venv" / "bin" / "acplab"), shutil.which("acplab")]):
        if candidate and Path(candidate).is_file():
            return [candidate]
    sys.exit("record_sdk.py needs acplab's recorder: install the project (.venv/bin/acplab), put acplab on PATH, "
             "or pass --acplab PATH")


# --------------------------------------------------------------------------- the tiny agent


class TinyAgent:
    """An ACP v1 agent: echoes the prompt back in two chunks; a prompt containing "fail" errors."""

    def __init__(self) -> None:
        self.acp, self.schema = sdk()
        self._conn: Any = None
        self._sessions = 0

    def on_connect(self, conn: Any) -> None:
        self._conn = conn

    async def initialize(self, protocol_version: int, client_capabilities: Any = None, client_info: Any = None,
                         **kwargs: Any) -> InitializeResponse:
        sc = self.schema
        return sc.InitializeResponse(protocol_version=self.acp.PROTOCOL_VERSION, agent_capabilities=sc.AgentCapabilities(),
                                     agent_info=sc.Implementation(name="tiny-sdk-agent", version="0.1.0"))

    async def new_session(self, cwd: str, mcp_servers: Any = None, **kwargs: Any) -> NewSessionResponse:
        self._sessions += 1
        return self.schema.NewSessionResponse(session_id=f"sess-{self._sessions}")

    async def prompt(self, session_id: str, prompt: list[Any], **kwargs: Any) -> PromptResponse:
        text = " ".join(getattr(block, "text", "") for block in prompt)
        if "fail" in text:
            raise self.acp.RequestError.internal_error({"reason": "scripted failure"})
        await self._conn.session_update(session_id, self.acp.update_agent_message_text("You said: "))
        await self._conn.session_update(session_id, self.acp.update_agent_message_text(text))
        return self.schema.PromptResponse(stop_reason="end_turn")

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        return None


async def run_tiny_agent() -> None:
    agent = TinyAgent()
    await agent.acp.run_agent(agent)


# --------------------------------------------------------------------------- the tiny client


class TinyClient:
    """An ACP v1 client that collects the agent's message chunks."""

    def __init__(self) -> None:
        self.chunks: list[str] = []

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        content = getattr(update, "content", None)
        self.chunks.append(getattr(content, "text", ""))

    async def request_permission(self, *args: Any, **kwargs: Any) -> Any:
        raise sdk()[0].RequestError.method_not_found("session/request_permission")


async def session(out: Path, prompts: list[str], acplab: list[str]) -> list[str]:
    """One recorded connection: initialize, session/new, the prompts in turn. Returns what happened."""
    acp, schema = sdk()
    client = TinyClient()
    log = []
    command = [*acplab, "trace", "record", "--force", "--out", str(out.resolve()), "--",
               sys.executable, str(Path(__file__).resolve()), "agent"]
    async with acp.spawn_agent_process(client, command[0], *command[1:], cwd=ROOT,
                                       transport_kwargs={"stderr": None}) as (conn, proc):
        init = await conn.initialize(protocol_version=acp.PROTOCOL_VERSION,
                                     client_info=schema.Implementation(name="tiny-sdk-client", version="0.1.0"))
        log.append(f"initialize -> protocolVersion {init.protocol_version}")
        new = await conn.new_session(cwd=WORKSPACE, mcp_servers=[])
        log.append(f"session/new -> {new.session_id}")
        for text in prompts:
            try:
                resp = await conn.prompt(session_id=new.session_id, prompt=[acp.text_block(text)])
                log.append(f'session/prompt "{text}" -> stopReason {resp.stop_reason}')
            except acp.RequestError as err:
                log.append(f'session/prompt "{text}" -> error {err.code} {err}')
    log.append("chunks: " + " | ".join(client.chunks))
    return log


SCENARIOS = {
    "sdk_v1_normal_turn": ["Hello, agent"],
    "sdk_v1_error_turn": ["please fail this turn"],
    "sdk_v1_identical_prompts": ["same text", "same text"],
}


async def record_all(out_dir: Path, acplab: list[str]) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    for name, prompts in SCENARIOS.items():
        path = out_dir / f"{name}.jsonl"
        log = await session(path, prompts, acplab)
        print(f"{path}:", *log, sep="\n  ")


def main() -> None:
    if sys.argv[1:2] == ["agent"]:
        asyncio.run(run_tiny_agent())
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out-dir", type=Path, default=DEFAULT_OUT,
                        help="folder for the captures (default: %(default)s; name tests/fixtures to refresh those)")
    parser.add_argument("--acplab", default=None, help="the acplab command (default: the project's .venv, or PATH)")
    args = parser.parse_args()
    acplab = acplab_command(args.acplab)
    sdk()
    asyncio.run(record_all(args.out_dir, acplab))


if __name__ == "__main__":
    main()
