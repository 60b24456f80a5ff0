"""The arena: statistics on constructed inputs, duplicate deals, reproducibility, bad input, CLI."""

from __future__ import annotations

import csv
import itertools
import json
import math
from collections import Counter

import numpy as np
import pytest

from rummyzoo.agents.arena import (
    ArenaWorkers,
    balanced_orders,
    format_report,
    make_arena_match,
    pairwise_by_deal,
    rating_gaps,
    run_arena,
    seatings,
    summarize,
    unique_labels,
    win_credits,
    write_heatmap,
)
from rummyzoo.agents.arena.ratings import (
    bootstrap_ratings,
    dominance_bound,
    expected_score,
    few_deals_widening,
    fit_bradley_terry,
)
from rummyzoo.agents.arena.stats import (
    clustered_ratio_interval,
    clustered_t_interval,
    few_deals_factor,
    spread_deals,
    student_t_quantile,
    t_interval,
    wilson_interval,
    win_rate_interval,
)
from rummyzoo.agents.base import BasePolicy
from rummyzoo.agents.random_agent import RandomPolicy
from rummyzoo.cli import main as cli
from rummyzoo.cli.common import parse_options
from rummyzoo.envs.core import ConfigError, IllegalActionError
from rummyzoo.envs.play import Deal, play_episode
from rummyzoo.envs.registry import VARIANTS


def matrix_from_elo(elo: list[float], comparisons: float) -> tuple[np.ndarray, np.ndarray]:
    """Expected pairwise credits of agents with the given Elo ratings."""
    elo_arr = np.asarray(elo, dtype=np.float64)
    gap = elo_arr[:, None] - elo_arr[None, :]
    wins = comparisons / (1.0 + 10.0 ** (-gap / 400.0))
    np.fill_diagonal(wins, 0.0)
    return wins, wins + wins.T


# ------------------------------------------------------------------ ratings
def test_75_percent_is_190_8_elo() -> None:
    wins = np.array([[0.0, 75.0], [25.0, 0.0]])
    ratings = fit_bradley_terry(wins, wins + wins.T)
    assert ratings.elo[0] - ratings.elo[1] == pytest.approx(400 * math.log10(3), abs=1e-6)
    assert ratings.elo.sum() == pytest.approx(0.0, abs=1e-9)  # mean anchored
    assert not ratings.regularised
    anchored = fit_bradley_terry(wins, wins + wins.T, anchor=1)
    assert anchored.elo == pytest.approx([190.848501887, 0.0])
    assert anchored.se[1] == 0.0 and anchored.se[0] > 0


def test_known_win_matrix_gives_known_ratings() -> None:
    wins, counts = matrix_from_elo([0.0, 100.0, 300.0], comparisons=1000)
    ratings = fit_bradley_terry(wins, counts, anchor=0)
    assert ratings.elo == pytest.approx([0.0, 100.0, 300.0], abs=1e-6)
    centred = fit_bradley_terry(wins, counts)
    assert centred.elo == pytest.approx(np.array([0.0, 100.0, 300.0]) - 400 / 3, abs=1e-6)
    # More comparisons, smaller standard errors (Fisher: 1 / sqrt(n)).
    more = fit_bradley_terry(*matrix_from_elo([0.0, 100.0, 300.0], comparisons=4000), anchor=0)
    assert more.se[1:] == pytest.approx(ratings.se[1:] / 2, rel=1e-6)


def test_unbeaten_agent_gets_a_finite_regularised_rating() -> None:
    wins = np.array([[0.0, 10.0, 10.0], [0.0, 0.0, 5.0], [0.0, 5.0, 0.0]])
    ratings = fit_bradley_terry(wins, wins + wins.T)
    assert ratings.regularised
    assert np.all(np.isfinite(ratings.elo))
    assert ratings.elo[0] > ratings.elo[1] == pytest.approx(ratings.elo[2])


def test_gaps_only_the_virtual_draw_sets_have_no_interval() -> None:
    """Agent 0 never wins: its gaps to the others rest on the prior alone, however many deals,
    so they (and the others' ratings anchored at it) get no two-sided interval, only the
    one-sided one of the head-to-head record over the 40 deals they met in; the gap between
    the two agents that beat each other keeps its bootstrap interval."""
    rng = np.random.default_rng(0)
    deals = 40
    wins = np.zeros((deals, 3, 3))
    counts = np.zeros((deals, 3, 3))
    for d in range(deals):
        counts[d] = 4.0 - 4.0 * np.eye(3)
        wins[d, 1, 0] = wins[d, 2, 0] = 4.0
        wins[d, 2, 1] = rng.integers(1, 4)
        wins[d, 1, 2] = 4.0 - wins[d, 2, 1]
    ratings = bootstrap_ratings(wins, counts, anchor=0, resamples=200)
    assert ratings.regularised
    bound = dominance_bound(40)
    assert bound == pytest.approx(400 * math.log10(0.025 ** (1 / 40) / (1 - 0.025 ** (1 / 40))))
    assert np.isnan(ratings.se[1:]).all()
    for i in (1, 2):
        assert list(ratings.ci[i]) == [bound, np.inf]
        assert list(ratings.gap_ci[i, 0]) == [bound, np.inf]
        assert list(ratings.gap_ci[0, i]) == [-np.inf, -bound]
    low, high = ratings.gap_ci[2, 1]
    assert low < ratings.elo[2] - ratings.elo[1] < high
    fisher = fit_bradley_terry(wins.sum(axis=0), counts.sum(axis=0), anchor=0)
    assert np.isnan(fisher.ci[1:]).all() and not np.isnan(fisher.ci[0]).any()


def test_an_open_gap_between_agents_that_never_met_has_no_interval() -> None:
    """0 beats 1 and 1 beats 2 every time, 0 and 2 never meet: the gaps 0-1 and 1-2 get the
    head-to-head bound, 0-2 (never met) none."""
    deals = 30
    wins = np.zeros((deals, 3, 3))
    counts = np.zeros((deals, 3, 3))
    counts[:, 0, 1] = counts[:, 1, 0] = counts[:, 1, 2] = counts[:, 2, 1] = 2.0
    wins[:, 0, 1] = wins[:, 1, 2] = 2.0
    counts[::2, 0, 1] = counts[::2, 1, 0] = wins[::2, 0, 1] = 0.0  # 0 and 1 meet in 15 deals
    ratings = bootstrap_ratings(wins, counts, anchor=1, resamples=100)
    assert list(ratings.gap_ci[0, 1]) == [dominance_bound(15), np.inf]
    assert list(ratings.gap_ci[1, 2]) == [dominance_bound(30), np.inf]
    assert np.isnan(ratings.gap_ci[0, 2]).all() and np.isnan(ratings.gap_ci[2, 0]).all()
    assert list(ratings.ci[0]) == [dominance_bound(15), np.inf]
    assert list(ratings.ci[2]) == [-np.inf, -dominance_bound(30)]


def test_a_dominated_gap_shows_its_one_sided_interval() -> None:
    """Random play never wins a Knock match to 100 against the heuristics in these 12 deals:
    the report gives those gaps, and the heuristics' ratings anchored at random, the
    head-to-head bound, open above; the gap between the heuristics keeps its interval."""
    result = run_arena(
        "knock_rummy", 2, ["random", "knock.greedy", "knock.smart"], deals=12, seed=3,
        options={"target_score": 100}, workers=1,
    )  # fmt: skip
    report = summarize(result, resamples=100)
    assert report["agents"]["random"]["win_rate"] == 0.0
    bound = dominance_bound(12)
    gaps = {(g["agent"], g["over"]): g for g in report["ratings"]["gaps"]}
    text = format_report(report)
    for name in ("knock.greedy", "knock.smart"):
        assert gaps[name, "random"]["gap_ci"] == [pytest.approx(bound), None]
        assert report["agents"][name]["rating_ci"] == [pytest.approx(bound), None]
        shown = f"{name} over random: +{round(gaps[name, 'random']['gap'])} [+{round(bound)}, inf)"
        assert shown in text
    low, high = gaps["knock.smart", "knock.greedy"]["gap_ci"]
    assert low is not None and high is not None
    assert "a one-sided one from their head-to-head record" in text


@pytest.mark.parametrize("deals", [1, 5, 40, 500])
def test_the_dominance_bound_covers_the_true_gap(deals) -> None:
    """Whatever the stronger side's true chance p in a deal, the bound (given only when it won
    all ``deals``) lies above the true gap with probability at most 2.5%: p ** deals where the
    bound exceeds the gap, else 0. Checked on a fine grid of p, and the bound is where it
    stops holding (just below, the chance of a bound above the gap reaches 2.5%)."""
    bound = dominance_bound(deals)
    for p in np.linspace(0.5, 0.99999, 20_001):
        gap = 400 * math.log10(p / (1 - p))
        miss = p**deals if bound > gap else 0.0
        assert miss <= 0.025 + 1e-12, (deals, p)
    p_at = 1 / (1 + 10 ** (-bound / 400))
    assert p_at**deals == pytest.approx(0.025)
    with pytest.raises(ValueError, match="at least one deal"):
        dominance_bound(0)


def test_ratings_reject_bad_matrices() -> None:
    with pytest.raises(ValueError, match="never compared"):
        fit_bradley_terry(np.zeros((3, 3)), np.zeros((3, 3)))
    with pytest.raises(ValueError, match="must equal"):
        fit_bradley_terry(np.array([[0.0, 1.0], [0.0, 0.0]]), np.array([[0.0, 2.0], [2.0, 0.0]]))


def _simulated_deals(
    elo: list[float], deals: int, per_pair: int, seed: int
) -> tuple[np.ndarray, np.ndarray]:
    """``(deal_wins, deal_counts)`` of agents with these true ratings: ``per_pair``
    comparisons of every pair in each deal, each won as the Elo model says."""
    rng = np.random.default_rng(seed)
    k = len(elo)
    deal_wins = np.zeros((deals, k, k))
    deal_counts = np.zeros((deals, k, k))
    for d in range(deals):
        for i in range(k):
            for j in range(i + 1, k):
                for _ in range(per_pair):
                    won = float(rng.random() < expected_score(elo[i] - elo[j]))
                    deal_wins[d, i, j] += won
                    deal_wins[d, j, i] += 1.0 - won
                    deal_counts[d, i, j] += 1.0
                    deal_counts[d, j, i] += 1.0
    return deal_wins, deal_counts


def test_bootstrap_over_deals_recovers_ratings() -> None:
    elo = [0.0, 50.0, 150.0]
    deal_wins, deal_counts = _simulated_deals(elo, deals=400, per_pair=1, seed=3)
    ratings = bootstrap_ratings(deal_wins, deal_counts, anchor=0, resamples=300, seed=1)
    assert ratings.method == "bootstrap"
    for i in (1, 2):
        low, high = ratings.ci[i]
        assert low < elo[i] < high
        # Independent comparisons: the bootstrap agrees with the Fisher errors.
    fisher = fit_bradley_terry(deal_wins.sum(0), deal_counts.sum(0), anchor=0)
    assert ratings.se[1:] == pytest.approx(fisher.se[1:], rel=0.2)
    again = bootstrap_ratings(deal_wins, deal_counts, anchor=0, resamples=300, seed=1)
    assert np.array_equal(again.ci, ratings.ci)


def test_bootstrap_intervals_from_few_deals_are_widened(monkeypatch) -> None:
    """A bootstrap over D deals spreads too little by sqrt((D - 1) / D) and takes the normal's
    percentiles: 4-player round robins of 10 deals covered the true ratings 91% of the time.
    Below 50 deals each interval (and each gap's) is widened about the fitted value by
    few_deals_widening, smoothly down to none from 50 deals on."""
    from rummyzoo.agents.arena import ratings as ratings_module

    widths = [few_deals_widening(d) for d in range(10, 51)]
    assert widths == sorted(widths, reverse=True) and widths[-1] == 1.0
    g = [math.sqrt(d / (d - 1)) * student_t_quantile(0.975, d - 1) for d in (10, 50)]
    assert few_deals_widening(10) == pytest.approx(g[0] / g[1]) and few_deals_widening(10) > 1.15
    assert few_deals_widening(500) == 1.0
    deal_wins, deal_counts = _simulated_deals([0.0, 50.0, 150.0], deals=12, per_pair=3, seed=4)
    wide = bootstrap_ratings(deal_wins, deal_counts, anchor=0, resamples=200, seed=1)
    monkeypatch.setattr(ratings_module, "few_deals_widening", lambda deals, confidence=0.95: 1.0)
    raw = bootstrap_ratings(deal_wins, deal_counts, anchor=0, resamples=200, seed=1)
    f = few_deals_widening(12)
    fitted = wide.elo[:, None]
    assert wide.ci == pytest.approx(ratings_module._widened(raw.ci, wide.elo, f))
    assert wide.ci[1:] == pytest.approx(fitted[1:] + f * (raw.ci[1:] - fitted[1:]))
    gaps = wide.elo[:, None] - wide.elo[None, :]
    assert wide.gap_ci == pytest.approx(ratings_module._widened(raw.gap_ci, gaps, f))
    assert (wide.ci[1:, 1] - wide.ci[1:, 0] > raw.ci[1:, 1] - raw.ci[1:, 0]).all()
    # a percentile interval that does not hold its estimate: the end past it stays put
    odd = ratings_module._widened(np.array([[631.4, 985.0]]), np.array([985.2]), 1.2)
    assert odd[0, 1] == 985.0 and odd[0, 0] == pytest.approx(985.2 + 1.2 * (631.4 - 985.2))
    with pytest.raises(ValueError, match="at least 2"):
        few_deals_widening(1)


def test_rating_gaps_are_sure_where_the_anchor_is_not() -> None:
    """An anchor that nearly always loses leaves every other rating unsure (each interval is
    wide), but the gap between two others is as sure as their head-to-head record: its own
    interval is narrow and excludes 0 while their two intervals overlap."""
    elo = [0.0, 1100.0, 1250.0]  # the anchor wins about 1 in 600 against agent 1
    deal_wins, deal_counts = _simulated_deals(elo, deals=500, per_pair=4, seed=5)
    ratings = bootstrap_ratings(deal_wins, deal_counts, anchor=0, resamples=400, seed=2)
    assert ratings.gap_ci is not None and ratings.gap_ci.shape == (3, 3, 2)
    assert ratings.ci[1, 1] > ratings.ci[2, 0]  # the agents' own intervals overlap
    low, high = ratings.gap_ci[2, 1]
    assert 0 < low < elo[2] - elo[1] < high  # the gap's does not
    assert high - low < (ratings.ci[1, 1] - ratings.ci[1, 0]) / 2
    assert np.allclose(ratings.gap_ci[1, 2], -ratings.gap_ci[2, 1][::-1])
    assert np.allclose(ratings.gap_ci[[0, 1, 2], [0, 1, 2]], 0.0)
    # the report names each pair once, the higher-rated agent first
    gaps = rating_gaps(ratings, ["random", "a", "b"])
    assert [(g["agent"], g["over"]) for g in gaps] == [("a", "random"), ("b", "random"), ("b", "a")]
    assert gaps[2]["gap_ci"] == pytest.approx(list(ratings.gap_ci[2, 1]))


# ------------------------------------------------------------------ intervals
def test_t_quantiles() -> None:
    assert student_t_quantile(0.975, 1) == pytest.approx(12.7062047, rel=1e-6)
    assert student_t_quantile(0.975, 10) == pytest.approx(2.2281389, rel=1e-6)
    assert student_t_quantile(0.995, 3) == pytest.approx(5.8409093, rel=1e-6)
    assert student_t_quantile(0.025, 30) == pytest.approx(-2.0422725, rel=1e-6)
    assert student_t_quantile(0.975, 1e9) == pytest.approx(1.959964, rel=1e-6)
    assert student_t_quantile(0.5, 7) == 0.0
    for q, df in ((0.0, 5), (1.0, 5), (0.975, 0), (0.975, -1)):
        with pytest.raises(ValueError, match=r"quantile level|degrees of freedom"):
            student_t_quantile(q, df)


def test_wilson_interval_known_values_and_shrinking() -> None:
    assert wilson_interval(50, 100) == pytest.approx((0.40383153, 0.59616847), abs=1e-7)
    low, high = wilson_interval(0, 10)
    assert low == 0.0 and high == pytest.approx(0.2775328, abs=1e-6)
    widths = [np.subtract(*wilson_interval(0.3 * n, n)[::-1]) for n in (10, 100, 1000, 10000)]
    assert all(a > b for a, b in itertools.pairwise(widths))
    assert widths[-1] < 0.02


def test_a_count_of_one_to_three_takes_the_poisson_bound() -> None:
    """One loss in 100 games: Wilson's upper bound on the win rate, 0.9982, sat below a true
    rate of 0.99847 (knock.greedy against random play in matches to 100), so every run with a
    loss missed it (84% coverage over 200 runs of 50 deals); a count of 1 to 3 on either side
    takes the Poisson bound of that count where it is further out. The bounds still rise with
    every win."""
    from scipy.special import gammaincinv

    z = 1.959963984540054

    def wilson(k: float, n: int) -> tuple[float, float]:  # the textbook interval
        p = k / n
        centre = (p + z * z / (2 * n)) / (1 + z * z / n)
        half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
        return centre - half, centre + half

    low, high = wilson_interval(99, 100)
    assert wilson(99, 100)[1] < 0.99847 < high == pytest.approx(1 - gammaincinv(1, 0.025) / 100)
    assert low == pytest.approx(wilson(99, 100)[0])  # the side of the 99 wins: Wilson's
    assert wilson_interval(1, 100) == pytest.approx((1 - high, 1 - low))  # the mirror image
    assert wilson_interval(97, 100)[1] == pytest.approx(1 - gammaincinv(3, 0.025) / 100)
    # from 4 on, Wilson's own (the Poisson bound is no longer further out)
    assert wilson_interval(96, 100) == pytest.approx(wilson(96, 100))
    bounds = [wilson_interval(k, 100) for k in range(85, 101)]
    assert [b[0] for b in bounds] == sorted(b[0] for b in bounds)
    assert [b[1] for b in bounds] == sorted(b[1] for b in bounds)
    # a fractional count (ties count half) too
    assert wilson_interval(99.5, 100)[1] == pytest.approx(1 - gammaincinv(0.5, 0.025) / 100)
    # the minority's side only: 2 wins of 2 are the majority, Wilson's bound stays
    assert wilson_interval(2, 2) == pytest.approx((wilson(2, 2)[0], 1.0))
    assert wilson_interval(1e-320, 100)[0] == 0.0  # a count too small for the Poisson bound


def test_t_interval_shrinks_with_n() -> None:
    rng = np.random.default_rng(0)
    widths = []
    for n in (10, 100, 1000, 10000):
        low, high = t_interval(rng.normal(5.0, 2.0, size=n))
        assert low < 5.0 < high or n == 10
        widths.append(high - low)
    assert all(a > b for a, b in itertools.pairwise(widths))
    # Roughly 2 * 1.96 * sigma / sqrt(n) for large n.
    assert widths[-1] == pytest.approx(2 * 1.96 * 2.0 / 100, rel=0.1)
    assert all(math.isnan(x) for x in t_interval(np.array([1.0])))


def test_clustered_win_rate_interval() -> None:
    rng = np.random.default_rng(1)
    credits = (rng.random(400) < 0.5).astype(float)
    # One game per deal: the ordinary Wilson interval over games.
    rate, ci, n_eff = win_rate_interval(credits, np.arange(400))
    assert n_eff == pytest.approx(400 * rate * (1 - rate) / credits.var(ddof=1))
    assert ci == pytest.approx(wilson_interval(credits.sum() * n_eff / 400, n_eff))
    # Games of one deal all alike: only as informative as the number of deals.
    alike = np.repeat(credits[:100], 4)
    _, ci_alike, n_alike = win_rate_interval(alike, np.repeat(np.arange(100), 4))
    assert n_alike == pytest.approx(100, rel=0.02)
    # Games of one deal that cancel (a win and a loss): far tighter than over games.
    cancel = np.tile([1.0, 0.0], 100)
    cancel[:10] = 1.0  # a few deals with two wins, so there is some spread
    _, ci_cancel, n_cancel = win_rate_interval(cancel, np.repeat(np.arange(100), 2))
    assert n_cancel > 200
    assert ci_cancel[1] - ci_cancel[0] < ci_alike[1] - ci_alike[0]
    # Always inside [0, 1], also for a perfect record.
    rate, (low, high), _ = win_rate_interval(np.ones(50), np.arange(50))
    assert rate == 1.0 and high == 1.0 and 0.9 < low < 1.0
    # Deals that all agree (three deals, each a win and a loss) say nothing of the spread:
    # each deal counts as one trial, never a zero-width interval.
    rate, ci, n_eff = win_rate_interval(np.tile([1.0, 0.0], 3), np.repeat(np.arange(3), 2))
    assert rate == 0.5 and n_eff == 3
    assert ci == pytest.approx(wilson_interval(1.5, 3)) and ci[1] - ci[0] > 0.6


def test_a_record_without_spread_counts_deals_not_games() -> None:
    """A perfect record over 300 deals of 12 seatings each made an interval of 3,600
    independent games, [0.99893, 1]: in simulations with a deal now and then lost whole, such
    intervals covered the true rate about half the time. One deal's games share its cards, so
    each deal is one trial, as the one-sided rating bounds count it; likewise a single deal."""
    deals = np.repeat(np.arange(300), 12)
    rate, (low, high), n_eff = win_rate_interval(np.ones(3600), deals)
    assert (rate, high, n_eff) == (1.0, 1.0, 300)
    assert low == pytest.approx(wilson_interval(300, 300)[0]) and low < 0.99
    rate, ci, n_eff = win_rate_interval(np.ones(12), np.zeros(12))
    assert n_eff == 1 and ci == pytest.approx(wilson_interval(1, 1)) and ci[0] < 0.25


def test_deals_alike_but_for_rounding_have_no_spread() -> None:
    """The same credits summed in another order differ in their last bits: 50 deals whose 12
    credits (thirds and fifths) give every deal the same rate made a spread of about 1e-33 and
    an interval of zero width."""
    one_deal = np.array([1 / 3, 1 / 3, 1 / 3, 0.2, 0.2, 0.2, 0.2, 0.2, 1.0, 0.0, 0.0, 0.0])
    rng = np.random.default_rng(0)
    credits = np.concatenate([rng.permutation(one_deal) for _ in range(50)])
    deals = np.repeat(np.arange(50), 12)
    _, (low, high), n_eff = win_rate_interval(credits, deals)
    assert n_eff == 50 and high - low > 0.2
    _, (low, high) = clustered_t_interval(credits, deals)
    assert high - low > 0.01  # the interval over the entries themselves
    _, (low, high) = clustered_ratio_interval(credits, np.ones(600), deals)
    assert high - low > 0.01


def test_a_spread_measured_from_few_deals_counts_for_less() -> None:
    """40 games in 2 deals whose rates happen to be close (0.50 and 0.55) made an effective
    size of 399 and an interval of [0.476, 0.574]; a spread from 2 deals says little, so the
    size is scaled as a t interval with 1 degree of freedom would scale it. From 50 deals on,
    nothing changes."""
    credits = np.array([1.0, 0.0] * 10 + [1.0, 0.0] * 9 + [1.0, 1.0])
    deals = np.repeat([0, 1], 20)
    rate, (low, high), n_eff = win_rate_interval(credits, deals)
    raw = rate * (1 - rate) / (np.array([0.5, 0.55]).var(ddof=1) / 2)
    assert raw == pytest.approx(399, abs=1)
    t49, t1 = student_t_quantile(0.975, 49), student_t_quantile(0.975, 1)
    assert n_eff == pytest.approx(raw * (t49 / t1) ** 2) and n_eff < 40
    assert high - low > 0.4
    assert few_deals_factor(50) == 1.0 == few_deals_factor(2000)
    assert few_deals_factor(49) == pytest.approx((t49 / student_t_quantile(0.975, 48)) ** 2)
    factors = [few_deals_factor(d) for d in range(2, 51)]
    assert factors == sorted(factors) and factors[0] < 0.03  # smooth up to 1 at 50 deals
    rng = np.random.default_rng(3)
    many = (rng.random(400) < 0.6).astype(float)
    _, _, n_many = win_rate_interval(many, np.repeat(np.arange(100), 4))
    per_deal = many.reshape(100, 4).mean(axis=1)
    assert n_many == pytest.approx(many.mean() * (1 - many.mean()) / (per_deal.var(ddof=1) / 100))


def test_a_spread_that_rests_on_a_few_deals_counts_for_less() -> None:
    """Two close agents: most deals mirrored (a win and a loss), a few won twice. The spread
    then rests on those few deals, and taking it as measured from all of them made 95%
    intervals that covered the true rate 85% of the time (3 of 100 deals, in expectation,
    won twice), and an interval that narrowed as a deal won twice was added. Now the spread
    counts as measured from about twice the deals that differ (Satterthwaite's degrees of
    freedom from the deals' kurtosis), so the intervals keep their level; where the deals
    differ as normal values do, nothing changes."""
    rng = np.random.default_rng(0)
    deals = np.repeat(np.arange(100), 2)
    for q in (0.03, 0.05):
        covered = 0
        for _ in range(1000):
            credits = np.tile([1.0, 0.0], 100)
            credits[1::2][rng.random(100) < q] = 1.0
            _, (low, high), _ = win_rate_interval(credits, deals)
            covered += low <= 0.5 + 0.5 * q <= high
        assert covered >= 940, (q, covered)
    # the same for points: every deal mirrored but 3, which gain 10 points
    covered = 0
    for _ in range(1000):
        points = np.tile([5.0, -5.0], 100)
        points[1::2][rng.random(100) < 0.03] += 10.0
        _, (low, high) = clustered_t_interval(points, deals)
        covered += low <= 0.3 * 0.5 <= high  # the true mean: 10 points in 3% of half the seats
        _, (low2, high2) = clustered_ratio_interval(points, np.ones(200), deals)
        assert (low2, high2) == pytest.approx((low, high))
    assert covered >= 940, covered
    assert spread_deals(np.array([0.0] * 97 + [1.0] * 3)) == pytest.approx(7.2, abs=0.5)
    normal = rng.normal(size=2000)
    assert spread_deals(normal) > 1500 and spread_deals(np.tile([0.0, 1.0], 50)) == 100
    # deals that differ as normal values do: the interval as before (t with n - 1 df)
    values = rng.normal(size=300)
    assert clustered_t_interval(values, np.arange(300))[1] == pytest.approx(t_interval(values))


def test_clustered_points_interval() -> None:
    values = np.array([10.0, -4.0, 3.0, 7.0, -1.0, 2.0])
    deals = np.repeat(np.arange(3), 2)
    mean, ci = clustered_t_interval(values, deals)
    assert mean == pytest.approx(values.mean())
    assert ci == pytest.approx(t_interval(np.array([3.0, 5.0, 0.5])))
    # per-deal means all the same: the interval over the games, not a zero-width one
    mirrored = np.array([5.0, -5.0, 8.0, -8.0, 1.0, -1.0])
    mean, ci = clustered_t_interval(mirrored, deals)
    assert mean == 0.0 and ci == pytest.approx(t_interval(mirrored)) and ci[1] - ci[0] > 5


# ------------------------------------------------------------------ outcomes
def test_points_per_hand_is_every_point_over_every_hand() -> None:
    """Ratio estimator: the matches' points over their hands (a short lopsided match weighs by
    its hands, not as much as a long one); its interval by deals; with one hand a game it is
    the mean and the t interval over per-deal means."""
    points = np.array([30.0, 10.0, 12.0, 40.0, 8.0, 20.0])
    hands = np.array([1, 4, 2, 6, 1, 3])
    deals = np.array([0, 0, 1, 1, 2, 2])
    ratio, (low, high) = clustered_ratio_interval(points, hands, deals)
    assert ratio == pytest.approx(120 / 17)  # not the mean of the games' ratios, 11.0
    z = np.array([40 - ratio * 5, 52 - ratio * 8, 28 - ratio * 4]) / (17 / 3)
    half = student_t_quantile(0.975, 2) * z.std(ddof=1) / math.sqrt(3)
    assert (low, high) == pytest.approx((ratio - half, ratio + half))
    single = np.array([3.0, -1.0, 4.0, 1.0, -5.0, 9.0])
    mean, ci = clustered_ratio_interval(single, np.ones(6), deals)
    mean0, ci0 = clustered_t_interval(single, deals)
    assert [mean, *ci] == pytest.approx([mean0, *ci0], abs=1e-12)


def test_the_report_counts_points_per_hand_over_all_hands_of_a_match() -> None:
    options = {"target_score": 100}
    result = run_arena(
        "knock_rummy", 2, ["knock.greedy", "random"], deals=20, seed=3, options=options
    )
    report = summarize(result)
    for i, entry in enumerate(report["agents"].values()):
        mask = result.seat_agents == i
        hands = np.broadcast_to(result.hands[:, None], mask.shape)[mask]
        assert entry["mean_points"] == pytest.approx(result.points[mask].sum() / hands.sum())


def test_a_team_that_always_wins_counts_each_deal_once() -> None:
    """Where the deals give no spread (every game won), the interval counts deals: a deal's
    games (its seatings, a team's two seats) share its cards."""
    options = {"teams": True, "target_score": None}
    result = run_arena(
        "ditch_rummy", 4, ["random", "ditch.greedy"], deals=5, seed=1, options=options
    )
    report = summarize(result)
    greedy = report["agents"]["ditch.greedy"]
    games = len(result.deal)
    assert greedy["games"] == 2 * games > 5 and greedy["win_rate"] == 1.0
    assert greedy["win_rate_ci"] == pytest.approx(list(wilson_interval(5, 5)))


def test_copies_of_one_agent_come_out_alike_beside_another_agent() -> None:
    """Two copies of a deterministic heuristic with a third agent at three seats sit after and
    before it equally often, so their figures are the same."""
    agents = ["knock.greedy", "knock.greedy", "knock.greedy(knock_threshold=5)"]
    result = run_arena("knock_rummy", 3, agents, deals=40, seed=4)
    assert len(result.seatings) == 6  # the balanced design, not the 3 rotations
    report = summarize(result)
    first, second = report["agents"]["knock.greedy#1"], report["agents"]["knock.greedy#2"]
    assert first["win_rate"] == second["win_rate"]
    assert first["mean_points"] == pytest.approx(second["mean_points"])


def test_win_credits_split_ties_and_teams() -> None:
    points = np.array([[5.0, -5.0, 0.0], [0.0, 0.0, 0.0], [3.0, 3.0, -6.0]])
    credits = win_credits(points, np.arange(3))
    assert credits.tolist() == [[1, 0, 0], [1 / 3, 1 / 3, 1 / 3], [0.5, 0.5, 0]]
    team_points = np.array([[7.0, -7.0, 7.0, -7.0], [0.0, 0.0, 0.0, 0.0]])
    team_credits = win_credits(team_points, np.array([0, 1, 0, 1]))
    assert team_credits.tolist() == [[1, 0, 1, 0], [0.5, 0.5, 0.5, 0.5]]


def test_seatings_rotate_every_agent_through_every_seat() -> None:
    assert seatings(2, 2) == [(0, 1), (1, 0)]
    three = seatings(3, 3, design="rotations")
    assert three == [(0, 1, 2), (1, 2, 0), (2, 0, 1)]
    for seat in range(3):
        assert sorted(s[seat] for s in three) == [0, 1, 2]
    # balanced: the rotations first, then the other order around the table
    assert seatings(3, 3) == [*three, (0, 2, 1), (1, 0, 2), (2, 1, 0)]
    round_robin = seatings(5, 2)
    assert len(round_robin) == 20  # C(5, 2) line-ups x 2 rotations
    assert len(set(round_robin)) == 20
    assert seatings(2, 4, design="rotations") == [(0, 1, 0, 1), (1, 0, 1, 0)]  # cycling
    assert unique_labels(["random", "x", "random"]) == ["random#1", "x", "random#2"]


@pytest.mark.parametrize("n", range(2, 9))
def test_balanced_orders_put_every_pair_of_places_in_every_pair_of_seats_equally_often(
    n: int,
) -> None:
    orders = balanced_orders(n)
    assert len(orders) == len(set(orders)) == (60 if n == 6 else n * (n - 1))  # 6: PSL(2, 5)
    assert all(sorted(order) == list(range(n)) for order in orders)
    held = Counter(
        (s, t, order[s], order[t]) for order in orders for s in range(n) for t in range(n) if s != t
    )
    assert len(held) == (n * (n - 1)) ** 2  # every (seats, places) combination occurs ...
    assert len(set(held.values())) == 1  # ... equally often
    for bad in (1, 9, True):
        with pytest.raises(ValueError, match="seats"):
            balanced_orders(bad)


def test_balanced_seatings_seat_every_agent_after_every_other_equally_often() -> None:
    for agents, seats in ((4, 4), (5, 4), (5, 5), (3, 3)):
        table = seatings(agents, seats)
        after = Counter(
            (s[i], s[(i + 1) % seats])
            for s in table
            for i in range(seats)
            if s[i] != s[(i + 1) % seats]
        )
        assert len(set(after.values())) == 1, (agents, seats, after)
        assert len(after) == agents * (agents - 1)
        for seat in range(seats):
            assert len(set(Counter(s[seat] for s in table).values())) == 1
    # rotations keep the order around the table: agent 3 always sits after agent 2
    rotations = seatings(4, 4, design="rotations")
    assert len(rotations) == 4
    assert {s[(s.index(2) + 1) % 4] for s in rotations} == {3}
    # copies of one agent alone rotate in either design; a policy against copies of one
    # opponent gets the balanced design (each copy is reported on its own), which the
    # evaluations replace by rotations (design="rotations")
    assert seatings(4, 4, kinds=["x", "x", "x", "x"]) == rotations
    assert len(seatings(4, 4, kinds=["me", "x", "x", "x"])) == 12
    assert seatings(4, 4, design="rotations", kinds=["me", "x", "x", "x"]) == rotations
    assert len(seatings(4, 4, kinds=["me", "x", "y", "x"])) == 12
    # two kinds of two seats each: side by side and apart, each kind after the other as often
    for table, kind in (
        (seatings(4, 4, kinds=["s", "s", "g", "g"]), ["s", "s", "g", "g"]),
        (seatings(2, 4), ["s", "g"]),  # two agents at four seats: each in two
    ):
        arranged = Counter("".join(kind[a] for a in s) for s in table)
        apart = sum(n for k, n in arranged.items() if k in ("sgsg", "gsgs"))
        assert 0 < apart < len(table), arranged  # rotations alone: always side by side, or apart
        neighbours = Counter((kind[s[i]], kind[s[(i + 1) % 4]]) for s in table for i in range(4))
        assert neighbours[("s", "g")] == neighbours[("g", "s")]
    with pytest.raises(ValueError, match="seating must be one of balanced, rotations"):
        seatings(4, 4, design="random")
    with pytest.raises(ValueError, match="one kind per agent"):
        seatings(4, 4, kinds=["a"])


def test_team_seatings_give_every_agent_every_partner_and_seat() -> None:
    teams = [0, 1, 0, 1]  # Ditch Rummy's teams: seats 0+2 against 1+3
    table = seatings(4, 4, teams)
    assert len(table) == len(set(table)) == 12  # 3 partnerships x 4 rotations
    partners = Counter(frozenset((s[0], s[2])) for s in table)
    partners += Counter(frozenset((s[1], s[3])) for s in table)
    assert set(partners) == {frozenset(p) for p in itertools.combinations(range(4), 2)}
    assert set(partners.values()) == {4}
    for seat in range(4):
        assert Counter(s[seat] for s in table) == dict.fromkeys(range(4), 3)
    # without partners nothing changes; fewer agents than seats cycle, each agent a team
    assert seatings(4, 4, [0, 1, 2, 3]) == seatings(4, 4)
    assert seatings(2, 4, teams) == seatings(2, 4, design="rotations")
    # three agents at a team game of four: an agent's copies partner each other (a copy on
    # each side won whichever side did: random play came out rated above ditch.greedy), every
    # agent partners each other one, and holds as many seats as the others
    for design in ("balanced", "rotations"):
        three = seatings(3, 4, teams, design=design, kinds=[0, 1, 2])
        assert len(three) == len(set(three)) == 12
        for s in three:
            assert len({agent for agent in s if s.count(agent) > 1}) == 1
            assert all(len({teams[i] for i in range(4) if s[i] == a}) == 1 for a in s)
        partners = Counter(frozenset((s[0], s[2])) for s in three if s[0] != s[2])
        partners += Counter(frozenset((s[1], s[3])) for s in three if s[1] != s[3])
        assert set(partners) == {frozenset(p) for p in itertools.combinations(range(3), 2)}
        assert Counter(a for s in three for a in s) == dict.fromkeys(range(3), 16)
    report = summarize(
        run_arena("ditch_rummy", 4, ["random", "ditch.greedy", "ditch.smart"], deals=4, seed=1,
                  options={"teams": True, "target_score": None}, workers=1)
    )  # fmt: skip
    rates = {name: entry["win_rate"] for name, entry in report["agents"].items()}
    assert rates["random"] < 0.1 < 0.5 < min(rates["ditch.greedy"], rates["ditch.smart"])
    assert len(set(seatings(2, 4))) == len(seatings(2, 4)) == 6  # each arrangement once
    # a policy against copies of one opponent (evaluate, the evaluations of a run): which copy
    # partners it changes nothing, so one partnership in 4 rotations (it was 3 x 4, three
    # times the games the documented design plays)
    copies = seatings(4, 4, teams, "rotations", ["policy", "rival", "rival", "rival"])
    assert len(copies) == 4 and sorted(s.index(0) for s in copies) == [0, 1, 2, 3]
    two_kinds = seatings(4, 4, teams, "rotations", ["a", "a", "b", "b"])  # a+a, a+b partnerships
    assert len(two_kinds) == 8
    with pytest.raises(ValueError, match="one score group per seat"):
        seatings(4, 4, [0, 1])
    # the arena schedules them: in a teams round robin every pair of agents meets as partners
    result = run_arena(
        "ditch_rummy",
        4,
        ["random", "ditch.greedy", "ditch.smart", "random"],
        deals=1,
        options={"teams": True, "target_score": None},
        workers=1,
    )
    assert result.seatings == table
    _wins, counts = pairwise_by_deal(result)
    assert (counts.sum(axis=0)[~np.eye(4, dtype=bool)] > 0).all()


# ------------------------------------------------------------------ playing
def test_duplicate_deals_replay_identical_decks() -> None:
    result = run_arena(
        "knock_rummy", 3, ["random", "random", "random"], deals=4, seed=11, keep_decks=True
    )
    assert result.games == 4 * 3
    assert result.decks is not None
    first_decks = []
    for deal in range(4):
        rows = np.flatnonzero(result.deal == deal)
        decks = result.decks[rows]
        assert (decks == decks[0]).all(), "a deal must replay the same deck in every seating"
        first_decks.append(decks[0])
        for seat in range(3):  # every agent sits in every seat on these cards
            assert sorted(result.seat_agents[rows, seat]) == [0, 1, 2]
    assert len({d.tobytes() for d in first_decks}) == 4, "different deals, different decks"


def test_duplicate_deals_also_fix_later_hands_of_a_match() -> None:
    match = make_arena_match("knock_rummy", 2, {"target_score": 60})
    players = [RandomPolicy(), RandomPolicy()]

    def hand_decks(agent_seed: int) -> list[bytes]:
        rngs = [np.random.default_rng([agent_seed, s]) for s in range(2)]
        decks: list[bytes] = []

        def watch(event: object, match: object) -> None:
            if isinstance(event, Deal):
                decks.append(event.deck.tobytes())

        play_episode(match, players, rngs, seed=5, on_event=watch)
        return decks

    a, b = hand_decks(1), hand_decks(2)
    shared = min(len(a), len(b))
    assert shared >= 2
    assert a[:shared] == b[:shared]


def test_episode_points_are_the_match_totals() -> None:
    match = make_arena_match("knock_rummy", 3, {"target_score": 50})
    players = [RandomPolicy()] * 3
    for seed in range(10):
        rngs = [np.random.default_rng([seed, s]) for s in range(3)]
        result = play_episode(match, players, rngs, seed=seed)
        totals = match.totals_by_seat()
        assert result.points.tolist() == totals.tolist()
        assert result.points.sum() == pytest.approx(0.0)
        assert result.hands >= 1 and result.decisions >= result.hands


def test_same_seed_same_numbers_whatever_the_workers() -> None:
    args = ("knock_rummy", 2, ["random", "random", "random"])
    one = run_arena(*args, deals=8, seed=3, workers=1)
    again = run_arena(*args, deals=8, seed=3, workers=1)
    two = run_arena(*args, deals=8, seed=3, workers=2)
    for other in (again, two):
        assert np.array_equal(one.points, other.points)
        assert np.array_equal(one.decisions, other.decisions)
    assert two.workers == 2
    report_one = summarize(one, resamples=50)
    report_two = summarize(two, resamples=50)
    assert report_one["agents"] == report_two["agents"]
    other_seed = run_arena(*args, deals=8, seed=4, workers=1)
    assert not np.array_equal(one.points, other_seed.points)


def test_worker_processes_kept_for_several_arenas_play_the_same_games() -> None:
    """``rummyzoo evaluate`` plays one arena per opponent in one set of worker processes: the
    processes start once, each run builds its own agents there, and the numbers are those of
    one process."""
    runs = [
        ("knock_rummy", 2, ["random", "knock.greedy"], {}),
        ("ditch_rummy", 2, ["ditch.greedy", "random"], {"target_score": None}),
        ("knock_rummy", 2, ["knock.smart", "random"], {}),
    ]
    with ArenaWorkers(2) as pool:
        kept = []
        for variant, players, agents, options in runs:
            kept.append(
                run_arena(variant, players, agents, deals=6, seed=5, options=options, pool=pool)
            )
            assert kept[-1].workers == 2
            pids = sorted(pool.executor()._processes)  # the same processes
            if len(kept) == 1:
                first_pids = pids
            assert pids == first_pids and len(pids) == 2
    assert pool._executor is None  # closed at the end of the block
    for (variant, players, agents, options), result in zip(runs, kept, strict=True):
        alone = run_arena(variant, players, agents, deals=6, seed=5, options=options, workers=1)
        assert np.array_equal(alone.points, result.points)
        assert np.array_equal(alone.decisions, result.decisions)


def test_random_vs_random_is_even() -> None:
    result = run_arena("knock_rummy", 2, ["random", "random"], deals=200, seed=2024)
    report = summarize(result)
    for label in ("random#1", "random#2"):
        entry = report["agents"][label]
        low, high = entry["win_rate_ci"]
        assert low < 0.5 < high
        assert entry["games"] == 400
        plow, phigh = entry["mean_points_ci"]
        assert plow < 0.0 < phigh
    a, b = (report["agents"][x]["win_rate"] for x in ("random#1", "random#2"))
    assert a + b == pytest.approx(1.0)
    assert "ratings" not in report and "rating" not in report["agents"]["random#1"]


def test_round_robin_report_has_cross_table_and_ratings() -> None:
    result = run_arena("knock_rummy", 2, ["random", "random", "random"], deals=12, seed=5)
    report = summarize(result, resamples=100)
    _wins, counts = pairwise_by_deal(result)
    assert counts.sum(axis=0)[0, 1] == 12 * 2  # every deal, both rotations
    score = np.array(report["cross_table"]["score"], dtype=float)
    assert np.isnan(np.diag(score)).all()
    off_diagonal = ~np.eye(3, dtype=bool)
    assert np.allclose((score + score.T)[off_diagonal], 1.0)
    ratings = [report["agents"][x]["rating"] for x in report["agents"]]
    assert sum(ratings) == pytest.approx(0.0, abs=1e-6)
    assert report["ratings"]["anchor"] == "mean"
    gaps = report["ratings"]["gaps"]
    assert len(gaps) == 3 and all(g["gap"] >= 0 for g in gaps)
    for g in gaps:
        low, high = g["gap_ci"]
        assert low <= high
    assert "rating gaps (95% intervals of the difference" in format_report(report)
    for entry in report["agents"].values():
        assert entry["games"] == 12 * 4
        low, high = entry["rating_ci"]
        assert low <= high


def test_agents_fewer_than_seats_cycle_and_teammates_are_not_compared() -> None:
    result = run_arena("knock_rummy", 4, ["random", "random"], deals=3, seed=0)
    assert result.seatings == [(0, 1, 0, 1), (1, 0, 1, 0)]
    assert any("cycling" in note for note in result.notes)
    _wins, counts = pairwise_by_deal(result)
    assert np.trace(counts.sum(axis=0)) == 0


class _Cheater(BasePolicy):
    name = "cheater"

    def act(self, observation, action_mask, rng) -> int:
        return int(np.flatnonzero(action_mask == 0)[0])


def test_illegal_action_names_the_agent() -> None:
    with pytest.raises(IllegalActionError, match="agent 'cheater' \\(seat"):
        run_arena("knock_rummy", 2, ["random", _Cheater()], deals=1, seed=0)


# ------------------------------------------------------------------ bad input
def test_unknown_agent_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="unknown agent 'nobody'"):
        run_arena("knock_rummy", 2, ["random", "nobody"], deals=1)


def test_unsupported_player_count_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="knock_rummy supports 2-6 players, got 7"):
        run_arena("knock_rummy", 7, ["random", "random"], deals=1)


def test_other_bad_arguments() -> None:
    with pytest.raises(ValueError, match="at least 2 agents"):
        run_arena("knock_rummy", 2, ["random"], deals=1)
    with pytest.raises(ValueError, match="deals must be a positive int"):
        run_arena("knock_rummy", 2, ["random", "random"], deals=0)
    with pytest.raises(ValueError, match="agents must be a list of agents, got the one name"):
        run_arena("knock_rummy", 2, "random", deals=1)
    assert run_arena("knock_rummy", 2, ["random", "random"], deals=np.int64(2)).deals == 2
    with pytest.raises(ConfigError, match="unknown option"):
        run_arena("knock_rummy", 2, ["random", "random"], deals=1, options={"nope": 1})
    with pytest.raises(ConfigError, match="set by the arena"):
        run_arena("knock_rummy", 2, ["random", "random"], deals=1, options={"reward": "scaled"})
    with pytest.raises(ValueError, match="unknown variant"):
        run_arena("gin", 2, ["random", "random"], deals=1)


def test_checkpoint_of_another_variant_is_a_clear_error(tmp_path, capsys) -> None:
    import zipfile

    from safetensors.torch import save

    from rummyzoo.agents.checkpoints import env_signature

    checkpoint = tmp_path / "ditch_model.rz"
    meta = {"format": "rummyzoo-checkpoint", "format_version": 1, "rummyzoo_version": "0.1.0"}
    meta |= env_signature("ditch_rummy", 2, {})
    meta |= {"features": None, "mask_in_obs": False, "algo": "ppo", "steps": 0}
    meta["network"] = {"type": "mlp", "activation": "relu", "pi": [8], "vf": [8]}
    with zipfile.ZipFile(checkpoint, "w") as archive:
        archive.writestr("rummyzoo.json", json.dumps(meta))
        archive.writestr("model.safetensors", save({}))  # never read: the variant is refused
    with pytest.raises(ValueError, match="variant: checkpoint 'ditch_rummy', env 'knock_rummy'"):
        run_arena("knock_rummy", 2, ["random", str(checkpoint)], deals=1)
    code = cli.main(["arena", "knock_rummy", "--agents", "random", str(checkpoint), "--deals", "1"])
    assert code == 2
    err = capsys.readouterr().err
    assert "rummyzoo arena: error:" in err and "checkpoint 'ditch_rummy'" in err
    assert len(err.strip().splitlines()) == 1


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--agents", "random", "nobody"], "unknown agent 'nobody'"),
        (["--players", "7", "--agents", "random", "random"], "supports 2-6 players, got 7"),
        (["--agents", "random", "random", "--option", "nope=1"], "unknown option"),
        (["--agents", "random", "random", "--option", "target_score"], "key=value"),
        (
            ["--agents", "random", "random", "--option", "num_players=3"],
            "the player count is no option (--players N where the command takes it",
        ),
    ],
)
def test_cli_bad_input_exits_2_with_one_line(argv, message, capsys) -> None:
    code = cli.main(["arena", "knock_rummy", "--deals", "1", "--workers", "1", *argv])
    assert code == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1


# ------------------------------------------------------------------ CLI output
def test_the_outputs_show_names_as_they_are_and_are_written_whole(tmp_path, capsys) -> None:
    """Checkpoints named with "$" (matplotlib read a pair as mathematics: "a$\\foo$" failed
    after every game was played, "p$5 vs $6" was drawn "p5vs6") or with escape sequences (the
    table sent them to the terminal); the CSV and the picture were rewritten in place, not
    written whole (a reader could see half a file)."""
    from run_helpers import untrained_checkpoint

    net = untrained_checkpoint(tmp_path / "net.rz")
    names = ["a$\\foo$.rz", "p$5 vs $6.rz", "evil\x1b]0;pwned\x07\x1b[2J.rz"]
    for name in names:
        (tmp_path / name).write_bytes(net.read_bytes())
    agents = [str(tmp_path / name) for name in names]
    out = {kind: tmp_path / f"out.{kind}" for kind in ("csv", "png", "svg")}
    for kind in out:
        out[kind].write_text("old")
    before = {kind: path.stat().st_ino for kind, path in out.items()}
    argv = ["arena", "knock_rummy", "--agents", *agents, "--deals", "2", "--workers", "1"]
    argv += ["--quiet", "--csv", str(out["csv"]), "--heatmap", str(out["png"])]
    assert cli.main(argv) == 0
    text = capsys.readouterr().out
    assert "\x1b" not in text and "\x07" not in text and "evil\\x1b]0;pwned\\x07" in text
    assert out["png"].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "p$5 vs $6.rz" in out["csv"].read_text()
    assert cli.main([*argv[:-2], "--heatmap", str(out["svg"])]) == 0
    picture = out["svg"].read_text()
    assert "p$5 vs $6.rz" in picture and "a$\\foo$.rz" in picture  # drawn as written
    assert all(path.stat().st_ino != before[kind] for kind, path in out.items())


def test_a_picture_to_a_stream_is_written_into_it(tmp_path) -> None:
    """``--heatmap /dev/stdout`` with the output redirected to a file wrote /dev/stdout.png
    (the name taken for a file's, given a suffix), and a pipe got nothing while a file
    ``pipe.png`` was written beside it."""
    import os
    import threading

    from rummyzoo.cli.common import PICTURE_SUFFIXES, output_file
    from rummyzoo.envs.files import is_stream

    link = tmp_path / "out"
    link.symlink_to(f"/proc/self/fd/{os.open(tmp_path / 'file', os.O_WRONLY | os.O_CREAT)}")
    assert is_stream(link) and not is_stream(tmp_path / "file") and is_stream("/dev/null")
    assert is_stream(f"/dev/fd/{os.open(tmp_path / 'file', os.O_WRONLY)}")
    assert output_file(link, "--heatmap", ".png", PICTURE_SUFFIXES) == link  # no suffix added
    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)
    got = []
    reader = threading.Thread(target=lambda: got.append(pipe.read_bytes()))
    reader.start()
    result = run_arena("knock_rummy", 2, ["random", "knock.greedy"], deals=2, seed=0, workers=1)
    write_heatmap(summarize(result), output_file(pipe, "--heatmap", ".png", PICTURE_SUFFIXES))
    reader.join(timeout=60)
    assert got and got[0][:8] == b"\x89PNG\r\n\x1a\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file", "out", "pipe"]


def test_a_file_to_stdout_redirected_to_a_file_comes_before_the_table(tmp_path) -> None:
    """``--json /dev/stdout > out``: the JSON was written into a new file in place of the
    redirected one (the table then went to a file no name led to), or written over by the
    table; it is written through the command's own output, the table after it."""
    import subprocess
    import sys

    out = tmp_path / "out.txt"
    argv = ["arena", "knock_rummy", "--agents", "random", "knock.greedy", "--deals", "2"]
    argv += ["--workers", "1", "--quiet", "--json"]
    for name in ("/dev/stdout", "/dev/fd/1"):
        with out.open("w") as fh:
            done = subprocess.run(
                [sys.executable, "-m", "rummyzoo.cli.main", *argv, name], stdout=fh, timeout=120
            )
        assert done.returncode == 0
        text = out.read_text()
        report, end = json.JSONDecoder().raw_decode(text)
        assert report["deals"] == 2 and "win rate" in text[end:]
        assert text.rstrip().endswith(f"wrote {name}")


def test_cli_writes_json_csv_and_heatmap(tmp_path, capsys) -> None:
    out = tmp_path / "nested" / "run"
    code = cli.main(
        [
            "arena",
            "knock_rummy",
            "--players",
            "2",
            "--agents",
            "random",
            "random",
            "random",
            "--deals",
            "10",
            "--seed",
            "7",
            "--workers",
            "1",
            "--option",
            "target_score=30",
            "--json",
            str(out / "arena.json"),
            "--csv",
            str(out / "arena.csv"),
            "--heatmap",
            str(out / "cross.png"),
            "--quiet",
        ]
    )
    assert code == 0
    text = capsys.readouterr().out
    assert "win rate" in text and "cross table" in text and "random#3" in text
    report = json.loads((out / "arena.json").read_text())
    assert report["variant"] == "knock_rummy" and report["players"] == 2
    assert report["seed"] == 7 and report["deals"] == 10
    assert report["options"] == {"target_score": 30}
    assert report["command"].startswith("rummyzoo arena knock_rummy")
    assert report["elapsed_seconds"] >= 0
    assert set(report["agents"]) == {"random#1", "random#2", "random#3"}
    for entry in report["agents"].values():
        for key in ("win_rate", "win_rate_ci", "mean_points", "mean_points_ci", "games"):
            assert key in entry
        for key in ("rating", "rating_ci"):
            assert key in entry
        assert entry["win_rate_ci"][0] <= entry["win_rate"] <= entry["win_rate_ci"][1]
        assert entry["mean_points_ci"][0] <= entry["mean_points"] <= entry["mean_points_ci"][1]
    assert len(report["cross_table"]["score"]) == 3
    rows = list(csv.DictReader((out / "arena.csv").open()))
    assert [r["agent"] for r in rows] == ["random#1", "random#2", "random#3"]
    assert float(rows[0]["win_rate"]) == pytest.approx(report["agents"]["random#1"]["win_rate"])
    assert (out / "cross.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # Same command, same numbers.
    again_path = tmp_path / "again.json"
    argv = ["arena", "knock_rummy", "--agents", "random", "random", "random", "--deals", "10"]
    argv += ["--seed", "7", "--workers", "1", "--option", "target_score=30", "--quiet"]
    assert cli.main([*argv, "--json", str(again_path)]) == 0
    again = json.loads(again_path.read_text())
    assert again["agents"] == report["agents"]
    assert again["cross_table"] == report["cross_table"]


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_every_variant_plays_in_the_arena(variant: str) -> None:
    players = VARIANTS[variant][1][0]
    result = run_arena(variant, players, ["random", "random"], deals=2, seed=1)
    report = summarize(result)
    assert result.games == 4
    rates = [a["win_rate"] for a in report["agents"].values()]
    assert sum(rates) == pytest.approx(1.0)  # two seats, one win (or a split) per game


def test_team_games_score_teams() -> None:
    options = {"teams": True, "target_score": None}
    result = run_arena("ditch_rummy", 4, ["random", "random"], deals=3, seed=2, options=options)
    assert result.seatings == [(0, 1, 0, 1), (1, 0, 1, 0)]  # one agent per team
    assert np.array_equal(result.points[:, 0], result.points[:, 2])
    report = summarize(result)
    rates = [a["win_rate"] for a in report["agents"].values()]
    assert sum(rates) == pytest.approx(1.0)  # per seat: each team's two seats share its result


def test_parse_options_reads_json_values() -> None:
    options = parse_options(["target_score=100", "teams=true", "hand_size=null", "x=reshuffle"])
    assert options == {"target_score": 100, "teams": True, "hand_size": None, "x": "reshuffle"}
    # Python's spellings too, as agent parameters take them
    spelled = parse_options(["teams=True", "a=FALSE", "target_score=None", "b=Nonesuch"])
    assert spelled == {"teams": True, "a": False, "target_score": None, "b": "Nonesuch"}
    with pytest.raises(ConfigError, match="key=value"):
        parse_options(["target_score"])
    with pytest.raises(ConfigError, match="given twice"):
        parse_options(["a=1", "a=2"])


def test_cli_seats_four_agents_by_the_balanced_design_unless_told_rotations(
    tmp_path, capsys
) -> None:
    agents = ["random", "knock.greedy", "knock.smart", "knock.smart"]
    base = ["arena", "knock_rummy", "--players", "4", "--agents", *agents, "--deals", "3"]
    base += ["--seed", "5", "--workers", "1", "--option", "target_score=null", "--quiet"]
    reports = {}
    for design in ("balanced", "rotations"):
        path = tmp_path / f"{design}.json"
        extra = [] if design == "balanced" else ["--seating", "rotations"]
        assert cli.main([*base, *extra, "--json", str(path)]) == 0
        reports[design] = json.loads(path.read_text())
    capsys.readouterr()
    balanced, rotations = reports["balanced"], reports["rotations"]
    assert balanced["seating"] == "balanced" and balanced["seatings_per_deal"] == 12
    assert balanced["games"] == 36 and "--seating" not in balanced["command"]
    assert rotations["seating"] == "rotations" and rotations["seatings_per_deal"] == 4
    assert rotations["games"] == 12 and "--seed 5 --seating rotations" in rotations["command"]
    # the games behind it: each agent after each other one equally often, on every deal
    result = run_arena("knock_rummy", 4, agents, deals=3, seed=5, options={"target_score": None})
    assert result.seating_design == "balanced"
    follows = Counter(
        (int(row[i]), int(row[(i + 1) % 4])) for row in result.seat_agents for i in range(4)
    )
    assert set(follows.values()) == {3 * 12 * 4 // 12}  # 3 deals, 12 seatings, 4 seats, 12 pairs
    assert summarize(result)["agents"] == balanced["agents"]


def test_agent_objects_play_in_worker_processes_and_several_seats() -> None:
    """Heuristic objects (which hold a game and, compiled, its kernels) are copied per seat and
    sent to worker processes, and play the games their names play."""
    from rummyzoo.agents.registry import make_agent

    objects = [make_agent(name, "knock_rummy", 4) for name in ("knock.smart", "knock.greedy")]
    names = ["knock.smart", "knock.greedy"]
    by_name = run_arena("knock_rummy", 4, names, deals=4, seed=3, workers=1)
    for workers in (1, 2):
        got = run_arena("knock_rummy", 4, objects, deals=4, seed=3, workers=workers)
        assert np.array_equal(got.points, by_name.points), workers


def test_games_and_solvers_pickle_as_what_built_them() -> None:
    import copy
    import pickle

    from rummyzoo.envs.melds import knock_solver
    from rummyzoo.envs.native import PURE, compiled_kernels
    from rummyzoo.envs.registry import make_game

    for kernels in (None, PURE):
        game = make_game("rummy500", 3, kernels=kernels, target_score=300)
        for copied in (pickle.loads(pickle.dumps(game)), copy.deepcopy(game)):
            assert type(copied) is type(game) and copied.rules == game.rules
            assert copied.match == game.match and copied.kernels is game.kernels
        solver = knock_solver(kernels)
        copied = pickle.loads(pickle.dumps(solver))
        assert copied.backend == solver.backend
        hand = (1 << 0) | (1 << 1) | (1 << 2) | (1 << 20) | (1 << 33)
        assert copied.solve_mask(hand) == solver.solve_mask(hand)
    assert (compiled_kernels() is None) == (knock_solver().backend == "python")


def test_agent_objects_of_another_game_are_refused() -> None:
    from rummyzoo.agents.registry import make_agent

    class KnockOnly(RandomPolicy):
        variants = ("knock_rummy",)

    with pytest.raises(ValueError, match=r"'random' .*plays knock_rummy, not ditch_rummy"):
        run_arena("ditch_rummy", 2, [KnockOnly(), "random"], deals=1)
    greedy = make_agent("knock.greedy", "knock_rummy", 2)
    with pytest.raises(ValueError, match="built for knock_rummy with 2 players, not knock_rummy "):
        run_arena("knock_rummy", 3, [greedy, "random"], deals=1)


def test_agent_objects_built_for_other_options_are_refused() -> None:
    """A heuristic reads each observation through the game it was built for: other rules, or
    another match length or turn cap, would be misread (the observation's size may still fit),
    so an arena refuses it, naming the options; built for the arena's options it plays."""
    from rummyzoo.agents.registry import make_agent

    smart = make_agent("ditch.smart", "ditch_rummy", 4)  # teams=False, matches to 500
    with pytest.raises(ValueError, match=r"other options of ditch_rummy \(teams False, not True\)"):
        run_arena("ditch_rummy", 4, [smart, "random"], deals=1, options={"teams": True})
    with pytest.raises(ValueError, match=r"target_score 500, not None\): build it for this game"):
        run_arena("ditch_rummy", 4, [smart, "random"], deals=1, options={"target_score": None})
    knock = make_agent("knock.smart", "knock_rummy", 2)
    with pytest.raises(ValueError, match=r"max_turns 300, not 30\)"):
        run_arena("knock_rummy", 2, [knock, "random"], deals=1, options={"max_turns": 30})
    fitted = make_agent("knock.smart", "knock_rummy", 2, {"max_turns": 30, "reward": "scaled"})
    assert run_arena("knock_rummy", 2, [fitted, "random"], deals=1, options={"max_turns": 30})


@pytest.mark.parametrize("batch", [1, 4])
def test_an_agent_that_answers_a_float_is_refused_in_batches_too(batch) -> None:
    class FloatAgent(RandomPolicy):
        name = "float"

        def act(self, observation, action_mask, rng):
            return float(super().act(observation, action_mask, rng))

    with pytest.raises(IllegalActionError, match=r"agent 'float' .* \(float\) is not an action id"):
        run_arena("knock_rummy", 2, [FloatAgent(), "random"], deals=2, batch=batch)


@pytest.mark.parametrize(
    "variant, prefix",
    [("knock_rummy", "knock"), ("ditch_rummy", "ditch"), ("rummy500", "rummy500")],
)
def test_the_heuristic_tiers_rank_smart_over_greedy_over_random(variant, prefix):
    """A regression that weakens a heuristic (smart no better than greedy, greedy no better
    than random) shows here: 300 duplicate deals of single hands, each gap's 95% interval
    above zero (with seeds 5 to 8 the lowest bound of 500 Rum's smart over greedy, the closest
    pair, was +34 rating points)."""
    smart, greedy = f"{prefix}.smart", f"{prefix}.greedy"
    result = run_arena(
        variant, 2, [smart, greedy, "random"], deals=300, seed=5,
        options={"target_score": None}, workers=1,
    )  # fmt: skip
    report = summarize(result, resamples=200)
    gaps = {(g["agent"], g["over"]): g["gap_ci"] for g in report["ratings"]["gaps"]}
    for better, worse in ((smart, greedy), (greedy, "random")):
        assert (better, worse) in gaps and gaps[better, worse][0] > 0, gaps


def test_the_report_names_the_caps_that_cut_games_short_without_guessing_which():
    """Matches cut by ``max_hands`` (no turn cap reached) are counted as cut short by a cap, not
    said to be the turn cap's."""
    result = run_arena(
        "knock_rummy", 2, ["random", "knock.greedy"], deals=6, seed=1,
        options={"target_score": 100, "max_hands": 2}, workers=1,
    )  # fmt: skip
    report = summarize(result, resamples=50)
    assert report["truncated_games"] > 0
    text = format_report(report)
    assert f"{report['truncated_games']} games cut short by a cap" in text
    assert "truncated by the turn cap" not in text


def test_an_evaluation_at_three_players_keeps_the_tables_ratings_out_of_the_policys_entry():
    """Against copies of one opponent the ratings are anchored at the table's mean: the
    policy's entry (what ``rummyzoo evaluate`` reports per opponent) leaves them out, and the
    full report still has them with the gaps."""
    from rummyzoo.agents.arena.evaluate import evaluate_policy, evaluation_report

    args = ("knock.smart", "random", "knock_rummy", 3, {"target_score": None}, 10, 1)
    report, label = evaluation_report(*args, resamples=20)
    assert report["agents"][label]["rating"] is not None and report["ratings"]["gaps"]
    entry = evaluate_policy(*args, resamples=20)
    assert not {"rating", "rating_ci", "rating_se"} & set(entry)
    assert entry["win_rate"] == report["agents"][label]["win_rate"]


def test_ratings_anchor_at_random_play_however_it_is_spelt() -> None:
    from rummyzoo.agents.arena import rating_anchor

    assert rating_anchor(["knock.greedy", "random", "knock.smart"]) == 1
    assert rating_anchor(["knock.greedy", "random()", "knock.smart"]) == 1
    assert rating_anchor(["knock.greedy", " random ( ) "]) == 1
    assert rating_anchor(["random", "random()"]) is None  # two: the mean
    assert rating_anchor(["knock.greedy", "knock.smart"]) is None


@pytest.mark.parametrize(
    ("variant", "players", "options"),
    [("knock_rummy", 2, {"target_score": 50}), ("ditch_rummy", 4, {"teams": True})],
)
def test_a_sample_games_points_line_is_the_episodes_points(variant, players, options) -> None:
    """It printed the last hand's points of each seat: wrong for a match of several hands and
    for teams. Now the match's points, as the replay's final scores."""
    from rummyzoo.agents.arena.evaluate import sample_game
    from rummyzoo.agents.random_agent import RandomPolicy

    text, replay = sample_game(RandomPolicy(), "random", variant, players, options, seed=3)
    shown = text.splitlines()[-1]
    final = replay["final"]
    assert shown == "points: " + ", ".join(f"player_{s} {p:+g}" for s, p in enumerate(final))


def test_two_checkpoints_of_one_file_name_are_shown_by_their_folders(tmp_path) -> None:
    """``runs/A/checkpoints/best.rz`` against ``runs/B/checkpoints/best.rz`` read as
    ``best.rz#1`` and ``best.rz#2``, the labels of two copies of one agent; they are shown by
    as much of their paths as tells them apart, and one file given twice stays two copies."""
    from run_helpers import untrained_checkpoint

    a = untrained_checkpoint(tmp_path / "A" / "checkpoints" / "best.rz")
    b = untrained_checkpoint(tmp_path / "B" / "checkpoints" / "best.rz")
    result = run_arena("knock_rummy", 2, [str(a), str(b), "random"], deals=2, workers=1)
    assert result.labels == ["A/checkpoints/best.rz", "B/checkpoints/best.rz", "random"]
    result = run_arena("knock_rummy", 2, [str(a), str(a)], deals=2, workers=1)
    assert result.labels == ["best.rz#1", "best.rz#2"]


def test_an_interrupt_while_the_deals_are_handed_out_ends_the_workers(monkeypatch) -> None:
    """Ctrl-C (or SIGTERM, which the command turns into it) landing while the arena hands its
    chunks of deals to the workers: the workers end with it, as they do when it lands while
    they play, and the pool starts new ones for its next run."""
    import concurrent.futures

    submit = concurrent.futures.ProcessPoolExecutor.submit
    started: list = []

    def interrupted(self, *args, **kwargs):
        future = submit(self, *args, **kwargs)
        if len(started) == 0 and len(self._processes) == 2:  # both workers are up
            started.extend(self._processes.values())
            raise KeyboardInterrupt
        return future

    monkeypatch.setattr(concurrent.futures.ProcessPoolExecutor, "submit", interrupted)
    with ArenaWorkers(2) as pool:
        with pytest.raises(KeyboardInterrupt):
            run_arena("knock_rummy", 2, ["knock.smart", "knock.greedy"], deals=20000, pool=pool)
        assert len(started) == 2 and pool._executor is None
        for process in started:
            process.join(timeout=10)
            assert not process.is_alive()
        monkeypatch.undo()
        again = run_arena("knock_rummy", 2, ["random", "random"], deals=4, seed=1, pool=pool)
        assert again.games == 8
