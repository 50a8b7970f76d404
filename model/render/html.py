"""One self-contained HTML page per command run (``--html``): nothing loads over the network.

The page is a pure function of a plain *document* (dicts and lists, built by
:mod:`.runview` and the app layer):

``title``, ``verdict``, ``lines``
    the heading, the verdict badge, and the sentences under it;
``facts``
    ``[(name, value)]``: spec, scenario, bounds, limits;
``tables``
    ``[{"title", "head", "rows", "note", "id", "lead"}]`` (a ``lead`` table comes
    before the runs, the others after them); a cell is text, or
    ``{"text", "run", "class", "title"}`` (``run`` links the cell to a run);
``coverage``
    optional (a seam for the coverage object): ``{"warnings": [...],
    "tables": [...]}``, shown when a result carries one;
``runs``
    ``[run]`` as :func:`.runview.run_view` builds them: each counterexample,
    witness or simulated run, stepped through with buttons or the keyboard
    (← → or j k: step, Home End: first, last; [ ]: previous, next run).
    Every step is an element with ``data-step="N"`` (0 is the initial
    state); the current one has the class ``current``.

CSS and JavaScript are inline; the sequence diagrams are inline SVG whose ids
are prefixed per run (so the step numbers ``step-N`` can be highlighted);
a Content-Security-Policy forbids every fetch.
"""

from __future__ import annotations

import json
import re
from html import escape as _h

CSP = "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:"

CSS = """
body{font:14px/1.45 system-ui,-apple-system,'Segoe UI',sans-serif;margin:0;color:#1a1a1a;background:#fafafa}
header{padding:14px 22px;background:#1f3b73;color:#fff}
header h1{margin:0 0 4px;font-size:19px} header p{margin:2px 0;opacity:.92}
main{padding:10px 22px 40px}
h2{font-size:16px;margin:22px 0 8px;border-bottom:1px solid #ddd;padding-bottom:3px}
.badge{display:inline-block;padding:1px 9px;border-radius:10px;font-weight:600;margin-right:6px}
.holds,.found{background:#cfe8cf;color:#124d12} .violated,.missing{background:#f4b6b6;color:#6b0000}
.incomplete{background:#f6e3a1;color:#5a4500} .na{background:#e4e4e4;color:#444} .by-design{background:#dcdcf0;color:#333}
table{border-collapse:collapse;margin:6px 0;background:#fff}
td,th{border:1px solid #d4d4d4;padding:3px 7px;text-align:left;vertical-align:top}
th{background:#eef2f8} td.num{text-align:right;font-variant-numeric:tabular-nums}
td a,button.runlink{cursor:pointer;color:#1f3b73;text-decoration:underline;background:none;border:0;padding:0;font:inherit}
.facts td:first-child{font-weight:600;white-space:nowrap}
.warn{background:#fff4ce;border:1px solid #e0c060;padding:6px 10px;border-radius:4px;margin:4px 0}
#runlist button{margin:2px 4px 2px 0;padding:3px 9px;border:1px solid #9aa5b1;border-radius:4px;background:#fff;cursor:pointer}
#runlist button.active{background:#1f3b73;color:#fff;border-color:#1f3b73}
.run{display:none} .run.active{display:block}
.run h3{margin:10px 0 4px;font-size:15px} .sentence{color:#8b0000;font-weight:600}
.stepnav{position:sticky;top:0;background:#fafafa;padding:6px 0;z-index:2;border-bottom:1px solid #e2e2e2}
.stepnav button{padding:3px 11px;margin-right:4px;font-size:14px}
.stepnav .status{margin:0 10px;font-weight:600} .hint{color:#666;font-size:12px}
.runbody{display:flex;gap:18px;align-items:flex-start;flex-wrap:wrap}
.steps{flex:1 1 430px;min-width:360px}
.step{display:none;background:#fff;border:2px solid #2a6;border-radius:6px;padding:8px 12px}
.step.current{display:block}
.step h4{margin:0 0 6px;font-size:14px} .step h5{margin:8px 0 2px;font-size:12px;color:#555;text-transform:uppercase}
.step ul{margin:0;padding-left:18px} .step li{margin:1px 0}
.step pre,.mmd pre{white-space:pre-wrap;word-break:break-word;background:#f4f6f9;border:1px solid #e0e4ea;padding:5px 7px;overflow:auto;font-size:12px;margin:3px 0}
.diff li{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:12px}
.diagram{flex:1 1 480px;max-height:80vh;overflow:auto;border:1px solid #ddd;background:#fff}
.diagram svg{max-width:100%;height:auto}
.diagram svg .now text,.diagram svg g.now{fill:#c00000!important;font-weight:700}
.empty{color:#777;font-style:italic}
"""

JS = r"""
(() => {
  const runs = [...document.querySelectorAll('.run')];
  const buttons = [...document.querySelectorAll('#runlist button')];
  let active = 0;
  function steps(run) { return [...run.querySelectorAll('.step')]; }
  function show(run, n) {
    const all = steps(run);
    const cur = Math.max(0, Math.min(all.length - 1, n));
    run.dataset.current = cur;
    all.forEach((el, i) => el.classList.toggle('current', i === cur));
    run.querySelector('.status').textContent = `step ${cur} of ${all.length - 1}`;
    run.querySelector('.first').disabled = run.querySelector('.prev').disabled = cur === 0;
    run.querySelector('.last').disabled = run.querySelector('.next').disabled = cur === all.length - 1;
    run.querySelectorAll('.diagram .now').forEach((el) => el.classList.remove('now'));
    const mark = run.querySelector(`.diagram [id="${run.id}-step-${cur}"]`);
    if (mark) { mark.classList.add('now'); }
  }
  function activate(k) {
    if (!runs.length) return;
    active = (k + runs.length) % runs.length;
    runs.forEach((r, i) => r.classList.toggle('active', i === active));
    buttons.forEach((b, i) => b.classList.toggle('active', i === active));
  }
  runs.forEach((run, k) => {
    const move = (f) => () => { activate(k); show(run, f(+run.dataset.current)); };
    run.querySelector('.first').addEventListener('click', move(() => 0));
    run.querySelector('.prev').addEventListener('click', move((c) => c - 1));
    run.querySelector('.next').addEventListener('click', move((c) => c + 1));
    run.querySelector('.last').addEventListener('click', move(() => steps(run).length - 1));
    show(run, 0);
  });
  buttons.forEach((b, k) => b.addEventListener('click', () => activate(k)));
  document.querySelectorAll('[data-run]').forEach((a) => a.addEventListener('click', (e) => {
    e.preventDefault();
    const k = runs.findIndex((r) => r.id === a.dataset.run);
    if (k >= 0) { activate(k); runs[k].scrollIntoView(); }
  }));
  document.addEventListener('keydown', (e) => {
    if (!runs.length || e.altKey || e.ctrlKey || e.metaKey) return;
    const run = runs[active];
    const cur = +run.dataset.current;
    const go = { ArrowRight: cur + 1, j: cur + 1, ArrowLeft: cur - 1, k: cur - 1, Home: 0, End: steps(run).length - 1 };
    if (e.key in go) { e.preventDefault(); show(run, go[e.key]); }
    else if (e.key === ']') activate(active + 1);
    else if (e.key === '[') activate(active - 1);
  });
  activate(0);
})();
"""


def page(doc: dict) -> str:
    """The whole report as one HTML string."""
    title = doc.get("title", "acplab report")
    parts = [
        "<!DOCTYPE html>", '<html lang="en">', "<head>", '<meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">',
        f"<title>{_h(title)}</title>", f"<style>{CSS}</style>", "</head>", "<body>",
        _header(doc), "<main>", _facts(doc.get("facts", [])),
        *(_table(t) for t in doc.get("tables", []) if t.get("lead")), _runs(doc.get("runs", [])),
        _coverage(doc.get("coverage")), *(_table(t) for t in doc.get("tables", []) if not t.get("lead")),
        "</main>", f"<script>{JS}</script>", "</body>", "</html>",
    ]
    return "\n".join(p for p in parts if p) + "\n"


def _header(doc: dict) -> str:
    verdict = doc.get("verdict")
    badge = f'<span class="badge {_cls(verdict)}" id="verdict">{_h(verdict)}</span>' if verdict else ""
    lines = "".join(f"<p>{_h(line)}</p>" for line in doc.get("lines", []))
    return f'<header><h1>{badge}{_h(doc.get("title", ""))}</h1>{lines}</header>'


def _cls(word) -> str:
    return {"n/a": "na"}.get(str(word), re.sub(r"[^a-z]", "", str(word).lower()))


def _facts(facts) -> str:
    if not facts:
        return ""
    rows = "".join(f"<tr><td>{_h(k)}</td><td>{_h(str(v))}</td></tr>" for k, v in facts)
    return f'<h2>What was checked</h2><table class="facts" id="facts">{rows}</table>'


def _cell(cell, tag: str = "td") -> str:
    if not isinstance(cell, dict):
        num = isinstance(cell, (int, float)) and not isinstance(cell, bool)
        return f'<{tag}{" class=num" if num else ""}>{_h(_fmt(cell))}</{tag}>'
    text = _h(_fmt(cell.get("text", "")))
    if cell.get("run"):
        text = f'<a href="#{_h(cell["run"])}" data-run="{_h(cell["run"])}">{text}</a>'
    attrs = f' class="{_h(cell["class"])}"' if cell.get("class") else ""
    attrs += f' title="{_h(cell["title"])}"' if cell.get("title") else ""
    return f"<{tag}{attrs}>{text}</{tag}>"


def _fmt(value) -> str:
    if value is None:
        return "–"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


def _table(t: dict) -> str:
    head = "".join(_cell(c, "th") for c in t.get("head", []))
    rows = "".join("<tr>" + "".join(_cell(c) for c in row) + "</tr>" for row in t.get("rows", []))
    note = f"<p>{_h(t['note'])}</p>" if t.get("note") else ""
    ident = f' id="{_h(t["id"])}"' if t.get("id") else ""
    return f"<h2>{_h(t.get('title', ''))}</h2>{note}<table{ident}><tr>{head}</tr>{rows}</table>"


def _coverage(cov) -> str:
    """The coverage object, when a result carries one: its warnings, then its tables."""
    if not cov:
        return ""
    warnings = "".join(f'<div class="warn">{_h(w)}</div>' for w in cov.get("warnings", []))
    tables = "".join(_table(t) for t in cov.get("tables", []))
    return f'<section id="coverage"><h2>Coverage</h2>{warnings or "<p>no warnings</p>"}{tables}</section>'


def _runs(runs: list[dict]) -> str:
    if not runs:
        return '<h2>Runs</h2><p class="empty">No counterexample, and no witness run was asked for ' \
               '(add <code>--witnesses</code> or <code>--witness NAME</code>).</p>'
    buttons = "".join(f'<button type="button" data-for="{_h(r["id"])}">{_h(_run_button(r))}</button>' for r in runs)
    hint = '<span class="hint">keys: ← → (or j k) step, Home End first and last, [ ] previous and next run</span>'
    return f'<h2>Runs</h2><div id="runlist">{buttons}</div>{hint}' + "".join(_run(r) for r in runs)


def _run_button(r: dict) -> str:
    return f"{r['kind']}: {r['name']} ({len(r['steps']) - 1} steps)"


def _run(r: dict) -> str:
    rid = _h(r["id"])
    rules = f" [{', '.join(r['rules'])}]" if r.get("rules") else ""
    sentence = f'<p class="sentence">✗ {_h(r["sentence"])}</p>' if r.get("sentence") else ""
    files = "".join(f"<li>{_h(f)}</li>" for f in r.get("files", []))
    files = f"<p>Files:</p><ul>{files}</ul>" if files else ""
    nav = ('<div class="stepnav"><button type="button" class="first">« first</button>'
           '<button type="button" class="prev">← prev</button><span class="status"></span>'
           '<button type="button" class="next">next →</button><button type="button" class="last">last »</button></div>')
    steps = "".join(_step(s) for s in r["steps"])
    diagram = f'<div class="diagram">{prefix_ids(r["svg"], r["id"])}</div>' if r.get("svg") else ""
    mmd = (f'<details class="mmd"><summary>Mermaid</summary><pre>{_h(r["mermaid"])}</pre></details>'
           if r.get("mermaid") else "")
    return (f'<section class="run" id="{rid}" data-kind="{_h(r["kind"])}"><h3>{_h(r["kind"])}: {_h(r["name"])}'
            f'{_h(rules)}</h3><p>{_h(r.get("title", ""))}</p>{sentence}{nav}'
            f'<div class="runbody"><div class="steps">{steps}</div>{diagram}</div>{mmd}{files}</section>')


def _step(s: dict) -> str:
    n = s["n"]
    when = f" at {s['t_ms']:.1f} ms" if s.get("t_ms") is not None else ""
    label = "initial state" if n == 0 else f"{n}. {s['label']}"
    head = f"<h4>{_h(label + when)}</h4>"
    body = []
    if s.get("events"):
        body.append("<h5>what happened</h5><ul class=events>" + "".join(f"<li>{_h(e)}</li>" for e in s["events"])
                    + "</ul>")
    if s.get("wire"):
        wire = "".join(f"<pre>{_h(rec['conn'])} {_h(rec['dir'])}: {_h(json.dumps(rec['msg'], ensure_ascii=False))}</pre>"
                       for rec in s["wire"])
        body.append(f"<h5>on the wire</h5><div class=wire>{wire}</div>")
    if s.get("diff"):
        title = "state" if n == 0 else "state changes"
        body.append(f"<h5>{title}</h5><ul class=diff>" + "".join(f"<li>{_h(d)}</li>" for d in s["diff"]) + "</ul>")
    if not body:
        body.append('<p class="empty">nothing observable changed</p>')
    return f'<section class="step" data-step="{n}">{head}{"".join(body)}</section>'


_ID = re.compile(r'(\bid=")([^"]+)(")')
_REF = re.compile(r'(url\(#|href="#)([^)"]+)')


def prefix_ids(svg: str, prefix: str) -> str:
    """Every id in an inline SVG (and every reference to one) prefixed, so several SVGs share a page."""
    svg = svg[svg.find("<svg"):] if "<svg" in svg else svg
    svg = _ID.sub(lambda m: f"{m[1]}{prefix}-{m[2]}{m[3]}", svg)
    return _REF.sub(lambda m: f"{m[1]}{prefix}-{m[2]}", svg)
