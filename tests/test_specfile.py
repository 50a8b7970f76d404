"""Variants as files: a TOML file loads as a spec, reaches check, matrix and simulate, and bad input is one line."""

import json

import pytest

from acplab.model.acp import specfile
from acplab.model.acp.spec import RFD, SPECS, USER_SPECS, VARIANTS, Spec

from cli_harness import run_cli

EARLY_ACK = 'name = "ack-at-receipt"\ndescription = "success on receipt"\n[switches]\nrespond_at = "receipt"\n'


@pytest.fixture(autouse=True)
def _forget_spec_files():
    USER_SPECS.clear()
    yield
    USER_SPECS.clear()


def _file(tmp_path, text, name="v.toml"):
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def test_a_file_is_a_preset_with_some_switches_changed(tmp_path):
    spec = specfile.load(_file(tmp_path, 'name = "x"\nbase = "v2-draft"\n[switches]\nstale_error = true\n'
                                         '[by_design]\nPromptResultCarriesMessageId = "the draft"\n'))
    # the preset's reason for "no difference" is about the preset: a file states its own, or none
    assert spec == VARIANTS["v2-draft"]._replace(name="x", stale_error=True, description=spec.description,
                                                 by_design=(("PromptResultCarriesMessageId", "the draft"),),
                                                 no_difference="")
    assert "v2-draft with stale_error=True" in spec.description
    assert "x" not in SPECS  # loaded, not registered
    specfile.register(spec)
    assert SPECS["x"] is spec and "x" not in VARIANTS  # never a preset: the figures never see it


def test_every_behaviour_switch_can_be_set_and_every_text_switch_has_its_choices():
    assert set(specfile.SWITCHES) | set(specfile._NOT_SWITCHES) == set(Spec._fields)
    texts = {f for f in specfile.SWITCHES if isinstance(getattr(RFD, f), str)}
    assert texts == set(specfile.CHOICES)
    for name, values in specfile.CHOICES.items():
        assert getattr(RFD, name) in values, name


@pytest.mark.parametrize("text,says", [
    ('name = "x"\n[switches]\nrespond_att = "receipt"\n', "unknown switch 'respond_att'"),
    ('name = "x"\n[switches]\nrespond_at = "sometime"\n', "respond_at is one of insertion, receipt"),
    ('name = "x"\n[switches]\necho = "yes"\n', "echo takes true or false"),
    ('name = "x"\n[switches]\nproxy_id_offset = -1\n', "whole number from 0"),
])
def test_a_bad_switch_is_one_line_exit_2_pointing_at_the_switch_list(tmp_path, text, says):
    code, out, err = run_cli("check", "--spec-file", _file(tmp_path, text), "--scenario", "report-order", "-q")
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and says in err
    assert "`acplab switches`" in err


@pytest.mark.parametrize("text,says", [
    ('name = "x"\ncolour = "red"\n', "unknown key 'colour'; known keys: name, base"),
    ('name = "rfd"\n', "is a preset's"),
    ('name = "Bad Name"\n', "name must be"),
    ('name = "x"\nbase = "nope"\n', "unknown base 'nope'; known presets: rfd, rfd-as-written"),
    ('name = "x"\n[by_design]\nNoHang = "no"\n', "goals are design-neutral"),
    ('name = "x"\n[by_design]\nNoSuchRule = "no"\n', "unknown property 'NoSuchRule'"),
    ('name = "x"\n[by_design]\nEveryPromptAnswered = "no"\n', "EveryPromptAnswered was replaced by PromptsAnswered"),
    ('name = \n', "not TOML"),
])
def test_bad_files_are_one_line_exit_2(tmp_path, text, says):
    code, out, err = run_cli("matrix", "--spec-file", _file(tmp_path, text), "--json", "-q")
    assert code == 2 and json.loads(out)["verdict"] == "error"
    assert len(err.strip().splitlines()) == 1 and says in err


def test_check_catches_a_file_variant_by_the_right_rule(tmp_path):
    code, out, err = run_cli("check", "--spec-file", _file(tmp_path, EARLY_ACK), "--scenario", "report-order",
                             "--json", "--out", str(tmp_path / "o"))
    data = json.loads(out)
    assert code == 1, err
    assert data["spec"] == "ack-at-receipt"
    first = min((v for v in data["violations"] if v["trace_length"]), key=lambda v: v["trace_length"])
    assert first["property"] == "ResponsesFollowInsertion" and first["sentence"].endswith("(P3, P7)")


def test_spec_and_spec_file_are_exclusive(tmp_path):
    code, _, err = run_cli("check", "--spec", "v1", "--spec-file", _file(tmp_path, EARLY_ACK))
    assert code == 2 and "exclusive" in err


def test_simulate_runs_a_file_variant(tmp_path):
    code, out, err = run_cli("simulate", "--spec-file", _file(tmp_path, EARLY_ACK), "--sessions", "3", "--json",
                             "--set", "reject=0.5", "-q")
    data = json.loads(out)
    assert code in (0, 1), err
    assert data["spec"] == "ack-at-receipt"


def test_the_readmes_variant_file_works_as_the_readme_says(tmp_path):
    import re
    from pathlib import Path

    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    guide = readme[readme.index("## Adding a variant"):]
    text = re.search(r"```toml\n(.*?)\n```", guide, re.S).group(1)
    code, out, err = run_cli("check", "--spec-file", _file(tmp_path, text), "--scenario", "report-order", "--json",
                             "--out", str(tmp_path / "o"))
    assert code == 1, err
    lengths = {v["property"]: v["trace_length"] for v in json.loads(out)["violations"]}
    assert lengths["ResponsesFollowInsertion"] == 2  # as the README says
