"""Run the rule monitors (:mod:`.rules`) inside today's :class:`~.model.AcpModel`, explorer and simulator alike.

:class:`RuleMonitors` speaks the model's monitor interface (``initial``,
``kinds``, ``observe(m, event, before, after)``, ``at_rest``,
``rename_clients``) and feeds what a recorder next to the agent would see:

* a client's message when the agent receives it (``Deliver``), an agent's
  message when the agent sends it on a live connection (``Send``): the exact
  JSON the codec makes of it (:func:`acplab.model.wire.encode`);
* the end of a connection (``Cut``);
* the model's internal events in the sidecar's vocabulary (``insert``,
  ``reject``, ``work_start``, ``work_end``, ``fail``, ``execute``, ``bind``,
  ``restart``).

Its bookkeeping (part of the explored state) is the front end's book and one
book per monitor, all frozen (:func:`~.rule_monitor.freeze`): frozensets, so
equal bookkeeping hashes equally, and no evidence stamps (every stamp is
:data:`~.rule_monitor.NO_STAMP`: the path is the evidence).  A violation is reported as
``"<monitor> [<rules>]: <sentence>"``; warnings are not properties and are
dropped.  At rest (nothing in flight, no work, no prompt pending, no
permission request left for a client to answer) open obligations are
violations: the run is complete there.
"""

from __future__ import annotations

from acplab.model.wire import encode

from . import events as ev
from .monitors import Monitor as ModelMonitor
from .rule_monitor import (ALWAYS, EVENTUALLY, INTERNAL, NO_STAMP, VIOLATION, WARNING, WIRE, Conn, Obs, Switches,
                           frozen_initial, refreeze, rename_conns, settle, thaw, thaw_lazily)
from .wire_reading import FIELDS, Dispatch, Frontend, classify, close_obs, internal_obs
from .rules import make_monitors
from .state import SESSION

#: entries each of the adapter's caches keeps before it starts afresh: the hits come from states of the
#: same few levels, and every entry keeps a bookkeeping value alive that the search would have let go
#: (5,000: on `--clients 2 --prompts 3`, one worker, as fast as 200,000 and 464 B/state against 541)
CACHE_ENTRIES = 5000

#: a cached answer that left the bookkeeping as it was (the caller's own value is returned)
_SAME = object()

#: the model's event kinds the adapter turns into observations
KINDS = frozenset({"send", "deliver", "cut", "insert", "assign_id", "reject", "work_start", "work_end", "fail",
                   "execute", "bind", "restart", "forget"})

#: model event kind -> sidecar event name (where they differ)
SIDECAR_NAMES = {"assign_id": "assign"}


def switches_for(spec) -> Switches:
    """The switches of the dialect a model spec speaks (v1 answers with stopReason; the draft with ``{}``)."""
    if spec is None:
        return Switches(forced=True)
    if spec.response == "stop_reason":
        return Switches(dialect="v1", forced=True)
    if spec.response == "empty":
        return Switches(dialect="v2-draft", forced=True)
    return Switches(forced=True)


class RuleMonitors(ModelMonitor):
    """Several rule monitors as one model monitor (one front end, one frozen book each)."""

    kinds = KINDS

    def __init__(self, monitors=None, spec=None, name: str | None = None, internal: bool = True,
                 members_as_properties: bool = False, memo: bool = True) -> None:
        switches = switches_for(spec)
        #: each rule monitor its own property (one shared front end): findings are ``(name, sentence)`` pairs
        self.members_as_properties = members_as_properties
        self.frontend = Frontend(switches)
        self.monitors = list(monitors) if monitors is not None else make_monitors(switches, internal)
        needing = [m.name for m in self.monitors if not m.needs <= {WIRE, INTERNAL}]
        if needing:  # its answers are kept per (bookkeeping, event) and it hands no world on: state is out
            raise ValueError(f"RuleMonitors runs monitors of observations only; {', '.join(needing)} need "
                             f"{', '.join(sorted(set().union(*(m.needs for m in self.monitors)) - {WIRE, INTERNAL}))}")
        self.dispatch = Dispatch(self.monitors)
        self.name = name or (self.monitors[0].name if len(self.monitors) == 1 else "RuleMonitors")
        self.rules = tuple(dict.fromkeys(r for m in self.monitors for r in m.rules))
        self.description = "; ".join(m.description for m in self.monitors)
        self.wire = all(INTERNAL not in m.needs for m in self.monitors)
        #: what its members read (never state: see above), so no cache around it may assume more
        self.needs = frozenset().union(*(m.needs for m in self.monitors)) or frozenset({WIRE})
        self.initial = (frozen_initial(FIELDS), tuple(frozen_initial(m.fields) for m in self.monitors))
        # monitors whose findings are all obligations are ``eventually`` properties (every weakly fair behaviour
        # discharges them, so a hang is a counterexample even where the world never comes to rest)
        if self.monitors and all(getattr(m, "expectation", ALWAYS) == EVENTUALLY for m in self.monitors):
            self.expectation = "eventually"
        # a SHOULD monitor (or several) is a warning property: its findings are reported, the verdict unchanged
        if self.monitors and all(getattr(m, "level", VIOLATION) == WARNING for m in self.monitors):
            self.level = "warning"
        self._reports = WARNING if self.level == "warning" else VIOLATION
        self._static: dict = {}
        self._renamed: dict = {}  # (book, permutation) -> the book renamed (symmetry)
        self._answers: dict = {}  # (bookkeeping, event) -> what observe said
        #: keep answers per (bookkeeping, event): the explorer meets each pair many times, a simulated run
        #: hardly ever (there the kept answers only feed the garbage collector)
        self.memo = memo

    # -- events to observations ------------------------------------------------------------

    def observations(self, e) -> list[Obs]:
        kind = e.kind
        if kind == "send":
            return [] if e.lost or e.dir == ev.C2A else [self._message(e)]
        if kind == "deliver":
            return [self._message(e)] if e.dir == ev.C2A else []
        if kind == "cut":
            return [close_obs(Conn(*e.conn), NO_STAMP)]
        data = _internal(e)
        return [] if data is None else [internal_obs(SIDECAR_NAMES.get(kind, kind), data, NO_STAMP)]

    def _message(self, e) -> Obs:
        key = (e.msg, e.dir)
        static = self._static.get(key)
        if static is None:
            o = classify(Obs("msg", None, e.dir, NO_STAMP, encode(e.msg)))
            static = (o.msg, o.shape, o.method, o.rid, o.params, o.sid, o.update, o.utype, o.keys, o.problem)
            if len(self._static) > CACHE_ENTRIES:
                self._static.clear()
            self._static[key] = static
        o = Obs("msg", Conn(*e.conn), e.dir, NO_STAMP, static[0])
        (o.shape, o.method, o.rid, o.params, o.sid, o.update, o.utype, o.keys, o.problem) = static[1:]
        return o

    # -- the model's monitor interface ------------------------------------------------------------

    def observe(self, m, e, before, after):
        """Feed one model event; the worlds are not read, so the answer is kept per (bookkeeping, event):
        the explorer meets the same pair again on every interleaving that differs only elsewhere."""
        if not self.memo:
            return self._observe(m, e)
        key = (m, e)
        hit = self._answers.get(key)
        if hit is None:
            if len(self._answers) > CACHE_ENTRIES:
                self._answers.clear()
            new, bad = self._observe(m, e)
            hit = self._answers[key] = (_SAME if new == m else new, bad)
        return (m, hit[1]) if hit[0] is _SAME else hit

    def _observe(self, m, e):
        obs = self.observations(e)
        if not obs:
            return m, None
        fbook = thaw_lazily(FIELDS, m[0])
        frozen = list(m[1])
        books: dict = {}
        bad = None
        dispatch = self.dispatch
        for o in obs:
            self.frontend.feed(fbook, o)
            always, armed = dispatch.targets(o.keys, o.dialect)
            for i, arm in [(i, None) for i in always] + armed:
                mon = self.monitors[i]
                b = books.get(i)
                if arm is not None and not (dispatch.live(arm, b) if b is not None else
                                            dispatch.live_frozen(arm, frozen[i])):
                    continue
                if b is None:
                    b = books[i] = thaw_lazily(mon.fields, frozen[i])
                for f in mon.on(b, o) or ():
                    if self.members_as_properties:
                        if f.level == mon.level and not any(n == mon.name for n, _ in bad or ()):
                            bad = (bad or ()) + ((mon.name, _cited(f)),)
                    elif f.level == self._reports and bad is None:
                        bad = _sentence(mon, f)
        for i, b in books.items():
            frozen[i] = refreeze(self.monitors[i].fields, b)
        return (refreeze(FIELDS, fbook), tuple(frozen)), bad

    def at_rest(self, m, world):
        if world is not None and any(c.perms for c in world.clients):
            return None  # the model's rest ignores a client's unanswered permission requests: not done yet
        front = thaw(FIELDS, m[0])
        found = []
        for i, (mon, frozen) in enumerate(zip(self.monitors, m[1])):
            if self.members_as_properties and mon.expectation == EVENTUALLY:
                continue  # its own eventually property judges it (the liveness pass)
            said = self.owed(m, i, front)
            if said is not None and not self.members_as_properties:
                return said
            if said is not None:
                found.append((mon.name, said))
        return tuple(found) or None

    def owed(self, m, i: int, front=None) -> str | None:
        """Member ``i``'s first obligation still open at rest, as a sentence (None: nothing owed)."""
        mon = self.monitors[i]
        front = thaw(FIELDS, m[0]) if front is None else front
        for f in mon.end(thaw(mon.fields, m[1][i]), True, front) or ():
            if settle(f, True).level == VIOLATION:
                return _cited(f) if self.members_as_properties else _sentence(mon, f)
        return None

    def members(self) -> tuple:
        """The properties this stands for (see :func:`~.model._members`): itself, or one per rule monitor."""
        if not self.members_as_properties:
            return (self,)
        return tuple(_Member(self, i) for i in range(len(self.monitors)))

    def owes(self, m) -> bool:
        """An obligation of one of the monitors is open (what :meth:`at_rest` would report)."""
        front = thaw(FIELDS, m[0])
        return any(mon.owes(thaw(mon.fields, frozen), front) for mon, frozen in zip(self.monitors, m[1]))

    def rename_clients(self, m, new_index):
        """Each book renamed once per permutation: books are shared between states, so most are cached."""
        key = tuple(sorted(new_index.items()))
        cache = self._renamed
        if len(cache) > CACHE_ENTRIES:
            cache.clear()
        out = []
        for book in (m[0],) + m[1]:
            hit = cache.get((book, key))
            if hit is None:
                hit = cache[(book, key)] = rename_conns(book, new_index)
            out.append(hit)
        return (out[0], tuple(out[1:]))


class _Member:
    """One rule monitor of a :class:`RuleMonitors` group as a property of the model."""

    def __init__(self, group: RuleMonitors, index: int) -> None:
        mon = group.monitors[index]
        self.group, self.index = group, index
        self.name, self.rules, self.description = mon.name, mon.rules, mon.description
        self.expectation = "eventually" if mon.expectation == EVENTUALLY else "always"
        self.level = mon.level
        #: coverage: armed where its own book is away from its initial value (a monitor with no fields keeps none)
        self.keeps_bookkeeping = bool(mon.fields)
        self._initial = group.initial[1][index]
        self._owes: dict = {}
        self._last = None

    def armed_in(self, m) -> bool:
        return m[1][self.index] != self._initial

    def owes(self, m) -> bool:
        """Whether its obligation is open: asked on every state, so answered once per distinct book (and front
        book, for a monitor whose obligations read it)."""
        mon = self.group.monitors[self.index]
        book, front = m[1][self.index], (m[0] if mon.reads_front else None)
        if not self.group.memo:  # a simulated run: the last answer, while the same books come back
            last = self._last
            if last is not None and last[0] is book and last[1] is front:
                return last[2]
            said = mon.owes(thaw(mon.fields, book), thaw(FIELDS, m[0]))
            self._last = (book, front, said)
            return said
        key = (book, front)
        said = self._owes.get(key)
        if said is None:
            if len(self._owes) > CACHE_ENTRIES:
                self._owes.clear()
            said = self._owes[key] = mon.owes(thaw(mon.fields, key[0]), thaw(FIELDS, m[0]))
        return said

    def at_rest(self, m, world) -> str | None:
        return self.group.owed(m, self.index)


def _cited(f) -> str:
    """A member's finding under its own property name: the sentence and the rules it proves broken."""
    return f"{f.text} ({', '.join(f.rules)})"


def _sentence(mon, f) -> str:
    return f"{mon.name} [{', '.join(f.rules)}]: {f.text}"


def _conn(sub):
    return None if sub is None else Conn(sub[0], sub[1])


def _internal(e) -> dict | None:
    """A model event in the sidecar's vocabulary (:mod:`.rules.internal`), None for the others."""
    kind = e.kind
    if kind == "insert":
        return {"session": SESSION, "messageId": e.mid, "conn": _conn(e.sub),
                "request": None if e.sub is None else e.sub[2], "retained": e.retained, "origin": e.origin}
    if kind == "assign_id":
        return {"session": SESSION, "messageId": e.mid, "conn": _conn(e.sub), "request": e.sub[2]}
    if kind == "reject":
        return {"session": SESSION, "conn": _conn(e.sub), "request": e.sub[2], "code": e.code,
                "cancelled_by": None if e.by is None else Conn(*e.by)}
    if kind in ("work_start", "restart"):
        return {"session": SESSION}
    if kind == "work_end":
        # what goes on after the idle: only the tool calls it detached into background work (G1)
        return {"session": SESSION, "reason": e.reason, "background": e.background}
    if kind == "fail":
        return {"session": SESSION, "after_insertion": e.after_insertion, "aborting": e.aborting}
    if kind in ("execute", "forget"):
        return {"session": SESSION, "messageId": e.mid}
    if kind == "bind":
        return {"conn": _conn(e.sub), "request": e.sub[2], "messageId": e.mid, "how": e.how}
    return None


def sidecar_events(steps, session: str = SESSION) -> list[tuple[int, str, dict]]:
    """The internal events of a model behaviour as sidecar triples ``(after, event, fields)``.

    ``after`` counts the capture records :func:`acplab.model.render.traces.wire_records`
    writes for the same steps (every send on a live connection), so the
    sidecar lines up with the behaviour's wire log; connections are named as
    in that log (``c1``, ``c1.1``).
    """
    from .rule_monitor import conn_name

    out = []
    seq = 0
    for _action, events in steps:
        for e in events:
            if e.kind == "send" and not e.lost:
                seq += 1
                continue
            data = _internal(e)
            if data is None:
                if e.kind == "cut":
                    out.append((seq, "close", {"conn": conn_name(e.conn)}))
                continue
            data = {k: (conn_name(v) if isinstance(v, Conn) else list(v) if isinstance(v, tuple) else v)
                    for k, v in data.items() if v is not None}
            if "session" in data:
                data["session"] = session
            out.append((seq, SIDECAR_NAMES.get(e.kind, e.kind), data))
    return out
