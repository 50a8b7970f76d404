"""Fuzz the command line's values: numbers, paths and settings of every command, in-process.

Whatever the values, the contract holds (tests/cli_harness.py): an exit code
in {0, 1, 2, 3}, no traceback, one stderr line on exit 2, one JSON object
under ``--json``.  Valid values are kept small (digits come only from
controlled strategies), so a run that starts real work stays cheap.

Fast by default; ``ACPLAB_FUZZ=nightly`` runs 40x the examples.
"""

from __future__ import annotations

import pytest
from hypothesis import given, strategies as st

from acplab.simulations.params import SimParams
from cli_harness import contract, fuzz_settings


@pytest.fixture(autouse=True)
def _in_a_temporary_folder(tmp_path, monkeypatch):
    """Default output folders (acplab-out/) land here, not in the project."""
    monkeypatch.chdir(tmp_path)

#: numbers as a user (or a script with a bug) might type them
WEIRD = st.sampled_from([
    "nan", "NaN", "inf", "-inf", "+Infinity", "1e400", "-1e400", "1e-400", "5e-324", "99999999999999999999",
    "-99999999999999999999", "9" * 5000, "0", "-0", "-1", "", " ", "abc", "1.5", "0x10", "1_0", "٣", "３", "1e3",
    "\x00", "\n", "\u001b[31m", "--json", "2.0", "0.999999", "1.0000001",
])
SMALL = st.integers(-2, 4).map(str)
TEXT = st.text(alphabet=st.characters(blacklist_categories=("Nd", "Cs")), max_size=8)  # no digits: no big numbers
VALUE = st.one_of(WEIRD, SMALL, TEXT, st.floats(-2, 2).map(repr))


def with_options(base: list[str], options: dict[str, str]) -> list[str]:
    args = list(base)
    for name, value in options.items():
        args += [name, value]
    return args


@fuzz_settings(40)
@given(st.dictionaries(st.sampled_from(["--clients", "--prompts", "--drops", "--disconnects", "--rms"]), VALUE,
                       max_size=3),
       st.sampled_from(["acp", "twophase", "bridge-v1-agent"]), st.booleans())
def test_check_values(options, model, as_json):
    args = with_options(["check", "--quiet", "--model", model], options)
    args += ["--max-states", "40", "--max-seconds", "5"] + (["--json"] if as_json else [])  # last wins: cheap
    contract(*args)


@fuzz_settings(30)
@given(st.dictionaries(st.sampled_from(["--max-states", "--max-seconds"]), VALUE, min_size=1), st.booleans())
def test_check_limits(options, as_json):
    args = with_options(["check", "--quiet", "--model", "twophase", "--rms", "3"], options)
    contract(*args + (["--json"] if as_json else []))


FIELDS = sorted(f for f in SimParams.__dataclass_fields__ if f not in ("spec",)) + ["bogus", "", "a=b", " clients"]


@fuzz_settings(30)
@given(st.dictionaries(st.sampled_from(["--clients", "--sessions", "--prompts", "--latency", "--drop",
                                        "--disconnect-rate", "--seed", "--duration", "--on-violation", "--spec"]),
                       VALUE, max_size=4),
       st.lists(st.tuples(st.sampled_from(FIELDS), VALUE), max_size=3), st.booleans())
def test_simulate_values(tmp_path_factory, options, settings, as_json):
    args = ["simulate", "--quiet", "--sessions", "2", "--prompts", "1", "--duration", "30"]  # fuzzed values follow
    args = with_options(args, options)
    for key, value in settings:
        args += ["--set", f"{key}={value}" if key != "a=b" else key]
    if as_json:
        args.append("--json")
    code, out, err, obj = contract(*args + ["--out", str(tmp_path_factory.mktemp("sim") / "o")])
    if obj is not None and code in (0, 1):
        assert obj["verdict"] in ("holds", "violated")


@fuzz_settings(25)
@given(st.dictionaries(st.sampled_from(["--jobs", "--max-seconds"]), VALUE, min_size=1), st.booleans())
def test_matrix_values(options, as_json):
    # an unknown spec ends the run after the options were checked: fuzzing the values costs no matrix run
    args = with_options(["matrix", "--quiet", "--spec", "no-such-spec"], options)
    code, _, err, _ = contract(*args + (["--json"] if as_json else []))
    assert code == 2


PATHS = st.sampled_from(["{tmp}/a/file/x", "{tmp}/a/file", "/dev/full/x", "/proc/x", "{tmp}/new/deep/er", "{tmp}/",
                         "{tmp}/a", "{tmp}/\u001b[31m\nx"])


@fuzz_settings(30)
@given(st.sampled_from(["check", "trace", "simulate", "sweep", "figures"]), PATHS, st.booleans())
def test_out_paths(tmp_path_factory, command, path, as_json):
    tmp = tmp_path_factory.mktemp("out")
    (tmp / "a").mkdir()
    (tmp / "a" / "file").write_text("keep")
    out = path.format(tmp=tmp)
    if command == "figures" and not any(s in path for s in ("file", "/dev/", "/proc/")):
        return  # a valid folder would regenerate every figure (a minute): covered in test_reliability_cli
    capture = tmp / "c.jsonl"
    capture.write_text('{"seq":1,"conn":"c1","dir":"client->agent","msg":{"jsonrpc":"2.0","method":"x"}}\n')
    config = tmp / "s.json"
    config.write_text('{"specs": ["rfd"], "sessions": 1, "base": {"prompts": 1}}')
    args = {"check": ["check", "--model", "twophase", "--broken", "--quiet"],
            "trace": ["trace", "check", str(capture)],
            "simulate": ["simulate", "--sessions", "1", "--prompts", "1", "--quiet", "--spec", "error-after-insertion"],
            "sweep": ["sweep", str(config), "--workers", "1", "--quiet"],
            "figures": ["figures"]}[command]
    json_flag = ["--json"] if as_json and command not in ("sweep", "figures") else []
    contract(*args, "--out", out, *json_flag)
    assert (tmp / "a" / "file").read_text() == "keep"
