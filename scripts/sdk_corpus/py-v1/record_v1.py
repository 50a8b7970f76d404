"""Record real ACP v1 traffic between the official Python SDK's agent and client sides.

    .venv/bin/python record_v1.py [--only NAME[,NAME...]] [--out-dir captures] [--acplab PATH]

Needs ``agent-client-protocol==0.12.1`` (import name ``acp``) in this folder's
``.venv``. A small agent (``record_v1.py agent BEHAVIOUR``, built on
``acp.run_agent`` -> ``AgentSideConnection``) is spawned by the SDK's client side
(``acp.spawn_agent_process`` -> ``ClientSideConnection``) *through*
``acplab trace record``, so every capture holds exactly what crossed the wire.
Each scenario NAME runs the agent with the behaviour of the same name and
writes ``captures/NAME.jsonl``.

The SDK's typed ``PromptResponse`` only admits the five v1 stop reasons (a
pydantic ``Literal``), so the two W14 behaviours return a plain dict from
``prompt``; the SDK's connection layer sends dict results unvalidated. Everything
else uses the SDK's models and helpers.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from pathlib import Path
from typing import Any

import acp
from acp import (
    PROTOCOL_VERSION,
    RequestError,
    start_tool_call,
    text_block,
    tool_content,
    update_agent_message_text,
    update_tool_call,
    update_user_message_text,
)
from acp.schema import (
    AgentCapabilities,
    AllowedOutcome,
    Implementation,
    InitializeResponse,
    NewSessionResponse,
    PermissionOption,
    PromptResponse,
    RequestPermissionResponse,
    ToolCallUpdate,
)

HERE = Path(__file__).resolve().parent
WORKSPACE = "/home/user/project"  # the cwd sent in session/new (no local paths in captures)


# --------------------------------------------------------------------------- the agent


class CorpusAgent:
    """A v1 agent whose behaviour is picked by name (see BEHAVIOURS)."""

    def __init__(self, behaviour: str) -> None:
        self.behaviour = behaviour
        self._conn: Any = None
        self._sessions = 0
        self._tools = 0
        self._cancelled: dict[str, asyncio.Event] = {}

    def on_connect(self, conn: Any) -> None:
        self._conn = conn

    async def initialize(self, protocol_version: int, client_capabilities: Any = None, client_info: Any = None,
                         **kwargs: Any) -> InitializeResponse:
        return InitializeResponse(protocol_version=PROTOCOL_VERSION, agent_capabilities=AgentCapabilities(),
                                  agent_info=Implementation(name="acplab-corpus-v1-agent", version="0.1.0"))

    async def new_session(self, cwd: str, mcp_servers: Any = None, **kwargs: Any) -> NewSessionResponse:
        self._sessions += 1
        return NewSessionResponse(session_id=f"sess_{self._sessions}")

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        self._cancelled.setdefault(session_id, asyncio.Event()).set()

    def _tool_id(self) -> str:
        self._tools += 1
        return f"call_{self._tools}"

    async def _say(self, session_id: str, *parts: str) -> None:
        for part in parts:
            await self._conn.session_update(session_id, update_agent_message_text(part))

    async def prompt(self, session_id: str, prompt: list[Any], **kwargs: Any) -> Any:
        text = " ".join(getattr(block, "text", "") for block in prompt)
        b = self.behaviour
        cancel = self._cancelled.setdefault(session_id, asyncio.Event())
        cancel.clear()
        if b in ("v1_normal_turn", "v1_identical_prompts"):
            await self._conn.session_update(session_id, update_user_message_text(text))  # echo (optional in v1)
            await self._say(session_id, "You said: ", text)
            return PromptResponse(stop_reason="end_turn")
        if b == "v1_error_turn":
            await self._say(session_id, "Calling the provider...")
            raise RequestError.internal_error({"reason": "provider returned HTTP 500"})
        if b in ("v1_cancel", "v1_cancel_as_error"):
            tool = self._tool_id()
            await self._conn.session_update(session_id, start_tool_call(tool, "pytest", kind="execute", status="in_progress"))
            try:
                await asyncio.wait_for(cancel.wait(), 5)
            except asyncio.TimeoutError:
                await self._conn.session_update(session_id, update_tool_call(tool, status="completed"))
                return PromptResponse(stop_reason="end_turn")
            await self._conn.session_update(session_id, update_tool_call(tool, status="failed"))
            if b == "v1_cancel_as_error":
                # the abort exception escapes as a JSON-RPC error instead of stopReason "cancelled" (C9)
                raise RequestError.internal_error({"details": "CancelledError: the operation was aborted"})
            return PromptResponse(stop_reason="cancelled")
        if b == "v1_tool_call_permission":
            tool = self._tool_id()
            await self._conn.session_update(session_id, start_tool_call(tool, "Edit src/main.py", kind="edit", status="pending"))
            res = await self._conn.request_permission(
                session_id=session_id,
                tool_call=ToolCallUpdate(tool_call_id=tool),
                options=[PermissionOption(option_id="allow", name="Allow once", kind="allow_once"),
                         PermissionOption(option_id="reject", name="Reject", kind="reject_once")],
            )
            allowed = getattr(res.outcome, "option_id", None) == "allow"
            await self._conn.session_update(session_id, update_tool_call(tool, status="in_progress" if allowed else "failed"))
            if allowed:
                await self._conn.session_update(session_id, update_tool_call(
                    tool, status="completed", content=[tool_content(text_block("print('hello')"))]))
            await self._say(session_id, "Updated src/main.py." if allowed else "Left it unchanged.")
            return PromptResponse(stop_reason="end_turn")
        if b == "v1_stop_reason_error":
            await self._say(session_id, "Calling the provider...")
            return {"stopReason": "error"}  # v2's error stop reason leaked into a v1 response (W14)
        if b == "v1_custom_stop_reason":
            await self._say(session_id, "Thinking...")
            return {"stopReason": "_timeout"}  # custom stop reasons do not exist in v1 (W14)
        raise RequestError.internal_error({"reason": f"unknown behaviour {b}"})


async def run_agent(behaviour: str) -> None:
    await acp.run_agent(CorpusAgent(behaviour))


# --------------------------------------------------------------------------- the client


class CorpusClient:
    """A v1 client: collects updates, allows every permission request."""

    def __init__(self) -> None:
        self.updates: list[Any] = []
        self.event = asyncio.Event()

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append(update)
        self.event.set()

    async def request_permission(self, session_id: str, tool_call: Any, options: Any, **kwargs: Any) -> Any:
        return RequestPermissionResponse(outcome=AllowedOutcome(outcome="selected", option_id="allow"))

    async def wait_for(self, pred, timeout: float = 5.0) -> Any:
        async def loop():
            while True:
                for u in self.updates:
                    if pred(u):
                        return u
                self.event.clear()
                await self.event.wait()
        return await asyncio.wait_for(loop(), timeout)


SCENARIOS: dict[str, list[str]] = {
    "v1_normal_turn": ["What's the capital of France?"],
    "v1_error_turn": ["Summarise the changelog"],
    "v1_cancel": ["Run the tests"],
    "v1_cancel_as_error": ["Run the tests"],
    "v1_identical_prompts": ["yes", "yes"],
    "v1_tool_call_permission": ["Change the greeting in src/main.py"],
    "v1_stop_reason_error": ["Call the API"],
    "v1_custom_stop_reason": ["Think hard"],
}


async def record(name: str, out: Path, acplab: str) -> list[str]:
    client = CorpusClient()
    log: list[str] = []
    command = [acplab, "trace", "record", "--force", "--out", str(out), "--",
               sys.executable, str(Path(__file__).resolve()), "agent", name]
    async with acp.spawn_agent_process(client, command[0], *command[1:], cwd=HERE,
                                       transport_kwargs={"stderr": None}) as (conn, proc):
        init = await conn.initialize(protocol_version=PROTOCOL_VERSION,
                                     client_info=Implementation(name="acplab-corpus-v1-client", version="0.1.0"))
        log.append(f"initialize -> protocolVersion {init.protocol_version}")
        new = await conn.new_session(cwd=WORKSPACE, mcp_servers=[])
        sid = new.session_id
        for text in SCENARIOS[name]:
            task = asyncio.create_task(conn.prompt(session_id=sid, prompt=[text_block(text)]))
            if name in ("v1_cancel", "v1_cancel_as_error"):
                await client.wait_for(lambda u: getattr(u, "session_update", None) == "tool_call")
                await conn.cancel(session_id=sid)
            try:
                resp = await task
                log.append(f"session/prompt {text!r} -> stopReason {resp.stop_reason}")
            except RequestError as err:
                log.append(f"session/prompt {text!r} -> error {err.code} {err}")
            except Exception as err:  # e.g. the SDK's own validation of a non-v1 result
                log.append(f"session/prompt {text!r} -> client-side {type(err).__name__}: {str(err).splitlines()[0]}")
        await asyncio.sleep(0.05)
    return log


async def record_all(names: list[str], out_dir: Path, acplab: str) -> int:
    out_dir.mkdir(parents=True, exist_ok=True)
    failed = 0
    for name in names:
        path = out_dir / f"{name}.jsonl"
        try:
            log = await asyncio.wait_for(record(name, path, acplab), 30)
            print(f"{name}:", *log, sep="\n  ")
        except Exception as err:
            failed += 1
            print(f"{name}: FAILED {type(err).__name__}: {err}", file=sys.stderr)
    return failed


def main() -> None:
    if sys.argv[1:2] == ["agent"]:
        asyncio.run(run_agent(sys.argv[2]))
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out-dir", type=Path, default=HERE / "captures")
    parser.add_argument("--only", default=None)
    parser.add_argument("--acplab", default=os.environ.get("ACPLAB", "acplab"))
    args = parser.parse_args()
    names = args.only.split(",") if args.only else list(SCENARIOS)
    sys.exit(1 if asyncio.run(record_all(names, args.out_dir, args.acplab)) else 0)


if __name__ == "__main__":
    main()
