"""Bradley-Terry ratings on the Elo scale, fitted by maximum likelihood from pairwise results.

Model: agent ``i`` beats agent ``j`` with probability ``1 / (1 + 10 ** ((r_j - r_i) / 400))``, so
a 75% head-to-head score is a gap of ``400 * log10(3) = 190.85`` Elo points. Every pair of
agents sitting in the same game is one comparison (higher episode points beat lower ones, a tie
counts half to each), and all comparisons of all games enter one likelihood, fitted by Newton's
method with backtracking (the log-likelihood is concave).

Ratings are only defined up to a common shift: they are anchored either at their mean (0 on
average) or at one agent (that agent is 0, e.g. ``random``).

The maximum-likelihood estimate is finite only when no group of agents wins (or loses) every
comparison against the rest (Zermelo's condition: the "scored against" graph is strongly
connected). When that fails, e.g. an agent that never lost, one virtual draw is added to every
compared pair (a weak prior pulling ratings together) and the fit says ``regularised=True``.
The gaps the data leave open (one side never beat the other, directly or through others) then
rest on that prior alone, however many games were played: their intervals, and those of the
ratings across them from the anchor, are NaN (no finite interval), not a 95% interval. Where
the two sides of such a gap met directly, the bootstrap gives the gap a one-sided interval
instead (:func:`dominance_bound`): from the head-to-head record alone, each deal in which the
two met counted as one trial that the stronger side won.

Uncertainty: the observed Fisher information treats every comparison as independent, which
overstates the information (the comparisons inside a multiplayer game, and the games of one
duplicate deal, are correlated). The arena therefore reports a bootstrap over deals (resampling
whole deals with replacement and refitting), and no interval at all where there are too few
deals (under 10) to resample: the Fisher errors would claim far more than such a run shows (with
outcomes that go together within a deal, intervals from 9 deals covered the true ratings far
less often than 95% of the time in simulations). Below 50 deals the bootstrap's intervals are
widened about the fitted ratings, relative to 50 deals (:func:`few_deals_widening`): without
it, intervals from 10 deals of a 4-player round robin held the true ratings 91% of the time.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

__all__ = [
    "ELO_PER_NATURAL",
    "Ratings",
    "bootstrap_ratings",
    "dominance_bound",
    "expected_score",
    "fit_bradley_terry",
]

#: Elo points per unit of natural-log strength (400 / ln 10).
ELO_PER_NATURAL = 400.0 / math.log(10.0)


def expected_score(rating_gap: float) -> float:
    """Expected score of the higher-rated side for an Elo ``rating_gap``."""
    return 1.0 / (1.0 + 10.0 ** (-rating_gap / 400.0))


@dataclass
class Ratings:
    """Fitted ratings (Elo scale) of ``K`` agents.

    :param elo: point estimates, shape ``(K,)``.
    :param se: standard errors, shape ``(K,)`` (0 for an anchor agent).
    :param ci: 95% intervals, shape ``(K, 2)`` (NaN where the data set none; one end
        infinite for a one-sided interval, see the module docstring).
    :param method: ``"bootstrap"`` (over deals), ``"fisher"`` (observed information) or
        ``"none"`` (too few deals for an interval: ``se`` and ``ci`` are NaN).
    :param anchor: ``None`` for mean-anchored ratings, else the index of the agent held at 0.
    :param regularised: whether the virtual draws were needed for a finite fit.
    :param gap_ci: bootstrap only: ``(K, K, 2)``, the 95% interval of ``elo[i] - elo[j]``.
        Two agents' own intervals share the anchor's uncertainty, so they can overlap while the
        gap between the two is sure; this is the interval that says whether ``i`` is above
        ``j``.
    """

    elo: np.ndarray
    se: np.ndarray
    ci: np.ndarray
    method: str
    anchor: int | None
    regularised: bool
    gap_ci: np.ndarray | None = None


def _check_inputs(wins: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    wins = np.asarray(wins, dtype=np.float64)
    counts = np.asarray(counts, dtype=np.float64)
    if wins.ndim < 2 or wins.shape[-1] != wins.shape[-2] or wins.shape != counts.shape:
        raise ValueError(
            f"wins and counts must be matching square matrices, got {wins.shape} and {counts.shape}"
        )
    if np.any(wins < -1e-9) or np.any(wins > counts + 1e-9):
        raise ValueError("need 0 <= wins[i, j] <= counts[i, j]")
    if not np.allclose(wins + np.swapaxes(wins, -1, -2), counts):
        raise ValueError("wins[i, j] + wins[j, i] must equal counts[i, j] (ties count half each)")
    return wins, counts


def _reachable(adjacency: np.ndarray) -> np.ndarray:
    """Transitive closure (with self loops) of boolean adjacency matrices ``(..., K, K)``."""
    k = adjacency.shape[-1]
    reach = adjacency | np.eye(k, dtype=bool)
    for _ in range(max(1, math.ceil(math.log2(max(k, 2))))):
        reach = np.matmul(reach.astype(np.int64), reach.astype(np.int64)) > 0
    return reach


def _connected(counts: np.ndarray) -> bool:
    return bool(_reachable(counts > 0).all())


def _needs_prior(wins: np.ndarray) -> np.ndarray:
    """Per matrix of ``(..., K, K)``: Zermelo's condition fails (the MLE is not finite)."""
    return ~_reachable(wins > 0).all(axis=(-1, -2))


def _log_likelihood(theta: np.ndarray, wins: np.ndarray) -> np.ndarray:
    diff = theta[:, :, None] - theta[:, None, :]
    return -(wins * np.logaddexp(0.0, -diff)).sum(axis=(1, 2))


def _fit_natural(wins: np.ndarray, counts: np.ndarray, tol: float = 1e-10) -> np.ndarray:
    """Maximum-likelihood log-strengths of a batch ``(B, K, K)``, agent 0 held at 0."""
    batch, k, _ = wins.shape
    theta = np.zeros((batch, k))
    free = np.arange(1, k)
    loglik = _log_likelihood(theta, wins)
    for _ in range(200):
        diff = theta[:, :, None] - theta[:, None, :]
        prob = 1.0 / (1.0 + np.exp(-diff))
        grad = (wins - counts * prob).sum(axis=2)
        weight = counts * prob * (1.0 - prob)
        laplacian = -weight
        idx = np.arange(k)
        laplacian[:, idx, idx] = weight.sum(axis=2)
        reduced = laplacian[:, free][:, :, free]
        step = np.zeros_like(theta)
        step[:, free] = np.linalg.solve(reduced, grad[:, free, None])[..., 0]
        size = np.abs(step).max(axis=1)
        if size.max() < tol:
            break
        scale = np.ones(batch)
        for _halving in range(40):  # backtracking: never lower the likelihood
            trial = theta + scale[:, None] * step
            trial_loglik = _log_likelihood(trial, wins)
            worse = trial_loglik < loglik - 1e-12 * np.abs(loglik)
            if not worse.any():
                break
            scale = np.where(worse, scale * 0.5, scale)
        theta = trial
        loglik = trial_loglik
    return theta


def _anchor(theta: np.ndarray, anchor: int | None) -> np.ndarray:
    if anchor is None:
        return theta - theta.mean(axis=-1, keepdims=True)
    return theta - theta[..., anchor : anchor + 1]


def unidentified_gaps(wins: np.ndarray) -> np.ndarray:
    """``(K, K)``: whether the data leave the gap ``elo[i] - elo[j]`` without a finite estimate,
    i.e. one of the two never beat the other, not even through others (each beat somebody who
    beat ... the other): the likelihood then grows without end as the gap does, and only a
    prior (the virtual draws) makes it finite."""
    reach = _reachable(np.asarray(wins) > 0)
    return ~(reach & reach.T)


def _open_unidentified(
    se: np.ndarray,
    ci: np.ndarray,
    gap_ci: np.ndarray | None,
    wins: np.ndarray,
    anchor: int | None,
) -> None:
    """Set to NaN (no finite interval) the intervals of gaps the data do not identify, and the
    errors and intervals of ratings across such a gap from the anchor (every rating, for the
    mean anchor)."""
    open_gap = unidentified_gaps(wins)
    if not open_gap.any():
        return
    if gap_ci is not None:
        gap_ci[open_gap] = np.nan
    rows = np.ones(len(ci), dtype=bool) if anchor is None else open_gap[:, anchor]
    ci[rows] = np.nan
    se[rows] = np.nan


def dominance_bound(deals: int, confidence: float = 0.95) -> float:
    """The lower end of the gap's interval (Elo) when one side won every one of ``deals``
    independent trials against the other: the win probability's one-sided Clopper-Pearson
    bound at ``(1 - confidence) / 2``, ``p = tail ** (1 / deals)``, as a gap
    ``400 log10(p / (1 - p))``. A deal is one trial however many comparisons it held (a
    deal's games are alike), which makes the bound cautious."""
    if deals < 1:
        raise ValueError(f"need at least one deal, got {deals}")
    tail = (1.0 - confidence) / 2.0
    p = tail ** (1.0 / deals)
    return 400.0 * math.log10(p / (1.0 - p))


def _bound_dominated(
    ci: np.ndarray,
    gap_ci: np.ndarray,
    deal_wins: np.ndarray,
    deal_counts: np.ndarray,
    anchor: int | None,
    confidence: float,
) -> None:
    """Give each gap the data leave open, where its two sides met directly, the one-sided
    interval of :func:`dominance_bound` over the deals they met in (and so the rating across
    it from the anchor, when the anchor is one of the two)."""
    wins = deal_wins.sum(axis=0)
    open_gap = unidentified_gaps(wins)
    met = (deal_counts > 0).sum(axis=0)
    for i, j in zip(*np.nonzero(open_gap & (met > 0) & (wins > 0)), strict=True):
        # i scored against j, so j never did (the gap is open): i won every deal they met in
        low = dominance_bound(int(met[i, j]), confidence)
        gap_ci[i, j] = (low, np.inf)
        gap_ci[j, i] = (-np.inf, -low)
        if anchor is not None and j == anchor:
            ci[i] = (low, np.inf)
        elif anchor is not None and i == anchor:
            ci[j] = (-np.inf, -low)


def _regularise(wins: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Add one virtual draw per compared pair where Zermelo's condition fails."""
    needs = _needs_prior(wins)
    if needs.any():
        compared = (counts > 0).astype(np.float64)
        wins = wins + 0.5 * compared * needs[:, None, None]
        counts = counts + compared * needs[:, None, None]
    return wins, counts, needs


def fit_bradley_terry(wins: np.ndarray, counts: np.ndarray, anchor: int | None = None) -> Ratings:
    """Fit Bradley-Terry ratings with observed-Fisher standard errors.

    :param wins: ``wins[i, j]``: credit of agent ``i`` against ``j`` (1 a win, 0.5 a tie).
    :param counts: ``counts[i, j]``: comparisons between ``i`` and ``j`` (symmetric).
    :param anchor: ``None`` to centre the ratings at 0, or the index of the agent held at 0.
    :raises ValueError: for malformed matrices, or agents that were never compared (directly
        or through others) so that no common scale exists.
    """
    wins, counts = _check_inputs(wins, counts)
    k = wins.shape[0]
    if k < 2:
        raise ValueError(f"ratings need at least 2 agents, got {k}")
    if anchor is not None and not 0 <= anchor < k:
        raise ValueError(f"anchor must be an agent index 0..{k - 1} or None, got {anchor!r}")
    if not _connected(counts):
        raise ValueError("some agents were never compared with the others; ratings undefined")
    fit_wins, fit_counts, needs = _regularise(wins[None], counts[None])
    theta = _anchor(_fit_natural(fit_wins, fit_counts)[0], anchor)
    cov = _fisher_covariance(theta, fit_counts[0], anchor)
    se = np.sqrt(np.clip(np.diag(cov), 0.0, None)) * ELO_PER_NATURAL
    elo = theta * ELO_PER_NATURAL
    z = 1.959963984540054
    ci = np.stack([elo - z * se, elo + z * se], axis=1)
    if needs[0]:
        _open_unidentified(se, ci, None, wins, anchor)
    return Ratings(elo, se, ci, "fisher", anchor, bool(needs[0]))


def _fisher_covariance(theta: np.ndarray, counts: np.ndarray, anchor: int | None) -> np.ndarray:
    """Covariance of the anchored log-strengths from the observed information."""
    k = theta.size
    diff = theta[:, None] - theta[None, :]
    prob = 1.0 / (1.0 + np.exp(-diff))
    weight = counts * prob * (1.0 - prob)
    info = np.diag(weight.sum(axis=1)) - weight
    ref = 0 if anchor is None else anchor
    keep = [i for i in range(k) if i != ref]
    cov = np.zeros((k, k))
    cov[np.ix_(keep, keep)] = np.linalg.inv(info[np.ix_(keep, keep)])
    if anchor is None:  # the covariance of theta - mean(theta)
        centre = np.eye(k) - 1.0 / k
        cov = centre @ cov @ centre.T
    return cov


#: Fewer deals than this give ratings without intervals (see the module docstring).
MIN_DEALS = 10


def _widened(ci: np.ndarray, fitted: np.ndarray, widen: float) -> np.ndarray:
    """Intervals ``ci`` (last axis: low, high) widened ``widen`` times about ``fitted``; an end
    on the fitted value's wrong side (a percentile interval need not hold it) stays put."""
    centre = fitted[..., None]
    out = centre + widen * (ci - centre)
    out[..., 0] = np.minimum(out[..., 0], ci[..., 0])
    out[..., 1] = np.maximum(out[..., 1], ci[..., 1])
    return out


def few_deals_widening(deals: int, confidence: float = 0.95) -> float:
    """What a bootstrap interval over ``deals`` deals is widened by about its estimate: below
    :data:`~rummyzoo.agents.arena.stats.MANY_DEALS` deals, relative to 50 deals, ``g(D) /
    g(MANY_DEALS)`` with ``g(D) = sqrt(D / (D - 1)) * t(D - 1)`` (a bootstrap over D deals
    spreads too little by ``sqrt((D - 1) / D)``, and Student's t quantile replaces the
    normal's): 1.17 at 10 deals, smoothly down to 1 at 50, and 1 from there on (where the two
    factors make about 3.6% of the width, which the runs' coverage does not show)."""
    from rummyzoo.agents.arena.stats import MANY_DEALS, student_t_quantile

    if deals < 2:
        raise ValueError(f"a bootstrap over deals needs at least 2 of them, got {deals}")
    if deals >= MANY_DEALS:
        return 1.0
    q = 0.5 + confidence / 2.0

    def g(d: int) -> float:
        return math.sqrt(d / (d - 1)) * student_t_quantile(q, d - 1)

    return g(deals) / g(MANY_DEALS)


def _without_intervals(point: Ratings) -> Ratings:
    """``point``'s ratings with no error or interval (method ``"none"``)."""
    return Ratings(
        point.elo,
        np.full_like(point.se, np.nan),
        np.full_like(point.ci, np.nan),
        "none",
        point.anchor,
        point.regularised,
    )


def bootstrap_ratings(
    deal_wins: np.ndarray,
    deal_counts: np.ndarray,
    anchor: int | None = None,
    resamples: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
    min_deals: int = MIN_DEALS,
) -> Ratings:
    """Bradley-Terry ratings with a bootstrap over deals.

    The point estimate is the fit on all deals; the standard error is the spread of the fits on
    ``resamples`` resamples of whole deals (drawn with replacement) and the interval their
    percentile interval. With fewer than ``min_deals`` deals (too few to resample usefully), or
    fewer than 2 resamples, there is no interval (method ``"none"``, NaN errors and intervals).

    :param deal_wins: ``(D, K, K)`` pairwise credit per deal.
    :param deal_counts: ``(D, K, K)`` pairwise comparisons per deal.
    """
    deal_wins, deal_counts = _check_inputs(deal_wins, deal_counts)
    if deal_wins.ndim != 3:
        raise ValueError(f"per-deal matrices must have shape (D, K, K), got {deal_wins.shape}")
    point = fit_bradley_terry(deal_wins.sum(axis=0), deal_counts.sum(axis=0), anchor)
    num_deals, k, _ = deal_wins.shape
    if num_deals < max(2, min_deals) or resamples < 2:
        return _without_intervals(point)
    rng = np.random.default_rng(seed)
    flat_wins = deal_wins.reshape(num_deals, k * k)
    flat_counts = deal_counts.reshape(num_deals, k * k)
    samples = []
    batch = max(1, min(resamples, 2_000_000 // max(num_deals, 1)))
    done = 0
    while done < resamples:
        size = min(batch, resamples - done)
        picks = rng.multinomial(num_deals, np.full(num_deals, 1.0 / num_deals), size=size)
        wins = (picks @ flat_wins).reshape(size, k, k)
        counts = (picks @ flat_counts).reshape(size, k, k)
        # A resample can miss every comparison of some pair; keep only connected ones.
        ok = _reachable(counts > 0).all(axis=(1, 2))
        wins, counts = wins[ok], counts[ok]
        if len(wins):
            wins, counts, _needs = _regularise(wins, counts)
            samples.append(_anchor(_fit_natural(wins, counts), anchor) * ELO_PER_NATURAL)
        done += size
    if not samples:
        return _without_intervals(point)
    draws = np.concatenate(samples)
    tail = (1.0 - confidence) / 2.0
    low, high = np.quantile(draws, [tail, 1.0 - tail], axis=0)
    se = draws.std(axis=0, ddof=1)
    ci = np.stack([low, high], axis=1)
    gaps = draws[:, :, None] - draws[:, None, :]
    gap_low, gap_high = np.quantile(gaps, [tail, 1.0 - tail], axis=0)
    gap_ci = np.stack([gap_low, gap_high], axis=2)
    widen = few_deals_widening(num_deals, confidence)
    if widen != 1.0:  # about the fitted ratings and gaps (module docstring)
        ci = _widened(ci, point.elo, widen)
        gap_ci = _widened(gap_ci, point.elo[:, None] - point.elo[None, :], widen)
    if point.regularised:
        _open_unidentified(se, ci, gap_ci, deal_wins.sum(axis=0), anchor)
        _bound_dominated(ci, gap_ci, deal_wins, deal_counts, anchor, confidence)
    return Ratings(point.elo, se, ci, "bootstrap", anchor, point.regularised, gap_ci)
