"""Summaries of metric samples, with confidence intervals that stay valid.

* A *proportion* (samples that are 0 or 1: ambiguous outcomes, duplicates,
  misattributions) gets the Wilson score interval, which stays inside [0, 1]
  and is not empty at 0 of n or n of n (the normal approximation gave
  [-0.0068, 0.021] for a rate).
* A *mean* (latencies, messages per submission, counts per run) gets the
  Student t interval, cut at the metric's lower bound (every metric here is
  at least 0).
* Fewer than two samples give no interval at all (``[null, null]``): one run
  says nothing about the spread.

The intervals treat samples as independent.  Runs are; the submissions of
one run are not quite (they share the run's network and agent), so intervals
of per-submission metrics are somewhat too narrow when runs differ a lot.
"""

from __future__ import annotations

import math
from statistics import NormalDist

LEVEL = 0.95
_Z = NormalDist().inv_cdf(0.5 + LEVEL / 2)  # 1.959964
#: two-sided 95% Student t quantiles for 1..30 degrees of freedom
_T95 = (12.7062, 4.3027, 3.1824, 2.7764, 2.5706, 2.4469, 2.3646, 2.3060, 2.2622, 2.2281, 2.2010, 2.1788, 2.1604,
        2.1448, 2.1314, 2.1199, 2.1098, 2.1009, 2.0930, 2.0860, 2.0796, 2.0739, 2.0687, 2.0639, 2.0595, 2.0555,
        2.0518, 2.0484, 2.0452, 2.0423)


def t_quantile(df: int) -> float:
    """The two-sided 95% Student t quantile: a table to 30 degrees of freedom, then Cornish-Fisher.

    >>> round(t_quantile(30), 4), round(t_quantile(1000), 4)
    (2.0423, 1.9623)
    """
    if df < 1:
        raise ValueError("t needs at least one degree of freedom")
    if df <= len(_T95):
        return _T95[df - 1]
    z = _Z
    g1 = (z ** 3 + z) / 4
    g2 = (5 * z ** 5 + 16 * z ** 3 + 3 * z) / 96
    g3 = (3 * z ** 7 + 19 * z ** 5 + 17 * z ** 3 - 15 * z) / 384
    return z + g1 / df + g2 / df ** 2 + g3 / df ** 3


def wilson(successes: float, n: int) -> tuple[float, float]:
    """The 95% Wilson score interval of a proportion.

    >>> [round(x, 4) for x in wilson(0, 50)]
    [0.0, 0.0713]
    """
    p = successes / n
    z2 = _Z * _Z
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = _Z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def t_interval(values: list[float], mean: float, low: float | None = 0.0) -> tuple[float, float]:
    """The 95% t interval of a mean, not below ``low`` (None: unbounded)."""
    n = len(values)
    sd = math.sqrt(math.fsum((v - mean) ** 2 for v in values) / (n - 1))
    half = t_quantile(n - 1) * sd / math.sqrt(n)
    lo = mean - half
    return (lo if low is None else max(low, lo)), mean + half


def _r(x: float) -> float:
    return float(f"{x:.6g}")


def summarize(values: list[float], kind: str = "mean") -> dict:
    """Mean, 95% interval (``kind`` "proportion": Wilson; "mean": t), n, and the quantiles."""
    n = len(values)
    if n == 0:
        return {"mean": None, "ci": [None, None], "n": 0}
    mean = math.fsum(values) / n
    ci = [None, None]
    if n >= 2:
        lo, hi = wilson(math.fsum(values), n) if kind == "proportion" else t_interval(values, mean)
        ci = [_r(lo), _r(hi)]
    ordered = sorted(values)
    return {"mean": _r(mean), "ci": ci, "n": n, "p50": _r(quantile(ordered, 0.5)),
            "p95": _r(quantile(ordered, 0.95)), "max": _r(ordered[-1])}


def quantiles(values: list[float], steps: int = 20) -> list[float]:
    """The 0%, 5%, ..., 100% quantiles (for CDF plots of a sweep's points)."""
    ordered = sorted(values)
    return [_r(quantile(ordered, k / steps)) for k in range(steps + 1)]


def quantile(ordered: list[float], q: float) -> float:
    """Linear interpolation between the closest ranks of sorted ``ordered``."""
    if len(ordered) == 1:
        return ordered[0]
    pos = q * (len(ordered) - 1)
    lo = int(math.floor(pos))
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)
