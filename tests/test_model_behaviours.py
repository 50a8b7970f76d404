"""What the RFD allows the agent, each behind a bound whose default leaves the state space as it was:
every witness of its scenario needs the bound, and the default explores no new action."""

import pytest

from acplab.model.acp.model import AcpModel, Bounds
from acplab.model.acp.scenarios import SCENARIOS
from acplab.model.acp.spec import RFD
from acplab.model.acp.witnesses import WITNESSES
from acplab.model.engine import explore


def _witnesses(bounds, names):
    model = AcpModel(RFD, bounds, [WITNESSES[n] for n in names])
    model.witnesses_required = False
    result = explore(model)
    assert result.complete and result.verdict == "holds", [v.sentence for v in result.violations]
    return {n for n in names if result.witnesses[n] is not None}


@pytest.mark.parametrize("scenario, bound, off", [("stop-reasons", "stop_reasons", False),
                                                   ("retention-forget", "forgets", 0),
                                                   ("timeout-retry", "retries", 0),
                                                   ("busy-import", "busy_imports", False),
                                                   ("busy-command", "busy_commands", False),
                                                   ("late-joiner", "late_joiners", 0),
                                                   ("notices", "notices", 0),
                                                   ("background-work", "background", False),
                                                   ("session-close", "closes", 0),
                                                   ("parallel-permissions", "tool_calls", 1),
                                                   ("native-ids", "native_ids", False),
                                                   ("mixed-shapes", "mixed_shapes", False),
                                                   ("late-joiner-load", "load_joiners", False),
                                                   ("late-joiner-load-chunked", "load_joiners", False),
                                                   ("background-overlap", "background_overlap", False)])
def test_every_witness_of_the_scenario_needs_its_bound(scenario, bound, off):
    sc = SCENARIOS[scenario]
    need = [n for n in sc.witnesses if n != "replayed_and_recognized"]  # that one is the baseline, kept
    assert _witnesses(sc.bounds, need) == set(need)
    assert _witnesses(sc.bounds._replace(**{bound: off}), need) == set()


def test_stop_reasons_keep_a_plain_finish_when_off():
    model = AcpModel(RFD, Bounds(clients=1, prompts=1))
    steps = {a for a, _, _ in _successors_everywhere(model)}
    assert all(not a.args for a in steps if a.name == "finish")


def _successors_everywhere(model):
    seen, frontier = set(), list(model.init_states())
    while frontier:
        w = frontier.pop()
        if w in seen:
            continue
        seen.add(w)
        for s in model.successors(w):
            frontier.append(s[1])
            yield s


def _reach(bounds, names):
    """Which witnesses some state reaches, judged by no monitor (what the model can do, not its verdict)."""
    model = AcpModel(RFD, bounds, [WITNESSES[n] for n in names], monitors=())
    model.witnesses_required = False
    result = explore(model)
    assert result.complete
    return {n for n in names if result.witnesses[n] is not None}


def test_an_interleaved_resume_lets_live_work_into_the_replay_window():
    from acplab.model.acp.scenarios import PENDING, get_scenario

    sc = PENDING["interleaved-resume"]
    assert get_scenario("interleaved-resume") is sc and "interleaved-resume" not in SCENARIOS
    assert _reach(sc.bounds, sc.witnesses) == set(sc.witnesses)
    assert _reach(sc.bounds._replace(interleaved_resume=False), ["live_inside_replay_window"]) == set()


def test_the_atomic_resume_is_unchanged_by_the_steps_it_is_now_built_from():
    """The default serves a resume in one step, as before: the same states as the replay scenarios had (1,152 and
    1,144 until R1's monitor remembered which user messages were reported, telling a report lost with its
    connection from none sent: ResumeSendsStateSnapshot's ``seen``)."""
    for name, states in (("resume-while-running", 1275), ("local-command", 1345)):
        model = AcpModel(RFD, SCENARIOS[name].bounds, symmetry=True)
        assert explore(model, por=False).stats.states == states, name


def test_a_state_update_after_a_final_background_status_is_the_drop():
    """G4: once a state update went out after a background call's final status, the call is no longer listed
    and no second ``background: []`` snapshot is owed; before one went out, it still is."""
    bounds = SCENARIOS["background-overlap"].bounds
    model = AcpModel(RFD, bounds, monitors=())
    still_listed = dropped = 0
    for _a, w, _e in _successors_everywhere(model):
        finals = {t for t, final in w.agent.background if final}
        queue = [getattr(m, "update", None) for m in w.links[0].to_client]
        for t in finals:
            done = [k for k, u in enumerate(queue) if u is not None and u.kind == "tool_call_update"
                    and u.tool_call_id == t and u.status == "completed"]
            later = [u for u in queue[done[-1] + 1:] if u is not None and u.kind == "state_update"] if done else []
            assert not later, (t, w.agent, queue)
            still_listed += bool(done)
        dropped += any(u is not None and u.kind == "state_update" and u.background == () and u.state != "idle"
                       for u in queue)
    assert still_listed and dropped  # both sides happen: a final status awaiting its drop, a drop by a running


def test_a_prompt_arriving_after_its_connection_closed_the_session_is_not_inserted():
    """C14/E1/U1: a prompt reordered past its own connection's session/close gets -32002 and is not inserted (it
    could never be reported live there); the connection of another client still gets its prompt held."""
    from acplab.model.acp import agent as ag
    from acplab.model.acp.state import Agent
    from acplab.model.wire import Prompt

    closed = Agent(attached=(False, True))
    for agent, client in ((closed, 0), (Agent(attached=(True,), closing=((0, 0, 7),)), 0)):
        after, out = ag.receive(agent, client, 0, Prompt(1, "s1", ("hi",)), RFD, Bounds().options(), (0, 0))
        assert after.reqs == () and [m.msg.error.code for m in out if m.kind == "send"] == [-32002]
    after, _out = ag.receive(closed, 1, 0, Prompt(1, "s1", ("hi",)), RFD, Bounds().options(), (0, 0))
    assert len(after.reqs) == 1
