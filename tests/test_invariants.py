"""The invariants of one monitor set: what the explorer and the simulator find, trace check finds in their wire logs.

Each mutant's counterexample, carried on to rest, is written as a capture (and its internal
events as a sidecar).  Where the mutant's rule is checkable on the wire, trace check flags
that rule; where it needs internal events (the agent's insertion, a client's reasoning), the
report names the monitor as not checkable together with the sidecar events that would feed
it, and with that sidecar the rule is flagged.
"""

from __future__ import annotations

import pytest

from acplab.model.acp.rules_in_model import sidecar_events
from acplab.model.acp.model import AcpModel
from acplab.model.acp.killers import spec_rules
from acplab.model.acp.scenarios import SCENARIOS
from acplab.model.acp.spec import FINDINGS, MUTANTS, SPECS
from acplab.model.app.checking import complete_path
from acplab.model.engine import Limits, explore
from acplab.model.render.traces import wire_records
from acplab.model.trace.check import check_capture
from acplab.model.trace.sidecar import write_sidecar
from acplab.model.wire.capture import dump_capture

#: mutant -> (how it shows: "wire" | "internal" | "warning" | "proven-by-sidecar" (a warning on the wire alone, a
#: violation with the sidecar) | "transport" (the agent's side of the wire, sidecar or not, flags nothing of the rule:
#: the fault is between the agent and the client), the rule, the sidecar event that feeds it)
MODES = {
    "early-success": ("internal", "P3", "insert"),
    "reused-id": ("wire", "P5", None),
    "error-after-insertion": ("internal", "E2", "insert"),
    "cancel-request-32800-after-insertion": ("internal", "C1", "insert"),
    "replay-without-reset": ("wire", "R7", None),
    "replay-new-ids": ("internal", "R5", "insert"),  # the lost live report leaves nothing to compare with
    "replay-reexecutes-command": ("internal", "R9", "execute"),
    "client-matches-by-content": ("internal", "P9", "bind"),
    "client-matches-by-order": ("internal", "P9", "bind"),
    "no-idle-after-failure": ("wire", "S2", None),
    "echo-after-replay": ("warning", "U5", None),  # a client-view finding: the wire shows the duplicated chunk
    # liveness, placement, cancellation routing, IDs across rejection and restart
    # a wire log alone cannot prove the agent had the cancel before it failed (C9 claims it only with a request
    # answered after the cancel, the FIFO proof): the log alone warns; the sidecar's fail event (raised while
    # aborting) proves it, and then it is a violation
    "abort-fails-as-error": ("proven-by-sidecar", "C9", "fail"),
    "cancel-request-by-id-only": ("internal", "C3", "reject"),  # which connection's cancel withdrew it
    "error-without-details": ("warning", "E3", None),  # a SHOULD (E5)
    "held-prompt-runs-after-cancel": ("internal", "C4", "insert"),
    "id-leaked-after-rejection": ("internal", "P5", "insert"),  # the wire never shows the ID assigned early
    "late-echo": ("internal", "S6", "insert"),  # which work a message started is internal
    "never-answers": ("wire", "P2", None),
    "never-idles": ("wire", "S2", None),
    "custom-stop-unprefixed": ("wire", "W6", None),
    "replay-unasked": ("wire", "R1", None),
    "untitled-notice": ("wire", "N5", None),
    "background-dropped-unfinished": ("wire", "G4", None),
    "close-answered-early": ("wire", "C14", None),
    "cancel-leaves-a-permission": ("wire", "C11", None),
    "native-ids-collide": ("wire", "P5", None),
    "replay-full-then-chunks": ("wire", "R7", None),
    "load-replay-without-reset": ("wire", "R7", None),
    "replay-renumbered-after-forget": ("internal", "R5", "forget"),  # which message was forgotten is internal
    "silent-runtime": ("wire", "P2", None),  # a finding: the prompt is never answered
    "reordering-transport": ("transport", "S2", None),  # a finding: the agent sent running, idle in order
    "lossy-transport": ("wire", "S9", None),  # a finding: the permission request was lost, requires_action stays
    "retry-deduplicated": ("internal", "P3", "insert"),  # the wire cannot tell a deduplicated retry's insertion
    "hook-left-running": ("wire", "S2", None),  # running, and no idle ever after it
    "ends-only-on-cancel": ("wire", "S2", None),
    "report-under-runtime-id": ("internal", "U3", "insert"),
    "restart-resets-ids": ("internal", "P5", "insert"),  # the restart comes before m1 reaches the wire
    "suppressed-echo": ("internal", "U1", "insert"),
    # the wire alone warns (the idle listed no background, so the call may be detached work, G1); the sidecar's
    # work_end says the agent runs no background work, and then it is a violation
    "tool-status-after-idle": ("internal", "S6", "work_end"),
}


def test_every_mutant_has_an_expected_mode():
    assert set(MODES) == set(MUTANTS) | set(FINDINGS)


def _counterexample(name: str):
    """The shortest behaviour breaking the mutant's monitor (a warning for a SHOULD monitor), carried on to rest;
    runs that stop at another monitor's violation first are explored again past violations."""
    spec = SPECS[name]
    for sc in [s for s in SCENARIOS.values() if name in s.catches]:
        violation = None
        for model, stop in [(AcpModel(spec, sc.bounds), True), (AcpModel(spec, sc.bounds), False),
                            (AcpModel(spec, sc.bounds, continue_after_violation=True), False)]:
            result = explore(model, Limits(max_seconds=60), stop_on_violation=stop)
            violation = next((v for v in result.violations + result.warnings if v.property.name == spec.breaks),
                             None)
            if violation is not None:
                break
        if violation is not None:
            onward = AcpModel(spec, sc.bounds, continue_after_violation=True)
            return complete_path(onward, violation.path).actions_with_effects()
    raise AssertionError(f"{name}: the explorer did not find {spec.breaks}")


def _files(steps, tmp_path, stem):
    capture, events = tmp_path / f"{stem}.jsonl", tmp_path / f"{stem}.events.jsonl"
    dump_capture(wire_records(steps), capture)
    write_sidecar(sidecar_events(steps), events)
    return capture, events


def _judge(name, capture, events, complete):
    mode, rule, event = MODES[name]
    wire = check_capture(capture, complete=complete)
    flagged = {r for v in wire.violations for r in v.rules}
    if mode == "wire":
        assert rule in flagged, (name, [(v.property, v.rules, v.explanation) for v in wire.violations])
    elif mode == "warning":
        assert rule in {r for w in wire.warnings for r in w.rules}, name
    elif mode == "transport":
        with_sidecar = check_capture(capture, complete=complete, internal=events)
        said = {r for report in (wire, with_sidecar) for f in report.violations + report.warnings for r in f.rules}
        assert rule not in said, (name, [(v.property, v.rules, v.explanation) for v in with_sidecar.violations])
    elif mode == "proven-by-sidecar":
        assert rule in {r for w in wire.warnings for r in w.rules} and rule not in flagged, name
        with_sidecar = check_capture(capture, complete=complete, internal=events)
        assert rule in {r for v in with_sidecar.violations for r in v.rules}, \
            (name, [(v.property, v.rules, v.explanation) for v in with_sidecar.violations])
    else:
        unchecked = [(n, r, e) for n, r, e in wire.not_checkable if rule in r]
        assert unchecked and all(event in e for _n, _r, e in unchecked), (name, wire.not_checkable)
        with_sidecar = check_capture(capture, complete=complete, internal=events)
        assert rule in {r for v in with_sidecar.violations for r in v.rules}, \
            (name, [(v.property, v.rules, v.explanation) for v in with_sidecar.violations])
        assert not with_sidecar.not_checkable


@pytest.mark.parametrize("name", sorted(MODES))
def test_mutant_counterexample_is_flagged_with_its_rule(name, tmp_path):
    steps = _counterexample(name)
    capture, events = _files(steps, tmp_path, name)
    _judge(name, capture, events, complete=True)
    assert MODES[name][1] in spec_rules(name)  # the mutant's own rule


@pytest.mark.parametrize("name, extra", [
    ("replay-without-reset", dict(disconnect_rate=0.1)),
    ("error-after-insertion", dict(fail=0.3, step_ms=50.0, answer_ms=30.0)),
    ("client-matches-by-content", dict()),
])
def test_simulator_violation_artefacts_are_flagged_the_same_way(name, extra, tmp_path):
    from acplab.simulations.params import SimParams
    from acplab.simulations.runtime import build_model, run_session
    from acplab.simulations.simulate import simulate

    p = SimParams(spec=name, clients=3, sessions=150, prompts=3, drop=0.02, seed=2, on_violation="stop", **extra)
    summary = simulate(p, out=tmp_path / "out").to_json()
    breaks = SPECS[name].breaks
    capture = next(f for f in summary["violations"]["files"][breaks] if f.endswith(".jsonl"))
    first = summary["violations"]["first"][breaks]
    run = run_session(p.validate(), first["run"], build_model(p.validate()), keep_steps=True)
    steps = [(action, events) for _t, action, events in run.steps[: first["step"]]]
    from acplab.model.render.artefacts import preamble
    from acplab.model.trace.sidecar import read_sidecar
    from acplab.model.wire.capture import read_capture

    records = wire_records(steps)
    head = preamble(records)
    assert [r["msg"] for r in head + records] == [r.msg for r in read_capture(capture)]
    # judge the writer's own sidecar, and check it is the session's internal events behind the preamble
    events = capture[: -len(".jsonl")] + ".events.jsonl"
    assert list(read_sidecar(events)) == [(after + len(head), event, data)
                                          for after, event, data in sidecar_events(steps)]
    _judge(name, capture, events, complete=False)
