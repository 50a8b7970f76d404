"""What used to be silently ignored or silently reinterpreted is refused with one line (exit 2).

* ``--set`` of a simulation parameter that has its own option (``--clients 3 --set clients=5`` meant 5);
* numbers that are not plain ASCII decimals (``1_000``, other scripts' digits) or that underflow to 0
  (a rate of ``1e-400`` meant "off");
* parameters without a maximum whose large values change meaning: ``latency_sigma`` (every delay ~0 past
  it), the checker's ``own_work`` and ``contents``;
* sweep keys placed where they are ignored: ``spec``/``sessions``/``seed`` under ``[base]`` (a TOML key
  after the table header lands there), a parameter in both ``base`` and ``grid``, one given twice.
"""

from __future__ import annotations

import json

import pytest

from cli_harness import contract


@pytest.fixture(autouse=True)
def _in_a_temporary_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)


def refused(*args: str) -> str:
    code, _, err, _ = contract(*args)
    assert code == 2, (args, code, err)
    return err


@pytest.mark.parametrize("option, key", [("--clients", "clients"), ("--sessions", "sessions"),
                                         ("--latency", "latency_ms"), ("--duration", "duration_s"),
                                         ("--disconnect-rate", "disconnect-rate"), ("--seed", "seed")])
def test_set_of_a_parameter_with_its_own_option_is_refused(option, key):
    err = refused("simulate", "--sessions", "1", "--set", f"{key}=3")
    assert option in err


@pytest.mark.parametrize("setting", ["retries=1_0", "retries=\u0661", "think_s=\u0661.5", "think_s=0x10",
                                     "restart_rate=1e-400", "cancel_ms=1e-400", "latency_sigma=30"])
def test_numbers_that_would_mean_something_else_are_refused(setting):
    err = refused("simulate", "--sessions", "1", "--set", setting)
    assert setting.split("=")[0] in err


@pytest.mark.parametrize("setting, said", [("own_work=1000000", "at most"), ("failures=\u0663", "whole number"),
                                           ("contents=" + ",".join(f"t{i}" for i in range(40)), "at most")])
def test_check_bounds_without_a_maximum_are_refused(setting, said):
    err = refused("check", "--max-states", "10", "--workers", "1", "--set", setting)
    assert said in err


def _sweep(tmp_path, text: str, suffix=".toml") -> str:
    config = tmp_path / f"s{suffix}"
    config.write_text(text)
    return refused("sweep", str(config), "--out", str(tmp_path / "out"), "--workers", "1", "-q")


@pytest.mark.parametrize("key", ["sessions", "seed", "spec"])
def test_a_top_level_key_written_after_base_is_refused(tmp_path, key):
    value = '"rfd"' if key == "spec" else "5"
    err = _sweep(tmp_path, f'specs = ["rfd"]\n[base]\nclients = 1\n{key} = {value}\n')
    assert f"base.{key}" in err and "top level" in err


def test_a_parameter_in_both_base_and_grid_is_refused(tmp_path):
    err = _sweep(tmp_path, 'sessions = 1\n[base]\ndrop = 0.5\n[grid]\ndrop = [0.0, 0.1]\n')
    assert "drop" in err and "both base and grid" in err


def test_a_parameter_given_twice_in_base_is_refused(tmp_path):
    err = _sweep(tmp_path, json.dumps({"sessions": 1, "base": {"latency_ms": 10, "latency-ms": 20}}), ".json")
    assert "twice" in err


def test_what_is_still_accepted_runs(tmp_path):
    """The refusals do not catch ordinary input."""
    assert contract("simulate", "--sessions", "1", "--clients", "1", "--set", "retries=2", "--set", "think_s=.5",
                    "--set", "restart_rate=0", "--set", "latency_sigma=1.5e0")[0] == 0
    config = tmp_path / "ok.toml"
    config.write_text('specs = ["rfd"]\nsessions = 1\nseed = 2\n[base]\nclients = 1\nprompts = 1\n[grid]\n'
                      'drop = [0.0]\n')
    assert contract("sweep", str(config), "--out", str(tmp_path / "ok"), "--workers", "1", "-q")[0] == 0


@pytest.mark.parametrize("text, suffix", [("sessions = 1\n[base]\ndisconnect_rate = 1e-400\n", ".toml"),
                                          ('{"sessions": 1, "base": {"restart_rate": 1e-400}}', ".json")])
def test_a_config_number_that_underflows_to_zero_is_refused(tmp_path, text, suffix):
    assert "read as 0" in _sweep(tmp_path, text, suffix)
