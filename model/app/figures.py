"""`acplab figures`: regenerate everything under ``figures/``, deterministically.

* ``scenarios/NAME.mmd|svg``: for every named scenario, the shortest run that
  reaches its first witness (spec ``rfd``);
* ``counterexamples/SPEC.mmd|svg``: for every mutant and finding (a spec with
  ``breaks``), the shortest counterexample in the first scenario that catches it;
* ``states/agent.mmd|svg`` and ``states/client-submission.mmd|svg``: the
  explored state graph quotiented onto the agent's foreground state and onto
  a client's view of one submission;
* the variant matrix (:mod:`.matrix`) and the plots of a fixed-seed
  simulation sweep (:data:`FIGURE_SWEEP`, drawn by ``simulations.plots``);
* ``README.md``: every figure with a caption and the command that made it.

``--check`` regenerates into a temporary folder and compares byte for byte
with the committed folder: exit 0 when identical, 1 naming each file that
differs, is missing or is extra.
"""

from __future__ import annotations

import filecmp
import json
import os
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from acplab.model.acp.model import AcpModel
from .checking import complete_path
from .progress import Progress
from .outfolder import (check_target, install, list_entries, new_sibling, ownership, parent_locked, read_manifest,
                        recover, resolve_out)
from acplab.model.engine import Limits, explore
from acplab.model.render.artefacts import write_behaviour
from acplab.model.render.mermaid import mermaid_states
from acplab.model.acp.scenarios import SCENARIOS
from acplab.model.render.seqdiagram import draw_sequence
from acplab.model.acp.spec import FINDINGS, RFD, SPECS
from acplab.model.render.stategraph import (
    AGENT_BOUNDS,
    CLIENT_BOUNDS,
    agent_state_diagram,
    client_state_diagram,
    draw_states,
)
from acplab.model.acp.witnesses import WITNESSES

COMMAND = "acplab figures"
#: exploration depths tried in turn to find a witness (the breadth-first path is the
#: same at any depth that contains it, so a shallow run gives the same figure sooner)
WITNESS_DEPTHS = (8, 12, 20, None)


@dataclass(frozen=True)
class Figure:
    """A generated file (relative path), its caption and the command that reproduces it."""

    files: tuple[str, ...]
    caption: str
    command: str = COMMAND
    section: str = ""
    related: str = ""  # another command that shows the same behaviour


def default_folder() -> Path:
    """The project's ``figures/`` next to the package (an editable install), else ``./figures``."""
    root = Path(__file__).resolve().parent.parent
    if (root / "pyproject.toml").exists():
        return root / "figures"
    return Path("figures")


# -- the figures ------------------------------------------------------------


def witness_path(model, name: str):
    """The shortest path to witness ``name``, by deepening breadth-first runs."""
    for depth in WITNESS_DEPTHS:
        result = explore(model, Limits(max_depth=depth))
        path = result.witnesses.get(name)
        if path is not None:
            return path
        if result.complete:
            break
    return None


def scenario_figures(folder: Path) -> list[Figure]:
    out = []
    (folder / "scenarios").mkdir(parents=True, exist_ok=True)
    for sc in SCENARIOS.values():
        if not sc.witnesses:
            continue
        wname = sc.witnesses[0]
        witness = WITNESSES[wname]
        model = AcpModel(RFD, sc.bounds, [witness])
        path = witness_path(model, wname)
        if path is None:
            out.append(Figure((), f"**{sc.name}**: witness `{wname}` was not reached; no figure.", section="Scenarios"))
            continue
        steps = complete_path(model, path).actions_with_effects()
        title = (f"scenario {sc.name}: {wname} reached in {len(path)} steps, then on to rest "
                 f"(spec rfd) [{', '.join(sc.rules)}]")
        base = folder / "scenarios" / sc.name
        write_behaviour(base, model, steps, title, kinds=("mmd",))
        draw_sequence(steps, sc.bounds.clients, title, path_svg=base.with_suffix(".svg"))
        caption = (f"**{sc.name}**: {sc.description}; the shortest run (spec rfd) to the witness "
                   f"`{wname}`: {_sentence(witness[3])} The run then goes on, without faults or new "
                   f"prompts, until nothing is left in flight.")
        out.append(Figure((f"scenarios/{sc.name}.svg", f"scenarios/{sc.name}.mmd"), caption, COMMAND, "Scenarios",
                          f"acplab check --scenario {sc.name} --witness {wname} --html --out acplab-out/{sc.name}"))
    return out


def counterexample_figures(folder: Path) -> list[Figure]:
    out = []
    (folder / "counterexamples").mkdir(parents=True, exist_ok=True)
    for name, spec in SPECS.items():
        if not spec.breaks:
            continue
        sc = next((s for s in SCENARIOS.values() if name in s.catches), None)
        if sc is None:
            out.append(Figure((), f"**{name}**: no scenario lists it in `catches`; no figure.", section="Counterexamples"))
            continue
        model = AcpModel(spec, sc.bounds, [WITNESSES[w] for w in sc.witnesses])
        result = explore(model, Limits(), stop_on_violation=True)
        v = next((v for v in result.violations if v.property.name == spec.breaks), None)
        if v is None:
            out.append(Figure((), f"**{name}**: `{spec.breaks}` not violated in scenario {sc.name}; no figure.",
                              section="Counterexamples"))
            continue
        steps = v.path.actions_with_effects()
        sentence = v.sentence
        violation = (v.property.name, sentence)
        rules = ", ".join(v.property.rules)
        title = f"{v.property.name} [{rules}] violated in {len(v.path)} steps (spec {name}, scenario {sc.name})"
        base = folder / "counterexamples" / name
        write_behaviour(base, model, steps, title, violation, v.property.rules, kinds=("mmd",))
        draw_sequence(steps, sc.bounds.clients, title, (v.property.name, sentence), v.property.rules,
                      path_svg=base.with_suffix(".svg"))
        kind = "finding" if name in FINDINGS else "mutant"
        caption = (f"**{name}** ({kind}: {spec.description}): the shortest counterexample, caught by "
                   f"`{spec.breaks}` [{rules}] in scenario {sc.name}.")
        out.append(Figure((f"counterexamples/{name}.svg", f"counterexamples/{name}.mmd"), caption, COMMAND,
                          "Counterexamples", f"acplab check --spec {name} --scenario {sc.name} --html --out acplab-out/{name}"))
    return out


def state_figures(folder: Path) -> list[Figure]:
    (folder / "states").mkdir(parents=True, exist_ok=True)
    figs = []
    for stem, build, bounds, what in (
        ("agent", agent_state_diagram, AGENT_BOUNDS,
         "the agent's foreground state (idle / running / requires_action), each transition into idle labelled "
         "with the stopReason of the idle state_update sent on it"),
        ("client-submission", client_state_diagram, CLIENT_BOUNDS,
         "a client's view of its first submission (not submitted / pending / accepted / rejected / cancelled / "
         "ambiguous), each change labelled with what caused it"),
    ):
        q, sg = build()
        (folder / "states" / f"{stem}.mmd").write_text(mermaid_states(q))
        draw_states(q, folder / "states" / f"{stem}.svg")
        changed = {k: v for k, v in bounds._asdict().items() if v != type(bounds)._field_defaults[k]}
        bound_text = ", ".join(f"{k}={v}" for k, v in changed.items())
        cut = "" if sg.complete else f" (cut off at {sg.limit:,} states)"
        caption = (f"**{stem}**: the explored state graph of spec rfd ({sg.graph.number_of_nodes():,} states, "
                   f"{sg.graph.number_of_edges():,} transitions{cut}; bounds {bound_text}) quotiented onto {what}.")
        figs.append(Figure((f"states/{stem}.svg", f"states/{stem}.mmd"), caption, COMMAND, "State diagrams"))
    return figs


def hook_figures(folder: Path, cache: str | None = None) -> tuple[list[Figure], list[str]]:
    """The variant matrix (its runs found in ``cache`` when given: the same figures) and the simulation plots,
    each with its caption and command."""
    from .matrix import write_figures as matrix_figures

    figs: list[Figure] = []
    for made, section in ((lambda: matrix_figures(folder, cache), "Variant matrix"),
                          (lambda: simulation_figures(folder), "Simulation plots")):
        for files, caption, command in made():
            files = (files,) if isinstance(files, str) else tuple(files)
            figs.append(Figure(files, caption, command, section))
    return figs, []


#: The sweep behind the README's simulation figures (fixed seed: byte-identical output);
#: ``examples/figures-sweep.toml`` is the same sweep as a config file (a test keeps them equal).
SWEEP_COMMAND = "acplab sweep examples/figures-sweep.toml --plots --out acplab-out/figures-sweep"
FIGURE_SWEEP = {
    "specs": ["rfd", "replay-without-reset"],
    "grid": {"drop": [0.0, 0.02, 0.05], "disconnect_rate": [0.02]},
    "base": {"clients": 3, "prompts": 3},
    "sessions": 40,
    "seed": 7,
}


def simulation_figures(folder: Path) -> list[tuple[tuple[str, ...], str, str]]:
    """The plots of a small fixed-seed sweep (SVG only)."""
    from acplab.simulations.plots import plot_sweep
    from acplab.simulations.sweep import check_config, points, run_point

    import matplotlib

    cfg = check_config(json.loads(json.dumps(FIGURE_SWEEP)))
    rows = [run_point(key, params.to_json()) for key, params in points(cfg)]
    out = folder / "simulation"
    out.mkdir(parents=True, exist_ok=True)
    with matplotlib.rc_context():
        matplotlib.rcdefaults()  # independent of whatever the process drew before
        files = plot_sweep(rows, out)
    figures = []
    for svg in sorted(f for f in files if f.endswith(".svg")):
        Path(svg[:-4] + ".png").unlink(missing_ok=True)
        stem = Path(svg).stem
        caption = (f"**{stem}** from a fixed-seed sweep: specs {', '.join(cfg['specs'])}; drop "
                   f"{FIGURE_SWEEP['grid']['drop']}; 3 clients, {cfg['sessions']} sessions per point.")
        figures.append(((f"simulation/{Path(svg).name}",), caption, SWEEP_COMMAND))
    return figures


#: the screenshot of an HTML report (``scripts/report_screenshot.py``); pixels are not byte-stable
#: across fonts and Chromium builds, so it is carried over as committed rather than redrawn and compared
SCREENSHOT = "report/reused-id.png"
SCREENSHOT_COMMAND = "python scripts/report_screenshot.py"


def screenshot_figures(folder: Path) -> list[Figure]:
    """The committed report screenshot, copied unchanged (none when this checkout has none)."""
    committed = default_folder() / SCREENSHOT
    if not committed.is_file():
        return []
    (folder / "report").mkdir(parents=True, exist_ok=True)
    shutil.copyfile(committed, folder / SCREENSHOT)
    caption = ("**reused-id report**: `acplab check --spec reused-id --out D --html` opened in headless Chromium, "
               "five steps into the counterexample: the step's events, its JSON-RPC messages and state changes beside "
               "the sequence diagram, whose step number is marked. A screenshot is not byte-stable, so "
               "`acplab figures` keeps the committed one; the command redraws it (it needs Node, `npm ci` in "
               "`tests/js`, and Chromium).")
    return [Figure((SCREENSHOT,), caption, SCREENSHOT_COMMAND, "HTML report",
                   "acplab check --spec reused-id --html --out acplab-out/reused-id")]


def _sentence(text: str) -> str:
    text = text.strip()
    return text if text.endswith(".") else text + "."


# -- README ------------------------------------------------------------


def readme(figs: list[Figure], notes: list[str], folder: Path | None = None) -> str:
    lines = [
        "# Figures",
        "",
        "Generated by `acplab figures`; do not edit by hand (this file is generated too).",
        "`acplab figures --check` regenerates everything in a temporary folder and fails,",
        "naming the files, when this folder is out of date.",
        "",
        "Sequence diagrams come as Mermaid (`.mmd`, drop-in for the ACP docs) and as SVG drawn",
        "with matplotlib.  In the SVGs time runs downwards; the grey numbers are the step numbers",
        "of the text trace (`acplab check --out DIR` writes it); an arrow runs from the sender at the",
        "step it was sent to the receiver at the step it was delivered (slanted when it was",
        "delayed); a red cross is a message lost (dropped, cut in flight, or sent on a closed",
        "connection); yellow notes are internal events a wire observer does not see.",
        "In the Mermaid files an arrow is drawn at its delivery, and a message still in flight",
        "when the run ends is drawn where it was sent, marked \"(in flight)\"; every `.mmd` here",
        "passes Mermaid 11's own parser (`tests/test_mermaid.py`).",
        "",
    ]
    section = None
    for fig in figs:
        if fig.section != section:
            section = fig.section
            lines += [f"## {section}", ""]
        links = ", ".join(f"[`{f}`]({f})" for f in fig.files)
        lines.append(f"- {fig.caption}" + (f" {links}." if links else ""))
        lines.append(f"  Command: `{fig.command}`" + (f" (explore it with `{fig.related}`)" if fig.related else ""))
        if fig.files and fig.files[0].endswith((".svg", ".png")):
            lines += ["", f"  ![{fig.files[0]}]({fig.files[0]})"]
        lines.append("")
    if notes:
        lines += ["## Notes", ""] + [f"- {n}" for n in notes] + [""]
    return "\n".join(lines + (beside_the_docs(folder) if folder is not None else []))


#: the cancellation diagram of the ACP docs (protocol/v2/draft/cancellation, Apache-2.0), quoted as
#: the docs have it, to set beside acplab's own run of that scenario
DOCS_CANCELLATION = """sequenceDiagram
    participant Client
    participant Agent

    Note over Client,Agent: 1. Session prompt in progress
    Client->>Agent: session/prompt (id=1, "Analyze file X")
    Agent-->>Client: response to id=1 ({})
    Agent->>Client: session/update (state_update: running)

    Note over Client,Agent: 3. Client cancels active session work
    Client->>Agent: session/cancel (sessionId)

    Note over Client,Agent: 6. Agent reports cancellation completion
    Agent->>Client: session/update (state_update: idle, stopReason: "cancelled")"""
BESIDE = "scenarios/cancellation.mmd"


def beside_the_docs(folder: Path) -> list[str]:
    """A section setting one acplab diagram (:data:`BESIDE`) beside the ACP docs' own, when it was made."""
    if not (folder / BESIDE).is_file():
        return []
    ours = (folder / BESIDE).read_text(encoding="utf-8").split("---\n")[-1].strip()
    return ["## Beside the ACP docs", "",
            "The docs' cancellation diagram (protocol/v2/draft, steps 2, 4 and 5 left out) and acplab's run of",
            f"the `cancellation` scenario ([`{BESIDE}`]({BESIDE})), in the same conventions: `Client` and",
            "`Agent`, solid arrows for requests and notifications, dashed for responses, ids written `(id=1)`.", "",
            "<table><tr><th>ACP docs</th><th>acplab</th></tr><tr><td>", "", "```mermaid", DOCS_CANCELLATION, "```", "",
            "</td><td>", "", "```mermaid", ours, "```", "", "</td></tr></table>", ""]




# -- driver ------------------------------------------------------------


#: the parts of a regeneration, in order (the progress display counts them)
PARTS = ("scenarios", "counterexamples", "state diagrams", "matrix and simulation", "screenshot")


def generate(folder: Path, progress=None, cache: str | None = None) -> list[Figure]:
    """Write every figure and the README into ``folder`` (created if needed); ``progress.part(name)`` per part;
    ``cache``: the matrix's run cache (``acplab figures --cache``), which changes no byte of the figures."""
    part = progress.part if progress is not None else (lambda name: None)
    folder.mkdir(parents=True, exist_ok=True)
    part(PARTS[0])
    figs = scenario_figures(folder)
    part(PARTS[1])
    figs += counterexample_figures(folder)
    part(PARTS[2])
    figs += state_figures(folder)
    part(PARTS[3])
    more, notes = hook_figures(folder, cache)
    part(PARTS[4])
    figs += more + screenshot_figures(folder)
    (folder / "README.md").write_text(readme(figs, notes, folder))
    return figs


def _files(folder: Path) -> set[str]:
    """The files under ``folder`` (relative POSIX paths), without the manifest of what was written."""
    return list_entries(folder)[0]


def compare(expected: Path, actual: Path) -> list[str]:
    """Differences between a fresh folder and a committed one, one line each (empty: identical).

    Files the tool did not write (not in the committed folder's manifest) are
    not "extra": they are someone else's.
    """
    fresh = _files(expected)
    committed = _files(actual) if read_manifest(actual) is None else ownership(actual)[0]
    problems = [f"missing: {name}" for name in sorted(fresh - committed)]
    problems += [f"extra: {name}" for name in sorted(committed - fresh)]
    problems += [f"differs: {name}" for name in sorted(fresh & committed)
                 if not filecmp.cmp(expected / name, actual / name, shallow=False)]
    return problems


def run(out: str | None, check: bool, follow_symlink: bool = False, quiet: bool = False, cache: str | None = None) -> int:
    """The `acplab figures` command: regenerate ``out`` (default ``figures/``), or ``--check`` it.

    Regeneration writes into a temporary folder, then puts each generated
    file in place (:mod:`.outfolder`): files and folders the tool did not
    write are never touched; the folder is checked before any work starts.
    """
    started = time.perf_counter()
    if check:
        folder = Path(out) if out else default_folder()
        with tempfile.TemporaryDirectory(prefix="acplab-figures-") as tmp:
            fresh = Path(tmp) / "figures"
            with Progress("figures", "parts", len(PARTS), quiet=quiet) as shown:
                generate(fresh, shown, cache=cache)
            return _report_check(fresh, folder, started)
    folder = resolve_out(str(out) if out else str(default_folder()), follow_symlink)
    check_target(folder)  # before the lock too: a folder no one can write is said as that, not as a lock held
    with parent_locked(folder):
        for note in recover(folder):
            print(note, file=sys.stderr)
        check_target(folder)
        fresh = new_sibling(folder)
        try:
            with Progress("figures", "parts", len(PARTS), quiet=quiet) as shown:
                figs = generate(fresh, shown, cache=cache)
            done = install(fresh, folder)
        finally:
            shutil.rmtree(fresh, ignore_errors=True)
    seconds = time.perf_counter() - started
    kept = f"; kept {len(done['kept'])} file(s) it did not write" if done["kept"] else ""
    print(f"wrote {len(done['written'])} files ({len([f for f in figs if f.files])} figures) to {folder} "
          f"in {seconds:.1f} s{kept}")
    return 0


def _report_check(fresh: Path, folder: Path, started: float) -> int:
    problems = compare(fresh, folder)
    for p in problems:
        print(f"{p} ({folder / p.split(': ', 1)[1]})")
    if problems:
        print(f"figures out of date: {len(problems)} file(s); run `{COMMAND}`", file=sys.stderr)
        return 1
    print(f"figures up to date: {len(_files(fresh))} files in {folder} ({time.perf_counter() - started:.1f} s)")
    return 0
