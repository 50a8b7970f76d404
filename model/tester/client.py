"""The client side of ``acplab test``: plays one schedule against a real agent and captures the traffic.

One :class:`ScheduleRun` owns one agent process at a time (a reconnect ends
it and starts the command again) and writes every message both ways to a
capture (DESIGN.md, "Capture format"; a reconnect's connection is ``c1.N``,
which closes ``c1`` for the checker, E10).  It is a real client:

* ``initialize`` offers protocol version 2; an agent that answers 1 is
  driven with the v1 methods (``session/load`` for a resume) and judged by
  the v1 rules (the checker reads the dialect from the response);
* every request the agent makes is answered: permissions by the schedule's
  policy (allow / reject / hold until cancelled / late: the chosen option
  sent only after the client's ``session/cancel``; C11), anything else
  (file system, terminals: never advertised) with ``-32601`` (JSON-RPC 2.0);
* a run ends at quiescence: no agent message for ``settle`` seconds, and
  while an obligation the client can see is open (an unanswered prompt,
  ``running`` / ``requires_action`` with no idle), for ``timeout`` seconds.

Choice (RFD silent): permission requests still held when the schedule ends,
and any the agent makes after that, are answered ``reject`` (the user
declined), so no request is left hanging (a held one that, once declined, let
the work ask again used to end the run with that request unanswered).
"""

from __future__ import annotations

import json
import queue
import time
from dataclasses import dataclass, field

from acplab.model.wire.capture import AGENT_TO_CLIENT, CLIENT_TO_AGENT, CaptureWriter

from .live import LiveJudge, TeeFile
from .process import AgentProcess
from .schedule import Schedule, Step

CWD = "/home/user/project"
IMAGE = {"type": "image", "mimeType": "image/png",
         "data": "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="}
CLIENT_INFO = {"name": "acplab-test", "version": "1"}
#: an extension request (``_`` prefix: any agent may answer it, if only with -32601) sent after each session/cancel
ORDER_PROBE = "_acplab/order_probe"


class NotDriven(Exception):
    """The agent could not be driven (no ``initialize`` answer, exited at start): exit 3."""


@dataclass
class Options:
    command: list[str]
    settle: float = 0.3
    timeout: float = 5.0  # per message: how long the client waits for an awaited answer or event
    patience: float = 1.0  # a step's event: how long a silent agent with open obligations is waited for
    max_messages: int = 20000  # a flooding agent: the run stops here
    env: dict | None = None
    cwd: str | None = None
    second: str | None = None  # the environment variable naming a second connection's fds (two-client runs)
    stop_on: frozenset | None = None  # end the run at the first violation of these properties ("*": any)
    on_violation: object = None  # called with (property, rules, text, message n) as each violation happens
    #: after each session/cancel, a request the agent answers at once (:data:`ORDER_PROBE`): see ScheduleRun._cancel
    order_probe: bool = True


@dataclass
class RunOutcome:
    """What one run did: the capture, the windows opened, how it ended."""

    capture: str
    steps_done: int = 0
    opened: list[str] = field(default_factory=list)  # triggers observed before their step ran
    missed: list[str] = field(default_factory=list)  # triggers that never came (the step ran anyway)
    actions: list[str] = field(default_factory=list)
    messages: int = 0
    round_trips: int = 0
    notes: list[str] = field(default_factory=list)  # flood, crash, invalid JSON, ...
    exit_status: int | None = None
    seconds: float = 0.0
    result: object = None  # the run's TraceResult, judged live (:mod:`.live`)
    stopped: str | None = None  # the property whose violation ended the run early


def update_event(update: dict) -> str | None:
    kind = update.get("sessionUpdate")
    if kind in ("user_message", "user_message_chunk"):
        return "user_message"
    if kind in ("agent_message", "agent_message_chunk"):
        return "agent_message"
    if kind == "state_update":
        state = update.get("state")
        return state if state in ("running", "requires_action", "idle") else None
    if kind in ("tool_call", "tool_call_update") and update.get("status") == "in_progress":
        return "tool_running"
    return None


class ScheduleRun:
    """Plays ``schedule`` against fresh agent processes; the capture goes to ``capture_path``."""

    def __init__(self, schedule: Schedule, options: Options, capture_path, stderr_path) -> None:
        self.schedule = schedule
        self.o = options
        self.stderr_path = stderr_path
        self.judge = LiveJudge(str(capture_path))
        self.tee = TeeFile(capture_path, self._judged)
        self.writer = CaptureWriter(self.tee)
        self.outcome = RunOutcome(str(capture_path))
        self.t0 = time.monotonic()
        self.agent: AgentProcess | None = None
        self.epoch = 0
        self.clients = schedule.clients  # 2: a second connection to the same agent process
        self.who = 0  # the client whose message is sent or handled now
        self.next_id = [0] * self.clients  # each connection numbers its own requests, as separate clients do
        self.pending: dict = {}  # (client, request id) -> (method, on answer)
        self.prompts: list[dict] = []  # in send order: {"id", "conn", "answered"}
        self.events: list[tuple[int, str]] = []  # (client, event) in arrival order
        self.last_message = time.monotonic()
        self.state = ["idle"] * self.clients  # the session's state as each connection last heard it
        self.session_id = None
        self.version = 2
        self.policy = "allow"
        self.held: dict = {}  # (client, the agent's permission request id) -> its params
        self.eof = False

    # -- wire ----------------------------------------------------------------

    @property
    def conn(self) -> str:
        """The capture's label of the acting client's connection (``c1``, ``c1.N`` after N reconnects, ``c2``)."""
        return f"c{self.who + 1}" + (f".{self.epoch}" if self.epoch else "")

    def _t(self) -> float:
        return (time.monotonic() - self.t0) * 1000.0

    def _send(self, msg: dict) -> None:
        """Write ``msg`` on the acting client's connection, after every agent line already read.

        The capture's order is the order the client knew of things: a line the
        reader had queued before this send was sent by the agent before the
        client's message, and goes into the capture first (else a response
        that came before a ``session/cancel`` would read as after it, C4/C9).
        """
        who = self.who
        while self.outcome.messages < self.o.max_messages and self._take(0):
            pass
        self.who = who
        self.writer.write(self.conn, CLIENT_TO_AGENT, msg, t=self._t())
        if not self.agent.send(json.dumps(msg, separators=(",", ":")).encode(), self.who):
            self._note("the agent's stdin was closed (it exited)")

    def request(self, method: str, params: dict, on_answer=None) -> int:
        rid = self.next_id[self.who]
        self.next_id[self.who] += 1
        self.pending[(self.who, rid)] = (method, on_answer)
        self._send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        return rid

    def notify(self, method: str, params: dict) -> None:
        self._send({"jsonrpc": "2.0", "method": method, "params": params})

    def _note(self, text: str) -> None:
        if text not in self.outcome.notes:
            self.outcome.notes.append(text)

    def _judged(self, line: bytes) -> None:
        """Each capture line judged as it is written; a violation the options name stops the run."""
        stop = self.o.stop_on
        for found in self.judge.feed(line):
            if self.o.on_violation is not None:
                self.o.on_violation(*found)
            if stop is not None and self.outcome.stopped is None and ("*" in stop or found[0] in stop):
                self.outcome.stopped = found[0]

    # -- reading -------------------------------------------------------------

    def _take(self, wait: float) -> bool:
        """Read at most one line (waiting up to ``wait`` s); False when nothing came."""
        if self.eof:
            time.sleep(min(wait, 0.01))
            return False
        try:
            line = self.agent.lines.get(timeout=max(wait, 0.0))
        except queue.Empty:
            return False
        if line is None:
            self.eof = True
            self._note(f"the agent closed its stdout (exit status {self.agent.proc.poll()})")
            return False
        self.last_message = time.monotonic()
        self.outcome.messages += 1
        self.who = line.conn
        t = (line.t - self.t0) * 1000.0
        if line.size is not None:
            self.writer.write_oversize(self.conn, AGENT_TO_CLIENT, line.data, line.size, t)
            self._note(f"the agent sent a line of {line.size:,} bytes")
            return True
        self.writer.write_line(self.conn, AGENT_TO_CLIENT, line.data, t)
        try:
            msg = json.loads(line.data)
        except ValueError:
            self._note("the agent sent a line that is not JSON")
            return True
        if isinstance(msg, dict):
            self._handle(msg)
        else:
            self._note("the agent sent JSON that is not an object")
        return True

    def _handle(self, msg: dict) -> None:
        method = msg.get("method")
        if method is None:
            rid = msg.get("id")
            entry = self.pending.pop((self.who, rid), None) if isinstance(rid, int) else None
            if entry is not None:
                self.outcome.round_trips += 1
                if entry[1] is not None:
                    entry[1](msg)
            return
        params = msg.get("params") if isinstance(msg.get("params"), dict) else {}
        if "id" in msg:
            self._agent_request(msg["id"], method, params)
        elif method == "session/update" and isinstance(params.get("update"), dict):
            event = update_event(params["update"])
            if event in ("running", "requires_action", "idle"):
                self.state[self.who] = event
            if event is not None:
                self.events.append((self.who, event))
        elif method == "$/cancel_request" and (self.who, params.get("requestId")) in self.held:
            self._answer_held((self.who, params["requestId"]), "cancelled")

    def _agent_request(self, rid, method: str, params: dict) -> None:
        if method != "session/request_permission":
            error = {"code": -32601, "message": f"Method not found: {method}"}
            self._send({"jsonrpc": "2.0", "id": rid, "error": error})
            return
        self.events.append((self.who, "permission"))
        if self.policy in ("allow", "reject"):
            self._answer_permission(rid, params, self.policy)
        else:
            self.held[(self.who, rid)] = params

    def _answer_permission(self, rid, params: dict, how: str) -> None:
        kinds = ("allow_once", "allow_always") if how == "allow" else ("reject_once", "reject_always")
        options = [o for o in params.get("options") or () if isinstance(o, dict)]
        chosen = next((o.get("optionId") for o in options if o.get("kind") in kinds), None)
        outcome = {"outcome": "selected", "optionId": chosen} if chosen is not None else {"outcome": "cancelled"}
        self._send({"jsonrpc": "2.0", "id": rid, "result": {"outcome": outcome}})

    def _answer_held(self, key, how: str) -> None:
        """Answer a held permission request (``key``: its client and id) on the connection it came on."""
        params = self.held.pop(key)
        self.who, rid = key
        if how == "cancelled":
            self._send({"jsonrpc": "2.0", "id": rid, "result": {"outcome": {"outcome": "cancelled"}}})
        else:
            self._answer_permission(rid, params, how)

    # -- waiting -------------------------------------------------------------

    def pump_until(self, done, limit: float) -> bool:
        """Handle agent messages until ``done()`` or ``limit`` seconds; whether ``done()`` came true."""
        end = time.monotonic() + limit
        while not done():
            left = end - time.monotonic()
            if left <= 0 or self.outcome.messages >= self.o.max_messages:
                return done()
            if self.eof and not self._take(0):
                return done()
            self._take(min(left, 0.05))
        return True

    def quiet(self, seconds: float) -> None:
        """Until no agent message came for ``seconds`` (bounded by the flood limit)."""
        self.pump_until(lambda: time.monotonic() - self.last_message >= seconds, seconds + self.o.timeout * 4)

    def _obligations_open(self) -> bool:
        live = {f"c1.{self.epoch}" if self.epoch else "c1", "c2"}
        return (any(not p["answered"] for p in self.prompts if p["conn"] in live)
                or any(state in ("running", "requires_action") for state in self.state))

    def settle(self) -> None:
        """Quiescence: ``settle`` s without a message; while obligations are open, ``timeout`` s."""
        self.quiet(self.o.settle)
        if self._obligations_open() and not self.eof:
            self.pump_until(lambda: not self._obligations_open()
                            or time.monotonic() - self.last_message >= self.o.timeout, self.o.timeout * 4)
            self.quiet(self.o.settle)

    def wait_for(self, trigger: str, since: int, client: int = 0) -> bool:
        """Until ``trigger`` came on ``client``'s connection since event ``since`` (or the agent rests)."""
        if trigger == "now":
            return True
        stopped = lambda: self.outcome.stopped is not None  # noqa: E731  # a stopped run's steps wait no more
        if trigger == "quiet":
            self.pump_until(lambda: stopped() or time.monotonic() - self.last_message >= self.o.settle,
                            self.o.settle + self.o.timeout * 4)
            return True
        seen = lambda: (client, trigger) in self.events[since:]  # noqa: E731
        self.pump_until(lambda: seen() or self._at_rest() or stopped(), self.o.timeout)
        return seen()

    def _at_rest(self) -> bool:
        """No event is coming soon: silent for ``settle`` s owing nothing the client sees, or for ``patience`` s.

        Choice: a busy agent silent for ``patience`` s (work that waits, say
        for a cancel) gets the next step rather than the whole timeout.
        """
        silent = time.monotonic() - self.last_message
        return silent >= self.o.patience or (silent >= self.o.settle and not self._obligations_open())

    # -- connection ------------------------------------------------------------

    def _start(self) -> None:
        self.agent = AgentProcess(self.o.command, self.stderr_path, env=self.o.env, cwd=self.o.cwd,
                                  second=self.o.second if self.clients == 2 else None)
        self.eof = False
        self.last_message = time.monotonic()
        for who in range(self.clients):
            self.who = who
            self._initialize()
        self.who = 0

    def _initialize(self) -> None:
        """``initialize`` on the acting client's connection (version 2 offered; the first client's answer counts)."""
        answer: dict = {}
        first = self.who == 0
        self.request("initialize", {"protocolVersion": 2, "info": CLIENT_INFO, "capabilities": {}},
                     lambda m: answer.update(m))
        if not self.pump_until(lambda: bool(answer), self.o.timeout):
            why = "exited" if self.eof else f"did not answer initialize within {self.o.timeout:g} s"
            raise NotDriven(f"the agent {why}")
        result = answer.get("result")
        if not isinstance(result, dict):
            raise NotDriven(f"initialize failed: {json.dumps(answer.get('error'))[:200]}")
        if first:
            self.version = 1 if result.get("protocolVersion") == 1 else 2

    def _open_session(self) -> None:
        """``session/new`` on the first connection; a second client attaches by ``session/resume`` (no replay)."""
        self.who = 0
        answer: dict = {}
        self.request("session/new", {"cwd": CWD, "mcpServers": []}, lambda m: answer.update(m))
        if not self.pump_until(lambda: bool(answer), self.o.timeout) or "result" not in answer:
            raise NotDriven(f"session/new failed: {json.dumps(answer.get('error') or 'no answer')[:200]}")
        self.session_id = (answer["result"] or {}).get("sessionId")
        if self.clients == 2:
            self.who = 1
            self._resume(False)
            self.who = 0

    def _resume(self, replay: bool) -> None:
        """The acting client resumes the session (``session/load`` for a v1 agent), ``replayFrom`` start if asked."""
        params = {"sessionId": self.session_id, "cwd": CWD, "mcpServers": []}
        if replay and self.version == 2:
            params["replayFrom"] = {"type": "start"}
        answered: dict = {}
        self.request("session/load" if self.version == 1 else "session/resume", params, lambda m: answered.update(m))
        self.pump_until(lambda: bool(answered), self.o.timeout)

    def _end_connection(self) -> None:
        self.quiet(min(self.o.settle, 0.05))
        self.outcome.exit_status = self.agent.end()
        while self._take(0):  # what the agent wrote before it ended is part of the capture
            pass

    def _reconnect(self, replay: bool) -> None:
        """The agent's process ended and started again; the acting client resumes first.

        Choice: with two clients a restart ends both connections (one process
        serves both), so the other client resumes too, without replay.
        """
        acting = self.who
        self._end_connection()
        self.epoch += 1
        self.pending.clear()
        self.held.clear()
        self.state = ["idle"] * self.clients
        self._start()
        for who in sorted(range(self.clients), key=lambda w: w != acting):
            self.who = who
            self._resume(replay and who == acting)
        self.who = acting

    # -- actions ---------------------------------------------------------------

    def _prompt(self, step: Step) -> None:
        blocks = [{"type": "text", "text": t} for t in step.text] + ([dict(IMAGE)] if step.image else [])
        entry = {"id": None, "conn": self.conn, "answered": False}
        self.prompts.append(entry)
        entry["id"] = self.request("session/prompt", {"sessionId": self.session_id, "prompt": blocks},
                                   lambda m: self._answered(entry))

    def _answered(self, entry: dict) -> None:
        entry["answered"] = True
        self.events.append((self.who, "response"))  # on the connection the prompt went out on

    def _cancel_request(self, target: int | None) -> None:
        live = [p for p in self.prompts if p["conn"] == self.conn]
        if target is not None and target < len(self.prompts) and self.prompts[target]["conn"] == self.conn:
            chosen = self.prompts[target]
        else:
            chosen = next((p for p in reversed(live) if not p["answered"]), live[-1] if live else None)
        if chosen is not None:
            self.notify("$/cancel_request", {"requestId": chosen["id"]})

    def _cancel(self) -> None:
        """``session/cancel``, then the order probe: the capture is recorded at the client, where an idle may
        cross the cancel in flight; the probe's answer, on the same FIFO connection, proves that the agent had
        read the cancel before whatever it sends after that answer (the proof C4, C7 and C9 need to call an idle
        or a prompt's outcome one that came after the cancel)."""
        self.notify("session/cancel", {"sessionId": self.session_id})
        if self.o.order_probe:
            self.request(ORDER_PROBE, {})
        for key in [k for k in self.held if k[0] == self.who]:  # C11: it answers the cancelled work's requests
            self._answer_held(key, "allow" if self.policy == "late" else "cancelled")

    def perform(self, step: Step) -> None:
        self.who = step.client
        if step.do == "prompt":
            self._prompt(step)
        elif step.do == "cancel":
            self._cancel()
        elif step.do == "cancel_request":
            self._cancel_request(step.target)
        elif step.do == "permissions":
            self.policy = step.answer
        elif step.do == "close":
            self.request("session/close", {"sessionId": self.session_id})
        elif step.do == "reconnect":
            self._reconnect(step.replay)
        self.outcome.actions.append(step.do)

    def run(self) -> RunOutcome:
        """The whole run: start, the steps, quiescence, end.  Raises :class:`NotDriven` at a failed start."""
        try:
            self._start()
            self._open_session()
            for step in self.schedule.steps:
                if self.outcome.stopped is not None:
                    break
                since = len(self.events)
                if self.wait_for(step.after, since, step.client):
                    if step.after not in ("now", "quiet"):
                        self.outcome.opened.append(step.after)
                else:
                    self.outcome.missed.append(step.after)
                if self.outcome.stopped is not None:
                    break
                self.perform(step)
                self.outcome.steps_done += 1
                if self.outcome.messages >= self.o.max_messages:
                    break
            if self.outcome.stopped is None:
                self.settle()
            self.policy = "reject"  # the schedule is over: what is held now, or asked from now on, is declined
            answered = bool(self.held)
            for rid in list(self.held):
                self._answer_held(rid, "reject")
            if answered:
                self.last_message = time.monotonic()  # new input: quiescence counts from the answers
            if self.outcome.stopped is None and (answered or self._obligations_open()):
                self.settle()
            if self.outcome.messages >= self.o.max_messages:
                self._note(f"the agent flooded: {self.outcome.messages:,} messages (the run stopped there)")
        finally:
            if self.agent is not None:
                self._end_connection()
            self.writer.close()
            self.tee.close()
            self.outcome.result = self.judge.finish(complete=self.outcome.stopped is None)
            self.outcome.seconds = time.monotonic() - self.t0
        return self.outcome
