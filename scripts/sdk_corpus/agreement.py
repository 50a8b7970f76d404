"""How far `acplab trace check` agrees with the hand-written labels of the SDK corpus.

    python scripts/sdk_corpus/agreement.py [--labels tests/fixtures/sdk/labels.json] [--v2 DIR] [--v1 DIR] [-v]

A capture *agrees* when the checker's verdict equals the label's ``expected``,
every labelled violation rule is among the rules of the reported violations
and every labelled warning rule among those of the warnings (more rules are
allowed), and a finding of each labelled violation rule names one of its
``seqs`` (the offending messages; monitors differ in which of them they name).  A capture labelled ``complete`` is
checked with ``--complete`` (it was recorded until the agent was at rest).
By default the fixtures are checked; ``--v2``/``--v1`` point at fresh
recordings (``record_all.sh`` writes them next to the recorders).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def agreement(labels: list[dict], folders: dict[str, Path], verbose: bool = False) -> dict[str, tuple[int, int]]:
    from acplab.model.trace.check import check_capture

    score: dict[str, list[int]] = {}
    for e in labels:
        dialect, name = e["file"].split("/", 1)
        result = check_capture(folders[dialect] / name, complete=e["complete"])
        rules = {r for v in result.violations for r in v.rules}
        warned = {r for v in result.warnings for r in v.rules}
        missing = [r for r in e["violations"] if r not in rules] + [r for r in e["warnings"] if r not in warned]
        missing += [f"{r}@{e['seqs'][r]}" for r in e["violations"] if r in e["seqs"]
                    and not _named(result, r, e["seqs"][r])]
        ok = result.verdict == e["expected"] and not missing
        hit = score.setdefault(dialect, [0, 0])
        hit[0] += ok
        hit[1] += 1
        if verbose or not ok:
            got = ", ".join(f"{v.property} [{', '.join(v.rules)}] {v.seq}" for v in result.violations) or "-"
            print(f"{'agree   ' if ok else 'DISAGREE'} {e['file']}: labelled {e['expected']} "
                  f"{e['violations'] or ''}{' missing ' + ', '.join(missing) if missing else ''}; "
                  f"checker {result.verdict} ({result.dialect}): {got}")
    return {d: (k, n) for d, (k, n) in score.items()}


def _named(result, rule: str, seqs: list[int]) -> bool:
    """A violation with ``rule`` names one of ``seqs`` (the offending messages)."""
    return any(rule in v.rules and set(seqs) & set(v.seq) for v in result.violations)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--labels", default=str(ROOT / "tests/fixtures/sdk/labels.json"))
    ap.add_argument("--v2", default=str(ROOT / "tests/fixtures/sdk/v2"))
    ap.add_argument("--v1", default=str(ROOT / "tests/fixtures/sdk/v1"))
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args()
    labels = json.loads(Path(args.labels).read_text())
    score = agreement(labels, {"v2": Path(args.v2), "v1": Path(args.v1)}, args.verbose)
    total = [sum(k for k, _n in score.values()), sum(n for _k, n in score.values())]
    for dialect, (k, n) in sorted(score.items()):
        print(f"{dialect}: {k}/{n}")
    print(f"agreement: {total[0]}/{total[1]}")
    return 0 if total[0] == total[1] else 1


if __name__ == "__main__":
    sys.exit(main())
