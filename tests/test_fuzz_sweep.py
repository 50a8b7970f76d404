"""Fuzz sweep configs (JSON, TOML and raw bytes) through ``acplab sweep``, in-process.

Whatever the config, the contract holds (tests/cli_harness.py); a config that
is accepted runs (kept tiny: at most 2 sessions, small counts) and reruns as
"nothing to run" with the same summary.

Fast by default; ``ACPLAB_FUZZ=nightly`` runs 40x the examples.
"""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given, strategies as st

from acplab.simulations.params import SimParams
from cli_harness import contract, fuzz_settings


@pytest.fixture(autouse=True)
def _in_a_temporary_folder(tmp_path, monkeypatch):
    """Default output folders (acplab-out/) land here, not in the project."""
    monkeypatch.chdir(tmp_path)


FIELDS = sorted(f for f in SimParams.__dataclass_fields__) + ["bogus", "spec", "seed", "sessions", ""]
SCALAR = st.one_of(st.integers(-2, 4), st.sampled_from([0.0, 0.01, 0.5, 1.0, 2.5, -0.5, math.inf, -math.inf, math.nan,
                                                         1e300, 10 ** 30]),
                   st.booleans(), st.sampled_from(["", "rfd", "x", "1", "nan", "true", "count", "\u001b[31m"]))
VALUE = st.one_of(SCALAR, st.lists(SCALAR, max_size=2), st.dictionaries(st.sampled_from(["a", "b"]), SCALAR, max_size=1))
SPECS = st.sampled_from(["rfd", "v1", "client-matches-by-order", "nope", "", "\n"])


def plausible(name: str):
    """A value of the field's own type, mostly in range, sometimes just outside it."""
    default = getattr(SimParams, name, None)
    if isinstance(default, bool):
        return st.booleans()
    if isinstance(default, int):
        return st.integers(-1, 3)
    if isinstance(default, float):
        return st.sampled_from([0.0, 0.01, 0.2, 1.0, 5.0, 100.0, -1.0, math.nan, math.inf, 1e12])
    if name == "disable_monitors":
        return st.lists(st.sampled_from(["SuccessOnlyAfterInsertion", "nope"]), max_size=1)
    return st.sampled_from(["count", "stop", "continue", "x"])


PARAMS = [f for f in sorted(SimParams.__dataclass_fields__) if f not in ("spec", "seed", "sessions")]


@st.composite
def plausible_configs(draw) -> dict:
    grid = {}
    for name in draw(st.lists(st.sampled_from(PARAMS), max_size=2, unique=True)):
        grid[name] = draw(st.lists(plausible(name), min_size=1, max_size=2))
    base = {name: draw(plausible(name)) for name in draw(st.lists(st.sampled_from(PARAMS), max_size=3, unique=True))}
    base.update(clients=draw(st.integers(1, 2)), prompts=draw(st.integers(0, 2)))  # keep accepted configs cheap
    for name in ("clients", "prompts", "retries", "contents"):
        if name in grid:
            grid[name] = [v if not isinstance(v, int) or v < 3 else 2 for v in grid[name]]
    return {"specs": draw(st.lists(st.sampled_from(["rfd", "client-matches-by-order", "v1"]), min_size=1, max_size=2)),
            "grid": grid, "base": base, "sessions": draw(st.integers(1, 2)), "seed": draw(st.integers(0, 3))}


@st.composite
def wild_configs(draw) -> dict:
    cfg = {}
    if draw(st.booleans()):
        cfg["specs"] = draw(st.one_of(st.lists(SPECS, max_size=2), SPECS, SCALAR))
    if draw(st.booleans()):
        cfg["grid"] = draw(st.one_of(st.dictionaries(st.sampled_from(FIELDS), st.one_of(st.lists(SCALAR, max_size=3),
                                                                                         SCALAR), max_size=2), SCALAR))
    if draw(st.booleans()):
        cfg["base"] = draw(st.one_of(st.dictionaries(st.sampled_from(FIELDS), VALUE, max_size=3), SCALAR))
    cfg["sessions"] = draw(st.one_of(st.integers(-1, 2), SCALAR))
    if draw(st.booleans()):
        cfg["seed"] = draw(st.one_of(st.integers(), SCALAR))
    if draw(st.integers(0, 5)) == 0:
        cfg[draw(st.sampled_from(["extra", "Grid", ""]))] = 1
    return cfg


configs = lambda: st.one_of(plausible_configs(), plausible_configs(), wild_configs())  # noqa: E731


def to_toml(cfg: dict) -> str | None:
    """A small TOML writer for the configs above (None where TOML cannot say it, e.g. null)."""
    def scalar(v):
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, float):
            return "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf") if math.isinf(v) else repr(v)
        if isinstance(v, int):
            return str(v)
        if isinstance(v, str):
            return json.dumps(v)
        if isinstance(v, list):
            parts = [scalar(x) for x in v]
            return None if None in parts else "[" + ", ".join(parts) + "]"
        if isinstance(v, dict):
            parts = [f"{json.dumps(k)} = {scalar(x)}" for k, x in v.items()]
            return None if any("None" in p for p in parts) else "{" + ", ".join(parts) + "}"
        return None

    lines, tables = [], []
    for key, value in cfg.items():
        if isinstance(value, dict):
            tables.append((key, value))
            continue
        text = scalar(value)
        if text is None:
            return None
        lines.append(f"{json.dumps(key)} = {text}")
    for key, table in tables:
        lines.append(f"[{json.dumps(key)}]")
        for k, v in table.items():
            text = scalar(v)
            if text is None:
                return None
            lines.append(f"{json.dumps(k)} = {text}")
    return "\n".join(lines) + "\n"


@fuzz_settings(60)
@given(configs(), st.sampled_from(["json", "toml", "bytes"]), st.binary(max_size=20), st.data())
def test_sweep_keeps_the_contract_on_any_config(tmp_path_factory, cfg, form, junk, data):
    folder = tmp_path_factory.mktemp("sweep")
    if form == "json":
        path, raw = folder / "s.json", json.dumps(cfg).encode()  # NaN/Infinity spelled as Python does
    elif form == "toml":
        text = to_toml(cfg)
        path, raw = folder / "s.toml", (text if text is not None else "specs = [\n").encode()
    else:
        text = json.dumps(cfg).encode()
        cut = data.draw(st.integers(0, len(text)))
        path, raw = folder / data.draw(st.sampled_from(["s.json", "s.toml"])), text[:cut] + junk + text[cut:]
    path.write_bytes(raw)
    out = folder / "out"
    code, _, err, _ = contract("sweep", str(path), "--out", str(out), "--workers", "1", "--quiet")
    assert code in (0, 2)
    if code == 0:
        summary = (out / "summary.json").read_bytes()
        again, _, err, _ = contract("sweep", str(path), "--out", str(out), "--workers", "1", "--quiet")
        assert again == 0, err
        assert (out / "summary.json").read_bytes() == summary
