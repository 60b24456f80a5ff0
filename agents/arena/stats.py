"""Confidence intervals for the arena: Wilson score, Student t, and deal-clustered versions.

Games of one deal are not independent: the same cards are replayed with the seats permuted, so
one agent's results across the rotations of a deal are correlated (usually negatively: a deal
that favours a seat favours each agent once). The arena therefore treats the *deal* as the unit
of sampling: per agent, the per-deal mean of its results is one observation, and the standard
error of the overall mean comes from the spread of those per-deal means (a cluster-robust
standard error). That is what makes duplicate deals pay off: the luck of the cards cancels
within a deal, and the interval gets narrower accordingly.

* Mean points: a Student t interval over the per-deal means (``D - 1`` degrees of freedom).
* Win rate: a Wilson score interval (it stays inside [0, 1] and is sensible near 0 and 1; with
  1 to 3 wins or losses, the fewer of the two, counted in the effective sample size, the
  Poisson bound of that count on its side, as in Brown, Cai and DasGupta's modified Wilson
  interval) with the *effective* sample size ``p (1 - p) / se**2``, ``se`` being the deal-clustered standard
  error. With independent games this is the ordinary Wilson interval over games; with
  correlated games it widens or narrows by the design effect (Kish). When the clustered
  standard error carries no information (a rate of exactly 0 or 1, a single deal, or every
  deal with exactly the same rate: two identical deterministic agents, whose duplicate games
  mirror each other) each deal counts as one trial: a deal's games share its cards, so they
  are not independent (see :func:`win_rate_interval`). Two identical deterministic agents get
  an interval around 0.5 as wide as the deals allow, not an exact 0.5.
* Mean points likewise: where the per-deal means do not vary at all, the t interval over the
  games.

The t distribution's quantiles come from SciPy (:mod:`scipy.special`), the normal quantile from
:mod:`statistics`.
"""

from __future__ import annotations

import math
from statistics import NormalDist

import numpy as np

__all__ = [
    "clustered_mean",
    "clustered_ratio_interval",
    "clustered_t_interval",
    "normal_quantile",
    "student_t_quantile",
    "t_interval",
    "wilson_interval",
    "win_rate_interval",
]


def normal_quantile(q: float) -> float:
    """Quantile of the standard normal distribution (``1.959964`` for ``q = 0.975``)."""
    return NormalDist().inv_cdf(q)


def student_t_quantile(q: float, df: float) -> float:
    """Quantile of Student's t distribution (``12.706`` for ``q = 0.975, df = 1``; SciPy's
    ``stdtrit``).

    :raises ValueError: for ``q`` outside (0, 1) or ``df <= 0``.
    """
    if not 0.0 < q < 1.0:
        raise ValueError(f"quantile level must be in (0, 1), got {q!r}")
    if df <= 0:
        raise ValueError(f"degrees of freedom must be positive, got {df!r}")
    from scipy.special import stdtrit

    return float(stdtrit(df, q))


def wilson_interval(successes: float, n: float, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval for a proportion (``successes`` may be fractional: ties as halves).

    :param successes: total success credit, ``0 <= successes <= n``.
    :param n: number of trials (or an effective sample size); ``n = 0`` gives ``(0, 1)``.
    """
    if n < 0 or successes < 0 or successes > n + 1e-9:
        raise ValueError(f"need 0 <= successes <= n, got successes={successes!r}, n={n!r}")
    if n == 0:
        return (0.0, 1.0)
    z = normal_quantile(0.5 + confidence / 2.0)
    p = min(successes / n, 1.0)
    z2 = z * z
    denom = 1.0 + z2 / n
    centre = (p + z2 / (2 * n)) / denom
    half = z * math.sqrt(max(p * (1 - p), 0.0) / n + z2 / (4 * n * n)) / denom
    low = 0.0 if successes <= 0 else max(0.0, centre - half)
    high = 1.0 if successes >= n else min(1.0, centre + half)
    # A count of 1 to 3 on the minority's side (counts of the effective sample size, so not
    # always whole): Wilson's bound there sits too close to the rate (at a
    # true loss rate of 0.0015, every run of 100 games with a loss in it left the truth out:
    # 84% coverage); the Poisson bound of the count is used where it is further out (Brown,
    # Cai and DasGupta's modified Wilson interval)
    tail = (1.0 - confidence) / 2.0
    failures = n - successes
    if 0 < successes <= FEW_EVENTS and successes < failures:
        low = min(low, _poisson_low(successes, tail) / n)
    if 0 < failures <= FEW_EVENTS and failures < successes:
        high = max(high, 1.0 - _poisson_low(failures, tail) / n)
    return (low, high)


#: A count up to this many (wins or losses) takes the Poisson bound on its side (see
#: :func:`wilson_interval`).
FEW_EVENTS = 3


def _poisson_low(count: float, tail: float) -> float:
    """The lower ``1 - tail`` confidence bound of a Poisson mean with ``count`` events seen
    (``count`` may be fractional: ties count half, and an effective sample size scales the
    counts): ``chi2(2 count).ppf(tail) / 2``; 0 where that is not a number (a count too small
    for a float)."""
    from scipy.special import gammaincinv

    value = float(gammaincinv(count, tail))
    return value if math.isfinite(value) else 0.0


def t_interval(
    values: np.ndarray, confidence: float = 0.95, df: float | None = None
) -> tuple[float, float]:
    """Student t interval for the mean of independent ``values`` (NaN bounds for < 2 values),
    with ``df`` degrees of freedom (None: one less than the values)."""
    values = np.asarray(values, dtype=np.float64)
    n = values.size
    if n == 0:
        return (math.nan, math.nan)
    mean = float(values.mean())
    if n < 2:
        return (math.nan, math.nan)
    se = float(values.std(ddof=1)) / math.sqrt(n)
    half = student_t_quantile(0.5 + confidence / 2.0, n - 1 if df is None else df) * se
    return (mean - half, mean + half)


def spread_deals(values: np.ndarray) -> float:
    """How many deals the spread of ``values`` (one per deal) is measured from, in effect:
    one more than the degrees of freedom of their variance, ``2 n / (kurtosis - 1)`` (the
    sample's kurtosis; Satterthwaite's count, ``n - 1`` for normal values), at most ``n``.
    Where a few deals differ from the rest and the others are alike (two close agents, most
    deals mirrored), the spread rests on those few (``k`` of them: about ``2 k``), and an
    interval that took it as known from all ``n`` fell short of its level (85% for a 95%
    interval where 3 of 100 deals differed)."""
    values = np.asarray(values, dtype=np.float64)
    n = values.size
    e = values - values.mean()
    s2, s4 = float(np.sum(e * e)), float(np.sum(e**4))
    excess = n * s4 - s2 * s2  # n s4 / s2^2 - 1 = kurtosis - 1, times s2^2
    if n < 2 or excess <= 1e-12 * n * s4:
        return float(n)
    return min(float(n), 2.0 * n * s2 * s2 / excess + 1.0)


def _deals_df(values: np.ndarray) -> float:
    """The degrees of freedom of a t interval over ``values`` (one per deal): ``n - 1``, or
    fewer where the spread rests on fewer than :data:`MANY_DEALS` deals in effect
    (:func:`spread_deals`)."""
    deals = spread_deals(values)
    return values.size - 1.0 if deals >= MANY_DEALS else deals - 1.0


def clustered_mean(values: np.ndarray, clusters: np.ndarray) -> tuple[float, np.ndarray]:
    """The mean of ``values`` and the per-cluster means (clusters in sorted order).

    The overall mean weights every observation equally; the per-cluster means feed the
    clustered standard error (every cluster holds the same number of observations in the
    arena, so the two weightings agree there).
    """
    values = np.asarray(values, dtype=np.float64)
    clusters = np.asarray(clusters)
    if values.size == 0:
        return (math.nan, np.empty(0))
    keys, inverse = np.unique(clusters, return_inverse=True)
    sums = np.bincount(inverse, weights=values, minlength=keys.size)
    counts = np.bincount(inverse, minlength=keys.size)
    return (float(values.mean()), sums / counts)


def win_rate_interval(
    credits: np.ndarray, clusters: np.ndarray, confidence: float = 0.95
) -> tuple[float, tuple[float, float], float]:
    """Win rate, its Wilson interval with the deal-clustered effective sample size, and that size.

    :param credits: win credit per seat an agent held in [0, 1] (1/k for a k-way tie for the
        top).
    :param clusters: the deal of each entry.
    :returns: ``(rate, (low, high), effective_n)``. Where the deals give no spread to measure
        (a rate of 0 or 1, one deal, every deal alike), each deal counts as one trial, as
        :func:`~rummyzoo.agents.arena.ratings.dominance_bound` counts it: the games of one deal
        share its cards, so counting them as independent would claim more than they show (a
        perfect record over 300 deals of 12 seatings each is not 3,600 independent wins). A
        spread measured from fewer than :data:`MANY_DEALS` deals is trusted less
        (:func:`few_deals_factor`), and so is one that rests on a few deals that differ from
        the rest (:func:`spread_deals`).
    """
    credits = np.asarray(credits, dtype=np.float64)
    if credits.size == 0:
        return (math.nan, (0.0, 1.0), 0.0)
    rate, per_cluster = clustered_mean(credits, clusters)
    spread = rate * (1.0 - rate)
    d = per_cluster.size
    n_eff = float(d)
    if d >= 2 and spread > 1e-12:
        se2 = float(per_cluster.var(ddof=1)) / d
        # deals whose rates differ by rounding alone (the same credits summed in another
        # order) have no spread either
        if se2 > 1e-12 * spread:
            n_eff = spread / se2 * few_deals_factor(spread_deals(per_cluster), confidence)
    return (rate, wilson_interval(rate * n_eff, n_eff, confidence), n_eff)


#: From this many deals on, a spread between deals is taken as known (see few_deals_factor).
MANY_DEALS = 50


def few_deals_factor(deals: float, confidence: float = 0.95) -> float:
    """What an effective sample size measured from the spread between ``deals`` deals is
    scaled by: below :data:`MANY_DEALS`, ``(t(MANY_DEALS - 1) / t(deals - 1)) ** 2`` (Student's
    t quantiles at the interval's level), so that a spread measured from few deals widens the
    interval as a t interval over deals would (2 deals whose rates happen to agree no longer
    make an interval of a few games look like one of hundreds); 1 from ``MANY_DEALS`` deals
    on, where the normal quantile the Wilson interval uses is within 2.5% of the t's."""
    if deals >= MANY_DEALS:
        return 1.0
    q = 0.5 + confidence / 2.0
    return (student_t_quantile(q, MANY_DEALS - 1) / student_t_quantile(q, deals - 1)) ** 2


def _alike(values: np.ndarray, scale: float) -> bool:
    """``values`` all the same but for rounding (relative to ``scale``, the size of what they
    were computed from): the same sums taken in another order differ in their last bits."""
    return float(np.ptp(values)) <= 1e-9 * float(scale)


def clustered_ratio_interval(
    totals: np.ndarray,
    counts: np.ndarray,
    clusters: np.ndarray,
    games: np.ndarray | None = None,
    confidence: float = 0.95,
) -> tuple[float, tuple[float, float]]:
    """``sum(totals) / sum(counts)`` (points per hand over every hand played) and its Student t
    interval over clusters (deals), by the ratio estimator's linearisation: per deal ``d``,
    ``z_d = (T_d - R C_d) / mean(C)`` with ``T_d``, ``C_d`` the deal's sums, and ``R ± t sd(z) /
    sqrt(D)``. With one count per entry and as many entries in every deal (single hands) that is
    the mean and the t interval over per-deal means. Where every ``z_d`` is the same (two or
    more of them), the t interval over the games' own ratios (``games``: entries of one game are
    pooled first; None: each its own).
    """
    totals = np.asarray(totals, dtype=np.float64)
    counts = np.maximum(np.asarray(counts, dtype=np.float64), 1.0)
    if totals.size == 0:
        return (math.nan, (math.nan, math.nan))
    ratio = float(totals.sum() / counts.sum())
    keys, inverse = np.unique(np.asarray(clusters), return_inverse=True)
    deal_totals = np.bincount(inverse, weights=totals, minlength=keys.size)
    deal_counts = np.bincount(inverse, weights=counts, minlength=keys.size)
    z = (deal_totals - ratio * deal_counts) / deal_counts.mean()
    if z.size >= 2 and _alike(z, np.abs(deal_totals).max() / deal_counts.mean()):
        if games is None:
            per_game = totals / counts
        else:
            _, by_game = np.unique(np.asarray(games), return_inverse=True)
            per_game = np.bincount(by_game, weights=totals) / np.bincount(by_game, weights=counts)
        return (ratio, t_interval(per_game, confidence))
    low, high = t_interval(z - float(z.mean()), confidence, _deals_df(z))
    return (ratio, (ratio + low, ratio + high))


def clustered_t_interval(
    values: np.ndarray, clusters: np.ndarray, confidence: float = 0.95
) -> tuple[float, tuple[float, float]]:
    """The mean of ``values`` and its Student t interval over the per-cluster means; where
    those are all the same (two or more of them), the t interval over the values themselves."""
    mean, per_cluster = clustered_mean(values, clusters)
    if per_cluster.size >= 2 and _alike(per_cluster, np.abs(per_cluster).max()):
        return (mean, t_interval(values, confidence))
    return (mean, t_interval(per_cluster, confidence, _deals_df(per_cluster)))
