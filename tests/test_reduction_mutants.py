"""The reduction's argument for every mutant and finding on the scenarios with two clients or a long run.

``test_reduction.py`` compares these scenarios, reduced against unreduced, on
rfd and the mutants they catch; here every other mutant and finding runs on
them with the guard on every state the reduction prunes in (the conditions the
argument derives equal verdicts and shortest lengths from), as
``test_reduction.py`` does for the other scenarios: a second, unreduced run of
each (1,200 s of CPU for the two files, measured) is left out.  CI runs every
``STRIDE``-th pair (tests/tiers.py); ``pytest -m deep`` runs the others.
"""

import pytest

from acplab.model.acp.scenarios import SCENARIOS
from acplab.model.acp.spec import SPECS

from test_reduction import BIG, guard_cases, guard_every_pruned_state


@pytest.mark.parametrize("spec, scenario", guard_cases(BIG))
def test_the_reduction_argument_holds_for_every_mutant_on_the_big_scenarios(spec, scenario, monkeypatch):
    guard_every_pruned_state(SPECS[spec], SCENARIOS[scenario], monkeypatch)
