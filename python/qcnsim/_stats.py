"""Small statistics helpers for sweep aggregation (no SciPy dependency).

``t_quantile(p, df)`` is the p-quantile of Student's t distribution with ``df`` degrees of
freedom, found by bisection on the CDF. The CDF uses the regularized incomplete beta function,
``P(T <= t) = 1 - I_x(df/2, 1/2) / 2`` with ``x = df / (df + t^2)`` for ``t >= 0``, evaluated by
the continued fraction of Abramowitz & Stegun 26.5.8 with the modified Lentz method. Accurate to
well below 1e-9, far more than a confidence interval needs.
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Sequence, Tuple

_TINY = 1e-300


def _beta_cf(a: float, b: float, x: float) -> float:
    """Continued fraction of I_x(a, b) (A&S 26.5.8), modified Lentz; converges for x < (a+1)/(a+b+2)."""
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > _TINY else _TINY)
    h = d
    for m in range(1, 400):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > _TINY else _TINY)
        c = 1.0 + aa / c
        c = c if abs(c) > _TINY else _TINY
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > _TINY else _TINY)
        c = 1.0 + aa / c
        c = c if abs(c) > _TINY else _TINY
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < 1e-15:
            break
    return h


def betainc(a: float, b: float, x: float) -> float:
    """Regularized incomplete beta function I_x(a, b) for a, b > 0 and 0 <= x <= 1."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    ln_front = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    front = math.exp(ln_front)
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _beta_cf(a, b, x) / a
    return 1.0 - front * _beta_cf(b, a, 1.0 - x) / b


def t_cdf(t: float, df: float) -> float:
    """P(T <= t) for Student's t with ``df`` degrees of freedom."""
    if math.isinf(t):
        return 1.0 if t > 0 else 0.0
    tail = 0.5 * betainc(df / 2.0, 0.5, df / (df + t * t))
    return 1.0 - tail if t >= 0 else tail


@lru_cache(maxsize=1024)
def t_quantile(p: float, df: int) -> float:
    """The p-quantile (0.5 <= p < 1) of Student's t with ``df`` >= 1 degrees of freedom."""
    if not 0.5 <= p < 1.0:
        raise ValueError(f"p must be in [0.5, 1), got {p}")
    if df < 1:
        raise ValueError(f"df must be at least 1, got {df}")
    lo, hi = 0.0, 1.0
    while t_cdf(hi, df) < p:
        hi *= 2.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if t_cdf(mid, df) < p:
            lo = mid
        else:
            hi = mid
        if hi - lo < 1e-12 * max(1.0, hi):
            break
    return 0.5 * (lo + hi)


def mean_std_ci(values: Sequence[float], level: float = 0.95) -> Tuple[int, float, float, float]:
    """(n, mean, sample standard deviation, CI half-width) of ``values``.

    The half-width is ``t_{(1+level)/2, n-1} * s / sqrt(n)``; with one value the standard
    deviation and half-width are NaN. NaN values are left out (n counts the others)."""
    xs = [float(v) for v in values if v is not None and not math.isnan(float(v))]
    n = len(xs)
    if n == 0:
        return 0, math.nan, math.nan, math.nan
    mean = math.fsum(xs) / n
    if n == 1:
        return 1, mean, math.nan, math.nan
    var = math.fsum((x - mean) ** 2 for x in xs) / (n - 1)
    sd = math.sqrt(var)
    half = t_quantile(0.5 + level / 2.0, n - 1) * sd / math.sqrt(n)
    return n, mean, sd, half
