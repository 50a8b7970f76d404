"""The one monitor protocol: rule monitors over what an observer of ACP traffic can see.

Three drivers feed the same monitor classes (:mod:`.rules`):

* the trace checker: every record of a capture, plus an optional sidecar of
  agent- or client-internal events;
* the explorer and the simulator (:mod:`.monitoring`, inside the model):
  every message of a path as the agent's side of each connection sees it,
  the model's internal events (:mod:`.rules_in_model` names them in the sidecar's
  vocabulary), and, for the monitors that judge what clients show, the
  model's state.

An observation (:class:`Obs`) is one JSON-RPC message on one connection (the
exact JSON that crossed the wire), one internal event, the end of a
connection, or (model only) a step of the model or its rest.  The front end (:mod:`.wire_reading`) classifies it once and
annotates it (the request a response answers, the foreground state before it,
the replay window it falls in); each monitor then sees only the observations
whose dispatch keys it declared, for the dialects (``v1``, ``v2``) it applies
to.

Life cycle of a monitor in one run: ``fields`` declares its bookkeeping;
:func:`new_book` makes it; ``on(book, obs)`` updates the book in place and
returns findings; ``end(book, complete, front)`` returns the obligations
still open when the run ends (reading, where it must, the front end's book of
pending requests and states).  Each :class:`Finding` carries its level (``violation``:
proven by the traffic; ``warning``: a heuristic, a SHOULD or a smell), its
rule IDs and the *evidence stamps* of the observations that show it: the
capture's seq numbers, or :data:`NO_STAMP` under the explorer, whose path is
the evidence.
An end-of-run obligation is a violation when the run is declared complete
(at rest) and a warning otherwise.

Bookkeeping is a :class:`Book`: named dicts, sets and plain values.  The trace
checker keeps one book per monitor for the whole capture and mutates it in
place (flat, fast).  The explorer keeps a *frozen* book in its state
(:func:`freeze`: frozensets, so equal bookkeeping hashes equally whatever the
order of events, and a fingerprint stays canonical) and thaws a copy for each
step (:func:`thaw`).  Monitor code is the same in both: it only ever sees a
thawed book.  Under the explorer every stamp is :data:`NO_STAMP`, so stamps
never tell explored states apart; checks that compare stamps (an order the
path already fixes) run on captures only.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from acplab.model.engine.properties import SEVERITIES, VIOLATION, WARNING  # noqa: F401 - the one vocabulary

# what a monitor may need: the wire traffic, internal events (a sidecar or the model), the model's state (what
# clients show and believe: no capture or sidecar carries it, so only the explorer and the simulator run those
# monitors); what a monitor's property expects of every run (DESIGN.md, "Properties are monitors").  One
# vocabulary with the model's monitors (:mod:`.monitors_base`), checked when a monitor class is defined.
from .monitors_base import ALWAYS, EVENTUALLY, INTERNAL, STATE, WIRE, Declared  # noqa: F401

#: the evidence stamp of an observation under the explorer: the path is the evidence, so every
#: observation gets the same stamp and none enters the explored state.  Not None, so a monitor can
#: keep "seen at stamp s" without mistaking it for "not seen".
NO_STAMP = -1

#: the dialects a monitor can apply to; ``v2`` covers the ``v2-draft`` preset too
V1, V2 = "v1", "v2"
BOTH = frozenset({V1, V2})
ONLY_V2 = frozenset({V2})
ONLY_V1 = frozenset({V1})



class Conn(NamedTuple):
    """A model connection ``(client, epoch)``; captures name connections with strings instead.

    A dedicated type so symmetry reduction can find and rename every connection
    in a frozen book (:func:`rename_conns`).
    """

    client: int
    epoch: int


class Finding(NamedTuple):
    """One thing a monitor found: ``level`` is VIOLATION or WARNING (obligations: see ``open``)."""

    level: str
    rules: tuple[str, ...]
    text: str
    stamps: tuple = ()
    #: an end-of-run obligation: a violation if the run is complete, else a warning
    open: bool = False


def violation(rules, text: str, *stamps) -> Finding:
    return Finding(VIOLATION, tuple(rules), text, _stamps(stamps))


def warning(rules, text: str, *stamps) -> Finding:
    return Finding(WARNING, tuple(rules), text, _stamps(stamps))


def obligation(rules, text: str, *stamps) -> Finding:
    """An obligation still open at the end of the run (see :class:`Finding`)."""
    return Finding(VIOLATION, tuple(rules), text, _stamps(stamps), True)


def _stamps(stamps) -> tuple:
    return tuple(s for s in stamps if s is not None and s != NO_STAMP)


def settle(finding: Finding, complete: bool) -> Finding:
    """An obligation's level once it is known whether the run ended at rest."""
    if not finding.open or complete:
        return finding
    return finding._replace(level=WARNING)


class Switches(NamedTuple):
    """Choices where the rules are silent or a preset decides; each monitor says which it reads.

    Defaults follow the RFD with the 2.4.0 schema (the ``rfd`` preset); the
    questions these answer are listed in the README (RFD questions).
    """

    #: default dialect of connections that show no ``initialize`` (``v1``, ``v2``, ``v2-draft``)
    dialect: str = "v2"
    #: the dialect is forced for every connection (``--spec`` given)
    forced: bool = False
    #: S5: level of an ending idle without stopReason (SHOULD in the schema, MUST in the 2026-08 docs)
    idle_stop_reason: str = WARNING
    #: W6/S15/N5 (Q10): an unknown value without ``_`` is a violation (else a warning)
    strict_enums: bool = True
    #: S15: custom states the client advertised (no capability exists for it yet)
    allowed_states: tuple[str, ...] = ()
    #: S15: the ``_meta`` key under which a client's initialize lists the custom states it supports
    states_key: str | None = None
    #: P5/U12 (RFD question): message IDs unique per type (the schema's MessageId) or in the whole session (the RFD)
    id_scope: str = "type"
    #: W6 (RFD question): an unprefixed unknown stop reason is a violation (the schema reserves them for ACP);
    #: False: a warning (the RFD: clients handle any unknown stop reason as a generic stop)
    strict_stop_reasons: bool = True
    #: the unstable schema of 2.4.0 (shipped with the SDK): the ``unknown`` state is known (S16)
    unstable: bool = True
    #: R7 (D12): the reset before chunked replay also for agent messages and thoughts (PR2175)
    reset_all_types: bool = True
    #: P15 (Q9): a client sending a content type the agent never advertised is a violation
    strict_client_content: bool = False
    #: JSON objects with repeated member names are violations (RFC 8259 section 4)
    strict_json: bool = True


class Obs:
    """One observation: a message, an internal event, or a connection's end.

    ``kind`` is "msg", "internal" or "close".  For a message: ``conn``,
    ``dir`` ("client->agent" / "agent->client"), ``stamp`` (seq or None),
    ``msg`` (the JSON object), ``shape`` ("request", "notification",
    "response" or "invalid"), ``method``, ``rid``, ``params``, ``sid``
    (``params.sessionId`` when a string), ``update`` and ``utype`` for a
    ``session/update``.  The front end adds ``dialect``, ``answers`` and
    ``req`` (for a response: the method and record of the request it
    answers), ``dup`` (a request reusing a pending id: the earlier stamp),
    ``fg`` (the foreground state of ``(conn, sid)`` before this message),
    ``ending`` (an idle that ends work), ``window`` (the open resume window,
    None for a message the front end found live inside it; ``resumed`` keeps
    the window then) and ``keys`` (dispatch keys).  An internal event has ``event`` and
    ``data``; ``stale`` when it names a connection that has already ended.

    Under the model only (monitors that need :data:`STATE`): ``step`` (key
    ``step``; ``data`` is ``(before, after, events)``: the worlds around one
    step and its events) and ``rest`` (key ``rest``; ``data`` is the world,
    which is at rest: nothing in flight, no work, no prompt pending).
    """

    # Class-level defaults: an observation sets only what it has (the trace checker makes a million).
    shape = method = rid = params = sid = update = utype = dialect = answers = req = dup = fg = window = None
    resumed = None  # the open resume window of the connection, even where ``window`` is None (a live message in it)
    event = data = problem = None
    keys: tuple = ()
    ending = stale = advertised = False

    def __init__(self, kind: str, conn=None, dir: str | None = None, stamp=None, msg: Any = None) -> None:
        self.kind = kind
        self.conn = conn
        self.dir = dir
        self.stamp = stamp
        self.msg = msg

    def __repr__(self) -> str:  # pragma: no cover - debugging aid
        what = self.event if self.kind == "internal" else (self.method or self.answers or self.shape)
        return f"Obs({self.kind} {self.conn} {self.dir} {self.stamp} {what} {self.utype or ''})"


class Monitor(Declared):
    """A monitor: declares what it needs and reads, keeps a book, reports findings.

    Subclasses set ``name`` (a claim), ``rules``, ``description``, ``keys``
    (dispatch keys, see :mod:`.wire_reading`) and ``armed`` (keys that matter
    only while the named book fields hold something), ``dialects``, ``needs``
    (``wire``, ``internal`` and/or ``state``), ``events`` (the internal events
    it reads) and ``fields`` (bookkeeping: name -> ``dict``, ``set`` or a
    hashable default), and override :meth:`on` and, for obligations,
    :meth:`end`.  ``switches`` is the run's :class:`Switches`.

    As a property of the explored model (one property per monitor, named
    ``name``):

    * ``level`` is its severity: ``violation`` (a MUST: the default) or
      ``warning`` (a SHOULD monitor: reported, the verdict unchanged).  The
      explorer and the simulator report the findings of that level; a
      finding of the other level (a heuristic's warning, a SHOULD inside a
      MUST monitor) is the trace checker's to list;
    * ``expectation`` is ``always`` (findings when they happen; obligations
      still open when the world is at rest are violations there) or
      ``eventually`` for a monitor whose findings are all obligations
      (:meth:`end`): every weakly fair behaviour discharges them, so work
      that never ends and a prompt never answered are counterexamples even
      when the world never comes to rest;
    * ``reads_front``: its obligations read the front end's book (so they
      can be open while its own book is empty).
    """

    keys: tuple[str, ...] = ()
    #: key -> book fields: the monitor also sees observations with that key while one of those fields is non-empty
    armed: dict = {}
    dialects: frozenset = ONLY_V2
    needs: frozenset = frozenset({WIRE})
    events: tuple[str, ...] = ()
    fields: dict = {}
    reads_front = False

    def __init__(self, switches: Switches | None = None) -> None:
        self.switches = switches if switches is not None else Switches()

    @property
    def wire(self) -> bool:
        """Checkable from the wire alone (the trace checker runs it without a sidecar)."""
        return self.needs == frozenset({WIRE})

    def for_switches(self, switches: Switches) -> "Monitor":
        """This monitor for a run with ``switches`` (itself when they are its own)."""
        return self if switches == self.switches else type(self)(switches)

    def owes(self, b: "Book", front: "Book | None" = None) -> bool:
        """Whether an obligation is open (what :meth:`end` would report as one)."""
        return any(f.open for f in self.end(b, True, front) or ())

    def on(self, b: "Book", o: Obs):
        """Update the book for one observation; return findings (an iterable) or None."""
        return None

    def end(self, b: "Book", complete: bool, front: "Book | None" = None):
        """The obligations still open at the end of the run (findings made with :func:`obligation`).

        ``front`` is the front end's book (read only): the pending requests and
        the last state of each connection, which some obligations are about.
        """
        return None

    def __repr__(self) -> str:
        return f"<monitor {self.name}>"


# --------------------------------------------------------------------------- bookkeeping


class Book:
    """A monitor's bookkeeping: attributes named by its ``fields`` (dicts, sets, values)."""

    __slots__ = ("__dict__",)


def new_book(fields: dict) -> Book:
    b = Book()
    for name, kind in fields.items():
        setattr(b, name, {} if kind is dict else set() if kind is set else kind)
    return b


def freeze(fields: dict, b: Book) -> tuple:
    """The canonical, hashable form of a book (frozensets: equal contents, equal value)."""
    out = []
    for name, kind in fields.items():
        value = getattr(b, name)
        if kind is dict:
            out.append(frozenset(value.items()))
        elif kind is set:
            out.append(frozenset(value))
        else:
            out.append(value)
    return tuple(out)


def thaw(fields: dict, frozen: tuple) -> Book:
    """A mutable copy of a frozen book."""
    b = Book()
    for (name, kind), value in zip(fields.items(), frozen):
        if kind is dict:
            setattr(b, name, dict(value))
        elif kind is set:
            setattr(b, name, set(value))
        else:
            setattr(b, name, value)
    return b


class LazyBook(Book):
    """A book thawed field by field on first use (:func:`thaw_lazily`): a step that touches two fields of a
    large book copies those two, and :func:`refreeze` keeps the frozen values of the others."""

    __slots__ = ()

    def __getattr__(self, name: str):
        d = object.__getattribute__(self, "__dict__")
        try:
            index, kind = d["_fields_"][name]
        except KeyError:
            raise AttributeError(name) from None
        value = d["_frozen_"][index]
        value = dict(value) if kind is dict else set(value) if kind is set else value
        d[name] = value
        return value


def _field_index(fields: dict) -> dict:
    index = _FIELD_INDEX.get(id(fields))
    if index is None or index[0] is not fields:
        index = _FIELD_INDEX[id(fields)] = (fields, {name: (i, kind) for i, (name, kind) in enumerate(fields.items())})
    return index[1]


_FIELD_INDEX: dict = {}


def thaw_lazily(fields: dict, frozen: tuple) -> LazyBook:
    """A book over ``frozen`` that thaws a field when a monitor first reads or writes it."""
    b = LazyBook()
    d = b.__dict__
    d["_fields_"] = _field_index(fields)
    d["_frozen_"] = frozen
    return b


def refreeze(fields: dict, b: LazyBook) -> tuple:
    """The frozen form of a lazily thawed book: untouched fields keep their frozen values."""
    d = b.__dict__
    frozen = d["_frozen_"]
    out = []
    for i, (name, kind) in enumerate(fields.items()):
        if name not in d:
            out.append(frozen[i])
            continue
        value = d[name]
        out.append(frozenset(value.items()) if kind is dict else frozenset(value) if kind is set else value)
    return tuple(out)


def frozen_initial(fields: dict) -> tuple:
    return freeze(fields, new_book(fields))


def rename_conns(value, new_index: dict[int, int]):
    """``value`` with every :class:`Conn` renamed by client index (symmetry reduction).

    The common types are tested exactly (the hot path of the symmetry
    fingerprint); another named tuple keeps its type.
    """
    kind = type(value)
    if kind is Conn:
        return Conn(new_index[value.client], value.epoch)
    if kind is tuple:
        return tuple([rename_conns(x, new_index) for x in value])
    if kind is frozenset:
        return frozenset([rename_conns(x, new_index) for x in value])
    if kind is str or kind is int or value is None:
        return value
    if isinstance(value, tuple):
        items = [rename_conns(x, new_index) for x in value]
        return kind._make(items) if hasattr(kind, "_make") else tuple(items)
    return value


# --------------------------------------------------------------------------- small helpers for monitors


def conn_name(conn) -> str:
    """A connection as the capture names it (``c1``, ``c1.2`` for model connections)."""
    if isinstance(conn, str):
        return conn
    client, epoch = conn
    return f"c{client + 1}" + (f".{epoch}" if epoch else "")


def is_id(value) -> bool:
    """A usable JSON-RPC id: an int (not a bool) or a string (W11)."""
    return isinstance(value, (int, str)) and not isinstance(value, bool)


def is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def error_problem(err) -> str | None:
    """Why ``err`` is not a JSON-RPC error object (W9), or None when it is one."""
    if not isinstance(err, dict):
        return f"the error is {json_type(err)}, not an object"
    if "code" not in err:
        return "the error object has no code"
    if not is_int(err["code"]):
        return f"the error code is {json_type(err['code'])}, not an integer"
    if not isinstance(err.get("message"), str):
        return "the error object has no string message"
    return None


def json_type(value) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object"


def short(value, limit: int = 40) -> str:
    text = repr(value) if not isinstance(value, str) else value
    return text if len(text) <= limit else text[: limit - 3] + "..."
