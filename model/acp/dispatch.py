"""Dispatch: which monitors see an observation, by its dispatch keys (:mod:`.wire_reading`) and its dialect.

One copy for every driver (the trace checker, the explorer and the simulator
through :mod:`.rules_in_model`).
"""

from __future__ import annotations


class Dispatch:
    """Which monitors see an observation: by its keys and its dialect, cached per combination.

    A monitor sees an observation when one of its ``keys`` matches, or one of
    its ``armed`` keys matches while its book holds something in one of the
    fields ``armed`` names for the matching keys (it has something to watch
    for).  Each distinct ``(monitor, fields)`` met so far is an *arm*
    (numbered in :attr:`arms`, made as key combinations are first seen);
    :meth:`targets` returns ``(always, armed)``: monitor indices to call, and
    ``(monitor, arm)`` pairs to call while that arm is live.  A driver that
    caches liveness updates a monitor's arms (:attr:`arms_of`) after each
    call of it.
    """

    def __init__(self, monitors) -> None:
        self.monitors = list(monitors)
        self._cache: dict = {}
        self._routes: dict = {}
        #: every arm: (monitor index, ((field name, position in the book), ...))
        self.arms: list = []
        #: per monitor, the numbers of its arms
        self.arms_of: list[list[int]] = [[] for _ in self.monitors]
        self._arm_of: dict = {}

    def targets(self, keys: tuple, dialect) -> tuple:
        hit = self._cache.get((keys, dialect))
        if hit is None:
            hit = self._cache[(keys, dialect)] = self._match(keys, dialect)
        return hit

    def route(self, keys: tuple, dialect) -> tuple:
        """:meth:`targets` and the frozenset of the arms in its ``armed``: a driver that caches liveness skips
        the armed pairs when none of those arms is live (most observations)."""
        hit = self._routes.get((keys, dialect))
        if hit is None:
            always, armed = self.targets(keys, dialect)
            hit = self._routes[(keys, dialect)] = (always, armed, frozenset(arm for _i, arm in armed))
        return hit

    def _match(self, keys: tuple, dialect) -> tuple:
        wanted = set(keys)
        always, armed = [], []
        for i, m in enumerate(self.monitors):
            if dialect is not None and dialect not in m.dialects:
                continue
            if wanted.intersection(m.keys):
                always.append(i)
                continue
            fields = tuple(dict.fromkeys(f for k in keys if k in m.armed for f in m.armed[k]))
            if fields:
                armed.append((i, self._arm(i, fields)))
        return always, armed

    def _arm(self, i: int, fields: tuple) -> int:
        arm = self._arm_of.get((i, fields))
        if arm is None:
            order = list(self.monitors[i].fields)
            arm = self._arm_of[(i, fields)] = len(self.arms)
            self.arms.append((i, tuple((f, order.index(f)) for f in fields)))
            self.arms_of[i].append(arm)
        return arm

    def live(self, arm: int, book) -> bool:
        """Whether ``arm`` is live in its monitor's (thawed) book."""
        d = book.__dict__
        for name, _index in self.arms[arm][1]:
            if d[name]:
                return True
        return False

    def live_frozen(self, arm: int, frozen: tuple) -> bool:
        """:meth:`live` on a frozen book."""
        for _name, index in self.arms[arm][1]:
            if frozen[index]:
                return True
        return False
