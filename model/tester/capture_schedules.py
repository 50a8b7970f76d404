"""Schedules from captures: the client's side of a recorded conversation, replayed against a real agent.

A capture (DESIGN.md, "Capture format") of a model run (``check --out``'s
counterexample of a mutant, a witness run) or of real traffic names every
client message; each becomes a step that waits for the last message the
agent had sent *on that client's connection* before it (a capture records
sends, not deliveries), so the real agent is driven into the same window:

* ``session/prompt`` -> ``prompt`` (its text blocks; an image block sets ``image``);
* ``session/cancel`` -> ``cancel``; ``$/cancel_request`` of a prompt -> ``cancel_request`` of it
  (by its place in send order); ``session/close`` -> ``close``;
* ``session/resume`` on a later connection of the same client (``c1.1``) ->
  ``reconnect`` (with ``replayFrom``: ``replay``); on another client's first
  connection it is that client attaching (the preamble), not a step;
* the first answer to a ``session/request_permission`` -> the answer policy,
  set before the first prompt (the real agent's request cannot be named in
  advance): allow or reject by the chosen option's kind; ``cancelled`` after
  the client's ``session/cancel`` -> ``hold``, a choice after it -> ``late``.

``initialize`` and ``session/new`` (and their answers) are the run's own
start.  Choice (RFD silent): a client message the tester cannot send
(any other method) is left out, and :func:`capture_schedule` says which.
"""

from __future__ import annotations

from acplab.model.errors import InputError
from acplab.model.wire.capture import AGENT_TO_CLIENT, CLIENT_TO_AGENT, parse_conn_label, read_capture

from .client import update_event
from .schedule import Schedule, Step

START = ("initialize", "session/new")


def _client(conn: str) -> tuple[int, int]:
    """``(client index from 0, epoch)`` of a model connection label (``c2.1`` -> ``(1, 1)``); other labels: client 0."""
    return parse_conn_label(conn) or (0, 0)


def _agent_event(msg: dict, prompts: set) -> str | None:
    """The trigger an agent message opens (what a step may wait for)."""
    if "method" not in msg:
        return "response" if msg.get("id") in prompts else None
    if msg.get("method") == "session/request_permission":
        return "permission"
    update = (msg.get("params") or {}).get("update") if isinstance(msg.get("params"), dict) else None
    return update_event(update) if isinstance(update, dict) else None


def _permission_answer(result, options: list, cancelled: bool) -> str:
    outcome = (result or {}).get("outcome") if isinstance(result, dict) else None
    if not isinstance(outcome, dict) or outcome.get("outcome") != "selected":
        return "hold" if cancelled else "reject"
    chosen = outcome.get("optionId")
    kind = next((o.get("kind", "") for o in options if isinstance(o, dict) and o.get("optionId") == chosen),
                str(chosen or ""))
    if cancelled:
        return "late"
    return "allow" if "allow" in kind else "reject"


def records_schedule(records, name: str, origin: str = "capture") -> tuple[Schedule | None, list[str]]:
    """The client steps of ``records`` (capture records or their dicts) and what could not be translated.

    None when no prompt is among them (nothing to drive).
    """
    steps: list[Step] = []
    left_out: list[str] = []
    seen: dict[int, str] = {}  # client -> the last trigger on its connection
    prompt_ids: dict[tuple[str, object], int] = {}  # (conn, request id) -> place in send order
    asked: dict[tuple[str, object], list] = {}  # the agent's permission requests: (conn, id) -> options
    cancelled: set[int] = set()
    policy = None
    epochs: dict[int, int] = {}
    for rec in records:
        conn, direction, msg = (rec["conn"], rec.get("dir"), rec.get("msg")) if isinstance(rec, dict) else \
            (rec.conn, rec.dir, rec.msg)
        if not isinstance(msg, dict):
            continue
        client, epoch = _client(conn)
        if direction == AGENT_TO_CLIENT:
            if msg.get("method") == "session/request_permission" and "id" in msg:
                asked[(conn, msg["id"])] = list((msg.get("params") or {}).get("options") or [])
            event = _agent_event(msg, {i for (c, i) in prompt_ids if c == conn})
            seen[client] = event or seen.get(client, "now")
            continue
        if direction != CLIENT_TO_AGENT:
            continue
        method = msg.get("method")
        params: dict = msg["params"] if isinstance(msg.get("params"), dict) else {}
        after = seen.get(client, "now")
        if method is None:  # the client's answer to an agent request
            if (conn, msg.get("id")) in asked and policy is None:
                policy = _permission_answer(msg.get("result"), asked[(conn, msg.get("id"))], client in cancelled)
            continue
        if method in START:
            continue
        if method == "session/prompt":
            blocks = [b for b in params.get("prompt") or () if isinstance(b, dict)]
            texts = tuple(str(b.get("text", "")) for b in blocks if b.get("type") == "text")
            image = any(b.get("type") == "image" for b in blocks)
            prompt_ids[(conn, msg.get("id"))] = len(prompt_ids)
            steps.append(Step(after, "prompt", texts or (() if image else ("hi",)), image, client=client))
        elif method == "session/cancel":
            cancelled.add(client)
            steps.append(Step(after, "cancel", client=client))
        elif method == "$/cancel_request":
            target = prompt_ids.get((conn, params.get("requestId")))
            steps.append(Step(after, "cancel_request", target=target, client=client))
        elif method == "session/close":
            steps.append(Step(after, "close", client=client))
        elif method in ("session/resume", "session/load"):
            if epoch > epochs.get(client, 0):
                epochs[client] = epoch
                steps.append(Step(after, "reconnect", replay="replayFrom" in params, client=client))
        else:
            left_out.append(str(method))
        seen[client] = "now"
    if not any(s.do == "prompt" for s in steps):
        return None, left_out
    if policy is not None:
        steps.insert(0, Step("now", "permissions", answer=policy))
    return Schedule(name, tuple(steps), None, origin), left_out


def capture_schedule(path) -> Schedule:
    """The schedule of the capture at ``path`` (``check --out``'s ``PROPERTY.jsonl``, a recorded session)."""
    from pathlib import Path

    schedule, _left_out = records_schedule(read_capture(path), f"capture-{Path(path).stem}")
    if schedule is None:
        raise InputError(f"{path}: the capture has no session/prompt from a client: nothing to drive")
    return schedule
