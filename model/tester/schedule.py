"""Schedules for ``acplab test``: what a client does to a real agent, and when, as data.

A schedule is a list of steps.  Each step waits for an *observed* event (its
``after``: something the agent sent, never a sleep) and then performs one
client action of the model's client (DESIGN.md, "The modelled world",
Clients): submit a prompt (identical or distinct content: P5),
``session/cancel`` (C4, C7), ``$/cancel_request`` of one prompt (C1, C2), the
answer policy for permission requests (allow, reject, hold until cancelled, a
late answer after a cancel: C11), ``session/close`` (C14), or disconnect +
restart the agent + ``session/resume`` with or without ``replayFrom`` (R1-R7).
A step is waited for until its event, the agent's rest (silent for the settle
time, owing nothing the client can see) or the per-message timeout.

Saved as JSON (``{"version": 1, "name", "seed", "steps": [...]}``) beside
every run; ``acplab test --schedule FILE`` replays one.

Choices (RFD silent; switches of :func:`random_schedule`):

* A conforming client sends only content the agent advertised: image blocks
  (never advertised by the agents tested here) only with ``images``
  (``--unadvertised-content``), which a rejection rule needs (P15, P16).
* ``session/close`` ends a schedule: nothing is sent on a closed session
  (``close_ends``).
* A step whose event never comes (within the per-message timeout) is still
  performed: the window it aimed at was not opened, and the coverage says so.
"""

from __future__ import annotations

import json
import random
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

from acplab.model.errors import InputError

VERSION = 1

#: observed events a step may wait for (what the agent sent since the previous step)
TRIGGERS = ("now", "user_message", "response", "running", "requires_action", "idle", "tool_running",
            "agent_message", "permission", "quiet")
#: the client actions (the model's client, on the wire)
ACTIONS = ("prompt", "cancel", "cancel_request", "permissions", "close", "reconnect", "nothing")
#: how permission requests are answered from a ``permissions`` step on
ANSWERS = ("allow", "reject", "hold", "late")

#: distinct tasks, lettered in the order a schedule submits them ("A: ...", "B: ...")
TASKS = ("write the parser", "write the tests", "update the docs", "fix the build", "tidy up", "ship it")
#: other prompt contents the random schedules draw from (a ``/`` command, two text blocks)
TEXTS = (("yes",), ("/status",), ("Review a.py", "and b.py, please."))
IMAGE_TEXT = ("What is in this picture?",)


@dataclass(frozen=True)
class Step:
    """Wait for ``after``, then do ``do``; the other fields are the action's arguments."""

    after: str
    do: str
    text: tuple[str, ...] = ()  # prompt: its text blocks
    image: bool = False  # prompt: add an image block
    target: int | None = None  # cancel_request: which prompt (0-based, in send order); None: the latest
    replay: bool = False  # reconnect: session/resume with replayFrom {type: start}
    answer: str = ""  # permissions: one of ANSWERS
    client: int = 0  # which client acts (0: the first connection; 1: a second connection to the same agent)

    def to_json(self) -> dict:
        out = {"after": self.after, "do": self.do}
        for key, default in (("text", ()), ("image", False), ("target", None), ("replay", False), ("answer", ""),
                             ("client", 0)):
            value = getattr(self, key)
            if value != default:
                out[key] = list(value) if key == "text" else value
        return out

    def describe(self) -> str:
        what = {"prompt": lambda: f"prompt {' + '.join(self.text) or '(empty)'}{' + image' if self.image else ''}",
                "cancel_request": lambda: f"$/cancel_request prompt {'latest' if self.target is None else self.target}",
                "permissions": lambda: f"answer permissions: {self.answer}",
                "reconnect": lambda: f"reconnect, resume {'with' if self.replay else 'without'} replay",
                "cancel": lambda: "session/cancel", "close": lambda: "session/close",
                "nothing": lambda: "nothing"}[self.do]()
        who = f"client {self.client + 1} " if self.client else ""
        return f"{who}after {self.after}: {what}"


@dataclass(frozen=True)
class Schedule:
    name: str
    steps: tuple[Step, ...]
    seed: int | None = None
    origin: str = "random"  # random | file | shrunk

    def to_json(self) -> dict:
        return {"version": VERSION, "name": self.name, "seed": self.seed, "origin": self.origin,
                "steps": [s.to_json() for s in self.steps]}

    def actions(self) -> tuple[str, ...]:
        return tuple(s.do for s in self.steps)

    @property
    def clients(self) -> int:
        """How many connections the schedule drives (1 or 2)."""
        return 1 + max((s.client for s in self.steps), default=0)


# --------------------------------------------------------------------------- reading and writing


def step_from_json(obj, where: str) -> Step:
    """A step from its JSON object; bad fields are one clear ``InputError`` naming ``where``."""
    if not isinstance(obj, dict):
        raise InputError(f"{where}: a step must be an object")
    unknown = set(obj) - {"after", "do", "text", "image", "target", "replay", "answer", "client"}
    if unknown:
        raise InputError(f"{where}: unknown field(s) {', '.join(sorted(unknown))}")
    after, do = obj.get("after", "now"), obj.get("do")
    if after not in TRIGGERS:
        raise InputError(f"{where}: after {after!r} is not one of {', '.join(TRIGGERS)}")
    if do not in ACTIONS:
        raise InputError(f"{where}: do {do!r} is not one of {', '.join(ACTIONS)}")
    text = obj.get("text", [])
    if isinstance(text, str):
        text = [text]
    if not isinstance(text, list) or not all(isinstance(t, str) for t in text):
        raise InputError(f"{where}: text must be a string or a list of strings")
    target = obj.get("target")
    if target is not None and (not isinstance(target, int) or isinstance(target, bool) or target < 0):
        raise InputError(f"{where}: target must be a prompt's index (0, 1, ...)")
    client = obj.get("client", 0)
    if client not in (0, 1) or isinstance(client, bool):
        raise InputError(f"{where}: client must be 0 (the first connection) or 1 (the second)")
    answer = obj.get("answer", "")
    if do == "permissions" and answer not in ANSWERS:
        raise InputError(f"{where}: answer {answer!r} is not one of {', '.join(ANSWERS)}")
    if do == "prompt" and not text and not obj.get("image"):
        raise InputError(f"{where}: a prompt needs text or an image (an empty prompt is the client's fault, P14)")
    return Step(after, do, tuple(text), bool(obj.get("image", False)), target, bool(obj.get("replay", False)),
                answer if do == "permissions" else "", client)


def load_schedule(path) -> Schedule:
    """The schedule saved at ``path`` (as :func:`save_schedule` writes it)."""
    try:
        obj = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as err:
        raise InputError(f"{path}: cannot read the schedule: {err.strerror or err}") from None
    except (ValueError, UnicodeDecodeError) as err:
        raise InputError(f"{path}: not a JSON schedule: {err}") from None
    if not isinstance(obj, dict) or not isinstance(obj.get("steps"), list):
        raise InputError(f"{path}: a schedule is an object with a list of steps")
    if obj.get("version", VERSION) != VERSION:
        raise InputError(f"{path}: schedule version {obj.get('version')!r}; this acplab reads version {VERSION}")
    steps = tuple(step_from_json(s, f"{path}: step {i + 1}") for i, s in enumerate(obj["steps"]))
    if not steps:
        raise InputError(f"{path}: the schedule has no steps")
    seed = obj.get("seed")
    return Schedule(str(obj.get("name") or Path(path).stem), steps, seed if isinstance(seed, int) else None, "file")


def save_schedule(schedule: Schedule, path) -> None:
    Path(path).write_text(json.dumps(schedule.to_json(), indent=1) + "\n", encoding="utf-8")


# --------------------------------------------------------------------------- seeded, model-guided schedules


@dataclass
class _Plan:
    """What the generator knows of the run it plans: enough to pick plausible events."""

    prompts: list[tuple[tuple[str, ...], bool]] = field(default_factory=list)
    busy: bool = False  # a prompt was sent and its work may still run
    permissions: bool = False
    reconnected: bool = False  # a reconnect since the last prompt: the client may retry (R11, X08)


def _prompt(rng: random.Random, plan: _Plan, after: str, images: bool) -> Step:
    if plan.prompts and rng.random() < (0.6 if plan.reconnected else 0.35):  # identical content, a retry (P5)
        text, image = rng.choice(plan.prompts)
    elif rng.random() < 0.6:  # the next distinct task, lettered in submission order
        tasks = len({t for t, _i in plan.prompts if t[0][1:3] == ": "})
        text, image = (f"{'ABCDEF'[tasks % 6]}: {TASKS[tasks % 6]}",), False
    else:
        text, image = rng.choice(TEXTS), False
        if images and rng.random() < 0.3:
            text, image = IMAGE_TEXT, True
    plan.prompts.append((text, image))
    plan.busy, plan.reconnected = True, False
    return Step(after, "prompt", text, image)


def _while_busy(rng: random.Random, plan: _Plan) -> str:
    events = ["now", "user_message", "response", "running", "agent_message", "tool_running", "idle"]
    if plan.permissions:
        events += ["permission", "requires_action"] * 2
    return rng.choice(events)


def random_schedule(seed: int, *, max_steps: int = 6, images: bool = False, reconnects: bool = True,
                    close_ends: bool = True) -> Schedule:
    """A seeded schedule of the model's client actions, each after an event the run can show.

    The model guides the choice: the first action is a prompt; cancels and
    ``$/cancel_request`` aim at the windows of work in progress (after the
    user message, while running, at a permission request: C1-C9); prompts go
    in while work runs (held prompts, P4, C4) or after it ended; a reconnect
    comes after the agent went quiet (R1-R5).
    """
    rng = random.Random(seed)
    plan = _Plan()
    steps: list[Step] = []
    if rng.random() < 0.4:
        steps.append(Step("now", "permissions", answer=rng.choice(ANSWERS)))
        plan.permissions = True
    steps.append(_prompt(rng, plan, "now", images))
    for _ in range(rng.randint(min(1, max_steps - 1), max_steps - 1)):
        kind = rng.choices(("prompt", "cancel", "cancel_request", "close", "reconnect", "nothing", "permissions"),
                           (30, 30, 12, 6, 14 if reconnects else 0, 5, 5))[0]
        if kind == "prompt":
            after = rng.choice(["now", "agent_message", "user_message", "response", "idle", "quiet"])
            steps.append(_prompt(rng, plan, after, images))
        elif kind == "cancel":
            steps.append(Step(_while_busy(rng, plan) if plan.busy else "quiet", "cancel"))
        elif kind == "cancel_request":
            target = rng.choice([None] + list(range(len(plan.prompts))))
            steps.append(Step(rng.choice(["now", "user_message", "running", "agent_message"]), "cancel_request",
                              target=target))
        elif kind == "close":
            steps.append(Step(_while_busy(rng, plan), "close"))
            if close_ends:
                break
        elif kind == "reconnect":
            steps.append(Step(rng.choice(["quiet", "idle"]), "reconnect", replay=rng.random() < 0.6))
            plan.busy, plan.reconnected = False, True
            if rng.random() < 0.5:  # the model's client after a reconnect: submit again, often a retry (R11)
                steps.append(_prompt(rng, plan, rng.choice(["now", "idle", "quiet"]), images))
        elif kind == "permissions":
            steps.append(Step("now", "permissions", answer=rng.choice(ANSWERS)))
            plan.permissions = True
        else:
            steps.append(Step(_while_busy(rng, plan), "nothing"))
    return Schedule(f"random-{seed}", tuple(steps), seed)


# --------------------------------------------------------------------------- shrinking candidates


EARLIER = {"quiet": "idle", "idle": "agent_message", "agent_message": "user_message", "tool_running": "running",
           "requires_action": "permission", "permission": "running", "response": "user_message",
           "user_message": "running", "running": "now"}


def shrink_candidates(schedule: Schedule):
    """Smaller or earlier variants of ``schedule``, most reducing first (as Hypothesis shrinks).

    Drop a block of steps (halves, quarters, ...), then one step; merge two prompts into one; fold a prompt's content into
    another prompt's (identical contents); move a cancel (or any step) to an
    earlier event; simplify a prompt to one text block.
    """
    steps = schedule.steps
    n = len(steps)
    out: list[tuple[Step, ...]] = []
    k = n // 2
    while k >= 2:  # blocks first, as delta debugging does: most steps of a random schedule play no part
        out.extend(steps[:i] + steps[i + k:] for i in range(0, n - k + 1, k))
        k //= 2
    for i in range(n):
        if n > 1:
            out.append(steps[:i] + steps[i + 1:])
    prompts = [i for i, s in enumerate(steps) if s.do == "prompt"]
    for a, b in zip(prompts, prompts[1:]):
        merged = replace(steps[a], text=steps[a].text + steps[b].text)
        out.append(steps[:a] + (merged,) + steps[a + 1:b] + steps[b + 1:])
    for i, s in enumerate(steps):
        earlier = EARLIER.get(s.after)
        if earlier is not None:
            out.append(steps[:i] + (replace(s, after=earlier),) + steps[i + 1:])
        if s.do == "prompt" and (len(s.text) > 1 or s.image):
            out.append(steps[:i] + (replace(s, text=s.text[:1] or ("yes",), image=False),) + steps[i + 1:])
    seen = {steps}
    for cand in out:
        if cand not in seen:
            seen.add(cand)
            yield Schedule(schedule.name, cand, schedule.seed, "shrunk")


def lateness(trigger: str) -> int:
    """How many :data:`EARLIER` moves lead from ``trigger`` to ``now``."""
    n = 0
    while trigger != "now":
        trigger, n = EARLIER[trigger], n + 1
    return n


def schedule_size(schedule: Schedule) -> tuple[int, int, int]:
    """Order of shrinking: fewer steps first, then earlier events, then fewer prompt blocks."""
    return (len(schedule.steps), sum(lateness(s.after) for s in schedule.steps),
            sum(len(s.text) + s.image for s in schedule.steps))


def as_dict(step: Step) -> dict:
    return asdict(step)
