"""Two-phase commit, as in Lamport's TwoPhase.tla: the explorer's validation model.

Resource managers (RMs) are ``working``, ``prepared``, ``committed`` or
``aborted``; the transaction manager (TM) is ``init`` or ``done`` and collects
the set ``tmPrepared``; messages are ``Prepared(rm)``, ``Commit`` and ``Abort``
in a set that only grows.  Published distinct-state counts (TLC, Stateright
``examples/2pc.rs``): 288 for 3 RMs (depth 11), 8,832 for 5 RMs, 296,448 for 7;
with RM symmetry, 665 for 5 RMs.

``broken=True`` lets the TM commit without waiting for every ``Prepared``: the
consistency invariant then fails, which pins the explorer's counterexamples.
"""

from __future__ import annotations

from typing import NamedTuple

from .properties import Property, always, sometimes

RM_STATES = ("working", "prepared", "committed", "aborted")


class TPState(NamedTuple):
    """One global state; per-RM fields are tuples indexed by RM number."""

    rm: tuple[str, ...]
    tm: str
    tm_prepared: tuple[bool, ...]
    msg_prepared: tuple[bool, ...]
    msg_commit: bool
    msg_abort: bool


class TPAction(NamedTuple):
    name: str
    rm: int | None = None


def _set(values: tuple, i: int, value) -> tuple:
    return values[:i] + (value,) + values[i + 1 :]


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
            self.fingerprint = self._canonical_hash

    def init_states(self):
        none = (False,) * self.n
        return [TPState(("working",) * self.n, "init", none, none, False, False)]

    def successors(self, s: TPState):
        """TMCommit, TMAbort, then per RM: TMRcvPrepared, RMPrepare, RMChooseToAbort,
        RMRcvCommitMsg, RMRcvAbortMsg (the order of TwoPhase.tla's Next)."""
        out = []
        if s.tm == "init":
            if self.broken or all(s.tm_prepared):
                out.append((TPAction("TMCommit"), s._replace(tm="done", msg_commit=True)))
            out.append((TPAction("TMAbort"), s._replace(tm="done", msg_abort=True)))
        for i in range(self.n):
            state = s.rm[i]
            if s.tm == "init" and s.msg_prepared[i]:
                out.append((TPAction("TMRcvPrepared", i), s._replace(tm_prepared=_set(s.tm_prepared, i, True))))
            if state == "working":
                out.append(
                    (
                        TPAction("RMPrepare", i),
                        s._replace(rm=_set(s.rm, i, "prepared"), msg_prepared=_set(s.msg_prepared, i, True)),
                    )
                )
                out.append((TPAction("RMChooseToAbort", i), s._replace(rm=_set(s.rm, i, "aborted"))))
            if s.msg_commit:
                out.append((TPAction("RMRcvCommitMsg", i), s._replace(rm=_set(s.rm, i, "committed"))))
            if s.msg_abort:
                out.append((TPAction("RMRcvAbortMsg", i), s._replace(rm=_set(s.rm, i, "aborted"))))
        return out

    def properties(self) -> list[Property]:
        return [
            always("TypeOK", self._type_ok, description="every variable holds a value of its type"),
            always(
                "Consistent",
                lambda s: not ("committed" in s.rm and "aborted" in s.rm),
                description="no RM has committed while another has aborted",
            ),
            sometimes("SomeCommit", lambda s: "committed" in s.rm, description="a transaction commits"),
            sometimes("SomeAbort", lambda s: "aborted" in s.rm, description="a transaction aborts"),
        ]

    def _type_ok(self, s: TPState) -> bool:
        n = self.n
        return (
            len(s.rm) == n
            and all(r in RM_STATES for r in s.rm)
            and s.tm in ("init", "done")
            and len(s.tm_prepared) == n
            and len(s.msg_prepared) == n
        )

    def format_action(self, action: TPAction) -> str:
        return action.name if action.rm is None else f"{action.name}(rm{action.rm + 1})"

    def _canonical_hash(self, s: TPState) -> int:
        """RMs are interchangeable: hash the state with its per-RM triples sorted."""
        per_rm = sorted(zip(s.rm, s.tm_prepared, s.msg_prepared))
        return hash((tuple(per_rm), s.tm, s.msg_commit, s.msg_abort))
