"""Figures: `acplab figures --check` against the committed folder, determinism, Mermaid that parses
(with Mermaid's own parser, tests/js), and the state diagrams derived from the explored graph."""

from pathlib import Path

import pytest

from acplab.model.acp import events as ev
from acplab.model.acp.model import Action
from acplab.model.app.figures import compare
from acplab.model.render.mermaid import mermaid_states
from acplab.model.render.seqdiagram import draw_sequence, layout
from acplab.model.render.stategraph import (
    AGENT_BOUNDS,
    agent_state_diagram,
    client_state_diagram,
    idle_stop_reasons,
)
from acplab.model.wire import Update, UserMessageChunk

ROOT = Path(__file__).resolve().parents[1]
FIGURES = ROOT / "figures"


@pytest.fixture
def fresh(regenerated_figures):
    """The one regeneration of this test run (see conftest.regenerated_figures)."""
    return regenerated_figures


def _pinned_version(name: str) -> str | None:
    for line in (ROOT / "constraints.txt").read_text().splitlines():
        if line.lower().startswith(name + "=="):
            return line.split("==", 1)[1].strip()
    return None


@pytest.mark.slow
@pytest.mark.xdist_group("figures")
def test_committed_figures_are_current(fresh, installed_wheel):
    """What `acplab figures --check` does, on the run's one regeneration (by the installed wheel).

    The comparison is byte for byte and so **pinned to constraints.txt**: the
    committed SVGs are what matplotlib at the pinned version draws (another
    version moves paths by a few hundredths), so a venv with another version
    fails here first, naming both.  The committed files were made by an earlier
    process, so equality also shows that generation is byte-identical across runs.
    """
    import subprocess

    pinned = _pinned_version("matplotlib")
    drew = subprocess.run([str(installed_wheel.python), "-c", "import matplotlib; print(matplotlib.__version__)"],
                          capture_output=True, text=True).stdout.strip()
    assert drew == pinned, (
        f"the figures are pinned to matplotlib=={pinned} (constraints.txt); the wheel's venv has {drew}")
    assert compare(fresh, FIGURES) == []


@pytest.mark.slow
@pytest.mark.xdist_group("figures")
def test_check_names_changed_missing_and_extra_files(fresh, tmp_path, monkeypatch, capsys):
    import shutil

    stale = tmp_path / "figures"
    shutil.copytree(fresh, stale)
    (stale / "states" / "agent.mmd").write_text("stateDiagram-v2\n")
    (stale / "scenarios" / "default.svg").unlink()
    (stale / "old.svg").write_text("<svg/>")
    assert compare(fresh, stale) == ["missing: scenarios/default.svg", "extra: old.svg", "differs: states/agent.mmd"]
    # the command's exit code and messages, without regenerating a second time
    from acplab.model.app import figures

    monkeypatch.setattr(figures, "generate", lambda folder, progress=None, cache=None: shutil.copytree(fresh, folder) and [])
    assert figures.run(str(stale), check=True) == 1
    out = capsys.readouterr().out
    for name in ("scenarios/default.svg", "old.svg", "states/agent.mmd"):
        assert name in out
    assert figures.run(str(fresh), check=True) == 0


def _pinned(result):
    """Every cell of the matrix, with the length of its shortest counterexample where it has one; every fault
    cell, with the goals the fault adds; every design's best and worst client strategy."""
    out = {}
    for name, row in result["cells"].items():
        out[name] = {}
        for p, c in row.items():
            length = result["details"][name].get(p, {}).get("trace_length")
            out[name][p] = f"{c}:{length}" if length is not None else c
    for name, row in result["faults"].items():
        out[name].update({f"fault {f}": cell["cell"] + "".join(f" {g}:{d['length']}" for g, d in cell.get(
            "goals", {}).items()) for f, cell in row.items()})
    for name, summary in result["strategies"].items():
        out[name]["strategies"] = f"best {summary['best']}, worst {summary['worst']}"
    return out


@pytest.mark.slow
@pytest.mark.xdist_group("figures")
def test_the_variant_matrix_is_pinned(fresh):
    """The regeneration ran the whole variant matrix: a flipped cell or a changed shortest length fails here."""
    import json

    matrix = json.loads((fresh / "matrix" / "matrix.json").read_text())
    expected = json.loads((ROOT / "tests" / "fixtures" / "matrix_expected.json").read_text())
    assert _pinned(matrix) == expected


@pytest.mark.slow
@pytest.mark.xdist_group("figures")
def test_the_matrix_keeps_the_promises_it_makes_about_itself(fresh):
    """rfd meets every goal but those it declares; by-design declarations are true and are no findings;
    every variant differs from rfd on a goal or says why it cannot; the circular cells are gone."""
    import json

    from acplab.model.acp.goals import KNOWN_LIMITATIONS
    from acplab.model.acp.spec import VARIANTS
    from acplab.model.app.matrix import NO_DIFFERENCE_DEFAULT

    matrix = json.loads((fresh / "matrix" / "matrix.json").read_text())
    cells = matrix["cells"]
    assert matrix["specs"][: len(VARIANTS) + 1] == ["rfd", *VARIANTS]
    assert {p for p, c in cells["rfd"].items() if c == "violated"} == set(KNOWN_LIMITATIONS)
    assert set(cells["rfd"].values()) <= {"holds", "n/a", "violated"}
    for row, details in matrix["details"].items():
        for prop, detail in details.items():
            if cells[row][prop] == "by design":
                assert detail["confirmed"], (row, prop)  # declared by design, and the model breaks it
                assert prop not in matrix["goals"]  # goals are design-neutral
    for name in VARIANTS:
        rows = [r for r in matrix["specs"] if matrix["rows"][r]["spec"] == name]
        differs = any(cells[r][g] != cells[r.replace(name, "rfd", 1)][g] for r in rows for g in matrix["goals"])
        differs = differs or name in matrix["fault_differences"]  # a fault the row loses more to than rfd
        assert differs != (name in matrix["no_difference"]), name
        if name in matrix["no_difference"]:
            assert matrix["no_difference"][name] != NO_DIFFERENCE_DEFAULT, f"{name}: say why the goals cannot tell"
    for name, rule in (("v2-draft", "PromptResultCarriesMessageId"), ("reuse-jsonrpc-id", "PromptResultCarriesMessageId"),
                       ("reuse-jsonrpc-id-proxy", "PromptResultCarriesMessageId"),
                       ("ack-before-insertion", "ResponsesFollowInsertion"),
                       ("prompt-as-notification", "PromptsAnswered"), ("v1", "PromptResultCarriesMessageId")):
        assert cells[name][rule] == "by design", (name, rule)
    assert cells["client-correlation-token"]["PromptResultCarriesMessageId"] == "holds"  # paired with the messageId
    assert not matrix["unlisted"]  # every other rule monitor holds on every row (or is declared)
    assert cells["client-correlation-token"]["LostResponseRecoverable"] == "holds"  # the credit the RFD grants
    assert cells["rfd-as-written"]["StateAgrees"] == "violated"  # deferring state sync costs this
    assert {v["verdict"] for v in matrix["verdicts"].values()} <= {"confirmed", "refuted", "partly confirmed",
                                                                   "cannot speak to it"}
    # faults are columns, never a strongest row's own: its switches carry none of them
    for name, spec in VARIANTS.items():
        if not name.endswith("-naive"):
            assert (spec.stale_error, spec.stray_error_read, spec.client_ids, spec.ids_survive_restart) == \
                (False, False, "global", True), name
    assert matrix["faults"]["rfd"]["restart-resets-ids"]["cell"] == "violated"  # the RFD's own generator failing
    # every ✗ and ⊘ of an ACP row says what it assumes, its shortest counterexample's scenario among them
    for row in matrix["specs"]:
        for prop, detail in matrix["details"][row].items():
            if matrix["rows"][row]["model"] == "acp" and "trace_length" in detail:
                assert detail["scenario"] in detail["assumes"]["scenarios"], (row, prop)
    assert matrix["identical_runs"]["new-error-type"] == {"as": "rfd", "switches": ["error_type"]}


@pytest.mark.slow
@pytest.mark.xdist_group("figures")
def test_svgs_carry_no_dates_or_versions(fresh):
    svgs = sorted(fresh.rglob("*.svg"))
    assert len(svgs) >= 20
    for svg in svgs[:5]:
        text = svg.read_text()
        assert "<dc:date>" not in text and "Matplotlib v" not in text


@pytest.mark.slow
@pytest.mark.xdist_group("figures")
def test_every_mermaid_file_parses(fresh, mermaid_parse):
    files = sorted(fresh.rglob("*.mmd"))
    assert files
    assert {f: e for f, e in mermaid_parse(files).items() if e} == {}


@pytest.mark.slow
@pytest.mark.xdist_group("figures")
def test_readme_lists_every_figure_with_its_command(fresh):
    readme = (fresh / "README.md").read_text()
    for path in fresh.rglob("*"):
        if path.is_file() and path.name != "README.md":
            assert f"]({path.relative_to(fresh).as_posix()})" in readme
    assert "Command: `acplab figures" in readme


def test_agent_state_diagram_is_derived_from_the_graph(mermaid_parse, tmp_path):
    q, sg = agent_state_diagram()
    assert sg.complete
    # the stop reasons on transitions into idle, recomputed from the explored graph's events
    reasons = set()
    g = sg.graph
    for u, v, data in g.edges(data=True):
        if g.nodes[u]["state"].agent.fg != "idle" and g.nodes[v]["state"].agent.fg == "idle":
            reasons.update(idle_stop_reasons(data["events"]))
    assert {"end_turn", "cancelled", "error"} <= reasons
    assert {"idle", "running", "requires_action"} <= set(q.states)
    assert q.initial == "idle"
    assert reasons == q.labels_into("idle")
    text = mermaid_states(q)
    (tmp_path / "agent.mmd").write_text(text)
    assert list(mermaid_parse([tmp_path / "agent.mmd"]).values()) == [None]
    for reason in ("end_turn", "cancelled", "error"):
        assert any(line.strip().endswith(reason) or f"{reason}," in line or f" {reason}" in line
                   for line in text.splitlines() if "--> idle" in line)
    assert AGENT_BOUNDS.cancels and AGENT_BOUNDS.failures and AGENT_BOUNDS.permission


def test_client_view_reaches_pending_accepted_ambiguous(mermaid_parse, tmp_path):
    q, sg = client_state_diagram()
    assert sg.complete
    statuses = {n: d["state"].clients[0].subs[0].status for n, d in sg.graph.nodes(data=True)
                if d["state"].clients[0].subs}
    assert {"pending", "accepted", "ambiguous"} <= set(statuses.values())
    assert {"not submitted", "pending", "accepted", "ambiguous"} <= set(q.states)
    assert ("pending", "ambiguous") in q.edges
    (tmp_path / "client.mmd").write_text(mermaid_states(q))
    assert list(mermaid_parse([tmp_path / "client.mmd"]).values()) == [None]


def _chunk_steps(n):
    chunk = Update("s1", UserMessageChunk("m1", "hi"))
    steps = []
    for _ in range(n):
        steps.append((Action("agent", "echo", (0,)), [ev.Send((0, 0), ev.A2C, chunk)]))
        steps.append((Action("net", "deliver_to_client", (0,)), [ev.Deliver((0, 0), ev.A2C, chunk)]))
    return steps


def test_identical_chunks_collapse_and_drawing_is_deterministic(tmp_path):
    lay = layout(_chunk_steps(3), 1)
    arrows = [it for row in lay.rows for it in row if it.kind == "arrow"]
    assert len(arrows) == 1 and arrows[0].count == 3
    a, b = tmp_path / "a.svg", tmp_path / "b.svg"
    pa, pb = tmp_path / "a.png", tmp_path / "b.png"
    draw_sequence(_chunk_steps(3), 1, "chunks", ("Rule", "what went wrong"), ("U7",), a, pa)
    draw_sequence(_chunk_steps(3), 1, "chunks", ("Rule", "what went wrong"), ("U7",), b, pb)
    assert a.read_bytes() == b.read_bytes() and pa.read_bytes() == pb.read_bytes()
    assert "×3" in a.read_text()


def test_delayed_and_lost_messages():
    """A message delivered after other activity is slanted; a drop ends in a cross."""
    chunk = Update("s1", UserMessageChunk("m1", "hi"))
    steps = [
        (Action("agent", "echo", (0,)), [ev.Send((0, 0), ev.A2C, chunk), ev.Send((0, 0), ev.A2C, chunk)]),
        (Action("agent", "restart"), [ev.Restart()]),
        (Action("net", "deliver_to_client", (0,)), [ev.Deliver((0, 0), ev.A2C, chunk)]),
        (Action("net", "drop_to_client", (0,)), [ev.Drop((0, 0), ev.A2C, chunk)]),
    ]
    lay = layout(steps, 1)
    assert [it.kind for it in lay.slanted] == ["arrow", "lost"]
    assert all(it.y1 > it.y0 for it in lay.slanted)


def test_every_command_in_the_figures_readme_runs(monkeypatch):
    """Each command the gallery gives parses as the command line reads it (files it names exist)."""
    import re
    import shlex

    import click

    from acplab.model.app.cli import cli

    monkeypatch.chdir(ROOT)
    readme = (FIGURES / "README.md").read_text()
    commands = sorted(set(re.findall(r"`((?:acplab|python) [^`]+)`", readme)))
    assert any(c.startswith("acplab sweep examples/") for c in commands)
    for command in commands:
        argv = shlex.split(command)
        if argv[0] == "python":
            assert (ROOT / argv[1]).is_file(), command
            continue
        group, args = cli, argv[1:]
        while isinstance(group, click.Group):
            group, args = group.commands[args[0]], args[1:]
        group.make_context(argv[1], list(args))  # raises on an unknown option, a bad value or a missing file
