"""One monitor vocabulary: levels, expectations and needs are checked when a monitor class is defined, and
the rule monitors' adapter, which keeps answers per (bookkeeping, event), refuses a monitor that reads state."""

from __future__ import annotations

import pytest

from acplab.model.acp import monitors_base, rule_monitor
from acplab.model.engine.properties import SEVERITIES, always


@pytest.mark.parametrize("base", [rule_monitor.Monitor, monitors_base.Monitor])
def test_a_monitor_declaring_error_as_its_level_is_refused_where_it_is_defined(base):
    with pytest.raises(TypeError, match="Strict: level must be one of violation, warning, got 'error'"):
        type("Strict", (base,), {"level": "error"})
    with pytest.raises(TypeError, match="needs must be"):
        type("Reader", (base,), {"needs": frozenset({"disk"})})
    with pytest.raises(TypeError, match="expectation"):
        type("Hopeful", (base,), {"expectation": "sometimes"})
    assert type("Should", (base,), {"level": "warning"}).level == "warning"


def test_properties_speak_the_same_vocabulary():
    assert always("P", lambda s: True).severity == "violation"
    with pytest.raises(ValueError, match="violation, warning"):
        always("P", lambda s: True, severity="error")


def test_every_monitor_and_goal_and_property_uses_violation_or_warning():
    from acplab.model.acp.goals import GOALS
    from acplab.model.acp.model import AcpModel
    from acplab.model.acp.monitor_set import monitor_properties
    from acplab.model.acp.scenarios import SCENARIOS
    from acplab.model.acp.spec import RFD

    assert {m.level for m in monitor_properties()} | {g.level for g in GOALS} <= set(SEVERITIES)
    props = AcpModel(RFD, SCENARIOS["report-order"].bounds).properties()
    assert {p.severity for p in props} <= set(SEVERITIES) and "violation" in {p.severity for p in props}


def test_the_rule_monitors_adapter_refuses_a_monitor_that_reads_state():
    from acplab.model.acp.rules_in_model import RuleMonitors

    class ReadsWorld(rule_monitor.Monitor):
        name = "ReadsWorld"
        needs = frozenset({rule_monitor.STATE})

    with pytest.raises(ValueError, match="ReadsWorld need state"):
        RuleMonitors([ReadsWorld()])
    assert RuleMonitors().needs <= {rule_monitor.WIRE, rule_monitor.INTERNAL}  # the default rule monitors read no world
    assert all(m.needs == frozenset({monitors_base.STATE}) for m in
               __import__("acplab.model.acp.monitor_set", fromlist=["x"]).monitor_set()[1:])
