"""`acplab check` stops at the first violation (TLC's default), `--continue` explores on, `--property` picks.

The stop ends the search after the level of its first violation: every
property violated at that depth is reported with a shortest counterexample,
the verdict is ``violated`` (never ``holds``) and the run is not complete
(``checking.Search``).  With the reduction on, :func:`por.confirm` keeps the
counterexamples the reduction left exact and otherwise confirms them by an
unreduced search that stops at its own first violation.
"""

from __future__ import annotations

import json

from cli_harness import run_cli

from acplab.model.engine import Limits, explore
from acplab.model.engine.properties import always

#: a mutant that violates two properties at different depths (6 and 7 steps; 13,553 states with --continue)
MUTANT = ("--spec", "client-chosen-id-naive", "--workers", "1", "--json")
#: a mutant that violates two properties in 4 steps, in a few states
SMALL = ("--spec", "v1", "--workers", "1", "--json")


def _check(tmp_path, *args, folder="out"):
    code, out, err = run_cli("check", *args, "--out", str(tmp_path / folder))
    return code, json.loads(out), err


def _found(summary) -> list[tuple[str, int]]:
    return sorted((v["property"], v["trace_length"]) for v in summary["violations"] if not v.get("missing_witness"))


def test_the_default_stops_at_the_first_violation_and_lists_every_property_violated_there(tmp_path):
    code, stopped, _ = _check(tmp_path, *MUTANT, folder="a")
    code_on, full, _ = _check(tmp_path, *MUTANT, "--continue", folder="b")
    assert code == code_on == 1 and stopped["verdict"] == full["verdict"] == "violated"
    assert stopped["stopped_at_first_violation"] and not stopped["complete"] and stopped["stop_at_first_violation"]
    assert not full["stopped_at_first_violation"] and full["stop_at_first_violation"] is False
    assert stopped["states"] < full["states"]
    shortest = min(n for _, n in _found(full))
    assert _found(stopped) == [(p, n) for p, n in _found(full) if n == shortest]  # the first level's, whole
    assert len(_found(full)) > len(_found(stopped))  # --continue finds more
    files = [f for v in stopped["violations"] for f in v["files"]]
    assert files and all(f.startswith(str(tmp_path / "a")) for f in files)


def test_the_text_says_it_stopped_and_how_to_go_on(tmp_path):
    code, out, _ = run_cli("check", "--spec", "reused-id", "--workers", "1", "-q", "--out", str(tmp_path / "o"))
    assert code == 1 and out.splitlines()[1].startswith("violated: ")
    assert "stopped at the first violation" in out and "--continue explores on" in out
    code, out, _ = run_cli("check", "--spec", "reused-id", "--workers", "1", "-q", "--continue",
                           "--out", str(tmp_path / "p"))
    assert code == 1 and "stopped at the first violation" not in out


def test_a_check_that_holds_is_unchanged_by_the_stop(tmp_path):
    """The README's main job: rfd on the default scenario holds, 3,904 states, with or without --continue."""
    for extra in ((), ("--continue",)):
        code, summary, _ = _check(tmp_path, "--workers", "1", "--json", *extra, folder=f"h{len(extra)}")
        assert code == 0 and summary["verdict"] == "holds" and summary["states"] == 3_904
        assert not summary["stopped_at_first_violation"]


def test_the_stop_is_the_same_on_two_workers(tmp_path):
    _, one, _ = _check(tmp_path, *MUTANT, folder="w1")
    _, two, _ = _check(tmp_path, *MUTANT, "--workers", "2", folder="w2")
    assert (_found(one), one["states"], one["transitions"]) == (_found(two), two["states"], two["transitions"])


def test_the_stop_with_reduction_finds_what_the_unreduced_stop_finds(tmp_path):
    """With --property the scenario's witnesses are left out, so the reduction works from the first level and the
    reduced counterexample must be confirmed (por.confirm, bounded by its depth and stopping at its first)."""
    args = ("--spec", "client-matches-by-order", "--scenario", "lost-response", "--clients", "3", "--workers", "1",
            "--json", "--property", "ClientsLinkByResponse")
    _, reduced, _ = _check(tmp_path, *args, folder="r")
    _, plain, _ = _check(tmp_path, *args, "--no-por", folder="p")
    assert _found(reduced) == _found(plain) == [("ClientsLinkByResponse", 6)]
    assert reduced["reduced"] and reduced["stopped_at_first_violation"]


def test_a_stop_writes_a_checkpoint_that_continue_resumes(tmp_path):
    folder = tmp_path / "cp"
    code, first, _ = _check(tmp_path, *SMALL, "--checkpoint", str(folder), folder="c1")
    assert code == 1 and first["stopped_at_first_violation"] and (folder / "CURRENT").exists()
    code, resumed, _ = _check(tmp_path, *SMALL, "--checkpoint", str(folder), "--continue", folder="c2")
    assert "resumed from the checkpoint" in resumed.get("note", "")
    _, straight, _ = _check(tmp_path, *SMALL, "--continue", folder="c3")
    assert (_found(resumed), resumed["states"], resumed["verdict"]) == \
        (_found(straight), straight["states"], straight["verdict"])


def test_property_checks_only_the_named_ones_and_says_what_it_left_out(tmp_path):
    code, summary, _ = _check(tmp_path, *MUTANT, "--continue", "--property", "PromptsAnswered",
                              "--property", "InsertedIdsDistinct", folder="s")
    assert code == 1 and summary["checked_only"] == ["InsertedIdsDistinct", "PromptsAnswered"]
    assert {v["property"] for v in summary["violations"]} <= {"InsertedIdsDistinct", "PromptsAnswered"}
    assert "NoStuckState" in summary["left_out"] and "ResponsesFollowInsertion" in summary["left_out"]
    assert any(w.startswith("witness ") for w in summary["left_out"]) and summary["witnesses"]["found"] == []
    evaluated = set(summary["coverage"]["properties"])
    assert evaluated == {"InsertedIdsDistinct", "PromptsAnswered"}  # the others are not evaluated at all
    code, out, _ = run_cli("check", "--spec", "reused-id", "--workers", "1", "-q", "--property", "PromptsAnswered",
                           "--out", str(tmp_path / "t"))
    assert "checked only PromptsAnswered; left out (not evaluated): " in out


def test_property_keeps_the_witnesses_asked_for(tmp_path):
    _, summary, _ = _check(tmp_path, "--workers", "1", "--json", "--property", "InsertedIdsDistinct",
                           "--witness", "two_clients_submitted", folder="k")
    assert summary["witnesses"]["found"] == ["two_clients_submitted"]
    assert "witness two_clients_submitted" not in summary["left_out"]


def test_an_unknown_property_is_one_line_exit_2_naming_near_matches():
    code, _, err = run_cli("check", "--property", "InsertedIdDistinct", "-q")
    assert code == 2 and len(err.strip().splitlines()) == 1 and "did you mean InsertedIdsDistinct" in err
    code, _, err = run_cli("check", "--property", "OutcomeKnown", "-q")  # a goal, and the rules are judged
    assert code == 2 and "--properties goals" in err
    code, out, _ = run_cli("check", "--property", "Nonsense", "--json")
    assert code == 2 and json.loads(out)["verdict"] == "error"


def test_options_the_stop_does_not_apply_to_are_refused():
    for args in (("--continue", "--walk", "3"), ("--property", "PromptsAnswered", "--estimate"),
                 ("--model", "twophase", "--property", "TPTypeOK")):
        code, _, err = run_cli("check", *args, "-q")
        assert code == 2 and len(err.strip().splitlines()) == 1, args


# -- por.confirm on a model whose reduction is known ------------------------------------------------------


class Counters:
    """Two counters to 2, each step one of them; ``ample`` takes ``x`` alone where ``narrow(state)`` says so
    (``x`` is invisible to the property, which reads ``y`` only, and independent of ``y``)."""

    def __init__(self, bad, narrow) -> None:
        self.bad, self.narrow = bad, narrow
        self.ample = self._ample

    def init_states(self):
        return [(0, 0)]

    def successors(self, s):
        x, y = s
        return ([("x", (x + 1, y))] if x < 2 else []) + ([("y", (x, y + 1))] if y < 2 else [])

    def properties(self):
        return [always("Bad", lambda s: not self.bad(s))]

    is_final = staticmethod(lambda s: True)

    def _ample(self, s):
        return [(0, ("x", (s[0] + 1, s[1])))] if s[0] < 2 and self.narrow(s) else None


def test_confirm_reruns_when_the_reduction_narrowed_above_the_counterexample():
    """Ample {x} from the first level makes the reduced counterexample x x y (3 steps); the shortest is y."""
    for stop in (True, False):
        result = explore(Counters(lambda s: s[1] == 1, lambda s: True), Limits(), stop_on_violation=stop)
        assert result.reduced and result.exact_to == 0 and result.confirmed is not None
        assert [len(v.path) for v in result.violations] == [1]


def test_confirm_keeps_counterexamples_the_reduction_left_exact():
    """Ample only where x = 1: level 0 is expanded whole, so the 1-step counterexample is the unreduced one."""
    for stop in (True, False):
        model = Counters(lambda s: s == (0, 1), lambda s: s[0] == 1)
        result = explore(model, Limits(), stop_on_violation=stop)
        plain = explore(model, Limits(), stop_on_violation=stop, por=False)
        assert result.reduced and result.confirmed is None
        assert [(v.property.name, v.path.ordinals) for v in result.violations] == \
            [(v.property.name, v.path.ordinals) for v in plain.violations]
