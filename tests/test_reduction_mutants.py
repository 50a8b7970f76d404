"""Reduction on and off for every mutant and finding on the scenarios with two clients or a long run.

``test_reduction.py`` compares these scenarios only on rfd and the mutants they
catch; here every other mutant and finding runs on them too (a file of its own
so that ``--dist loadfile`` gives it a worker of its own).
"""

import pytest

from acplab.model.acp.scenarios import SCENARIOS
from acplab.model.acp.spec import FINDINGS, MUTANTS, SPECS

from test_reduction import BIG, _compare

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("spec, scenario", [(spec, name) for name in sorted(BIG)
                                            for spec in sorted(set(MUTANTS) | set(FINDINGS))
                                            if spec not in SCENARIOS[name].catches])
def test_reduction_keeps_every_mutant_on_the_big_scenarios(spec, scenario):
    _compare(SPECS[spec], SCENARIOS[scenario])
