"""Where a trace check's CPU goes, without a profiler: the same capture checked with parts switched off.

    python benchmarks/tracecheck_split.py FILE      # e.g. the capture tracecheck_bench.py wrote

Four runs in this process, each a superset of the one before: reading the
capture; + ``classify`` and the front end; + the checker's frame (record,
dispatch, arm refresh) with every monitor's ``on`` a no-op; the whole check.
The differences are the parts' CPU seconds (``time.process_time``).
"""

from __future__ import annotations

import gc
import sys
import time

from acplab.model.acp.rule_monitor import Obs
from acplab.model.acp.wire_reading import classify
from acplab.model.trace.check import TraceChecker, get_trace_spec


def _checker() -> TraceChecker:
    spec = get_trace_spec("rfd")
    return TraceChecker(spec, spec.switches, False, False)


def read(path: str) -> None:
    for _item in _checker().read(path):
        pass


def front(path: str) -> None:
    ch = _checker()
    for rec, _repeated in ch.read(path):
        ch.front(ch.fbook, classify(Obs("msg", rec.conn, rec.dir, rec.seq, rec.msg)))


def frame(path: str) -> None:
    ch = _checker()
    ch.ons = [lambda b, o: None] * len(ch.ons)
    for item, repeated in ch.read(path):
        ch.feed(item, repeated)


def whole(path: str) -> None:
    ch = _checker()
    for item, repeated in ch.read(path):
        ch.feed(item, repeated)


def main() -> None:
    path = sys.argv[1]
    gc.disable()  # as check_capture does
    before = 0.0
    for name, run in [("reading", read), ("classify + front end", front), ("frame (no-op monitors)", frame),
                      ("monitors (whole check)", whole)]:
        c0 = time.process_time()
        run(path)
        cpu = time.process_time() - c0
        print(f"{name:24s} {cpu - before:6.2f} CPU s   (this run {cpu:6.2f})", flush=True)
        before = cpu


if __name__ == "__main__":
    main()
