"""``acplab properties`` and ``check --property``: the properties by name, listed and chosen.

The names are those ``acplab properties`` lists: each rule monitor of the
one monitor set, ``NoStuckState`` (the ACP model's deadlock), then the
design-neutral goals.
"""

from __future__ import annotations

from dataclasses import dataclass

import click

from acplab.model.errors import InputError

#: what ``check --properties`` judges: the RFD's rules (the method), the design-neutral goals (what a user
#: sees, as ``acplab matrix`` judges them), or both
PROPERTY_SETS = ("rules", "goals", "all")

#: the property a stuck state violates (the ACP model's deadlock, ``model.NO_STUCK_STATE``)
NO_STUCK = "NoStuckState"


def property_names(properties: str) -> list[str]:
    """The names ``acplab properties`` lists that ``--properties`` judges, in its order."""
    from acplab.model.acp.goals import GOALS
    from acplab.model.acp.monitor_set import monitor_names

    rules = [*monitor_names(), NO_STUCK]
    goals = [g.name for g in GOALS]
    return {"rules": rules, "goals": goals, "all": rules + goals}[properties]


@dataclass(frozen=True)
class Selection:
    """``check --property NAME ...``: the properties checked; every other one is left out, not evaluated.

    The scenario's witnesses are left out too, but for those ``--witness`` /
    ``--witnesses`` ask to write (``witnesses``: None, ``"all"`` or names):
    a check of one property is not held back by a witness nobody asked for
    (and the reduction, which waits for every witness, starts at once).
    """

    names: frozenset
    witnesses: object = None

    def keeps_witness(self, name: str) -> bool:
        return self.witnesses == "all" or (bool(self.witnesses) and name in self.witnesses)

    def left_out(self, properties: str, scenario_witnesses) -> list[str]:
        """The properties and witnesses not checked, in ``acplab properties``' order, then the witnesses'."""
        return [n for n in property_names(properties) if n not in self.names] + \
            [f"witness {w}" for w in scenario_witnesses if not self.keeps_witness(w)]


def select_properties(names, properties: str, witnesses=None) -> Selection | None:
    """The :class:`Selection` for ``--property`` (None: every property); an unknown name is an input error that
    names the near matches (or the ``--properties`` set that judges it)."""
    if not names:
        return None
    import difflib

    known = property_names(properties)
    for name in names:
        if name in known:
            continue
        elsewhere = [s for s in PROPERTY_SETS if name in property_names(s)]
        if elsewhere:
            raise InputError(f"--property {name}: not judged with --properties {properties}; "
                             f"add --properties {elsewhere[0]}")
        near = difflib.get_close_matches(name, property_names("all"), n=3, cutoff=0.6)
        hint = f"did you mean {', '.join(near)}?" if near else "see `acplab properties`"
        raise InputError(f"--property: unknown property '{name}'; {hint}")
    return Selection(frozenset(names), witnesses)


def properties_asked(properties: str, goals_only: bool) -> str:
    """``--properties``, or ``goals`` for ``--goals``; both naming different sets is an input error."""
    if goals_only and properties not in ("rules", "goals"):
        raise InputError(f"--goals and --properties {properties} disagree: give one of them")
    return "goals" if goals_only else properties


def property_rows() -> list[dict]:
    """``acplab properties``: each property with its expectation, rules, wire-checkability and killers.

    ``kind`` is "rule" (a rule of the RFD) or "goal" (design-neutral, :mod:`acplab.model.acp.goals`;
    its rules are context only).

    ``killed_by`` names the specs that violate the property and the scenario
    in which they do (:mod:`acplab.model.acp.killers`), and the hand-built
    captures that make a rule monitor fail (:mod:`acplab.model.acp.rules.cases`);
    the tests re-check every claim.
    """
    from acplab.model.acp.goals import GOALS
    from acplab.model.acp.killers import KILLERS, capture_killers
    from acplab.model.acp.model import NO_STUCK_STATE
    from acplab.model.acp.monitor_set import monitor_properties

    def row(m, kind):
        return {"name": m.name, "kind": kind, "expectation": m.expectation, "level": m.level, "rules": list(m.rules),
                "wire": _on_the_wire(m), "description": m.description}

    rows = [row(m, "rule") for m in monitor_properties()]
    rows.append({"name": NO_STUCK_STATE.name, "kind": "rule", "expectation": "always", "level": NO_STUCK_STATE.severity,
                 "rules": list(NO_STUCK_STATE.rules), "wire": False, "description": NO_STUCK_STATE.description})
    rows += [row(g, "goal") for g in GOALS]
    captures = capture_killers()
    for row in rows:
        row["killed_by"] = [{"spec": spec, "scenario": sc} for spec, sc in KILLERS.get(row["name"], ())] + \
            [{"capture": case, "rule": rule} for case, rule in captures.get(row["name"], ())]
    return rows


def _on_the_wire(m) -> bool:
    """Whether ``trace check`` can judge the property from a capture alone (no sidecar, no client's screen)."""
    group = getattr(m, "group", None)
    if group is not None:  # a rule monitor: wire unless it needs the agent's internal events
        return "internal" not in group.monitors[m.index].needs
    return bool(getattr(m, "wire", False))


def print_properties(rows: list[dict]) -> None:
    """One line per property, then who violates it."""
    width = max(len(r["name"]) for r in rows)
    for r in rows:
        kind = r["expectation"] + (" (warning)" if r["level"] == "warning" else "") + (", wire" if r["wire"] else "")
        kind += ", goal" if r.get("kind") == "goal" else ""
        killers = ", ".join(f"{k['spec']} in {k['scenario']}" if "spec" in k else f"capture {k['capture']}" + (f" ({k['rule']})" if k["rule"] else "")
                            for k in r["killed_by"]) or "NOTHING"
        click.echo(f"{r['name']:<{width}}  {kind} [{', '.join(r['rules'])}]: {r['description']}")
        click.echo(f"{'':<{width}}  killed by {killers}")
