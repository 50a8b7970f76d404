"""Symmetry reduction for the ACP model: clients are interchangeable.

A state's fingerprint is the structural fingerprint
(:mod:`acplab.model.engine.fingerprint`) of a representative of its orbit under
permutations of the clients: the clients are ordered by their own state (the
client record, its connection's channels and whether the agent has it
attached), and every place that names a client by index is renamed the same
way (history entries' submissions, the adapter's pending requests, the
permission asker, the prompt a hook runs for, and each monitor's bookkeeping through its
``rename_clients``).  The representative is a
consistent renaming of the whole state, so two states with the same
fingerprint behave identically up to client names: verdicts are preserved.
It is not always the least member of the orbit (clients with equal local
state keep their order), so a few symmetric states may still be counted
twice; that costs states, never soundness.
"""

from __future__ import annotations

from acplab.model.engine.fingerprint import fingerprint

from .state import World


def client_order(w: World) -> list[int]:
    """Client indices sorted by (the structural fingerprint of) each client's local state.

    Any fixed total order on distinct local states gives the same number of
    representatives; fingerprints avoid comparing None with strings, and are
    the same in every process, so the representative is too.
    """
    keys = [fingerprint((w.clients[c], w.links[c], w.agent.attached[c])) for c in range(len(w.clients))]
    return sorted(range(len(keys)), key=keys.__getitem__)


def permute(w: World, order: list[int], monitors) -> World:
    """The state with client ``order[i]`` renamed to ``i`` everywhere.

    ``monitors`` are the ``(index, monitor)`` pairs whose bookkeeping names clients.
    """
    new_index = {old: new for new, old in enumerate(order)}
    a = w.agent
    history = tuple(
        e if e.sub is None else e._replace(sub=(new_index[e.sub[0]],) + e.sub[1:])
        for e in a.history
    )
    reqs = tuple(r._replace(client=new_index[r.client],
                            replayed_to=tuple(sorted(new_index[c] for c in r.replayed_to))) for r in a.reqs)
    work = a.work
    if work is not None and work.perms:
        work = work._replace(perms=tuple((k, rid, None if c is None else new_index[c]) for k, rid, c in work.perms))
    if work is not None and work.hook is not None:
        work = work._replace(hook=(new_index[work.hook[0]],) + work.hook[1:])
    agent = a._replace(history=history, reqs=reqs, work=work, attached=tuple(a.attached[c] for c in order),
                       resumes=tuple(r._replace(client=new_index[r.client]) for r in a.resumes),
                       closing=tuple((new_index[x[0]],) + x[1:] for x in a.closing))
    mon = list(w.mon)
    for k, monitor in monitors:
        if mon[k]:  # empty bookkeeping names no client
            mon[k] = monitor.rename_clients(mon[k], new_index)
    return w._replace(
        agent=agent,
        clients=tuple(w.clients[c] for c in order),
        links=tuple(w.links[c] for c in order),
        mon=tuple(mon),
    )


def canonical_hasher(all_monitors):
    """A fingerprint function for the model's states (its monitors rename their own bookkeeping)."""
    from .monitors import Monitor

    monitors = [(k, m) for k, m in enumerate(all_monitors) if type(m).rename_clients is not Monitor.rename_clients]

    def canonical_fingerprint(w: World) -> int:
        order = client_order(w)
        if order == list(range(len(order))):
            return fingerprint(w)
        return fingerprint(permute(w, order, monitors))

    return canonical_fingerprint
