"""The simulator's schedule is pinned: the same seed gives the same steps at the same times.

The runtime's hot path was rewritten for speed (``enabled`` instead
of ``actions``, its own channels and waits instead of ``simpy.Store`` and
``AnyOf``) on the promise that no run changes.  These digests of every
session's ``(time, action)`` sequence were taken before that rewrite.  A
change to the *runtime* that alters them changes what ``simulate`` reports
for a seed; a deliberate change to the model's behaviour may alter them too:
then check the new schedule and update the digest.
"""

from __future__ import annotations

import hashlib

import pytest

from acplab.model.acp.model import format_action
from acplab.simulations.params import SimParams
from acplab.simulations.runtime import Session, build_model, run_seed

CONFIGS = {
    "rfd": (dict(spec="rfd", sessions=20, seed=3), "d6578480f3583410"),
    # the schedule unchanged since the one monitor set; its violations are named ResponsesFollowInsertion
    # (ErrorResponseMeansNotInserted before)
    "error-after-insertion": (dict(spec="error-after-insertion", sessions=20, seed=3, fail=0.2), "87ad59e329db8d47"),
    "replay-without-reset": (dict(spec="replay-without-reset", sessions=20, seed=3, disconnect_rate=0.1),
                             "ae4bc44add9e0bee"),  # R7 per connection window: more findings named
    "every-fault": (dict(spec="rfd", clients=3, sessions=20, seed=5, drop=0.05, disconnect_rate=0.1, cancel=0.3,
                         cancel_request=0.3, reject=0.1, restart_rate=0.02, replay=0.5, tools=True, chunks=True),
                    "8fc86be048d49e7e"),
}


def schedule_digest(p: SimParams) -> str:
    model = build_model(p)
    h = hashlib.sha256()
    for k in range(p.sessions):
        s = Session(model, p, run_seed(p.seed, k), k, keep_steps=True)
        r = s.run()
        h.update(repr((round(r.end_s, 9), r.at_rest, [v.monitor for v in r.violations])).encode())
        for t, a, _ in s.steps:
            h.update(f"{t:.9f} {format_action(a)}\n".encode())
    return h.hexdigest()[:16]


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_same_seed_same_schedule(name):
    params, digest = CONFIGS[name]
    assert schedule_digest(SimParams(**params).validate()) == digest
