"""Fault windows: the moments a fault must hit for a broken spec to show, counted in every run.

A simulation can report ``holds`` because nothing was wrong, or because the
moment a broken behaviour needs never came: with the agent answering 5 ms
after insertion and working in 300 ms steps, a failure *between insertion
and the response* (what the ``error-after-insertion`` mutant mishandles)
almost never happens.  :func:`opened` names the windows a step opens, from
the world before and after it; the runtime counts them per run, and
:func:`report` turns the counts into the ``coverage`` object of
``acplab simulate --json``, with a warning for every window the spec's
mutation or the configured faults need that no run opened.

:class:`Counted` wraps the model the runtime steps and counts, over all
runs of a simulation, the steps taken per action kind and, per property,
the steps after which it was

``evaluated``
    checked: every step, for every ``always`` and ``eventually`` property
    the model runs (the monitors run live on every step);
``armed``
    watching something: an ``always`` property's own ``armed`` predicate
    (its monitor's bookkeeping away from its initial value, after the step
    or on the way through its events; null for a monitor that keeps none),
    an ``eventually`` obligation open;
``violated``
    recorded as violated (or warned, for a SHOULD) by that step; null for an
    ``eventually`` property, which the simulator does not judge.

A property evaluated but never armed held vacuously in these runs: the
``coverage`` object names it in ``vacuous`` and adds a warning.
"""

from __future__ import annotations

FAIL_BEFORE_RESPONSE = "failure after insertion, before the response"
FAIL_AFTER_RESPONSE = "failure after insertion, after the response"
REJECTED = "a prompt rejected before insertion"
CUT_PENDING = "connection cut while a prompt is pending"
RESPONSE_LOST = "a prompt response lost (dropped or cut in flight)"
REPLAY = "replay of a session with history (resume with replayFrom start)"
CHUNKED_REPLAY = "replay of a user message reported as chunks"
CANCEL_ACTIVE = "session/cancel while work runs"
CANCEL_REQUEST_INSERTED = "$/cancel_request for an inserted prompt"
OTHERS_IDENTICAL = "another submission's identical message reported while a prompt is pending"
ECHO_AFTER_REPLAY = "resume with replay while a live report is still due"
COMMAND_REPLAY = "replay of a retained command"
RESTART = "agent restart"

WINDOWS = (FAIL_BEFORE_RESPONSE, FAIL_AFTER_RESPONSE, REJECTED, CUT_PENDING, RESPONSE_LOST, REPLAY, CHUNKED_REPLAY,
           CANCEL_ACTIVE, CANCEL_REQUEST_INSERTED, OTHERS_IDENTICAL, ECHO_AFTER_REPLAY, COMMAND_REPLAY, RESTART)

#: the windows in which a mutant's broken rule can show (by mutant: several break one rule monitor)
MUTANT_WINDOWS = {
    "error-after-insertion": (FAIL_BEFORE_RESPONSE,),
    "no-idle-after-failure": (FAIL_BEFORE_RESPONSE, FAIL_AFTER_RESPONSE),
    "cancel-request-32800-after-insertion": (CANCEL_REQUEST_INSERTED,),
    "replay-without-reset": (CHUNKED_REPLAY,),
    "replay-new-ids": (REPLAY,),
    "replay-reexecutes-command": (COMMAND_REPLAY,),
    "client-matches-by-content": (OTHERS_IDENTICAL,),
    "client-matches-by-order": (OTHERS_IDENTICAL,),
    "echo-after-replay": (ECHO_AFTER_REPLAY,),
}

#: windows a configured fault is there to open: (parameter, windows)
FAULT_WINDOWS = (
    ("fail", (FAIL_BEFORE_RESPONSE, FAIL_AFTER_RESPONSE)),
    ("reject", (REJECTED,)),
    ("disconnect_rate", (CUT_PENDING,)),
    ("cancel", (CANCEL_ACTIVE,)),
    ("cancel_request", (CANCEL_REQUEST_INSERTED,)),
    ("restart_rate", (RESTART,)),
)

#: windows the simulator cannot open at all, and why; and how to open the others
NEVER = {COMMAND_REPLAY: "the simulator submits no commands"}
HINTS = {
    FAIL_BEFORE_RESPONSE: "failures strike at work steps, step_ms apart, and the response comes answer_ms after "
                          "insertion: raise fail or answer_ms, or lower step_ms",
    FAIL_AFTER_RESPONSE: "set fail > 0",
    CANCEL_REQUEST_INSERTED: "set cancel_request > 0",
    CHUNKED_REPLAY: "needs chunks, disconnect_rate > 0 and replay > 0",
    REPLAY: "needs disconnect_rate > 0 and replay > 0",
    ECHO_AFTER_REPLAY: "needs disconnect_rate > 0 and replay > 0, and a cut soon after a submission",
    OTHERS_IDENTICAL: "needs clients >= 2 and few contents (contents=1 makes every prompt identical)",
    CUT_PENDING: "raise disconnect_rate",
    CANCEL_ACTIVE: "raise cancel",
    REJECTED: "raise reject",
    RESTART: "raise restart_rate",
}


def opened(before, action, events, after) -> list[str]:
    """The windows one step opens (``before`` and ``after`` are the model's worlds)."""
    out = []
    kinds = {e.kind for e in events}
    if "fail" in kinds and any(e.kind == "fail" and e.after_insertion for e in events):
        waiting = any(r.inserted and not r.answered for r in before.agent.reqs)
        out.append(FAIL_BEFORE_RESPONSE if waiting else FAIL_AFTER_RESPONSE)
    if "reject" in kinds:
        out.append(REJECTED)
    if "cancel_seen" in kinds and any(e.kind == "cancel_seen" and e.active for e in events):
        out.append(CANCEL_ACTIVE)
    if "restart" in kinds:
        out.append(RESTART)
    for e in events:
        if e.kind == "cut":
            client = before.clients[e.conn[0]]
            if any(s.status == "pending" for s in client.subs):
                out.append(CUT_PENDING)
            if any(_is_response(m) for m in e.lost):
                out.append(RESPONSE_LOST)
        elif e.kind == "drop" and _is_response(e.msg):
            out.append(RESPONSE_LOST)
        elif e.kind == "deliver" and e.dir == "client->agent" and e.msg.kind == "cancel_request":
            if any(r.inserted and r.rid == e.msg.rid and (r.client, r.epoch) == e.conn for r in before.agent.reqs):
                out.append(CANCEL_REQUEST_INSERTED)
        elif e.kind == "deliver" and e.dir == "client->agent" and e.msg.kind == "resume":
            if e.msg.replay_from == "start" and before.agent.history:
                out += _replay_windows(before, events)
        elif e.kind == "deliver" and e.dir == "agent->client":
            if _others_identical(before, after, e):
                out.append(OTHERS_IDENTICAL)
    return out


def _replay_windows(before, events) -> list[str]:
    """The agent replays history on a resume: chunked, and with a live report still due?"""
    out = [REPLAY]
    if any(e.kind == "send" and e.msg.kind == "update" and e.msg.update.kind == "user_message_chunk" for e in events):
        out.append(CHUNKED_REPLAY)
    if any(r.inserted and not r.echoed for r in before.agent.reqs):
        out.append(ECHO_AFTER_REPLAY)
    return out


def _is_response(msg) -> bool:
    return msg.kind in ("prompt_result", "prompt_result_v1", "error_response")


def _others_identical(before, after, e) -> bool:
    """A user message of another submission reaches a client that has a pending prompt with its content."""
    msg = e.msg
    if msg.kind != "update" or msg.update.kind not in ("user_message", "user_message_chunk"):
        return False
    entry = next((h for h in after.agent.history if h.mid == msg.update.message_id), None)
    if entry is None:
        return False
    c = e.conn[0]
    return any(s.status in ("pending", "ambiguous") and tuple(s.content) == tuple(entry.content)
               and (entry.sub is None or entry.sub != (c, s.epoch, s.rid))
               for s in before.clients[c].subs)


class Counted:
    """The model, stepped by the runtime, counting actions and property coverage (see the module docstring).

    Everything but ``step`` is the model's own; counts accumulate over every run stepped through it.
    """

    def __init__(self, model) -> None:
        self.model = model
        self.props = [p for p in model.properties() if p.expectation in ("always", "eventually")]
        self.kinds: dict[str, int] = {}  # steps per action kind (not `actions`: that is the model's method)
        self.steps = 0
        self.armed = {p.name: 0 for p in self.props if p.expectation == "eventually" or p.armed is not None}
        self.violated = {p.name: 0 for p in self.props if p.expectation == "always"}
        self._armers = [(p.name, p.armed) for p in self.props if p.expectation == "always" and p.armed is not None]
        self._open = [(p.name, p.condition) for p in self.props if p.expectation == "eventually"]
        self._watch = [(p.name, p.condition) for p in self.props if p.expectation == "always"]

    def __getattr__(self, name):
        return getattr(self.model, name)

    def step(self, world, action):
        after, events = self.model.step(world, action)
        kind = self.model.action_kind(action)
        self.kinds[kind] = self.kinds.get(kind, 0) + 1
        self.steps += 1
        armed, violated = self.armed, self.violated
        during = getattr(events, "armed", ())  # armed on the way by this step (AcpModel.step)
        for name, arm in self._armers:
            if name in during or arm(after):
                armed[name] += 1
        for name, discharged in self._open:
            if not discharged(after):
                armed[name] += 1
        for name, holds in self._watch:
            if not holds(after):
                violated[name] += 1
        return after, events

    def properties_json(self) -> dict:
        return {p.name: {"expectation": p.expectation, "evaluated": self.steps, "armed": self.armed.get(p.name),
                         "violated": self.violated.get(p.name)} for p in self.props}

    def vacuous(self) -> list[str]:
        return [p.name for p in self.props if self.steps and self.armed.get(p.name) == 0
                and not self.violated.get(p.name)]


def needed(spec, params) -> list[str]:
    """The windows this simulation should open: its mutation's, and its configured faults'."""
    out = list(MUTANT_WINDOWS.get(spec.name, ()))
    for name, windows in FAULT_WINDOWS:
        if getattr(params, name, 0):
            out += [w for w in windows if w not in out]
    return out


def report(spec, params, runs: list[dict[str, int]], counted: Counted | None = None) -> dict:
    """The ``coverage`` object: per window, the runs that opened it and how often; warnings for the missed.

    With ``counted`` (the model the runs were stepped through) also ``actions``, ``properties`` and
    ``vacuous``, and one warning naming the vacuous properties after the windows' ones.
    """
    total = len(runs)
    windows = {w: {"runs": sum(1 for r in runs if r.get(w)), "count": sum(r.get(w, 0) for r in runs)}
               for w in WINDOWS}
    want = needed(spec, params)
    warnings = []
    for w in want:
        if windows[w]["runs"] == 0:
            why = f" ({NEVER[w]})" if w in NEVER else f" ({HINTS[w]})" if w in HINTS else ""
            warnings.append(f"{w}: 0 of {total} runs{why}")
    out = {"windows": windows, "needed": want, "warnings": warnings}
    if counted is not None:
        out["actions"] = dict(sorted(counted.kinds.items()))
        out["properties"] = counted.properties_json()
        out["vacuous"] = counted.vacuous()
        names = out["vacuous"]
        if len(names) == 1:
            warnings.append(f"{names[0]} was never armed in {counted.steps:,} steps of {total} runs: it holds "
                            "vacuously (nothing it watches happened)")
        elif names:
            warnings.append(f"{', '.join(names)} were never armed in {counted.steps:,} steps of {total} runs: "
                            f"these {len(names)} hold vacuously (nothing they watch happened)")
    return out


def window_warning(sentence: str) -> bool:
    """Whether a coverage warning is about a fault window (rather than a vacuous property)."""
    return any(sentence.startswith(w + ":") for w in WINDOWS)
