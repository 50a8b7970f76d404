"""Every kind of Mermaid file acplab writes parses with Mermaid 11's own parser (tests/js, under Node).

The committed figures, and fresh files of every writer: counterexamples and
witness runs of the ACP model, the bridges' counterexamples, simulated
violations, windows of checked captures, state diagrams, and text chosen to
break a careless escaper.  One node run parses them all (about a second).
"""

from __future__ import annotations

from pathlib import Path

from acplab.model.acp import events as ev
from acplab.model.acp.model import Action
from acplab.model.render.mermaid import escape, front_matter, mermaid, mermaid_states, node_id
from acplab.model.render.stategraph import Quotient
from acplab.model.wire import Prompt, Update, UserMessageChunk

ROOT = Path(__file__).resolve().parents[1]

#: text that a careless escaper turns into comments, statement breaks, directives or line breaks
NASTY = ['prompt #1 sent; then 50% %%{init: {"theme": "dark"}}%% <br> a<b>c</b>', "style x:#1; classDef y:#2;",
         "line one\nline two", 'say "hi" \\ it\'s: fine & done', "#foo; #59; &amp;", "end"]


def _nasty_sequence() -> str:
    steps = []
    for k, text in enumerate(NASTY, 1):
        msg = Prompt(k, "s1", (text,))
        steps.append((Action("client", "submit", (0, text)), [ev.Send((0, 0), ev.C2A, msg)]))
        steps.append((Action("net", "deliver_to_agent", (0,)), [ev.Deliver((0, 0), ev.C2A, msg)]))
    chunk = Update("s1", UserMessageChunk("m1", NASTY[0]))
    steps.append((Action("agent", "echo", (0,)), [ev.Send((0, 0), ev.A2C, chunk)]))  # still in flight
    return mermaid(steps, 1, " ".join(NASTY), ("Rule; #1", NASTY[1]), ("P1", "style:#3"))


def _nasty_states() -> str:
    q = Quotient(" | ".join(NASTY), ["not submitted", "pending", "end", "requires-action"], "not submitted",
                 {("not submitted", "pending"): NASTY[:3], ("pending", "end"): NASTY[3:],
                  ("end", "requires-action"): ["x"]}, [NASTY[0]])
    return mermaid_states(q)


def test_escape_and_titles_follow_mermaids_rules():
    assert escape("a#1;b%c<d>e\nf") == "a#35;1#59;b#37;c#60;d#62;e f"
    assert escape("style x:#1") == "style x#58;#35;1"
    assert front_matter('scenario x: "y" #1') == ["---", 'title: "scenario x: \\"y\\" #1"', "---"]
    assert node_id("requires-action") == "requires_action" and node_id("end") == "end_"


def test_in_flight_messages_are_drawn_at_their_send():
    sent = Update("s1", UserMessageChunk("m1", "hi"))
    steps = [(Action("agent", "echo", (0,)), [ev.Send((0, 0), ev.A2C, sent)]),
             (Action("agent", "fail"), [ev.Fail(True)])]
    lines = mermaid(steps, 1).splitlines()
    flight = next(i for i, line in enumerate(lines) if "(in flight)" in line)
    note = next(i for i, line in enumerate(lines) if "Note over A" in line)
    assert flight < note


def test_committed_figures_parse(mermaid_parse):
    files = sorted((ROOT / "figures").rglob("*.mmd"))
    assert len(files) >= 30
    assert {f: e for f, e in mermaid_parse(files).items() if e} == {}


def test_every_writer_makes_mermaid_that_parses(mermaid_parse, tmp_path):
    files = []
    for name, text in (("nasty-sequence", _nasty_sequence()), ("nasty-states", _nasty_states())):
        (tmp_path / f"{name}.mmd").write_text(text)
    files += sorted(tmp_path.glob("*.mmd"))
    files += _check_outputs(tmp_path / "check")
    files += _trace_outputs(tmp_path / "trace")
    files += _bridge_outputs(tmp_path / "bridges")
    files += _simulate_outputs(tmp_path / "simulate")
    assert len(files) >= 15
    assert {f: e for f, e in mermaid_parse(files).items() if e} == {}


def _mmd(files: dict) -> list[Path]:
    return [Path(f) for fs in files.values() for f in fs if f.endswith(".mmd")]


def _check_outputs(out: Path) -> list[Path]:
    """Counterexamples and witness runs of ``acplab check`` (ACP model)."""
    from acplab.model.app.checking import acp_target, write_runs
    from acplab.model.engine import explore

    files = []
    for spec, scenario in (("reused-id", "identical-prompts"), ("rfd", "report-order"), ("rfd", "failure-after-insertion")):
        target = acp_target(spec, scenario, {}, True)
        result = explore(target.model)
        folder = out / f"{spec}-{scenario}"
        folder.mkdir(parents=True)
        files += _mmd(write_runs(target, result, sorted(w for w, p in result.witnesses.items() if p), folder,
                                 False)[0])
    return files


def _bridge_outputs(out: Path) -> list[Path]:
    """Counterexamples of every bridge mutant, and witness runs of the conforming bridges."""
    from acplab.model.acp.bridges import MUTANTS
    from acplab.model.app.checking import bridge_target, write_runs
    from acplab.model.engine import explore

    files = []
    for model, mutants in MUTANTS.items():
        for mutant in ["rfd", *mutants]:
            target = bridge_target(model, mutant)
            result = explore(target.model, expand_violating=True)
            folder = out / f"{model}-{mutant}"
            folder.mkdir(parents=True)
            witnesses = sorted(w for w, p in result.witnesses.items() if p) if mutant == "rfd" else []
            files += _mmd(write_runs(target, result, witnesses, folder, False)[0])
    return files


def _simulate_outputs(out: Path) -> list[Path]:
    """The files of a violation found by ``acplab simulate``."""
    from acplab.simulations.params import SimParams
    from acplab.simulations.simulate import simulate

    result = simulate(SimParams(spec="replay-without-reset", sessions=30, disconnect_rate=0.2, seed=3), out=out)
    return _mmd(result.files)


def _trace_outputs(out: Path) -> list[Path]:
    """Windows of ``acplab trace check --out`` around each violation of the bad fixtures."""
    from acplab.model.app.tracing import check_and_write

    files = []
    for capture in sorted((ROOT / "tests" / "fixtures" / "v2").glob("bad_*.jsonl")):
        result = check_and_write(capture, out=str(out / capture.stem))
        files += [Path(f) for v in result.violations for f in v.files if f.endswith(".mmd")]
    return files


def test_the_parser_rejects_what_mermaid_rejects(mermaid_parse, tmp_path):
    """The harness is Mermaid itself: the errors the old hand-written checker missed are caught."""
    bad = {"unquoted-title": "---\ntitle: scenario default: echo reached\n---\nsequenceDiagram\n    A->>B: x\n",
           "raw-semicolon": "sequenceDiagram\n    A->>B: a;b\n",
           "keyword-id": "sequenceDiagram\n    participant end\n    end->>A: x\n",
           "no-diagram": "graph-ish text\n"}
    for name, text in bad.items():
        (tmp_path / f"{name}.mmd").write_text(text)
    errors = mermaid_parse(sorted(tmp_path.glob("*.mmd")))
    assert all(errors.values()) and len(errors) == len(bad)


def test_escaped_text_renders_as_written(browser, tmp_path):
    """Parsing is not enough: in Chromium, Mermaid shows each nasty label exactly as it was before escaping."""
    import json

    from conftest import JS

    texts = [t.replace("\n", " ") for t in NASTY]
    lines = ["sequenceDiagram", "    participant A as a", "    participant B as b"]
    lines += [f"    A->>B: {escape(t)}" for t in texts]
    lines += [f"    Note over A: {escape(t)}" for t in texts]
    page = tmp_path / "render.html"
    script = (JS / "node_modules" / "mermaid" / "dist" / "mermaid.min.js").as_uri()
    page.write_text(f"""<!DOCTYPE html><html><head><meta charset="utf-8"><script src="{script}"></script></head>
<body><pre id="result">pending</pre><script>
const expected = {json.dumps(texts)};
mermaid.initialize({{startOnLoad: false}});
mermaid.render('d', {json.dumps(chr(10).join(lines))}).then(({{svg}}) => {{
  const doc = new DOMParser().parseFromString(svg, 'image/svg+xml');
  const norm = (s) => s.replace(/\\s+/g, ' ').trim();
  const got = (sel) => [...doc.querySelectorAll(sel)].map((t) => norm(t.textContent));
  const want = expected.map(norm);
  const bad = [['messages', got('.messageText')], ['notes', got('.noteText')]]
    .filter(([, g]) => JSON.stringify(g) !== JSON.stringify(want)).map(([k, g]) => k + ': ' + JSON.stringify(g));
  document.getElementById('result').textContent = bad.length ? bad.join(' | ') : 'ok';
}}).catch((e) => {{ document.getElementById('result').textContent = 'error: ' + e; }});
</script></body></html>""")
    code, result = browser(page, [{"expect": {"selector": "#result", "text": "ok", "timeout": 10000}}], tmp_path)
    assert result["steps"][0]["ok"], result["steps"][0].get("actual")
    assert code == 0


def _prompt_and_answer():
    from acplab.model.wire import PromptResult, UserMessage

    prompt, answer = Prompt(1, "s1", ("hi",)), PromptResult(1, "m1")
    echo = Update("s1", UserMessage("m1", ("hi",)))
    return [(Action("client", "submit", (0, "hi")), [ev.Send((0, 0), ev.C2A, prompt)]),
            (Action("net", "deliver_to_agent", (0,)), [ev.Deliver((0, 0), ev.C2A, prompt)]),
            (Action("agent", "answer", (0,)), [ev.Send((0, 0), ev.A2C, echo), ev.Send((0, 0), ev.A2C, answer)]),
            (Action("net", "deliver_to_client", (0,)), [ev.Deliver((0, 0), ev.A2C, echo)]),
            (Action("net", "deliver_to_client", (0,)), [ev.Deliver((0, 0), ev.A2C, answer)])]


def test_sequence_diagrams_follow_the_acp_docs_conventions():
    """As protocol/v2/draft's diagrams: Client and Agent, ``(id=1)``, only responses dashed (either way)."""
    text = mermaid(_prompt_and_answer(), 1)
    assert "    participant C1 as Client\n    participant A as Agent\n" in text
    assert '    C1->>A: session/prompt (id=1, "hi")\n' in text
    assert '    A->>C1: session/update (user_message m1, "hi")\n' in text  # a notification: solid
    assert '    A-->>C1: response to id=1 ({messageId: "m1"})\n' in text  # a response: dashed
    assert "#35;" not in text
    from acplab.model.wire import PermissionResult

    answer = PermissionResult(7, "selected")
    steps = [(Action("net", "deliver_to_agent", (0,)), [ev.Deliver((0, 0), ev.C2A, answer)])]
    assert "    C1-->>A: response to id=7 (selected)\n" in mermaid(steps, 2)  # a client's response is dashed too


def test_bridge_diagrams_follow_the_acp_docs_conventions_too():
    """The bridge's three lifelines as the docs name them; only responses dashed, whichever way; ``(id=7)``."""
    from acplab.model.app.checking import bridge_target
    from acplab.model.engine import explore
    from acplab.model.render.bridgeview import bridge_mermaid, path_events

    target = bridge_target("v1-agent", "rfd")
    path = explore(target.model).witnesses["W_EndTurnWithoutEchoStillReported"]
    sentence = "the bridge reports the turn's end although the agent never echoed the prompt " * 2
    text = bridge_mermaid(target.model, path_events(path), "witness W [X33]: " + sentence, ("W", sentence), ("X33",))
    assert "    participant C as Client (v2)\n    participant B as Bridge\n    participant A as Agent (v1)\n" in text
    assert '    C->>B: session/prompt (id=7, "hi")\n' in text
    assert '    A-->>B: response to id=70 (stopReason: "end_turn")\n' in text  # a response: dashed
    assert '    B->>C: session/update (user_message m1, "hi")\n' in text  # a notification to the client: solid
    assert '    B-->>C: response to id=7 ({messageId: "m1"})\n' in text
    assert "#35;" not in text
    notes = [line.split(": ", 1)[1] for line in text.splitlines() if line.lstrip().startswith("Note over")]
    assert notes and all(len(part) <= 60 for note in notes for part in note.split("<br/>"))


def test_long_notes_and_titles_wrap_instead_of_being_clipped():
    sentence = "the prompt was answered before its message was inserted, so the client cannot tell " * 3
    text = mermaid(_prompt_and_answer(), 1, title="witness x reached in 5 steps: " + sentence,
                   violation=("NoEarlyAnswer", sentence), rules=("P3",))
    notes = [line.split(": ", 1)[1] for line in text.splitlines() if line.lstrip().startswith("Note over")]
    assert len(notes) == 2  # the full title, then the violation
    for note in notes:
        parts = note.split("<br/>")
        assert len(parts) > 1 and all(len(p) <= 60 for p in parts)
        assert "..." not in note
    assert " ".join(sentence.split()) in " ".join(notes[1].split("<br/>"))
    assert 'title: "witness x reached in 5 steps"' in text
