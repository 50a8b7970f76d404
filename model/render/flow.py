"""Message flow along a path: which step ended each send (delivery, drop or cut).

Both diagram renderers (Mermaid and matplotlib) draw from this one pairing; a
send it leaves unpaired is still in flight at the end, and is drawn at its send.
"""

from __future__ import annotations


def send_endings(steps) -> dict[tuple[int, int], tuple[int, str]]:
    """Pair each send on a live connection, keyed ``(step, event index)``, with what ends it.

    The value is the step and the kind ("deliver", "drop" or "cut") that took
    the message off its channel: the first queued send of an equal message,
    which on a FIFO channel is the oldest one (on an unordered channel equal
    messages cannot be told apart anyway).  Sends still in flight at the end
    are absent.
    """
    queues: dict = {}
    done: dict = {}
    for n, (_action, events) in enumerate(steps):
        for i, e in enumerate(events):
            if e.kind == "send" and not e.lost:
                queues.setdefault((e.conn, e.dir), []).append((n, i))
            elif e.kind in ("deliver", "drop"):
                queue = queues.get((e.conn, e.dir))
                if queue:
                    done[queue.pop(_position(queue, steps, e.msg))] = (n, e.kind)
            elif e.kind == "cut":
                for key in [k for k in queues if k[0] == e.conn]:
                    for sent in queues.pop(key):
                        done[sent] = (n, "cut")
    return done


def _position(queue: list, steps, msg) -> int:
    """Index in ``queue`` (of ``(step, event index)`` sends) of the first send of ``msg``; 0 if none matches."""
    for k, (n, i) in enumerate(queue):
        if steps[n][1][i].msg == msg:
            return k
    return 0
