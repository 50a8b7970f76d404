"""Judging one run of ``acplab test``: the capture through ``trace check``'s monitors, nothing else.

A run ends at quiescence, so its capture is judged as *complete*
(obligations still open are violations, P2 / S2 / S3); a run stopped at its
first violation (``--stop-early``) is judged as incomplete (:mod:`.live`).  The dialect of each
connection comes from its ``initialize`` response, as in ``trace check``: a
v1 agent is judged by the v1 rules.  Only violations fail a run; warnings
(SHOULDs, smells) are counted.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

from acplab.model.acp.rules import catalogue
from acplab.model.render.mermaid import capture_window
from acplab.model.trace.check import TraceResult, check_capture


@dataclass(frozen=True)
class Violation:
    property: str
    rules: tuple[str, ...]
    explanation: str
    seq: tuple[int, ...]


@dataclass
class Judgement:
    violations: list[Violation] = field(default_factory=list)
    warnings: dict[str, int] = field(default_factory=dict)
    dialect: str = "v2"
    result: TraceResult | None = None

    @property
    def failed(self) -> bool:
        return bool(self.violations)

    def properties(self) -> set[str]:
        return {v.property for v in self.violations}


def judge(capture) -> Judgement:
    """The verdict of ``trace check --complete`` on one run's capture."""
    return judgement(check_capture(capture, None, complete=True))


def judgement(result: TraceResult) -> Judgement:
    """A run's verdict from its checker's result (judged live, :mod:`.live`, or by :func:`judge`)."""
    out = Judgement(dialect=result.dialect, result=result)
    out.violations = [Violation(v.property, tuple(v.rules), v.explanation, tuple(v.seq)) for v in result.violations]
    for w in result.warnings:
        out.warnings[w.property] = out.warnings.get(w.property, 0) + 1
    return out


def diagram(judgement: Judgement, prop: str) -> str | None:
    """The Mermaid window of the first violation of ``prop`` (the renderer ``trace check --out`` uses)."""
    result = judgement.result
    for v, window in zip(result.violations, result.windows):
        if v.property == prop and window:
            version = {"v1": "v1", "v2-draft": "v2-draft"}.get(result.dialect, "v2")
            return capture_window(window, v.property, v.rules, v.seq, v.explanation, version)
    return None


@lru_cache(maxsize=None)
def _rules_text() -> dict[str, str]:
    return {r.id: r.text for r in catalogue().values()}


def rule_sentences(rules) -> dict[str, str]:
    """Each rule ID with its sentence from the catalogue (RULES.md)."""
    texts = _rules_text()
    return {r: texts.get(r, "") for r in rules}
