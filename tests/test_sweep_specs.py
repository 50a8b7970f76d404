"""``acplab sweep`` with spec files, and by-design declarations applied to each point as the matrix does."""

import json

import pytest

from acplab.model.errors import InputError
from acplab.simulations import sweep as sw

SMALL = {"clients": 1, "prompts": 1}


def _config(tmp_path, spec_text: str | None = None, **top) -> str:
    lines = [f"{k} = {json.dumps(v)}" for k, v in top.items()] + ["sessions = 1", "seed = 1", "[base]"]
    lines += [f"{k} = {v}" for k, v in SMALL.items()] + ["[grid]", "drop = [0.0]"]
    if spec_text is not None:
        (tmp_path / "mine.toml").write_text(spec_text)
    path = tmp_path / "sweep.toml"
    path.write_text("\n".join(lines) + "\n")
    return str(path)


def test_v1_holds_at_drop_0_its_by_design_rules_listed_apart():
    """The old sweep read every monitor that fired as a violation: v1 was 'violated' with no fault at all."""
    cfg = sw.check_config({"specs": ["v1"], "sessions": 1, "base": SMALL, "grid": {"drop": [0.0]}})
    (key, params), = sw.points(cfg)
    result = sw.run_point(key, params.to_json())["result"]
    assert result["verdict"] == "holds" and result["violations"]["count"] == 0
    assert "PromptResultCarriesMessageId" in result["by_design"]
    assert "stopReason" in result["by_design"]["PromptResultCarriesMessageId"]["reason"]


def test_a_violation_that_is_not_declared_still_fails_the_point():
    cfg = sw.check_config({"specs": ["early-success"], "sessions": 1, "base": SMALL, "grid": {"drop": [0.0]}})
    (key, params), = sw.points(cfg)
    result = sw.run_point(key, params.to_json())["result"]
    assert result["verdict"] == "violated" and "ResponsesFollowInsertion" in result["violations"]["per_monitor"]
    assert result["by_design"] == {}


def test_a_spec_file_is_a_point_and_its_definition_is_part_of_the_sweep_hash(tmp_path):
    path = _config(tmp_path, 'name = "early-file"\nbase = "v1"\n', spec_files=["mine.toml"])
    cfg = sw.load_config(path)
    assert cfg["specs"] == ["early-file"] and cfg["spec_files"] == [str(tmp_path / "mine.toml")]
    first = sw.sweep_id(sw.points(cfg))
    (tmp_path / "mine.toml").write_text('name = "early-file"\nbase = "v1"\n[switches]\necho = true\n')
    assert sw.sweep_id(sw.points(sw.load_config(path))) != first


def test_a_sweep_runs_a_spec_file_end_to_end(tmp_path):
    path = _config(tmp_path, 'name = "v1-file"\nbase = "v1"\n', specs=["rfd"], spec_files=["mine.toml"])
    assert sw.run_sweep(sw.load_config(path), tmp_path / "out", executor="serial", quiet=True) == 0
    points = json.loads((tmp_path / "out" / "summary.json").read_text())["points"]
    verdicts = {p["point"]["spec"]: (p["result"]["verdict"], sorted(p["result"]["by_design"])) for p in points}
    assert verdicts["v1-file"][0] == "holds" and "PromptResultCarriesMessageId" in verdicts["v1-file"][1]
    assert verdicts["rfd"] == ("holds", [])


@pytest.mark.parametrize("files,says", [(["nowhere.toml"], "spec file"), ([3], "spec_files must be a list")])
def test_bad_spec_files_are_one_line(tmp_path, files, says):
    with pytest.raises(InputError, match=says):
        sw.check_config({"spec_files": files}, str(tmp_path / "sweep.toml"))
