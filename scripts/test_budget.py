"""CPU seconds of a test run, per file and per tier, from ``ACPLAB_TEST_CPU`` records (tests/conftest.py).

    ACPLAB_TEST_CPU=/tmp/cpu pytest ...
    python scripts/test_budget.py /tmp/cpu [--top 30]

CPU seconds (the test's process and the children it waited for) do not depend on what else runs on a
shared machine; a tier's wall time on N cores is at least its CPU seconds over N.
"""

import argparse
import glob
import json
from collections import defaultdict


def read_records(prefix: str) -> list[dict]:
    """Every record of every worker's file ``PREFIX.<worker>``."""
    records = []
    for path in sorted(glob.glob(prefix + ".*")):
        with open(path) as f:
            records += [json.loads(line) for line in f if line.strip()]
    return records


def tier_of(record: dict) -> str:
    """smoke, fast (neither smoke nor slow), slow (and not deep) or deep: ``-m "not slow"`` is smoke + fast,
    ``pytest`` (CI) all but deep."""
    marks = record.get("marks", [])
    return "deep" if "deep" in marks else "slow" if "slow" in marks else "smoke" if "smoke" in marks else "fast"


def summary(records: list[dict], top: int) -> str:
    by_file: dict[str, float] = defaultdict(float)
    by_tier: dict[str, float] = defaultdict(float)
    for r in records:
        by_file[r["test"].split("::")[0]] += r["cpu"]
        by_tier[tier_of(r)] += r["cpu"]
    total = sum(by_tier.values())
    lines = [f"{len(records)} tests, {total:.0f} CPU s in all: "
             + ", ".join(f"{t} {by_tier[t]:.0f} s" for t in ("smoke", "fast", "slow", "deep")),
             f'`-m "not slow"` {by_tier["smoke"] + by_tier["fast"]:.0f} CPU s; on 2 cores at least '
             f'{(by_tier["smoke"] + by_tier["fast"]) / 2:.0f} s wall; `pytest` (all but deep) at least '
             f'{(total - by_tier["deep"]) / 2:.0f} s',
             "", "CPU s  file"]
    lines += [f"{cpu:6.1f} {name}" for name, cpu in sorted(by_file.items(), key=lambda kv: -kv[1])[:top]]
    lines += ["", "CPU s  test"]
    lines += [f"{r['cpu']:6.1f} {r['test']}" for r in sorted(records, key=lambda r: -r["cpu"])[:top]]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("prefix", help="the ACPLAB_TEST_CPU path the run was given")
    parser.add_argument("--top", type=int, default=30)
    args = parser.parse_args()
    records = read_records(args.prefix)
    if not records:
        raise SystemExit(f"test_budget: no records at {args.prefix}.* (run pytest with ACPLAB_TEST_CPU={args.prefix})")
    try:
        print(summary(records, args.top))
    except BrokenPipeError:  # | head
        pass


if __name__ == "__main__":
    main()
