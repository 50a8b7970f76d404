"""A structural checker for the Mermaid this project writes (test helper, not Mermaid's own parser)."""

from __future__ import annotations

import re

_ID = r"[A-Za-z_][A-Za-z0-9_]*"
_SEQ_LINES = [
    re.compile(rf"participant {_ID}( as .+)?"),
    re.compile(rf"actor {_ID}( as .+)?"),
    re.compile(rf"Note (over {_ID}(,{_ID})?|(left|right) of {_ID}): .+"),
    re.compile(r"rect (rgb|rgba)\([0-9., ]+\)"),
    re.compile(r"end"),
    re.compile(rf"(?P<a>{_ID})(->>|-->>|-x|--x|-\)|--\)|->|-->)(?P<b>{_ID}): .*"),
]
_STATE_LINES = [
    re.compile(rf"(\[\*\]|{_ID}) --> (\[\*\]|{_ID})(: .+)?"),
    re.compile(rf'state "[^"]+" as {_ID}'),
    re.compile(rf"note (left|right) of {_ID}: .+"),
]


def check_mermaid(text: str) -> list[str]:
    """Structural problems of a Mermaid sequence or state diagram (empty list: looks valid).

    Front matter (``---`` ... ``---``) is skipped; then the header must be
    ``sequenceDiagram`` or ``stateDiagram-v2`` and every further line one of
    the forms this project writes.  Labels may not hold a raw ``;`` or ``#``
    (Mermaid reads them as a statement break and an entity), ``rect`` and
    ``end`` must balance, and arrows must name declared participants.
    """
    lines = text.splitlines()
    problems: list[str] = []
    i = 0
    if lines and lines[0].strip() == "---":
        try:
            i = lines.index("---", 1) + 1
        except ValueError:
            return ["front matter not closed"]
    body = [(n + 1, line.strip()) for n, line in enumerate(lines) if n >= i and line.strip()]
    if not body:
        return ["empty diagram"]
    header = body[0][1]
    if header not in ("sequenceDiagram", "stateDiagram-v2"):
        return [f"line {body[0][0]}: expected sequenceDiagram or stateDiagram-v2, got {header!r}"]
    forms = _SEQ_LINES if header == "sequenceDiagram" else _STATE_LINES
    depth = 0
    declared: set[str] = set()
    for n, line in body[1:]:
        match = next((m for m in (f.fullmatch(line) for f in forms) if m), None)
        if match is None:
            problems.append(f"line {n}: not a recognised statement: {line!r}")
            continue
        stripped = re.sub(r"#(\d+|[a-z]+);", "", line)
        if ";" in stripped or "#" in stripped:
            problems.append(f"line {n}: raw ';' or '#' in text: {line!r}")
        if header == "sequenceDiagram":
            if line.startswith(("participant ", "actor ")):
                declared.add(line.split()[1])
            elif line.startswith("rect "):
                depth += 1
            elif line == "end":
                depth -= 1
                if depth < 0:
                    problems.append(f"line {n}: 'end' without 'rect'")
                    depth = 0
            elif "a" in match.groupdict():
                for who in (match["a"], match["b"]):
                    if who not in declared:
                        problems.append(f"line {n}: undeclared participant {who!r}")
            elif line.startswith("Note over "):
                for who in line[len("Note over "):].split(":", 1)[0].split(","):
                    if who.strip() not in declared:
                        problems.append(f"line {n}: undeclared participant {who.strip()!r}")
    if depth:
        problems.append(f"{depth} 'rect' block(s) not closed")
    return problems
