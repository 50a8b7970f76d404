"""Two-phase commit, as in Lamport's TwoPhase.tla: the explorer's validation model.

Resource managers (RMs) are ``working``, ``prepared``, ``committed`` or
``aborted``; the transaction manager (TM) is ``init`` or ``done`` and collects
the set ``tmPrepared``; messages are ``Prepared(rm)``, ``Commit`` and ``Abort``
in a set that only grows.  Published distinct-state counts (TLC, Stateright
``examples/2pc.rs``): 288 for 3 RMs (depth 11), 8,832 for 5 RMs, 296,448 for 7;
with RM symmetry, 665 for 5 RMs.

A state is a plain tuple ``(rm, tm, tm_prepared, msg_prepared, msg_commit,
msg_abort)``: ``rm`` holds each RM's state by RM number, the two sets are bit
masks (bit ``i`` for RM ``i``).  A plain tuple is built and hashed in one go;
this model is also the engine's yardstick against a hand-written BFS, so its
encoding is as lean as that BFS's.  :func:`view` names the fields.

``broken=True`` lets the TM commit without waiting for every ``Prepared``: the
consistency invariant then fails, which pins the explorer's counterexamples.
"""

from __future__ import annotations

from typing import NamedTuple

from .fingerprint import fingerprint
from .properties import Property, always, sometimes

RM_STATES = ("working", "prepared", "committed", "aborted")
_RM_SET = frozenset(RM_STATES)
_RM_CODE = {r: i for i, r in enumerate(RM_STATES)}
_TM_SET = frozenset(("init", "done"))


class TPState(NamedTuple):
    """A state with its fields named (what :func:`view` gives; the model itself uses plain tuples)."""

    rm: tuple[str, ...]
    tm: str
    tm_prepared: int
    msg_prepared: int
    msg_commit: bool
    msg_abort: bool


def view(state: tuple) -> TPState:
    """The state with its fields named."""
    return TPState(*state)


def _type_ok(n: int, limit: int):
    """TypeOK for ``n`` RMs (bit masks up to ``limit``), with its constants bound once."""

    def type_ok(s: tuple) -> bool:
        rm, tm, tp, mp, _commit, _abort = s
        return len(rm) == n and _RM_SET.issuperset(rm) and tm in _TM_SET and 0 <= tp <= limit and 0 <= mp <= limit

    return type_ok


class TPAction(NamedTuple):
    name: str
    rm: int | None = None


class TwoPhase:
    """The TwoPhase transition system with ``n`` resource managers."""

    check_deadlock = False

    def __init__(self, n: int, broken: bool = False, symmetry: bool = False) -> None:
        if n < 1:
            raise ValueError(f"TwoPhase needs at least 1 resource manager, got {n}")
        self.n = n
        self.broken = broken
        self.symmetry = symmetry
        if symmetry:
            self.fingerprint = self._canonical_fingerprint
        elif 4 * n + 3 <= 60:  # the exact code fits a stored fingerprint (60 bits)
            self.fingerprint = self._code
        self._rm_codes: dict[tuple, int] = {}
        # Actions are immutable: made once, shared by every successor.
        self._commit, self._abort = TPAction("TMCommit"), TPAction("TMAbort")
        self._per_rm = [(i, 1 << i, TPAction("TMRcvPrepared", i), TPAction("RMPrepare", i),
                         TPAction("RMChooseToAbort", i), TPAction("RMRcvCommitMsg", i), TPAction("RMRcvAbortMsg", i))
                        for i in range(n)]
        self._all_prepared = (1 << n) - 1

    def init_states(self):
        return [(("working",) * self.n, "init", 0, 0, False, False)]

    def successors(self, s: tuple):
        """TMCommit, TMAbort, then per RM: TMRcvPrepared, RMPrepare, RMChooseToAbort,
        RMRcvCommitMsg, RMRcvAbortMsg (the order of TwoPhase.tla's Next)."""
        rm, tm, tp, mp, commit, abort = s
        out: list[tuple[TPAction, tuple]] = []
        init = tm == "init"
        if init:
            if self.broken or tp == self._all_prepared:
                out.append((self._commit, (rm, "done", tp, mp, True, abort)))
            out.append((self._abort, (rm, "done", tp, mp, commit, True)))
        for i, bit, rcv_prepared, prepare, choose_abort, rcv_commit, rcv_abort in self._per_rm:
            if init and mp & bit:
                out.append((rcv_prepared, (rm, tm, tp | bit, mp, commit, abort)))
            if rm[i] == "working":  # both successors share the slices around RM i
                head, tail = rm[:i], rm[i + 1:]
                out.append((prepare, (head + ("prepared",) + tail, tm, tp, mp | bit, commit, abort)))
                out.append((choose_abort, (head + ("aborted",) + tail, tm, tp, mp, commit, abort)))
            if commit:
                out.append((rcv_commit, (rm[:i] + ("committed",) + rm[i + 1:], tm, tp, mp, commit, abort)))
            if abort:
                out.append((rcv_abort, (rm[:i] + ("aborted",) + rm[i + 1:], tm, tp, mp, commit, abort)))
        return out

    def properties(self) -> list[Property]:
        return [
            always("TypeOK", _type_ok(self.n, self._all_prepared), description="every variable holds a value of its type"),
            always(
                "Consistent",
                lambda s: not ("committed" in s[0] and "aborted" in s[0]),
                description="no RM has committed while another has aborted",
                armed=lambda s: "committed" in s[0] or "aborted" in s[0],  # some RM has decided
            ),
            sometimes("SomeCommit", lambda s: "committed" in s[0], description="a transaction commits"),
            sometimes("SomeAbort", lambda s: "aborted" in s[0], description="a transaction aborts"),
        ]

    def action_kind(self, action: TPAction) -> str:
        """The action's name, for coverage counts."""
        return action.name

    def format_action(self, action: TPAction) -> str:
        return action.name if action.rm is None else f"{action.name}(rm{action.rm + 1})"

    def describe_step(self, before: tuple, action: TPAction, after: tuple) -> list[str]:
        """``field: old -> new`` for what the step changed, sets shown as sets of RMs."""
        out = []
        for name, old, new in zip(TPState._fields, before, after):  # the plain tuples: fields in TPState's order
            if old != new:
                if name in ("tm_prepared", "msg_prepared"):
                    old, new = self._rms(old), self._rms(new)
                out.append(f"{name}: {old!r} -> {new!r}")
        return out

    def _rms(self, mask: int) -> str:
        return "{" + ", ".join(f"rm{i + 1}" for i in range(self.n) if mask >> i & 1) + "}"

    def _code(self, s: tuple) -> int:
        """The state as an exact ``4n + 3``-bit number (RM states in base 4, then TM, both bit masks and the
        two messages): TwoPhase's own fingerprint, equal in every process and never shared by two states."""
        rm, tm, tp, mp, commit, abort = s
        code = self._rm_codes.get(rm)
        if code is None:
            code = self._rm_codes[rm] = sum(_RM_CODE[r] << 2 * i for i, r in enumerate(rm))
        return ((((code << self.n | tp) << self.n | mp) << 1 | (tm == "done")) << 1 | commit) << 1 | abort

    def _canonical_fingerprint(self, s: tuple) -> int:
        """RMs are interchangeable: the structural fingerprint of the state with its per-RM triples sorted."""
        rm, tm, tp, mp, commit, abort = s
        per_rm = sorted((r, tp >> i & 1, mp >> i & 1) for i, r in enumerate(rm))
        return fingerprint((tuple(per_rm), tm, commit, abort))
