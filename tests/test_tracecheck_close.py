"""Close records in the trace checker: who closed a connection decides whether its open obligations are judged."""

import json

import pytest

from acplab.model.acp.rules.cases import S, prompt, records, res, state
from acplab.model.trace.check import check_capture

#: a success never reported with user_message, the work never idle: two obligations left open
OPEN = S + [prompt(2), state("running"), res(2, {"messageId": "m1"})]


def _capture(tmp_path, closes, more=()):
    recs = records(OPEN)
    for conn, by in closes:
        recs.append({"seq": len(recs) + 1, "conn": conn, "close": {"by": by, "exit": 0}})
    recs += [{**r, "seq": len(recs) + 1 + i} for i, r in enumerate(more)]
    path = tmp_path / "x.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in recs))
    return path


def _rules(result):
    return {r for v in result.violations for r in v.rules}


def test_the_client_closing_at_the_end_is_the_end_of_the_recording(tmp_path):
    """--complete: the agent was at rest when the client left, so what it never sent is still missing."""
    result = check_capture(_capture(tmp_path, [("c1", "client")]), complete=True)
    assert {"U1", "S2"} <= _rules(result)
    assert result.dialects == {"c1": "v2"} and result.dialect_source == "initialize"


@pytest.mark.parametrize("by", ["agent", "unknown"])
def test_an_agent_that_exits_ends_its_obligations(tmp_path, by):
    """The RFD: the agent exits or the connection is lost, detected by the client; no update can report it."""
    result = check_capture(_capture(tmp_path, [("c1", by)]), complete=True)
    assert result.verdict == "holds", [v.explanation for v in result.violations]


def test_a_client_close_followed_by_more_traffic_ends_the_obligations(tmp_path):
    later = records(S)[:2]  # another connection starts after c1 closed
    later = [{**r, "conn": "c2"} for r in later]
    result = check_capture(_capture(tmp_path, [("c1", "client")], later), complete=True)
    assert result.verdict == "holds", [v.explanation for v in result.violations]
