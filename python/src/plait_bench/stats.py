"""The statistics of every Plait measurement: the median of per-round values and its
distribution-free interval (the sign-test interval).

One rule everywhere: plait-bench's reports and verdicts, scripts/ab.py, scripts/bench_fib.py and the
scripts that import it. Standard library only, so that the scripts can import it with the system's
python3 (they put python/src on sys.path) as well as from the virtual environment.
"""
from __future__ import annotations

import math
import statistics
from fractions import Fraction
from typing import Sequence


def median_ci(values: Sequence[float], level: float = 0.95) -> tuple[float, float] | None:
    """Distribution-free confidence interval for the median (the sign-test interval).

    With the values sorted, [x_(k), x_(n+1-k)] (1-based) covers the population median with
    probability 1 - 2 P(B <= k - 1), B ~ Binomial(n, 1/2), whatever the distribution. k is the
    largest index whose coverage is still >= level. None when even [min, max] covers with less than
    level (n <= 5 at 95 %). 9 rounds: [x_(2), x_(8)], 96.1 %; 25 rounds: [x_(8), x_(18)], 95.7 %.
    """
    v = sorted(values)
    n = len(v)
    # exact integer arithmetic: 1 - 2 S / 2^n >= level  <=>  2 S <= (1 - level) 2^n, S = sum C(n, i)
    alpha = 1 - Fraction(level).limit_denominator(10**6)
    k, tail = 0, 0
    for j in range(n // 2 + 1):
        tail += math.comb(n, j)  # now P(B <= j) 2^n
        if 2 * tail > alpha * 2**n:
            break
        k = j + 1
    if k == 0:
        return None
    return v[k - 1], v[n - k]


def median_interval(values: Sequence[float], level: float = 0.95) -> tuple[float, tuple[float, float] | None]:
    """The median of `values` (at least one) and its interval (median_ci: None with too few values)."""
    return statistics.median(values), median_ci(values, level)


def interval_text(ci: tuple[float, float] | None, fmt: str = ".2f") -> str:
    """`[lo, hi]` in the given format, or the reason there is none."""
    if ci is None:
        return "[no 95 % interval: fewer than 6 values]"
    return f"[{ci[0]:{fmt}}, {ci[1]:{fmt}}]"
