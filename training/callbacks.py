"""The training callback: checkpoints, self-play snapshots, evaluation and TensorBoard.

TensorBoard tags (besides SB3's own ``rollout/``, ``train/`` and ``time/``):

==================================  ===========================================================
tag                                 what
==================================  ===========================================================
``charts/game_length``              learner decisions per finished game (mean since last log)
``charts/hands_per_game``           hands per game (match play)
``charts/points_per_hand``          learner's raw points per hand
``charts/train_win_rate``           share of training games the learner won
``charts/score_margin``             histogram: learner's hand points minus the best opponent's
                                    (a seat of another side: a partner is none)
``eval/<opponent>/win_rate``        evaluation win rate (duplicate deals, seat rotation)
``eval/<opponent>/win_rate_low``    lower end of its 95% interval (``_high``: upper end; an end
                                    that no interval gives, as with too few deals, is the value)
``eval/<opponent>/mean_points``     mean raw points per game (a match's, in match play) against
                                    that opponent
``eval/<opponent>/points_per_hand``  points per hand against it (``_low``, ``_high``: 95% CI)
``eval/score``                      mean over opponents of the best-checkpoint metric
``eval/cross_table``                image: the cross table of the round robin at each evaluation
                                    (learner, newest pool snapshots, every baseline)
``rating/learner``                  learner's Bradley-Terry rating in that round robin, random
                                    play = 0 (``_low``, ``_high``: bootstrap 95% interval);
                                    ``rating/<agent>``: each anchor's and snapshot's rating
``strategy/<statistic>``            what the learner does (scalars and histograms; see
                                    :mod:`rummyzoo.training.strategy`)
``selfplay/pool_size``              snapshots in the opponent pool
``selfplay/rating``                 learner's Elo against the pool (snapshots keep the rating
                                    the learner had when they were taken; first one = 0), from
                                    one comparison per snapshot seated against the learner in
                                    each game: whose side scored more (plus one virtual draw
                                    against the pool's mean, which keeps a record of wins
                                    only finite)
``selfplay/pool_win_rate``          learner's recent score rate in those comparisons (draws
                                    count half)
``text/sample_game``                one full game against the first evaluation opponent, at every
                                    evaluation and every ``sample_game_interval`` steps: a
                                    markdown table per turn (hand, table, move, alternatives)
``league/probability/<opponent>``   with a league: the chance a seat draws that opponent now
``league/win_rate/<opponent>``      the learner's recent win rate against it (prioritized
                                    fictitious self-play weighs the opponents by it)
``train/anchor_kl``                 with ``pretrain.anchor_coef``: the KL divergence from the
                                    warm start that PPO's loss adds (:mod:`~rummyzoo.training.ppo`)
``train/demo_margin_loss``          with ``pretrain.demo_coef`` (DQN): the large-margin term on
                                    the teacher's decisions (:mod:`~rummyzoo.training.dqn`)
``pretrain/accuracy``               a warm start's held-out imitation accuracy, in
                                    ``tb/pretrain`` (also ``value_loss``, ``collect_seconds``,
                                    ``fit_seconds``, and for PPO ``cross_entropy``)
hparams                             the config's hyperparameters (HPARAMS tab)
==================================  ===========================================================

The CUSTOM SCALARS tab groups them (see :func:`rummyzoo.training.dashboard.custom_layout`):
each opponent's win rate and points per hand with their intervals as bands, the ratings, the
strategy statistics and the league.
"""

from __future__ import annotations

import contextlib
import json
import math
import shutil
import time
import warnings
from collections import deque
from pathlib import Path
from typing import Any

import numpy as np
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.logger import HParam

from rummyzoo.agents.checkpoints import (
    CheckpointPolicy,
    read_meta,
    save_checkpoint,
    save_resume_checkpoint,
)
from rummyzoo.envs.files import atomic_write_text
from rummyzoo.training.config import RunConfig, fixed_fields
from rummyzoo.training.dashboard import eval_tags, tag_names
from rummyzoo.training.run_state import (
    BEST_AT_CHECKPOINT,
    commit_staged,
    run_relative,
    staging_dir,
    stop_requested,
)
from rummyzoo.training.seat_env import head_to_head


class SeatLeague:
    """The league of prioritized fictitious self-play over per-game envs (``vec_env: dummy`` or
    ``subproc``), each of which draws its opponents from a mixture of its own: one league for
    all the games, as the batched env keeps one. At each :meth:`sync` (the run's every 50
    finished games, at the end of each rollout that a snapshot, an evaluation or a checkpoint
    follows, and at the run's end, where games finished since) every game's results since the last one join the league's, and every game draws
    from the whole league again.

    It answers what the run asks of a mixture: :meth:`results`, :meth:`set_results`,
    :meth:`probabilities` and :meth:`win_rate` (of the last sync).
    """

    def __init__(self, venv: Any, window: int) -> None:
        self.venv = venv
        self.window = int(window)
        self._results: dict[str, deque[float]] = {}
        self._report: dict[str, tuple[float, float]] = {}

    def sync(self) -> None:
        for fresh in self.venv.env_method("league_fresh"):
            for label, scores in fresh.items():
                found = self._results.get(label)
                if found is None:
                    found = self._results[label] = deque(maxlen=self.window)
                found.extend(scores)
        self.venv.env_method("set_league_results", self._plain())
        self._report = self.venv.env_method("league_report", indices=[0])[0]

    def _plain(self) -> dict[str, list[float]]:
        return {label: list(found) for label, found in self._results.items()}

    def results(self) -> dict[str, list[float]]:
        """The league's results now (every game's, synced first)."""
        self.sync()
        return self._plain()

    def set_results(self, results: dict[str, list[float]]) -> None:
        self._results = {
            label: deque(scores, maxlen=self.window) for label, scores in results.items()
        }
        self.venv.env_method("set_league_results", self._plain())
        self._report = self.venv.env_method("league_report", indices=[0])[0]

    def probabilities(self) -> dict[str, float]:
        """The chance that a seat draws each opponent (synced first)."""
        self.sync()
        return {label: p for label, (p, _) in self._report.items()}

    def win_rate(self, label: str) -> float:
        """The learner's win rate against ``label`` at the last sync (one win and one loss of
        prior)."""
        found = self._report.get(label)
        if found is not None:
            return found[1]
        scores = self._results.get(label, ())
        return (sum(scores) + 1.0) / (len(scores) + 2.0)


def snapshot_comparisons(game: dict[str, Any]) -> list[tuple[int, float]]:
    """(snapshot steps, the learner's score) for each self-play snapshot that played against
    the learner in a finished game (a training env's ``info["game"]``): 1 where the learner's
    side scored more points than the snapshot's side, 0.5 for as many, else 0. A partner is no
    rival, and a game cut by a cap has no result."""
    return [
        (int(label.split("@", 1)[1]), score)
        for label, score in head_to_head(game)
        if label.startswith("self@")
    ]


def pool_rating(results: list[tuple[float, float]]) -> float | None:
    """Elo of a player from (opponent rating, score) pairs: the likeliest rating with one
    virtual draw against the opponents' mean rating added, which keeps it finite (an all-win
    record has no finite maximum-likelihood rating: 1 win of 1 gave +2,445) and pulls a few
    comparisons towards that mean (1 win: +191; 20 straight wins: +645)."""
    if not results:
        return None
    opp = np.asarray([r for r, _ in results] + [float(np.mean([r for r, _ in results]))])
    score = np.asarray([s for _, s in results] + [0.5])
    rating = float(opp.mean())
    for _ in range(50):  # Newton steps on the logistic likelihood
        p = 1.0 / (1.0 + 10 ** ((opp - rating) / 400))
        grad = float((score - p).sum()) * math.log(10) / 400
        hess = -float((p * (1 - p)).sum()) * (math.log(10) / 400) ** 2 - 1e-9
        step = grad / hess
        rating -= max(min(step, 400), -400)
        if abs(step) < 1e-6:
            break
    return rating


class RunCallback(BaseCallback):
    """Everything a run does besides learning (see the module docstring for the tags).

    Scheduled work (evaluations, checkpoints, snapshots, sample games) runs at the start of a
    rollout, after the update of the previous one, so what it saves or scores is exactly the
    network at that step; the schedules continue from the step a resumed run starts at.

    :param progress: where the run's progress is shown (see :mod:`rummyzoo.training.progress`).
    :param started: when this session began (``time.perf_counter()``; default: now): the
        run's wall time is this session's plus the earlier sessions' that ``state`` records.
    :param resumed: whether this session resumes a run (its hyperparameters are logged once,
        by the session that started it, even where a run resumes at step 0).
    """

    def __init__(
        self,
        config: RunConfig,
        run_dir: Path,
        state: dict[str, Any] | None = None,
        progress: Any = None,
        started: float | None = None,
        resumed: bool = False,
    ) -> None:
        super().__init__(verbose=0)
        self.config = config
        self.resumed = resumed
        self.run_dir = Path(run_dir)
        self.ckpt_dir = self.run_dir / "checkpoints"
        self.pool_dir = self.run_dir / "pool"
        state = dict(state or {})
        self.pool: list[dict[str, Any]] = list(state.get("pool", []))
        # the rating of every snapshot taken, those that left the pool too (a game drawn
        # against one before it left may end after)
        self._snapshot_ratings = {int(p["steps"]): float(p["rating"]) for p in self.pool}
        self.best_value: float | None = state.get("best_value")
        self.eval_history: list[dict[str, Any]] = list(state.get("eval_history", []))
        # (those still there: one removed by hand is no longer named as kept)
        self.periodic: list[str] = [p for p in state.get("periodic", []) if Path(p).is_file()]
        self.self_play = any(o.name == "self" for o in config.opponents)
        #: this session's time in the scheduled work (evaluations, snapshots, sample games,
        #: checkpoints), which runs inside the RL phase
        self.scheduled_seconds = 0.0
        self._games: deque[dict[str, Any]] = deque(maxlen=2000)
        self._since_log: list[dict[str, Any]] = []
        self._pool_results: deque[tuple[float, float]] = deque(
            [(float(r), float(x)) for r, x in state.get("pool_results", [])], maxlen=1000
        )
        #: the league's recorded results at the checkpoint (prioritized fictitious self-play)
        self._league_results: dict[str, list[float]] | None = state.get("league_results")
        self._seat_league: SeatLeague | None = None  # built with the first call of _league
        self.rating = float(state.get("rating", 0.0))
        self.pretrain: dict[str, Any] | None = state.get("pretrain")
        #: the run's wall time before this session, and its warm start's (None: no warm start)
        self.seconds_before = float(state.get("seconds", 0.0))
        self.warm_start_seconds: float | None = state.get("warm_start_seconds")
        #: the algorithm's records at the checkpoint that it had not written yet (the last
        #: update's train/*): a resumed run writes them where the run would have
        self._pending_records: list[list[Any]] = list(state.get("pending_records", []))
        self.session_started = time.perf_counter() if started is None else started
        self.progress = progress

    # ------------------------------------------------------------- schedule
    def _init_callback(self) -> None:
        # The model's count: a resumed run continues every schedule from its checkpoint's step.
        steps = self.num_timesteps = int(self.model.num_timesteps)
        self._rollouts = 0  # this session's: PPO writes its records after every log_interval-th
        cfg = self.config

        def first_due(interval: int, done_here: bool) -> int:
            # a run extended past where it finished is due at that step if that step's work
            # was not done there (a finished run evaluates and saves, and nothing else)
            if steps and steps % interval == 0 and not done_here:
                return steps
            return (steps // interval + 1) * interval

        name = f"ckpt_{steps:09d}.rz"
        self._next_ckpt = first_due(
            cfg.checkpoints.interval, any(Path(p).name == name for p in self.periodic)
        )
        self._next_snapshot = first_due(
            cfg.self_play.snapshot_interval, any(p["steps"] == steps for p in self.pool)
        )
        self._next_eval = first_due(
            cfg.evaluation.interval, any(e["steps"] == steps for e in self.eval_history)
        )
        self._next_sample = first_due(cfg.evaluation.sample_game_interval, self._sampled_at(steps))
        if not self.resumed:  # once a run: a resumed run's events have them from its start
            self._log_hparams()
        # every session: a resume may evaluate other opponents (the layout keeps the earlier)
        self._log_layout()
        for name, value, exclude in self._pending_records:
            self.logger.record(name, value, exclude=tuple(exclude) or None)
        self._restore_league()
        begun = time.perf_counter()
        if self.self_play and not self.pool:
            self._snapshot()  # the untrained learner starts the pool
        if cfg.evaluation.at_start and not self.eval_history:
            self._evaluate()  # the network before any RL (after a warm start, if any)
            if self.progress is not None:
                self.progress.restart_clock()
        if self.model.num_timesteps == 0 and not (self.ckpt_dir / "last.zip").exists():
            # a run stopped before its first periodic checkpoint resumes from here, its warm
            # start and first evaluation kept (they can take minutes)
            self._save_last()
        self.scheduled_seconds += time.perf_counter() - begun

    def _log_hparams(self) -> None:
        cfg = self.config
        hparams: dict[str, Any] = {
            "algo": cfg.algo,
            "variant": cfg.variant,
            "num_players": cfg.num_players,
            "n_envs": cfg.n_envs,
            "seed": cfg.seed,
            "reward": cfg.reward,
            "opponents": ",".join(f"{o.name}:{o.weight:g}" for o in cfg.opponents),
        }
        for key, value in cfg.hyperparams.model_dump().items():
            if value is not None:
                hparams[key] = value
        metrics = {"eval/score": 0.0, "charts/points_per_hand": 0.0}
        writer = self._writer()
        if writer is None:  # no TensorBoard output: whatever the logger has
            self.logger.record(
                "hparams", HParam(hparams, metrics), exclude=("stdout", "log", "json", "csv")
            )
            return
        # written now, not with the logger's next dump: a run stopped before its first dump
        # has them too, so that no resumed session needs to write them again
        from torch.utils.tensorboard.summary import hparams as hparam_summaries

        for summary in hparam_summaries(hparams, metric_dict=metrics):
            writer.file_writer.add_summary(summary)
        writer.flush()

    def _writer(self) -> Any:
        from stable_baselines3.common.logger import TensorBoardOutputFormat

        for fmt in self.logger.output_formats:
            if isinstance(fmt, TensorBoardOutputFormat):
                return fmt.writer
        return None

    def _log_layout(self) -> None:
        from rummyzoo.training.dashboard import custom_layout

        writer = self._writer()
        if writer is not None:
            earlier = [o for e in self.eval_history for o in e.get("results", {})]
            writer.add_custom_scalars(custom_layout(self.config, earlier))

    def _on_step(self) -> bool:
        if stop_requested.is_set():  # a stop whose KeyboardInterrupt was swallowed
            raise KeyboardInterrupt("stopped")
        infos = self.locals.get("infos", [])
        for info in infos:
            game = info.get("game")
            if game is not None:
                self._games.append(game)
                self._since_log.append(game)
                for steps, score in snapshot_comparisons(game):
                    self._pool_results.append((self._snapshot_rating(steps), score))
        if len(self._since_log) >= 50 and self._off_policy():
            # DQN writes its records at each step a game ends, right after this: recorded
            # here, they go out at their step (its rollouts are a few steps)
            self._log_games()
        if self.progress is not None:
            self.progress.update(self.num_timesteps)
        return True

    def _on_rollout_start(self) -> None:
        """The scheduled work that is due, on the weights the last update left."""
        begun = time.perf_counter()
        try:
            self._scheduled_work()
        finally:
            self.scheduled_seconds += time.perf_counter() - begun

    def _on_rollout_end(self) -> None:
        # the games since the charts' last record, recorded once 50 have finished, and where
        # scheduled work comes next (a snapshot takes the learner's rating, a checkpoint the
        # run's state) or the run ends, however few: a run with few games, long matches or a
        # short run records them too; written with the rollout's records, so nothing of them
        # waits past a checkpoint
        steps = int(self.model.num_timesteps)
        due = steps >= self._next_eval or steps >= self._next_ckpt
        due = due or (self.self_play and steps >= self._next_snapshot)
        due = due or steps >= getattr(self.model, "_total_timesteps", math.inf)
        if self._off_policy():
            if due and self._since_log:
                self._flush_games()
                self.logger.dump(steps)  # (its own writes came before this, in the rollout)
            return
        # PPO: every game since the last record in one record, at a rollout after which it
        # writes its records (every log_interval-th: the logger keeps a key's last record until
        # then, so records at every 50 games kept the last 50); where scheduled work is due
        # after another rollout, they are written here
        self._rollouts += 1
        writes = self._rollouts % self.config.log_interval == 0
        if (writes and len(self._since_log) >= 50) or (due and self._since_log):
            self._flush_games()
            if not writes:
                self.logger.dump(steps)

    def _off_policy(self) -> bool:
        from stable_baselines3.common.off_policy_algorithm import OffPolicyAlgorithm

        return isinstance(self.model, OffPolicyAlgorithm)

    def _scheduled_work(self) -> None:
        self.num_timesteps = steps = int(self.model.num_timesteps)
        cfg = self.config
        if self.self_play and steps >= self._next_snapshot:
            self._next_snapshot += cfg.self_play.snapshot_interval
            self._snapshot()
        if steps >= self._next_eval:
            self._next_eval += cfg.evaluation.interval
            self._evaluate()
        if steps >= self._next_sample:
            self._next_sample += cfg.evaluation.sample_game_interval
            if not self._sampled_at(steps):
                with self._own_write():  # at its own step (an evaluation's goes with it)
                    self._sample_game()
                    self.logger.dump(steps)
        if steps >= self._next_ckpt:
            self._next_ckpt += cfg.checkpoints.interval
            self._checkpoint()

    # --------------------------------------------------------------- charts
    def _flush_games(self) -> None:
        """Record the games finished since the charts' last record, if any."""
        if self._since_log:
            self._log_games()

    def _log_games(self) -> None:
        import torch as th

        games = self._since_log
        self._since_log = []
        hand_points = [p for g in games for p in g["hand_points"]]
        margins = [m for g in games for m in g["margins"]]
        self.logger.record("charts/game_length", float(np.mean([g["decisions"] for g in games])))
        self.logger.record("charts/hands_per_game", float(np.mean([g["hands"] for g in games])))
        if hand_points:
            self.logger.record("charts/points_per_hand", float(np.mean(hand_points)))
        self.logger.record("charts/train_win_rate", float(np.mean([g["winner"] for g in games])))
        if margins:
            self.logger.record(
                "charts/score_margin",
                th.as_tensor(margins, dtype=th.float32),
                exclude=("stdout", "log", "json", "csv"),
            )
        mixture = self._league()
        if mixture is not None:
            probabilities = mixture.probabilities()
            tags = tag_names(list(probabilities))
            for label, p in probabilities.items():
                self.logger.record(f"league/probability/{tags[label]}", p)
                self.logger.record(f"league/win_rate/{tags[label]}", mixture.win_rate(label))
        if self.self_play:
            self.logger.record("selfplay/pool_size", len(self.pool))
            rating = pool_rating(list(self._pool_results))
            if rating is not None:
                self.rating = rating
                self.logger.record("selfplay/rating", rating)
                self.logger.record(
                    "selfplay/pool_win_rate", float(np.mean([s for _, s in self._pool_results]))
                )

    def _snapshot_rating(self, steps: int) -> float:
        """The rating the snapshot of ``steps`` was taken with, in the pool or not."""
        return self._snapshot_ratings.get(int(steps), 0.0)

    def _with_band(self, tag: str, value: float, interval: Any) -> None:
        """``tag`` and its ``_low`` / ``_high`` band, an end the interval lacks at the value."""
        low, high = interval if interval is not None else (None, None)
        self.logger.record(tag, value)
        self.logger.record(f"{tag}_low", value if low is None else low)
        self.logger.record(f"{tag}_high", value if high is None else high)

    # ------------------------------------------------------------ self-play
    def _snapshot(self) -> None:
        steps = int(self.num_timesteps)
        path = self.pool_dir / f"snapshot_{steps:09d}.rz"
        save_checkpoint(self.model, path, self._meta())
        entry = {"path": str(path), "steps": steps, "rating": self.rating}
        self.pool.append(entry)
        self._snapshot_ratings[steps] = float(self.rating)
        self.training_env.env_method("add_snapshot", entry["path"], steps, self.rating)
        # Snapshots that leave the pool are deleted only once a checkpoint no longer refers to
        # them (see _save_last), so a resumed run gets back the pool its checkpoint had.
        self.pool = self.pool[-self.config.self_play.pool_size :]

    # ----------------------------------------------------------- evaluation
    def _meta(self) -> dict[str, Any]:
        from rummyzoo.training.run_folder import checkpoint_meta

        return checkpoint_meta(self.config, self.num_timesteps)

    def _policy(self) -> CheckpointPolicy:
        return CheckpointPolicy(self.model, self._meta(), name="learner", deterministic=True)

    @contextlib.contextmanager
    def _own_write(self) -> Any:
        """Scheduled work (an evaluation, a sample game) writes its own records at its step;
        what the algorithm has recorded and not written yet (the last update's train/*) waits
        for the algorithm's own write."""
        logger = self.logger
        pending = (
            dict(logger.name_to_value),
            dict(logger.name_to_count),
            dict(logger.name_to_excluded),
        )
        for held in (logger.name_to_value, logger.name_to_count, logger.name_to_excluded):
            held.clear()
        try:
            yield
        finally:
            logger.name_to_value.update(pending[0])
            logger.name_to_count.update(pending[1])
            logger.name_to_excluded.update(pending[2])

    def _evaluate(self) -> dict[str, Any]:
        with self._own_write():
            return self._evaluate_now()

    def _evaluate_now(self) -> dict[str, Any]:
        from rummyzoo.agents.arena.evaluate import evaluate_policy

        cfg = self.config
        options = {**cfg.env_options, **cfg.evaluation.options}
        results = {}
        scores = []
        # as the layout names them (a resumed run's earlier opponents first)
        earlier = [o for e in self.eval_history for o in e.get("results", {})]
        tags = eval_tags(cfg, earlier)
        for k, opponent in enumerate(cfg.evaluation.opponents):
            res = evaluate_policy(
                self._policy(),
                opponent,
                cfg.variant,
                cfg.num_players,
                options,
                deals=cfg.evaluation.deals,
                seed=cfg.seed * 7919 + k,
            )
            results[opponent] = res
            tag = f"eval/{tags[opponent]}"
            self.logger.record(f"{tag}/win_rate", res["win_rate"])
            self.logger.record(f"{tag}/mean_points", res["mean_points_per_game"])
            # a margin chart draws a value with its band only where all three tags are at every
            # step: an end that no interval gives (too few deals) is logged at the value
            self._with_band(f"{tag}/win_rate", res["win_rate"], res["win_rate_ci"])
            self._with_band(f"{tag}/points_per_hand", res["mean_points"], res["mean_points_ci"])
            scores.append(res[cfg.evaluation.best_metric])
        score = float(np.mean(scores))
        self.logger.record("eval/score", score)
        self.eval_history.append(
            {"steps": int(self.num_timesteps), "score": score, "results": results}
        )
        # for `curves` and `serve` while the run trains (state.json waits for a checkpoint)
        atomic_write_text(
            self.run_dir / "evaluations.json",
            json.dumps({"evaluations": self.eval_history}, indent=1) + "\n",
        )
        if self.progress is not None:
            shown = ", ".join(
                f"{o} {r['win_rate']:.3f} [{r['win_rate_ci'][0]:.3f}, {r['win_rate_ci'][1]:.3f}]"
                for o, r in results.items()
            )
            at = f"eval @{int(self.num_timesteps):,}"
            short = ", ".join(f"{o} {r['win_rate']:.2f}" for o, r in results.items())
            self.progress.set_note(f"{at}: win rate vs {shown}", f"{at}: {short}")
        self._dashboard()
        if not self._sampled_at(self.num_timesteps):
            self._sample_game()  # every evaluation comes with a sample game of those weights
        if self._beats_best(results, score):
            self.best_value = score
            save_checkpoint(
                self.model, self.ckpt_dir / "best.rz", {**self._meta(), "eval": results}
            )
        self.logger.dump(self.num_timesteps)
        return results

    def _beats_best(self, results: dict[str, Any], score: float) -> bool:
        """Whether an evaluation beats ``best.rz``'s. Where a resume changed the evaluation's
        opponents, the two are compared over the opponents both were evaluated against (the
        best's results are in its checkpoint); with none in common, the first evaluation of
        the new opponents is the best so far."""
        if self.best_value is None:
            return True
        try:
            best = read_meta(self.ckpt_dir / "best.rz").get("eval")
        except (OSError, ValueError):
            best = None
        if not isinstance(best, dict) or set(best) == set(results):
            return score > self.best_value
        metric = self.config.evaluation.best_metric
        common = [o for o in results if o in best and isinstance(best[o], dict)]
        if not common:
            warnings.warn(
                f"the evaluation's opponents ({', '.join(results)}) share none with best.rz's "
                f"({', '.join(best)}): best.rz is chosen among this evaluation and the later ones",
                stacklevel=2,
            )
            return True
        ours = float(np.mean([results[o][metric] for o in common]))
        theirs = float(np.mean([best[o][metric] for o in common]))
        return ours > theirs

    def _dashboard(self) -> None:
        """The round robin's ratings and cross table, and the strategy statistics."""
        import torch as th
        from stable_baselines3.common.logger import Figure

        from rummyzoo.agents.arena import heatmap_figure
        from rummyzoo.training.dashboard import cross_table, strategy_stats

        cfg = self.config
        never = ("stdout", "log", "json", "csv")
        seed = cfg.seed * 7919 + 1000 + len(self.eval_history)
        if cfg.evaluation.cross_table_deals:
            report = cross_table(self._policy(), cfg, self.pool, seed)
            for label, entry in report["agents"].items():
                if entry.get("rating") is None:
                    continue
                if label == "learner":
                    # (no interval from fewer than 10 deals, nor an end the data do not bound)
                    self._with_band("rating/learner", entry["rating"], entry["rating_ci"])
                else:
                    self.logger.record(f"rating/{label}", entry["rating"])
            self.logger.record(
                "eval/cross_table", Figure(heatmap_figure(report), close=True), never
            )
        if cfg.evaluation.strategy_games:
            scalars, histograms = strategy_stats(self._policy(), cfg, seed)
            for name, value in scalars.items():
                self.logger.record(f"strategy/{name}", value)
            for name, values in histograms.items():
                self.logger.record(
                    f"strategy/{name}_hist", th.as_tensor(values, dtype=th.float32), never
                )

    def _sampled_at(self, steps: int) -> bool:
        return (self.run_dir / "games" / f"sample_{int(steps):09d}.json").exists()

    def _sample_game(self) -> None:
        from rummyzoo.agents.arena.evaluate import sample_game
        from rummyzoo.envs.replay import save_replay
        from rummyzoo.training.dashboard import sample_markdown

        cfg = self.config
        opponent = cfg.evaluation.opponents[0]
        _text, replay = sample_game(
            self._policy(),
            opponent,
            cfg.variant,
            cfg.num_players,
            {**cfg.env_options, **cfg.evaluation.options},
            seed=int(self.num_timesteps),
        )
        name = f"sample_{int(self.num_timesteps):09d}.json"
        save_replay(replay, self.run_dir / "games" / name)
        title = (
            f"sample game at step {int(self.num_timesteps):,}: learner (player_0) vs {opponent} "
            f"(games/{name}; rummyzoo replay FILE --html OUT.html to step through it)"
        )
        markdown = sample_markdown(replay, title)
        self.logger.record("text/sample_game", markdown, exclude=("stdout", "log", "json", "csv"))

    # ---------------------------------------------------------- checkpoints
    def _checkpoint(self) -> None:
        steps = int(self.num_timesteps)
        path = save_checkpoint(self.model, self.ckpt_dir / f"ckpt_{steps:09d}.rz", self._meta())
        self.periodic.append(str(path))
        dropped = self.periodic[: -self.config.checkpoints.keep]
        self.periodic = self.periodic[-self.config.checkpoints.keep :]
        self._save_last()
        for old in dropped:  # once the state that names them is replaced
            Path(old).unlink(missing_ok=True)

    def _save_files(self, staging: Path) -> None:
        """The checkpoint's files, written into the staging folder (``state.json`` aside)."""
        # last.zip: the trusted resume file (SB3 zip, optimizer state); last.rz: the checkpoint.
        save_resume_checkpoint(self.model, staging / "last.zip", self._meta())
        save_checkpoint(self.model, staging / "last.rz", self._meta())
        if self.config.algo == "dqn" and self.config.checkpoints.save_replay_buffer:
            self.model.save_replay_buffer(str(staging / "last_replay_buffer.pkl"))

    def _save_last(self) -> None:
        """Save the resume set (the checkpoint's files and ``state.json``) as one: staged,
        then moved into place (:mod:`rummyzoo.training.run_state`); then drop the pool files
        the new state no longer names."""
        staging = staging_dir(self.run_dir)
        self._save_files(staging)
        best = self.ckpt_dir / "best.rz"
        if best.exists():  # the best so far, as the resume set knows it (run_state.rewind_best)
            shutil.copyfile(best, staging / BEST_AT_CHECKPOINT)
        atomic_write_text(staging / "state.json", json.dumps(self._state(), indent=2) + "\n")
        commit_staged(self.run_dir)
        if self.config.algo == "dqn" and not self.config.checkpoints.save_replay_buffer:
            # a buffer of an earlier checkpoint (saved before the setting was turned off)
            (self.ckpt_dir / "last_replay_buffer.pkl").unlink(missing_ok=True)
        keep = {Path(p["path"]).name for p in self.pool}
        if self.pool_dir.is_dir():
            for path in self.pool_dir.glob("snapshot_*"):
                if path.name not in keep:
                    path.unlink(missing_ok=True)

    def _state(self) -> dict[str, Any]:
        """What ``state.json`` records of the run at its last checkpoint (paths in the run
        folder, so that the folder can move)."""
        state = {
            "steps": int(self.num_timesteps),
            "pool": [{**p, "path": run_relative(p["path"])} for p in self.pool],
            "best_value": self.best_value,
            "eval_history": self.eval_history,
            "periodic": [run_relative(p) for p in self.periodic],
            "rating": self.rating,
            "fixed": fixed_fields(self.config),
        }
        if self.pretrain is not None:
            state["pretrain"] = self.pretrain
        state["seconds"] = self.run_seconds()
        state["pool_results"] = [list(r) for r in self._pool_results]
        mixture = self._league()
        if mixture is not None:
            state["league_results"] = mixture.results()
        if self.warm_start_seconds is not None:
            state["warm_start_seconds"] = self.warm_start_seconds
        logger = self.logger
        state["pending_records"] = [
            [name, float(value), list(logger.name_to_excluded.get(name) or ())]
            for name, value in logger.name_to_value.items()
            if isinstance(value, (int, float, np.integer, np.floating))
            and not isinstance(value, bool)
            and math.isfinite(float(value))
        ]
        if self.config.algo == "dqn":  # whether last_replay_buffer.pkl is this checkpoint's
            state["replay_buffer"] = self.config.checkpoints.save_replay_buffer
        return state

    def _restore_league(self) -> None:
        """The league as the checkpoint had it (a resumed run's): in the training env's
        league, and in every share of a run over several processes (whose helpers draw from
        their own results with DQN's step-by-step exchange)."""
        mixture = self._league()
        if mixture is None or self._league_results is None:
            return
        mixture.set_results(self._league_results)
        shares = getattr(self.training_env, "set_league_results", None)
        if shares is not None and hasattr(self.training_env, "processes"):
            shares(self._league_results)

    def _league(self) -> Any:
        """The training env's league where it keeps one (PFSP's results): the batched env's
        opponent mixture, or a :class:`SeatLeague` over the per-game envs'."""
        if self.config.league.sampling != "pfsp" or getattr(self, "training_env", None) is None:
            return None
        mixture = getattr(self.training_env, "opponents", None)
        if mixture is not None:
            return mixture if getattr(mixture, "pfsp_exponent", None) is not None else None
        if self._seat_league is None:
            self._seat_league = SeatLeague(self.training_env, self.config.league.window)
        return self._seat_league

    def run_seconds(self) -> float:
        """The run's wall time so far, its earlier sessions included."""
        return self.seconds_before + time.perf_counter() - self.session_started

    def finish(self, model: Any) -> None:
        """At the end of training: an evaluation of the final weights (unless these very
        weights were just scored) and the last checkpoint, with the periodic one where the run
        ends on its step (as a rollout starting there would have written it)."""
        self.model = model
        self.num_timesteps = int(model.num_timesteps)
        if not self.eval_history or self.eval_history[-1]["steps"] != self.num_timesteps:
            self._evaluate()
        if self.num_timesteps >= self._next_ckpt:
            self._next_ckpt += self.config.checkpoints.interval
            self._checkpoint()  # the resume set as well
        else:
            self._save_last()
