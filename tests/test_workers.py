"""WorkerVectorEnv: the vector engine over worker processes plays the very games of VectorEnv."""

from __future__ import annotations

import gc
import itertools
import json
import multiprocessing
import os
import signal
import subprocess
import sys
import textwrap
from multiprocessing import shared_memory

import numpy as np
import pytest

from rummyzoo.envs import registry
from rummyzoo.envs.core import ConfigError, IllegalActionError
from rummyzoo.envs.vector import VectorEnv, uniform_legal_actions
from rummyzoo.envs.workers import WorkerVectorEnv, settled_heap, split_games

ARRAYS = (
    "observations",
    "action_masks",
    "current",
    "rewards",
    "hand_done",
    "terminated",
    "truncated",
    "matches_done",
)


def pair(variant, num_envs=6, num_workers=2, infos=False, **options):
    workers = WorkerVectorEnv(variant, num_envs, num_workers=num_workers, infos=infos, **options)
    single = VectorEnv(registry.make_game(variant, 2, **options), num_envs, infos=infos)
    return workers, single


def snapshot(env):
    return {name: getattr(env, name).copy() for name in ARRAYS}


def assert_same(workers, single, where=""):
    for name in ARRAYS:
        a, b = getattr(workers, name), getattr(single, name)
        assert a.dtype == b.dtype and a.shape == b.shape, name
        assert np.array_equal(a, b), f"{name} differs {where}"
    if single.keep_infos:
        assert workers.infos == single.infos, f"infos differ {where}"


def test_split_games():
    assert split_games(7, 3).tolist() == [0, 3, 5, 7]
    assert split_games(6, 2).tolist() == [0, 3, 6]
    assert split_games(4, 4).tolist() == [0, 1, 2, 3, 4]


@pytest.mark.parametrize(
    ("variant", "infos", "options"),
    [
        # several hands per match, hands cut by the turn cap: every kind of end and info
        ("knock_rummy", True, {"target_score": 60, "max_turns": 30}),
        ("ditch_rummy", False, {"max_hands": 2, "max_turns": 40}),
        ("rummy500", False, {"target_score": 150, "max_turns": 60}),
    ],
)
def test_same_games_as_vector_env(variant, infos, options):
    workers, single = pair(variant, infos=infos, **options)
    with workers:
        assert workers.num_actions == single.num_actions
        assert workers.obs_size == single.obs_size
        assert workers.num_players == single.num_players == 2
        workers.reset(seed=11)
        single.reset(seed=11)
        assert_same(workers, single, "after reset")
        rng = np.random.default_rng(5)
        ends = 0
        for step in range(300):
            actions = uniform_legal_actions(single.action_masks, rng)
            workers.step(actions)
            single.step(actions)
            assert_same(workers, single, f"after step {step}")
            ends += int((single.terminated | single.truncated).sum())
        assert ends > 0 and single.matches_done.sum() == ends
        finished = np.flatnonzero(single.matches_done)
        for g in (int(finished[0]), int(finished[-1])):
            for seat in range(2):
                assert np.array_equal(
                    workers.final_observation(g, seat), single.final_observation(g, seat)
                )
        for g in (0, 5):
            assert np.array_equal(workers.observe(g, 1), single.observe(g, 1))
            assert workers.render(g) == single.render(g)
            assert workers.render(g, 0) == single.render(g, 0)
        # reset with one seed per game, then again: the same games
        seeds = [100, 7, 3, 42, 9, 1]
        workers.reset(seeds)
        single.reset(seeds)
        assert_same(workers, single, "after a reset with seeds")
        for step in range(20):
            actions = uniform_legal_actions(single.action_masks, rng)
            workers.step(actions)
            single.step(actions)
            assert_same(workers, single, f"after step {step} of the second run")


def test_games_subset_matches():
    workers, single = pair("knock_rummy", num_envs=7, infos=True, target_score=40, max_turns=20)
    with workers:
        workers.reset(seed=3)
        single.reset(seed=3)
        rng = np.random.default_rng(1)
        subsets = [
            lambda: np.arange(7),
            lambda: np.array([], dtype=np.int64),
            lambda: np.array([0, 2]),  # worker 0 only
            lambda: np.array([6, 4]),  # worker 1 only, not in order
            lambda: np.flatnonzero(rng.random(7) < 0.5),
        ]
        ends = 0
        for step in range(300):
            games = subsets[step % len(subsets) if step % 3 else 4]()
            actions = uniform_legal_actions(single.action_masks[games], rng)
            workers.step(actions, games=games)
            single.step(actions, games=games)
            assert_same(workers, single, f"after step {step} (games {games.tolist()})")
            ends += int((single.terminated | single.truncated).sum())
        assert ends > 0


def test_illegal_action_changes_nothing():
    workers, single = pair("ditch_rummy", num_envs=6, infos=True)
    with workers:
        workers.reset(seed=2)
        single.reset(seed=2)
        rng = np.random.default_rng(0)
        for _ in range(5):
            actions = uniform_legal_actions(single.action_masks, rng)
            workers.step(actions)
            single.step(actions)
        before = snapshot(workers)
        legal = uniform_legal_actions(single.action_masks, rng)
        for game in (1, 4):  # a game of each worker
            illegal = legal.copy()
            illegal[game] = int(np.flatnonzero(single.action_masks[game] == 0)[0])
            bad_actions = [illegal, legal.copy(), legal.astype(object)]
            bad_actions[1][game] = single.num_actions + 3
            bad_actions[2][game] = "draw"
            for bad in bad_actions:
                with pytest.raises(IllegalActionError) as expected:
                    single.step(bad)
                with pytest.raises(IllegalActionError) as got:
                    workers.step(bad)
                assert str(got.value).startswith(f"game {game}: ")
                assert str(got.value) == str(expected.value)
                assert_same(workers, single, "after a refused step")
                for name, array in before.items():
                    assert np.array_equal(getattr(workers, name), array), name
        # a subset with an illegal action, and checks that change nothing either
        games = np.array([5, 0])
        bad = legal[games].copy()
        bad[0] = int(np.flatnonzero(single.action_masks[5] == 0)[0])
        with pytest.raises(IllegalActionError) as expected:
            single.check(bad, games)
        with pytest.raises(IllegalActionError) as got:
            workers.step(bad, games)
        assert str(got.value) == str(expected.value) and str(got.value).startswith("game 5: ")
        with pytest.raises(ValueError):
            workers.step(legal[:2], games=np.array([1, 1]))
        assert workers.check(legal)[1].tolist() == legal.tolist()
        for name, array in before.items():
            assert np.array_equal(getattr(workers, name), array), name
        # the shared arrays are read-only here: an edited mask cannot let an action through
        with pytest.raises(ValueError, match="read-only"):
            workers.action_masks[1, int(np.flatnonzero(single.action_masks[1] == 0)[0])] = 1
        for array in (workers.rewards, workers.terminated, workers.matches_done):
            with pytest.raises(ValueError, match="read-only"):
                array[0] = 0
            with pytest.raises(ValueError, match="WRITEABLE"):
                array.flags.writeable = True
        # the shared masks judge the actions, not whatever the attribute holds
        workers.action_masks = np.ones_like(workers.action_masks)
        with pytest.raises(IllegalActionError) as got:
            workers.step(bad, games)
        assert str(got.value) == str(expected.value)
        workers.action_masks = workers.buffers["action_masks"]
        # numpy values are sent as they are: the refusal reads as the one-process engine's
        for value in (np.float64(1.0), np.str_("draw stock")):
            wrong = [*legal[:4].tolist(), value, *legal[5:].tolist()]
            with pytest.raises(IllegalActionError) as expected_numpy:
                single.check(wrong)
            with pytest.raises(IllegalActionError) as got_numpy:
                workers.step(wrong)
            assert str(got_numpy.value) == str(expected_numpy.value)
        workers.step(legal)
        single.step(legal)
        assert_same(workers, single, "after the legal step")


def test_queries_name_the_game():
    workers, single = pair("knock_rummy", num_envs=5)
    with workers:
        with pytest.raises(RuntimeError, match="reset"):
            workers.step(np.zeros(5, dtype=np.int64))
        for query in ("final_observation", "observe"):  # before a reset, as one process says
            with pytest.raises(RuntimeError) as expected:
                getattr(single, query)(1, 0)
            with pytest.raises(RuntimeError) as got:
                getattr(workers, query)(1, 0)
            assert str(got.value) == str(expected.value), query
        workers.reset(seed=0)
        single.reset(seed=0)
        for g in (1, 4):
            with pytest.raises(ValueError) as expected:
                single.final_observation(g, 0)
            with pytest.raises(ValueError) as got:
                workers.final_observation(g, 0)
            assert str(got.value) == str(expected.value)
        # an index that is no game is refused as the single process refuses it (a negative
        # one counted from the end before, where the single process refuses it)
        for query in ("final_observation", "observe"):
            for g in (-1, 5, 1.0, True):
                with pytest.raises(ValueError) as expected:
                    getattr(single, query)(g, 0)
                with pytest.raises(ValueError) as got:
                    getattr(workers, query)(g, 0)
                assert str(got.value) == str(expected.value), (query, g)
        with pytest.raises(ValueError, match=r"game must be an int in 0\.\.4, got -1"):
            workers.render(-1)
        with pytest.raises(ValueError):
            workers.reset([1, 2])
        assert np.array_equal(workers.observe(4, 0), single.observe(4, 0))


def test_bad_config_starts_nothing():
    before = len(multiprocessing.active_children())
    with pytest.raises(ConfigError, match="bogus"):
        WorkerVectorEnv("knock_rummy", 4, bogus=1)
    with pytest.raises(ConfigError):
        WorkerVectorEnv("ditch_rummy", 4, max_turns=-3)
    with pytest.raises(ValueError, match="unknown variant"):
        WorkerVectorEnv("gin", 4)
    for bad in (0, 5, True, 1.5, None):
        with pytest.raises(ConfigError, match="num_workers"):
            WorkerVectorEnv("knock_rummy", 4, num_workers=bad)
    for bad in (0, -2, 2.0):
        with pytest.raises(ConfigError, match="num_envs"):
            WorkerVectorEnv("knock_rummy", bad)
    with pytest.raises(ConfigError, match="start_method"):
        WorkerVectorEnv("knock_rummy", 4, start_method="thread")
    assert len(multiprocessing.active_children()) == before


def test_objects_of_the_callers_script_reach_no_worker_that_cannot_read_them(tmp_path):
    """The workers do not import the caller's script, so an object of a class it defines (an
    int subclass, an ``IntEnum`` of seats or actions) could not be unpickled there: the worker
    died on it and the engine closed, where one process answered or refused it."""
    script = tmp_path / "user.py"
    script.write_text(
        textwrap.dedent(
            """
            import enum
            import json

            import numpy as np

            from rummyzoo.envs.registry import make_vector
            from rummyzoo.envs.workers import WorkerVectorEnv


            class Seat(int):
                pass


            class Act(enum.IntEnum):
                BIG = 999


            class Odd:
                pass


            def outcome(call):
                try:
                    value = call()
                except Exception as exc:
                    return f"{type(exc).__name__}: {exc}"
                return np.asarray(value).tolist() if not isinstance(value, str) else value


            if __name__ == "__main__":
                single = make_vector("knock_rummy", 4, 2)
                workers = WorkerVectorEnv("knock_rummy", 4, 2, num_workers=2)
                found = {}
                with workers:
                    for env in (single, workers):
                        env.reset(seed=3)
                    legal = [int(np.flatnonzero(m)[0]) for m in single.action_masks]
                    odd = Odd()  # (one object: its repr names where it lives)
                    calls = {
                        "int subclass": lambda e: e.step([*legal[:3], Seat(999)]),
                        "IntEnum": lambda e: e.step([*legal[:3], Act.BIG]),
                        "object": lambda e: e.step([*legal[:3], odd]),
                        "observe": lambda e: e.observe(1, Seat(1)),
                        "render": lambda e: e.render(1, Seat(0)),
                    }
                    for name, call in calls.items():
                        found[name] = [outcome(lambda: call(single)), outcome(lambda: call(workers))]
                    found["odd seat"] = outcome(lambda: workers.observe(1, Odd()))
                    workers.step(legal)
                    single.step(legal)
                    found["closed"] = workers.closed
                    found["same"] = bool((workers.observations == single.observations).all())
                print(json.dumps(found))
            """
        )
    )
    out = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=120, cwd=tmp_path
    )
    assert out.returncode == 0, out.stderr
    found = json.loads(out.stdout)
    for name in ("int subclass", "object", "observe", "render"):
        single, workers = found[name]
        assert workers == single, name
    assert found["int subclass"][1].startswith("IllegalActionError: game 3: ")
    assert found["object"][1].startswith("IllegalActionError: game 3: ")
    single, workers = found["IntEnum"]  # (its repr: the worker reads the plain int)
    assert workers.startswith("IllegalActionError: game 3: ") and "999" in workers
    assert found["odd seat"].startswith("TypeError: a worker cannot read the request")
    assert found["closed"] is False and found["same"] is True


def test_an_unpicklable_action_is_refused_as_the_engine_in_one_process_refuses_it():
    import threading

    workers, single = pair("ditch_rummy", num_envs=4)
    with workers:
        workers.reset(seed=0)
        single.reset(seed=0)
        legal = uniform_legal_actions(single.action_masks, np.random.default_rng(0)).tolist()
        lock = threading.Lock()  # no pickle takes it to the worker that owns game 3
        with pytest.raises(IllegalActionError) as expected:
            single.step([*legal[:3], lock])
        with pytest.raises(IllegalActionError) as got:
            workers.step([*legal[:3], lock])
        assert str(got.value) == str(expected.value)
        assert "game 3: player_" in str(got.value) and "is not an action id" in str(got.value)


def test_a_worker_that_fails_to_start_closes_its_shared_block_quietly():
    """A worker whose engine cannot be built reports why, and lets go of the shared block
    before it exits (a block closed while views of it live complains on stderr)."""
    script = textwrap.dedent(
        """
        import types
        from rummyzoo.envs.native import load_kernels
        from rummyzoo.envs.workers import WorkerVectorEnv

        real = load_kernels()
        fake = types.ModuleType("kernels_no_worker_imports")
        fake.__dict__.update({k: getattr(real, k) for k in dir(real) if not k.startswith("__")})
        try:
            WorkerVectorEnv("knock_rummy", 4, num_workers=1, kernels=fake)
        except RuntimeError as exc:
            print("refused:", str(exc).splitlines()[0])
        """
    )
    from rummyzoo.envs.native import load_kernels

    if load_kernels() is None:
        pytest.skip("needs the compiled kernels")
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True
    )
    assert "refused: worker 0 of 1 failed" in done.stdout, done.stdout + done.stderr
    assert "kernels_no_worker_imports" in done.stdout
    assert "Exception ignored" not in done.stderr, done.stderr


def test_close_unlinks_and_is_idempotent():
    env = WorkerVectorEnv("knock_rummy", 3, num_workers=3)
    env.reset(seed=1)
    name = env._shm.name
    procs = list(env._procs)
    assert all(p.is_alive() for p in procs)
    shared_memory.SharedMemory(name=name).close()  # open while the engine runs
    masks = env.action_masks.copy()
    env.close()
    env.close()
    assert env.closed
    with pytest.raises(FileNotFoundError):
        shared_memory.SharedMemory(name=name)
    assert np.array_equal(env.action_masks, masks)  # still readable: a copy
    with pytest.raises(RuntimeError, match="closed"):
        env.step(np.zeros(3, dtype=np.int64))
    with pytest.raises(RuntimeError, match="closed"):
        env.observe(0, 0)
    # a view held outside does not stop close(), nor keep the name
    with WorkerVectorEnv("knock_rummy", 2, num_workers=1) as other:
        other.reset(seed=0)
        held = other.observations
        before = held.copy()
        name = other._shm.name
    assert held.shape == (2, other.obs_size) and np.array_equal(held, before)
    with pytest.raises(FileNotFoundError):
        shared_memory.SharedMemory(name=name)


def test_arrays_held_past_close_stay_readable():
    """An array the engine handed out stays readable after close(), and after the engine is
    collected: it used to point at the unmapped block, and reading it crashed the process
    (so the reading runs in a process of its own)."""
    import subprocess
    import sys
    import textwrap

    code = textwrap.dedent(
        """
        import gc
        import numpy as np
        from rummyzoo.envs.workers import WorkerVectorEnv

        def arrays():
            env = WorkerVectorEnv("knock_rummy", 4, num_workers=2)
            env.reset(seed=0)
            return env.observations, env.action_masks  # the engine closes when collected

        with WorkerVectorEnv("knock_rummy", 4, num_workers=2) as env:
            env.reset(seed=0)
            obs, masks = env.observations, env.action_masks
            want = obs.copy(), masks.copy()
        late_obs, late_masks = arrays()
        gc.collect()
        assert np.array_equal(obs, want[0]) and np.array_equal(masks, want[1])
        assert np.array_equal(late_obs, want[0]) and np.array_equal(late_masks, want[1])
        print("read", float(obs.sum()))
        """
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.startswith("read") and "Exception ignored" not in done.stderr


def test_dead_worker_raises_and_closes():
    env = WorkerVectorEnv("knock_rummy", 4, num_workers=2)
    env.reset(seed=0)
    name = env._shm.name
    os.kill(env._procs[1].pid, signal.SIGKILL)
    env._procs[1].join(5)
    with pytest.raises(RuntimeError, match="worker 1"):
        env.step(uniform_legal_actions(env.action_masks, np.random.default_rng(0)))
    assert env.closed
    with pytest.raises(FileNotFoundError):
        shared_memory.SharedMemory(name=name)
    env.close()


def test_failing_worker_reports_its_error():
    env = WorkerVectorEnv("knock_rummy", 4, num_workers=2)
    try:
        env.reset(seed=0)
        # a step the parent lets through but the worker cannot play (the parent's check
        # skipped): the worker's own check refuses it and its traceback comes back
        env._selected[:] = False
        env._actions[:] = -1
        with pytest.raises(
            RuntimeError, match=r"worker 0 of 2 failed: .*IllegalActionError: game 0: "
        ):
            env._exchange([0], b"a")
        assert env.closed
    finally:
        env.close()


def test_spawn_and_one_worker():
    workers, single = pair("rummy500", num_envs=3, num_workers=1)
    workers.close()
    workers = WorkerVectorEnv("rummy500", 3, num_workers=1, start_method="spawn")
    with workers:
        assert workers.start_method == "spawn"
        workers.reset(seed=4)
        single.reset(seed=4)
        rng = np.random.default_rng(4)
        for step in range(30):
            actions = uniform_legal_actions(single.action_masks, rng)
            workers.step(actions)
            single.step(actions)
            assert_same(workers, single, f"after step {step}")


def test_workers_do_not_run_the_main_script(tmp_path):
    # a script whose own imports (here a stand-in for torch) the workers need not load
    (tmp_path / "heavy_marker.py").write_text("LOADED = True\n")
    script = tmp_path / "train.py"
    script.write_text(
        textwrap.dedent(
            """
            import json
            import multiprocessing
            import sys

            import heavy_marker  # noqa: F401

            from rummyzoo.envs.workers import WorkerVectorEnv


            def loaded(queue):
                queue.put("heavy_marker" in sys.modules)


            if __name__ == "__main__":
                # an ordinary spawned process runs this script: it loads the marker
                ctx = multiprocessing.get_context("spawn")
                queue = ctx.Queue()
                process = ctx.Process(target=loaded, args=(queue,))
                process.start()
                found = {"plain spawn": queue.get(timeout=30)}
                process.join()
                for method in ("forkserver", "spawn"):
                    with WorkerVectorEnv("knock_rummy", 2, 2, 1, start_method=method) as env:
                        env.reset(seed=0)
                        modules = env._worker_modules()
                    found[method] = "heavy_marker" in modules
                assert sys.modules["__main__"].__file__ == __file__
                print(json.dumps(found))
            """
        )
    )
    out = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=60, cwd=tmp_path
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == '{"plain spawn": true, "forkserver": false, "spawn": false}'


def test_per_worker_steps_match_a_vector_env_per_slice():
    """send_step / wait_step / wait_any: each worker's slice is a VectorEnv of its games
    stepped with the actions it was sent, whatever the interleaving of the workers."""
    n = 7
    options = {"target_score": 40, "max_turns": 20}
    workers = WorkerVectorEnv("knock_rummy", n, num_workers=2, infos=True, **options)
    game = registry.make_game("knock_rummy", 2, **options)
    bounds = workers.bounds.tolist()
    assert bounds == [0, 4, 7]
    parts = [VectorEnv(game, hi - lo, infos=True) for lo, hi in itertools.pairwise(bounds)]

    def assert_slice(w, where):
        lo, part = bounds[w], parts[w]
        cut = slice(lo, bounds[w + 1])
        for name in (*ARRAYS, "hand_points", "winners"):
            got, want = getattr(workers, name)[cut], getattr(part, name)
            if name in ("hand_points", "winners"):  # stale where no hand / match ended
                rows = part.hand_done if name == "hand_points" else part.terminated
                got, want = got[rows], want[rows]
            assert np.array_equal(got, want, equal_nan=name == "hand_points"), (
                f"{name} of worker {w} differs {where}"
            )
        assert workers.infos[cut] == part.infos, f"infos of worker {w} differ {where}"
        for local in np.flatnonzero(part.terminated | part.truncated).tolist():
            for seat in range(2):
                assert np.array_equal(
                    workers.final_observation(lo + local, seat),
                    part.final_observation(local, seat),
                )

    def send(w, local, rng, part_games=True):
        part = parts[w]
        acts = uniform_legal_actions(part.action_masks[local], rng)
        workers.send_step(acts, local + bounds[w])
        part.step(acts, local if part_games else None)

    with workers:
        workers.reset(seed=3)
        for w, part in enumerate(parts):
            part.reset([3 + g for g in range(bounds[w], bounds[w + 1])])
            assert_slice(w, "after reset")
        assert workers.in_flight == []
        rng = np.random.default_rng(8)
        ends = 0
        for step in range(400):
            w = int(rng.integers(2))
            size = bounds[w + 1] - bounds[w]
            if w in workers.in_flight:
                if rng.random() < 0.5:
                    workers.wait_step(w)
                else:
                    w = workers.wait_any()
                assert w not in workers.in_flight
                assert_slice(w, f"after step {step}")
                ends += int((parts[w].terminated | parts[w].truncated).sum())
                continue
            # the busy worker refuses anything that touches its slice
            other = 1 - w
            if other in workers.in_flight:
                g = bounds[other]
                with pytest.raises(RuntimeError, match=f"worker {other} has a step in flight"):
                    workers.send_step(workers.action_masks[[g]].argmax(axis=1), [g])
                with pytest.raises(RuntimeError, match="in flight"):
                    workers.observe(g, 0)
                with pytest.raises(RuntimeError, match="in flight"):
                    workers.final_observation(g, 0)
                with pytest.raises(RuntimeError, match="in flight"):
                    workers.step(np.zeros(n, dtype=np.int64))
                with pytest.raises(RuntimeError, match="in flight"):
                    workers.reset(seed=0)
            if step % 7 == 0:
                # an illegal action in the idle worker's games: refused, nothing changes
                local = np.arange(size)
                part = parts[w]
                acts = uniform_legal_actions(part.action_masks, rng)
                k = int(rng.integers(size))
                acts[k] = int(np.flatnonzero(part.action_masks[k] == 0)[0])
                before = {name: getattr(workers, name).copy() for name in ("rewards", *ARRAYS)}
                with pytest.raises(IllegalActionError) as expected:
                    part.step(acts)
                with pytest.raises(IllegalActionError) as got:
                    workers.send_step(acts, local + bounds[w])
                want = str(expected.value).replace(f"game {k}: ", f"game {k + bounds[w]}: ", 1)
                assert str(got.value) == want
                assert w not in workers.in_flight
                for name, array in before.items():
                    if other not in workers.in_flight:
                        assert np.array_equal(getattr(workers, name), array), name
                    else:  # the other worker may be writing its slice meanwhile
                        cut = slice(bounds[w], bounds[w + 1])
                        assert np.array_equal(getattr(workers, name)[cut], array[cut]), name
                continue
            if step % 11 == 0 and other not in workers.in_flight:
                # one send_step for games of both workers (not in order)
                games = np.flatnonzero(rng.random(n) < 0.6)[::-1]
                for v in range(2):
                    mine = games[(games >= bounds[v]) & (games < bounds[v + 1])]
                    if mine.size:
                        send(v, mine - bounds[v], rng)
                continue
            choice = rng.random()
            if choice < 0.4:
                send(w, np.arange(size), rng, part_games=False)  # all its games
            else:
                local = np.flatnonzero(rng.random(size) < 0.5)
                if local.size == 0:
                    workers.send_step(np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64))
                    assert w not in workers.in_flight  # nothing to send
                    continue
                send(w, local[::-1], rng)
            assert w in workers.in_flight
            if other not in workers.in_flight:  # only the slice sent a step changes
                assert_slice(other, f"after a step sent to worker {w}")
        assert ends > 0
        for w in workers.in_flight:
            workers.wait_step(w)
            assert_slice(w, "at the end")
        with pytest.raises(ValueError, match="no worker has a step in flight"):
            workers.wait_any()
        with pytest.raises(ValueError, match="no step in flight"):
            workers.wait_step(0)
        with pytest.raises(ValueError, match="worker must be"):
            workers.wait_step(2)
        # step() after per-worker stepping: still each slice's VectorEnv
        for step in range(30):
            acts = [uniform_legal_actions(part.action_masks, rng) for part in parts]
            workers.step(np.concatenate(acts))
            for w, part in enumerate(parts):
                part.step(acts[w])
                assert_slice(w, f"after step() {step}")
        # a seat the shared final observations do not hold: the worker's own error
        finished = int(np.flatnonzero(workers.matches_done)[0])
        w = int(finished >= bounds[1])
        with pytest.raises(Exception) as expected:
            parts[w].final_observation(finished - bounds[w], 5)
        with pytest.raises(type(expected.value)):
            workers.final_observation(finished, 5)


def test_a_dead_worker_fails_the_per_worker_steps():
    env = WorkerVectorEnv("knock_rummy", 4, num_workers=2)
    try:
        env.reset(seed=0)
        rng = np.random.default_rng(0)
        env.send_step(uniform_legal_actions(env.action_masks[:2], rng), [0, 1])
        os.kill(env._procs[1].pid, signal.SIGKILL)
        env._procs[1].join(5)
        assert env.wait_any() == 0  # worker 0 is fine
        with pytest.raises(RuntimeError, match="worker 1"):
            env.send_step(uniform_legal_actions(env.action_masks[2:], rng), [2, 3])
        assert env.closed and env.in_flight == []
    finally:
        env.close()


def test_settled_heap_freezes_the_heap_for_the_block_and_hands_it_back():
    assert gc.get_freeze_count() == 0
    held = [[] for _ in range(100)]  # long-lived objects, alive before the block
    with settled_heap():
        assert gc.get_freeze_count() >= len(held)
        # cyclic garbage made inside the block is still collected
        cycle = []
        cycle.append(cycle)
        del cycle
        assert gc.collect() >= 1
    assert gc.get_freeze_count() == 0
    with pytest.raises(RuntimeError, match="boom"), settled_heap():
        raise RuntimeError("boom")
    assert gc.get_freeze_count() == 0
    # a process that froze objects of its own keeps them frozen
    gc.freeze()
    try:
        before = gc.get_freeze_count()
        with settled_heap():
            pass
        assert gc.get_freeze_count() >= before
    finally:
        gc.unfreeze()


def test_a_worker_engine_refuses_to_be_copied_and_says_what_to_copy():
    import copy
    import pickle

    with WorkerVectorEnv("knock_rummy", 4, num_workers=2) as workers:
        workers.reset(seed=1)
        for clone in (copy.deepcopy, pickle.dumps):
            with pytest.raises(TypeError, match="copy a VectorEnv"):
                clone(workers)
        workers.step(np.zeros(4, dtype=np.int64) + np.argmax(workers.action_masks, axis=1))


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="no CPU affinity here")
def test_default_worker_counts_follow_the_cpus_this_process_may_use():
    """taskset, or a container's cpuset, limits the processors: the default workers of the
    arena and of evaluate are those, not every processor of the machine."""
    from rummyzoo.agents.arena import ArenaWorkers
    from rummyzoo.envs.workers import usable_cpus

    allowed = os.sched_getaffinity(0)
    assert usable_cpus() == len(allowed)
    try:
        os.sched_setaffinity(0, {min(allowed)})
        assert usable_cpus() == 1 and ArenaWorkers(None).workers == 1
    finally:
        os.sched_setaffinity(0, allowed)
