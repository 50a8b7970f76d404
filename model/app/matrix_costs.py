"""The matrix's quantitative columns: what each design costs a client, measured by the simulator.

The goals say whether a design *can* reach an outcome; these columns say at
what price, from :mod:`acplab.simulations` runs of the row's own spec with
the same fixed parameters and seeds for every row (:data:`COST_PARAMS`):

* ``response_p50_ms`` / ``response_p95_ms``: submit -> prompt response, under
  queueing (long turns: every work step takes 3 s on average, so prompts
  submitted meanwhile wait for the design's answer point);
* ``duplicates_per_prompt``: retries of a submission the agent had in fact
  inserted, per submission, with clients that give up after 10 s without an
  answer (or after a cut) and submit once more;
* ``wire_messages_per_prompt``: JSON-RPC messages on live connections per
  submission;
* ``ambiguous_per_lost_response``: of the submissions whose answer never
  reached the connection they were sent on (a cut, a drop), the share whose
  client still did not know at the end whether they were inserted.

Small on purpose (a few seconds per row on one core): 6 sessions of 2
clients x 3 prompts, seed 7.  The numbers are samples, not bounds; the
simulator's own ``acplab simulate`` gives intervals at any size.
A column of :mod:`.matrix_columns` (``costs``); ``matrix --costs`` adds the
spec-surface column (:mod:`.matrix_surface`: data, no run) too.
"""

from __future__ import annotations

from .matrix_table import Column, Table

#: the simulation every row gets (SimParams fields; ``spec`` is the row's)
COST_PARAMS: dict = {
    "clients": 2, "sessions": 6, "prompts": 3, "seed": 7, "duration_s": 300.0,
    "step_ms": 3000.0, "retry_timeout_s": 10.0, "retries": 1,
    "disconnect_rate": 0.02, "replay": 1.0,
}
#: the cost columns, in order, with what each means (for the report's legend)
COSTS: dict[str, str] = {
    "response_p50_ms": "submit -> response, median (ms)",
    "response_p95_ms": "submit -> response, 95th percentile (ms)",
    "duplicates_per_prompt": "duplicate insertions by retries, per submission",
    "wire_messages_per_prompt": "wire messages per submission",
    "ambiguous_per_lost_response": "outcomes left unknown per lost response",
}
#: what a client is left not knowing at the end: the statuses that resolve nothing
_UNRESOLVED = ("ambiguous", "pending", "sent", "received", "failed")


def cost_task(spec) -> dict:
    """One row's simulation, in a worker process (``spec``: the Spec, so a spec file's row runs too)."""
    from acplab.model.acp.spec import SPECS, USER_SPECS
    from acplab.simulations.params import SimParams
    from acplab.simulations.simulate import simulate

    if spec.name not in SPECS:
        USER_SPECS[spec.name] = spec
    result = simulate(SimParams(spec=spec.name, **COST_PARAMS))
    return {"spec": spec.name, **measure(result)}


def measure(result) -> dict:
    """The cost columns of one simulation (every run counted: ``on_violation`` is ``continue``)."""
    from acplab.simulations.stats import quantile

    latencies = sorted(result.samples["response_ms"])
    duplicates = result.samples["duplicates_per_prompt"]
    wire = result.samples["wire_messages_per_prompt"]
    lost, unknown = lost_responses(result.runs)
    return {
        "response_p50_ms": round(quantile(latencies, 0.5), 1) if latencies else None,
        "response_p95_ms": round(quantile(latencies, 0.95), 1) if latencies else None,
        "duplicates_per_prompt": round(sum(duplicates) / len(duplicates), 4) if duplicates else None,
        "wire_messages_per_prompt": round(sum(wire) / len(wire), 2) if wire else None,
        "ambiguous_per_lost_response": round(unknown / lost, 4) if lost else None,
        "lost_responses": lost,
        "submissions": result.counts.get("submissions", 0),
    }


def lost_responses(runs) -> tuple[int, int]:
    """(submissions whose answer never reached their connection, those of them left unresolved at the end).

    An answer is the success response or an outcome the client resolved on that connection (rejected,
    cancelled); a submission on the client's last connection that is simply still awaited is not lost.
    """
    lost = unknown = 0
    for run in runs:
        m = run.metrics
        final = m.final
        for token in m.order:
            c, epoch, rid = token
            client = final.clients[c]
            sub = next((s for s in client.subs if (s.epoch, s.rid) == (epoch, rid)), None)
            if token in m.t_response or sub is None or sub.status in ("rejected", "cancelled"):
                continue
            if epoch == client.epoch and client.up and sub.status != "ambiguous":
                continue
            lost += 1
            unknown += sub.status in _UNRESOLVED
    return lost, unknown


def cost_columns(rows, executor: str = "local", jobs: int | None = None, progress=None) -> dict:
    """The cost columns of the ACP rows (bridge rows have none): one simulation per spec."""
    from acplab.model.acp.spec import SPECS
    from acplab.model.engine.executors import run_all

    names = list(dict.fromkeys(r.spec for r in rows if not r.bridge))
    done = run_all(cost_task, [SPECS[n] for n in names], executor, jobs, progress)
    return {"costs": {r["spec"]: {k: v for k, v in r.items() if k != "spec"} for r in done},
            "cost_params": dict(COST_PARAMS), "cost_columns": dict(COSTS)}


def costs_table(matrix: dict):
    """The costs as every output shows them (:class:`.matrix_table.Table`), or None without costs."""
    costs = matrix.get("costs")
    if not costs:
        return None
    params = ", ".join(f"{k} {v:g}" for k, v in matrix["cost_params"].items())
    return Table("Costs (simulated)", f"Same simulation for every row ({params}); a number is a sample of these runs, "
                 "not a bound.", {k: k for k in COSTS},
                 {name: {k: "-" if row[k] is None else f"{row[k]:g}" for k in COSTS} for name, row in costs.items()})


#: the ``costs`` column (:mod:`.matrix_columns`)
COLUMN = Column("costs", "simulated costs per ACP row's spec: " + "; ".join(f"{k}: {v}" for k, v in COSTS.items()),
                lambda inputs: cost_columns(inputs.rows, inputs.executor, inputs.jobs), costs_table)
