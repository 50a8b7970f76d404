"""The goals judge what a user sees, at one granularity on every model: each test fails on the goal as it was.

Unit tests build one world at rest and ask a goal's ``at_rest``; the few explorations are
the smallest scenarios that show the behaviour (each well under a second on an idle core).
"""

from acplab.model.acp.goals import (GOALS, KNOWN_LIMITATIONS, CancellationOutcomeKnown, EndingKnownToAll,
                                    LostResponseRecoverable, OutcomeKnown, OwnMessageKnown, StateAgrees,
                                    ViewsConverge)
from acplab.model.acp.model import AcpModel
from acplab.model.acp.monitor_set import monitor_set
from acplab.model.acp.scenarios import SCENARIOS
from acplab.model.acp.spec import RFD, SPECS
from acplab.model.acp.state import Agent, Budget, Client, Entry, Item, Link, Sub, World
from acplab.model.engine import explore


def _goals(spec, scenario, **overrides) -> dict:
    model = AcpModel(spec, SCENARIOS[scenario].bounds._replace(**overrides), monitors=monitor_set() + GOALS,
                     symmetry=True, continue_after_violation=True)
    result = explore(model, expand_violating=True)
    assert result.complete
    return {v.property.name: v.sentence for v in result.violations}


def _world(history=(), clients=(Client(),), fg="idle") -> World:
    return World(Agent(history=tuple(history), fg=fg), tuple(clients), tuple(Link() for _ in clients), Budget())


def test_a_retry_that_inserts_a_second_message_is_a_duplicate_execution_the_rfd_declares():
    """Old NoReexecution exempted retries by citing P12; now the retry's insertion is judged as the user sees it."""
    found = _goals(RFD, "timeout-retry")
    assert "ran twice: its retry was inserted too" in found["NoReexecution"]
    assert "NoReexecution" in KNOWN_LIMITATIONS and "P12" in KNOWN_LIMITATIONS["NoReexecution"]
    assert "NoReexecution" not in _goals(RFD, "report-order")  # one submission, no retry: once


def test_outcome_known_asks_for_the_error_code_and_message_not_only_the_stop_reason():
    """Old OutcomeKnown compared the stop reason only: an idle error without its object passed."""
    found = _goals(SPECS["error-without-details"], "failure-after-insertion")
    assert "learned no error object" in found["OutcomeKnown"]
    assert "OutcomeKnown" not in _goals(RFD, "failure-after-insertion")


def test_state_agrees_by_meaning_not_by_the_rfds_words():
    """An unknown state shown as busy means work goes on, as running does (old: 'busy' != 'running' failed)."""
    assert StateAgrees().at_rest(None, _world(clients=(Client(fg="busy"),), fg="running")) is None
    said = StateAgrees().at_rest(None, _world(clients=(Client(fg="busy"),), fg="idle"))
    assert "work goes on" in said and "nothing runs" in said


def test_views_converge_on_content_for_a_design_without_user_message_ids():
    """v1's two clients: c2 never sees c1's prompt (old: local copies and ID-less items were ignored)."""
    assert "client c2 shows []" in _goals(SPECS["v1"], "multi-client")["ViewsConverge"]
    entry = Entry("m1", "user", ("hi",), True, "prompt", (0, 0, 1))
    mine = Client(subs=(Sub(1, 0, ("hi",), "done"),), feed=(Item(None, "user", ("hi",), 0, True),))
    assert ViewsConverge().at_rest(None, _world((entry,), (mine,))) is None  # its copy is its message


def test_lost_response_recovery_counts_only_a_correct_binding():
    """A binding after the cut to a message another client's prompt inserted under the same ID (the request id
    as identity) is no recovery; old LostResponseRecoverable counted any binding."""
    history = (Entry("r1", "user", ("hi",), True, "prompt", (0, 0, 1)),
               Entry("r1", "user", ("hi",), True, "prompt", (1, 0, 1)))
    guessed = Client(epoch=1, view="replayed", subs=(Sub(1, 0, ("hi",), "accepted", "r1"),))
    said = LostResponseRecoverable().at_rest(None, _world(history, (guessed, Client())))
    assert "made before the cut, to r1" in said and "c2's prompt #1" in said
    right = (Entry("m1", "user", ("hi",), True, "prompt", (0, 0, 1)),)
    bound = guessed._replace(subs=(Sub(1, 0, ("hi",), "accepted", "m1"),))
    assert LostResponseRecoverable().at_rest(None, _world(right, (bound, Client()))) is None


def test_own_message_known_fails_an_empty_result_and_holds_for_a_v1_copy():
    entry = Entry("m1", "user", ("hi",), True, "prompt", (0, 0, 1))
    unlinked = Client(subs=(Sub(1, 0, ("hi",), "accepted"),),
                      feed=(Item(None, "user", ("hi",), 0, True), Item("m1", "user", ("hi",))))
    assert "holds no ID for it" in OwnMessageKnown().at_rest(None, _world((entry,), (unlinked,)))
    v1 = unlinked._replace(subs=(Sub(1, 0, ("hi",), "done"),), feed=unlinked.feed[:1])
    assert OwnMessageKnown().at_rest(None, _world((entry,), (v1,))) is None
    assert "OwnMessageKnown" in _goals(SPECS["v2-draft"], "report-order")


def test_every_client_learns_how_work_ended_not_only_the_submitter():
    """OutcomeKnown judges the submitter only: a bystander that never hears the end passes it."""
    ending = ("error", (-32000, "Authentication required"), ())
    bystander = Client(last_stop="error")  # no error object learned
    said = EndingKnownToAll().at_rest(ending, _world(clients=(Client(last_stop="error", last_error=(
        -32000, "Authentication required")), bystander)))
    assert "c2 learned no error object" in said
    assert OutcomeKnown().at_rest(((), ending), _world(clients=(bystander,))) is None


def test_a_client_that_cancelled_knows_what_its_cancel_did():
    entry = Entry("m1", "user", ("hi",), True, "prompt", (0, 0, 1))
    told_cancelled = Client(subs=(Sub(1, 0, ("hi",), "cancelled"),))
    m = (("request", 0, (0, 1)),)
    assert "believes its prompt #1 was not inserted" in CancellationOutcomeKnown().at_rest(m, _world((entry,), (
        told_cancelled,)))
    session = (("session", 0, ("cancelled", (), ())),)
    assert "c1 cancelled the work" in CancellationOutcomeKnown().at_rest(session, _world(clients=(Client(),)))
    assert CancellationOutcomeKnown().at_rest(session, _world(clients=(Client(last_stop="cancelled"),))) is None


def test_bridges_judge_the_outcome_at_the_granularity_of_the_acp_model():
    """Code and message, as on the ACP model; ``data`` is shown, not compared (old: the whole error object)."""
    from types import SimpleNamespace

    from acplab.model.acp import bridge_goals as bg
    from acplab.model.acp.bridge_base import RESOURCE_ERROR, CLIENT_RID
    from acplab.model.wire import ErrorObject, ErrorResponse

    model = SimpleNamespace(agent_failure=lambda end: RESOURCE_ERROR)
    same = ErrorObject(RESOURCE_ERROR.code, RESOURCE_ERROR.message)  # data lost on the way
    state = SimpleNamespace(agent_end="error_with_object", log=(("client_recv", ErrorResponse(CLIENT_RID, same)),))
    assert bg._v1_client_outcome(model, state) is None
    other = ErrorObject(-32603, RESOURCE_ERROR.message)
    state = SimpleNamespace(agent_end="error_with_object", log=(("client_recv", ErrorResponse(CLIENT_RID, other)),))
    assert "-32603" in bg._v1_client_outcome(model, state)
