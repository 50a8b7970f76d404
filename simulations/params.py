"""Simulation parameters: one frozen record, validated once, JSON-able.

Units are in the field names: ``_ms`` milliseconds, ``_s`` seconds, rates
per second.  Simulated time inside SimPy is in seconds.

Every number is finite (NaN and infinity are refused wherever they come
from: ``--set``, TOML ``inf``/``nan``) and in range; the counts have
documented maxima (:data:`MAXIMA`), and :func:`check_cost` refuses a run whose
estimated CPU time (:meth:`SimParams.estimated_seconds`: the measured cost
model of :mod:`.cost`, quadratic in clients x prompts) exceeds
:data:`MAX_CPU_SECONDS`, before any work starts.
"""

from __future__ import annotations

import math
import re
from dataclasses import asdict, dataclass, fields, replace

from acplab.model.errors import InputError

#: prompt texts the clients draw from; a small pool makes identical prompts common
CONTENTS = ("hi", "yes", "fix the bug", "run the tests", "continue", "thanks", "undo", "explain")

ON_VIOLATION = ("stop", "count", "continue")

#: upper bounds of the counts: a session's cost grows with clients squared times submissions
MAXIMA = {"clients": 32, "sessions": 100_000, "prompts": 1_000, "retries": 10}
#: refuse a run (or a sweep) estimated to need more CPU time than this (one week)
MAX_CPU_SECONDS = 7 * 24 * 3600.0
#: largest value of a time or rate field (simulated seconds, ms or per-second rates)
MAX_FLOAT = 1e9
#: smallest positive time (ms or s) and smallest non-zero rate: below it, means divide to zero or infinity
MIN_POSITIVE = 1e-6
#: largest latency_sigma: the lognormal keeps its mean latency_ms only in expectation; past about
#: sqrt(2 ln n) the mean of a run's n latencies collapses towards 0 (at 30 or 1000 every delay is ~0 and the
#: runs are identical), so a larger sigma would silently mean "no latency" rather than "a heavier tail"
MAX_LATENCY_SIGMA = 3.0
#: a number written as text (``--set``): ASCII digits, an optional sign, fraction and exponent; no ``1_000``,
#: no other scripts' digits, no hexadecimal
_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?", re.ASCII)
_INTEGER = re.compile(r"[+-]?\d+", re.ASCII)


@dataclass(frozen=True)
class SimParams:
    spec: str = "rfd"
    clients: int = 2
    sessions: int = 100
    prompts: int = 3  # first submissions per client (retries come on top)
    seed: int = 0
    duration_s: float = 600.0  # a run ends at this simulated time at the latest
    on_violation: str = "continue"  # metrics from every run, each carried on past its violations
    # network
    latency_ms: float = 50.0  # mean one-way latency (lognormal, sigma latency_sigma)
    latency_sigma: float = 0.5
    drop: float = 0.0  # probability that a message reaching the head of its channel is lost
    disconnect_rate: float = 0.0  # connection cuts per second per connected client
    # clients
    think_s: float = 2.0  # mean think time before each submission (exponential)
    contents: int = 2  # size of the prompt pool (CONTENTS[:contents])
    cancel: float = 0.0  # probability that a submission is followed by session/cancel
    cancel_request: float = 0.0  # probability that a submission is followed by $/cancel_request for it
    cancel_ms: float = 300.0  # mean delay from submit to that cancel (either kind)
    replay: float = 0.5  # probability that a resume asks for replayFrom start
    reconnect_ms: float = 500.0  # mean delay from a cut to the reconnect
    retries: int = 1  # resubmissions of the same content after a timeout or a cut
    retry_timeout_s: float = 30.0  # no response for this long: give up and resubmit
    resume_timeout_s: float = 5.0  # no resume response for this long: close and reconnect
    # agent
    insert_ms: float = 20.0  # mean time from "can insert" to insertion
    echo_ms: float = 5.0  # mean time from insertion to the user_message report
    #: mean time from insertion to the prompt response: the adapter answers when the runtime's insertion
    #: event reaches it; at 50 ms a failure can still strike before the response (the window of E1/E2)
    answer_ms: float = 50.0
    step_ms: float = 300.0  # mean duration of each work step (output, tool start/end, finish)
    tools: bool = True
    chunks: bool = True  # user messages reported as chunks (needed for the replay reset rule)
    reject: float = 0.0  # probability that a prompt fails before insertion
    fail: float = 0.0  # probability per work step that the runtime fails instead
    restart_rate: float = 0.0  # agent restarts per second
    # monitors the runtime leaves out (to measure a mutant's consequences)
    disable_monitors: tuple[str, ...] = ()

    def validate(self) -> "SimParams":
        from acplab.model.acp.monitor_set import monitor_names, replaced_by
        from acplab.model.acp.spec import get_spec

        get_spec(self.spec)
        for f in fields(self):
            v = getattr(self, f.name)
            if isinstance(v, float) and not (math.isfinite(v) and abs(v) <= MAX_FLOAT):
                raise InputError(f"{f.name} must be a finite number (at most {MAX_FLOAT:g}), got {v}")
        for name in ("clients", "sessions"):
            if getattr(self, name) < 1:
                raise InputError(f"{name} must be at least 1, got {_short(getattr(self, name))}")
        if self.prompts < 0 or self.retries < 0:
            raise InputError(f"prompts and retries must be 0 or more, got {_short(self.prompts)} and "
                             f"{_short(self.retries)}")
        if not -(2 ** 63) <= self.seed < 2 ** 63:
            raise InputError(f"seed must be a 64-bit integer, got {_short(self.seed)}")
        for name, most in MAXIMA.items():
            if getattr(self, name) > most:
                raise InputError(f"{name} must be at most {most:,}, got {_short(getattr(self, name))}")
        for name in ("drop", "cancel", "cancel_request", "replay", "reject", "fail"):
            v = getattr(self, name)
            if not 0.0 <= v <= 1.0:
                raise InputError(f"{name} must be a probability in [0, 1], got {v}")
        if self.drop >= 1.0:
            raise InputError("drop must be below 1 (nothing would ever arrive)")
        for name in ("latency_ms", "duration_s", "think_s", "cancel_ms", "reconnect_ms", "retry_timeout_s",
                     "resume_timeout_s", "insert_ms", "echo_ms", "answer_ms", "step_ms"):
            if getattr(self, name) < MIN_POSITIVE:
                raise InputError(f"{name} must be positive (at least {MIN_POSITIVE:g}), got {getattr(self, name)}")
        for name in ("disconnect_rate", "restart_rate", "latency_sigma"):
            if getattr(self, name) < 0:
                raise InputError(f"{name} must be 0 or more, got {getattr(self, name)}")
        if self.latency_sigma > MAX_LATENCY_SIGMA:
            raise InputError(f"latency_sigma must be at most {MAX_LATENCY_SIGMA:g} (beyond it nearly every delay "
                             f"is 0 and latency_ms stops being the mean), got {self.latency_sigma}")
        for name in ("disconnect_rate", "restart_rate"):
            if 0 < getattr(self, name) < MIN_POSITIVE:
                raise InputError(f"{name} must be 0 or at least {MIN_POSITIVE:g}, got {getattr(self, name)}")
        if not 1 <= self.contents <= len(CONTENTS):
            raise InputError(f"contents must be 1..{len(CONTENTS)}, got {_short(self.contents)}")
        if self.on_violation not in ON_VIOLATION:
            raise InputError(f"on_violation must be one of {', '.join(ON_VIOLATION)}, got {_short(self.on_violation)}")
        known = set(monitor_names())
        for name in self.disable_monitors:
            if name not in known:
                said = replaced_by(name) or f"known: {', '.join(sorted(known))}"
                raise InputError(f"unknown monitor {_short(name)}; {said}")
        return self

    def estimated_seconds(self) -> float:
        """The CPU seconds this simulation is expected to take (:func:`.cost.simulation_seconds`)."""
        from .cost import simulation_seconds

        return simulation_seconds(self)

    def to_json(self) -> dict:
        d = asdict(self)
        d["disable_monitors"] = list(self.disable_monitors)
        return d

    @classmethod
    def from_mapping(cls, data: dict, where: str = "parameters") -> "SimParams":
        """Build from a dict (TOML/JSON config, ``--set``); unknown keys and bad types are input errors."""
        known = {f.name: f for f in fields(cls)}
        kwargs = {}
        for key, value in data.items():
            name = key.replace("-", "_")
            if name not in known:
                raise InputError(f"{where}: unknown parameter '{key}'; known: {', '.join(sorted(known))}")
            if name in kwargs:
                raise InputError(f"{where}: parameter {name} given twice (as {_short(key)} too)")
            kwargs[name] = _coerce(name, value, getattr(cls, name, None) if name != "disable_monitors" else (), where)
        return cls(**kwargs).validate()

    def with_(self, **changes) -> "SimParams":
        return replace(self, **changes).validate()


def with_settings(values: dict, settings, options: dict, where: str) -> dict:
    """``values`` plus the ``--set KEY=VALUE`` items; a key that has its own option (``options``: parameter ->
    option) is refused, so ``--clients 3 --set clients=5`` cannot silently mean 5."""
    out = dict(values)
    for item in settings:
        key, sep, value = item.partition("=")
        name = key.strip().replace("-", "_")
        if not sep:
            raise InputError(f"{where}: --set expects KEY=VALUE, got {_short(item)}")
        if name in options:
            raise InputError(f"{where}: --set {name}: use {options[name]} (its own option) instead")
        if name in out and name not in values:
            raise InputError(f"{where}: --set {name} given twice")
        out[name] = value.strip()
    return out


def check_cost(seconds: float, what: str) -> None:
    """Refuse work estimated at more than :data:`MAX_CPU_SECONDS` of CPU time, before it starts."""
    if seconds > MAX_CPU_SECONDS:
        raise InputError(f"{what}: estimated at about {_duration(seconds)} of CPU time (measured cost model, "
                         f"simulations/cost.py), over the limit of {_duration(MAX_CPU_SECONDS)}; use fewer sessions, "
                         f"clients or prompts, or lower rates")


def _duration(seconds: float) -> str:
    for unit, size in (("years", 365 * 86400), ("days", 86400), ("hours", 3600), ("minutes", 60)):
        if seconds >= size:
            return f"{seconds / size:,.1f} {unit}"
    return f"{seconds:.1f} seconds"


def _coerce(name: str, value, default, where: str):
    if isinstance(value, bool) and not isinstance(default, bool):
        raise InputError(f"{where}: bad value for {name}: {value!r} (a number is expected)")
    try:
        if name == "disable_monitors":
            if isinstance(value, str):
                return tuple(v for v in value.split(",") if v)
            return tuple(str(v) for v in value)
        if isinstance(default, bool):
            if not isinstance(value, (str, bool, int)):
                raise ValueError(value)
            if isinstance(value, str):
                if value.lower() in ("1", "true", "yes", "on"):
                    return True
                if value.lower() in ("0", "false", "no", "off"):
                    return False
                raise ValueError(value)
            return bool(value)
        if isinstance(default, int):
            if isinstance(value, float) and not value.is_integer():
                raise ValueError(value)
            if not isinstance(value, (str, int, float)):
                raise TypeError(value)
            if isinstance(value, str) and not _INTEGER.fullmatch(value.strip()):
                raise ValueError(value)
            return int(value)
        if isinstance(default, float):
            if not isinstance(value, (str, int, float)):
                raise TypeError(value)
            if isinstance(value, str):
                return _float_text(value.strip())
            return float(value)
        if not isinstance(value, str):
            raise TypeError(value)
        return value
    except (TypeError, ValueError, OverflowError):
        raise InputError(f"{where}: bad value for {name}: {_short(value)}") from None


def _float_text(text: str) -> float:
    """A number written in ASCII (``nan``/``inf`` pass through, to be refused as not finite); one that is not 0
    but underflows to 0.0 (``1e-400``) is refused: a rate of 1e-400 would silently mean "off"."""
    if text.lower().lstrip("+-") in ("nan", "inf", "infinity"):
        return float(text)
    if not _NUMBER.fullmatch(text):
        raise ValueError(text)
    return no_underflow(text)


def no_underflow(text: str) -> float:
    """``float(text)``, refusing (ValueError) a number that is not 0 as written but becomes 0.0."""
    value = float(text)
    if value == 0.0 and any(c in "123456789" for c in text.lower().split("e")[0]):
        raise ValueError(f"{text} is too small: it would be read as 0")
    return value


def _short(value) -> str:
    """A value for an error message: short, one line, never failing (ints past 4,300 digits have no repr)."""
    if isinstance(value, (dict, list, tuple)):
        return f"a {type(value).__name__}"
    try:
        text = repr(value)
    except ValueError:
        return "a number too long to show"
    return text if len(text) <= 60 else text[:57] + "..."
