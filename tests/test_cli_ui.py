"""The terminal front ends and the files they write: the demo, the replay viewer's step mode,
the hints of the terminal game, the arena heatmap's title, the modes of written files."""

from __future__ import annotations

import json
import os
import re
import signal
import stat
import sys
import time
from pathlib import Path

import pytest

from rummyzoo.cli.demo import play_demo
from rummyzoo.cli.main import main
from rummyzoo.envs.files import atomic_write_bytes, atomic_write_text

pytestmark = pytest.mark.above_rules  # make test runs these once, with the compiled kernels

VARIANTS = ("knock_rummy", "ditch_rummy", "rummy500")


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


# ------------------------------------------------------------------ written files
def test_atomic_writes_get_the_mode_of_a_plain_open(tmp_path) -> None:
    expected = 0o666 & ~_umask()
    atomic_write_text(tmp_path / "state.json", "{}\n")
    atomic_write_bytes(tmp_path / "sub" / "data.bin", b"\x00\x01")
    with open(tmp_path / "plain.txt", "w") as fh:
        fh.write("x")
    for name in ("state.json", "sub/data.bin", "plain.txt"):
        assert stat.S_IMODE((tmp_path / name).stat().st_mode) == expected, name
    assert (tmp_path / "state.json").read_text() == "{}\n"
    # Replacing a file keeps its mode, as writing it with open() would.
    os.chmod(tmp_path / "state.json", 0o640)
    atomic_write_text(tmp_path / "state.json", "[]\n")
    assert stat.S_IMODE((tmp_path / "state.json").stat().st_mode) == 0o640
    assert (tmp_path / "state.json").read_text() == "[]\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["plain.txt", "state.json", "sub"]


def test_atomic_writes_keep_links_and_write_pipes_and_devices_as_they_are(tmp_path) -> None:
    import threading

    target = tmp_path / "real.json"
    target.write_text("old")
    (tmp_path / "out.json").symlink_to(target)
    atomic_write_text(tmp_path / "out.json", "new")
    assert (tmp_path / "out.json").is_symlink() and target.read_text() == "new"
    atomic_write_text("/dev/null", "nothing")  # not replaced by a file (CI runs as root)
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)
    fifo = tmp_path / "pipe"  # as --json >(jq .) gives
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_text()))
    reader.start()
    atomic_write_text(fifo, "through the pipe")
    reader.join(5)
    assert got == ["through the pipe"] and stat.S_ISFIFO(os.stat(fifo).st_mode)


# ------------------------------------------------------------------ arena heatmap
def _arena_report(**options):
    from rummyzoo.agents.arena import run_arena, summarize

    result = run_arena(
        "knock_rummy", 2, ["knock.greedy", "random"], deals=3, seed=1, options=options
    )
    return summarize(result, resamples=20)


def test_heatmap_title_names_the_run(tmp_path, monkeypatch) -> None:
    import matplotlib.figure

    from rummyzoo.agents.arena import heatmap_figure, write_heatmap

    report = _arena_report(target_score=100, max_turns=200)
    report["deals"] = 2000  # as a long run would report
    title = heatmap_figure(report).get_suptitle()
    flat = " ".join(title.split())  # the title is wrapped to the figure's width
    assert flat == (
        "knock_rummy, 2 players, 2,000 deals, target_score=100, max_turns=200 "
        "row's score against column"
    )
    assert title.splitlines()[-1] == "row's score against column"
    # write_heatmap saves that figure.
    saved = []
    original = matplotlib.figure.Figure.savefig

    def savefig(fig, *args, **kwargs):
        saved.append(fig.get_suptitle())
        return original(fig, *args, **kwargs)

    monkeypatch.setattr(matplotlib.figure.Figure, "savefig", savefig)
    path = write_heatmap(report, tmp_path / "cross.png")
    assert saved == [title]
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    plain = _arena_report()
    plain_title = " ".join(heatmap_figure(plain).get_suptitle().split())
    assert plain_title.startswith("knock_rummy, 2 players, 3 deals, default options")


# ------------------------------------------------------------------ demo
def _final_points(lines: list[str], n: int) -> list[float]:
    """The game's points from the last ``n`` lines, which must be the points lines."""
    tail = lines[-n:]
    for seat, line in enumerate(tail):
        assert re.fullmatch(rf"player_{seat}: [+-]\d+(\.\d+)? points", line), tail
    assert lines[-n - 1].startswith("game over after ")
    return [float(line.split()[1]) for line in tail]


@pytest.mark.parametrize("variant", VARIANTS)
def test_demo_ends_with_the_games_points_and_quiet_is_short(variant) -> None:
    out: list[str] = []
    episode = play_demo(variant, 2, seed=1, quiet=True, output=out.append)
    quiet = "\n".join(out).splitlines()
    hand_lines = [line for line in quiet if re.match(r"hand \d+: ", line)]
    assert len(hand_lines) == episode.hands
    summed = [0.0, 0.0]
    for line in hand_lines:
        for seat, points in re.findall(r"player_(\d) ([+-]\d+)", line.split(" (totals")[0]):
            summed[int(seat)] += float(points)
    # The final lines are the game's points: every hand's points added up (not the last hand's).
    assert _final_points(quiet, 2) == summed == episode.points.tolist()
    assert len(quiet) <= episode.hands + 20  # no moves: a line per hand and the final table
    assert not any(re.match(r"player_\d: (draw|take|discard|dig)", line) for line in quiet)

    out = []
    again = play_demo(variant, 2, seed=1, output=out.append)
    full = "\n".join(out).splitlines()
    assert again.points.tolist() == episode.points.tolist()  # the same seeded game
    assert _final_points(full, 2) == summed
    assert sum(line.startswith(("player_0: ", "player_1: ")) for line in full) >= episode.decisions
    assert [line for line in full if line.startswith("== hand ") and "over" not in line] == [
        f"== hand {k} (dealer player_{(k % 2)}) ==" for k in range(1, episode.hands + 1)
    ]
    points_lines = [line for line in full if line.startswith("hand points: ")]
    assert [line.removeprefix("hand points: ") for line in points_lines] == [
        line.split(": ", 1)[1].split(" (totals")[0] for line in hand_lines
    ]


def test_demo_command_quiet_and_help(capsys) -> None:
    assert main(["demo", "ditch_rummy", "--seed", "1", "--quiet"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) < 120  # the full game prints thousands
    _final_points(lines, 2)
    with pytest.raises(SystemExit):
        main(["demo", "--help"])
    helptext = " ".join(capsys.readouterr().out.split())
    assert "--quiet print only one line per hand (its points), the final table" in helptext
    # the rules options every command takes: one hand instead of a match to 500
    assert (
        main(["demo", "ditch_rummy", "--seed", "1", "--quiet", "--option", "target_score=null"])
        == 0
    )
    out = capsys.readouterr().out
    assert "random agents, one hand; seed 1" in out and "game over after 1 hand(s)" in out
    assert main(["demo", "ditch_rummy", "--option", "nosuch=1"]) == 2
    assert "unknown option(s) for ditch_rummy: nosuch" in capsys.readouterr().err
    # a name that is no identifier (a replay file's, say) is quoted: its control characters
    # stay escaped instead of reaching the terminal
    assert main(["demo", "ditch_rummy", "--option", "x\x1b[31m=1"]) == 2
    err = capsys.readouterr().err
    assert "for ditch_rummy: 'x\\x1b[31m';" in err and "\x1b" not in err


# ------------------------------------------------------------------ terminal game hints
def _play(variant: str, answers: str, seed: int = 1, **options):
    import io

    from rummyzoo.cli.play import play_game

    screen = io.StringIO()
    result = play_game(
        variant,
        2,
        seed=seed,
        options=options,
        input_stream=io.StringIO(answers),
        output_stream=screen,
        color=False,
    )
    return result, _letters(screen.getvalue())


def _letters(text: str) -> str:
    """The screen with suit symbols read back as letters (``Q♦`` -> ``Qd``, ``10♥`` -> ``Th``)."""
    text = re.sub(r"10([♣♦♥♠])", r"T\1", text)
    return text.translate(str.maketrans({"♣": "c", "♦": "d", "♥": "h", "♠": "s"}))


def _knock_match(deck=None, **options):
    from rummyzoo.envs.replay import make_play_match

    match = make_play_match("knock_rummy", 2, options)
    match.reset(1, deck)
    return match


def _deadwood_line(text: str) -> tuple[int, dict[str, int]]:
    found = re.search(r"^your deadwood: (\d+) \((?:.*; )?after discarding: (.*)\)$", text, re.M)
    assert found, text
    after = {}
    for item in found.group(2).split(", "):
        card, value = item.split()
        after[card] = int(value)
    return int(found.group(1)), after


def test_knock_shows_the_deadwood_before_a_knock() -> None:
    from rummyzoo.envs.cards import CARD_NAMES, parse_cards
    from rummyzoo.envs.melds import optimal_deadwood

    result, text = _play("knock_rummy", "draw stock\nquit\n")
    assert result.replay["actions"] == [[0, "draw stock"]]
    now, after = _deadwood_line(text)
    # The same position, and the rules' optimal deadwood of it.
    match = _knock_match()
    match.step(match.game.action_index("draw stock"))
    hand = match.state.hand_cards(0)
    assert now == optimal_deadwood(hand)[0]
    mask = match.legal_mask()
    knockable = [
        CARD_NAMES[c] for c in hand if mask[match.game.action_index(f"knock {CARD_NAMES[c]}")]
    ]
    assert sorted(after) == sorted(knockable) and len(after) == 11  # no limit: every card
    for card, value in after.items():
        assert value == optimal_deadwood([c for c in hand if c != parse_cards(card)[0]])[0]
    assert list(after.values()) == sorted(after.values())  # lowest first
    # Not before the draw: no knock is possible then.
    assert text.index("your deadwood:") > text.index("you: draw stock")


def test_knock_deadwood_with_a_knock_limit() -> None:
    from rummyzoo.envs.decks import deck_for

    hands = ["As 2s 3s 7h 7d 7c 4c 5c 6c Kd", "9h Jh Kh 9s Js Ks 8d Td Qd 3h"]
    match = _knock_match(deck_for(hands, "Qs", "2h 5h"), knock_max_deadwood=10)
    game = match.game
    match.step(game.action_index("draw stock"))  # 2h: melds As-3s, 7s, 4c-6c; Kd and 2h over
    legal = [int(a) for a in match.legal_mask().nonzero()[0]]
    line = game.move_hint(match.state, 0, legal)
    assert line == "your deadwood: 12 (you may knock at 10 or less; after discarding: Kd 2, 2h 10)"
    assert game.move_hint(match.state, 1, legal) is None  # not that seat's turn
    match.step(game.action_index("discard Kd"))
    match.step(game.action_index("draw stock"))  # 5h: nothing melds
    legal = [int(a) for a in match.legal_mask().nonzero()[0]]
    assert game.move_hint(match.state, 1, legal) == (
        "your deadwood: 94 (knocking needs 10 or less after the discard)"
    )


def test_ditch_draw_0_into_an_empty_hand_is_a_pass_kept_and_said() -> None:
    from rummyzoo.envs.replay import make_play_match

    # The rules allow it (the legal mask is the authority) and it has an effect of its own:
    # it is an idle turn, which counts towards a stall, and leaves the draw pile as it is.
    match = make_play_match("ditch_rummy", 2, {})
    match.reset(1)
    game = match.game
    assert not match.state.hands[0] and match.legal_mask()[game.action_index("draw 0")]
    match.step(game.action_index("draw 0"))
    assert match.state.current == 1 and match.state.idle == 1

    result, text = _play("ditch_rummy", "help\ndraw 0\nquit\n")
    assert " 1) draw 0: pass (your hand is empty, so your turn ends at once)" in text
    assert "draw 0 with an empty hand is a pass" in text  # help says why it is listed
    assert "you: draw 0" in text
    actions = result.replay["actions"]
    assert actions[0] == [0, "draw 0"] and actions[1][0] == 1  # the turn passed at once
    # With cards in hand draw 0 is an ordinary draw: no pass label.
    for name in ("draw 2", "end turn", "draw 2", "end turn"):  # player_1, then player_0
        match.step(game.action_index(name))
    assert match.state.current == 1 and len(match.state.hands[1]) == 2
    legal = [int(a) for a in match.legal_mask().nonzero()[0]]
    labels = [game.describe_action(match.state, a) for a in legal]
    assert game.move_labels(match.state, legal) == labels


MUST_USE = (
    "the deepest card taken from the discard pile must be used at once (the turn's first play "
    "puts it on the table, in a new meld or as a lay-off; no discard before that)"
)


def test_rummy500_refused_dig_says_why() -> None:
    result, text = _play("rummy500", "dig Qd\ndig 2c\nquit\n")
    assert not result.replay["actions"]
    assert (
        f"'dig Qd' is not a legal move now: {MUST_USE}, and Qd makes no meld with your hand and "
        "fits no meld on the table; this holds for the top card too (option top_discard_free is "
        "off); legal: draw stock"
    ) in text
    assert "'dig 2c' is not a legal move now: 2c is not in the discard pile; legal:" in text
    # With a free top card the same dig is a legal move.
    result, text = _play("rummy500", "dig Qd\nquit\n", top_discard_free=True)
    assert result.replay["actions"] == [[0, "dig Qd"]]


def test_rummy500_dig_reasons_deep_in_the_pile_and_after_it() -> None:
    from rummyzoo.cli.play import match_move
    from rummyzoo.envs.decks import deck_for
    from rummyzoo.envs.replay import make_play_match

    hands = ["5h 6h Kd Qs 2c 3d 9s Jc 4s 8d", "As 2s 3s 7h 7d 7c Th Qh 4c 9d"]
    match = make_play_match("rummy500", 2, {})
    match.reset(1, deck_for(hands, "Kc", "Ac 2h 8h 4h"))
    game = match.game
    match.step(game.action_index("draw stock"))  # Ac
    match.step(game.action_index("discard Ac"))
    match.step(game.action_index("draw stock"))  # 2h
    match.step(game.action_index("discard 2h"))  # pile, bottom to top: Kc Ac 2h
    assert match.state.current == 0

    def why(name: str) -> str:
        return game.illegal_reason(match.state, game.action_index(name))

    assert why("dig Ac") == (
        f"{MUST_USE}, and Ac makes no meld with your hand and the cards above it (2h) and fits "
        "no meld on the table"
    )
    assert why("dig Ac deep").startswith("there is only one Ac in the discard pile")
    legal = [int(a) for a in match.legal_mask().nonzero()[0]]
    labels = [game.action_name(a) for a in legal]
    action, reason = match_move("dig Kc", legal, labels, game, lambda a: why(game.action_name(a)))
    assert action is None and reason.startswith(f"'dig Kc' is not a legal move now: {MUST_USE}")
    # Digging to a card that melds is legal; then nothing but using it is.
    match.step(game.action_index("draw stock"))
    match.step(game.action_index("discard Kd"))  # pile: Kc Ac 2h Kd
    match.step(game.action_index("draw stock"))
    match.step(game.action_index("discard 4h"))  # pile: Kc Ac 2h Kd 4h
    assert match.legal_mask()[game.action_index("dig 4h")]  # 4h 5h 6h
    match.step(game.action_index("dig 4h"))
    assert why("discard Qs") == f"you must first use 4h: {MUST_USE}"
    assert why("dig Kd").startswith(
        "you have taken from the discard pile already and must now use 4h"
    )
    match.step(game.action_index("meld 4h 5h 6h"))
    assert why("dig Kd") == (
        "you have drawn this turn already (draw or dig only at the start of a turn)"
    )
    assert why("discard 4h") == ""  # the general message says enough


def test_rummy500_deep_dig_reason_with_two_decks() -> None:
    from rummyzoo.envs.decks import deck_for
    from rummyzoo.envs.replay import make_play_match

    hands = [
        "2c 3c 4d 5d 6h 7h 8s",
        "2d 3d 4h 5h 6s 7s 8c",
        "2h 3h 4s 5s 6c 7c 8d",
        "2s 3s 4c 5c 6d 7d 8h",
        "Ac Ad Ah Kc Kd Kh Qs",
    ]
    match = make_play_match("rummy500", 5, {})
    match.reset(1, deck_for(hands, "9c", "9c Jd", decks=2))
    game = match.game
    match.step(game.action_index("draw stock"))  # the other 9c
    match.step(game.action_index("discard 9c"))  # pile: 9c 9c
    assert match.state.current == 1
    reason = game.illegal_reason(match.state, game.action_index("dig 9c deep"))
    assert reason == (
        f"{MUST_USE}, and 9c makes no meld with your hand and the cards above it (9c) and fits "
        "no meld on the table"
    )
    assert game.illegal_reason(match.state, game.action_index("dig 9c")).endswith(
        "this holds for the top card too (option top_discard_free is off)"
    )


def test_bench_env_times_the_deadwood_solver_for_knock_rummy_only(tmp_path, capsys) -> None:
    import json

    from rummyzoo.cli.main import main

    for variant, expected in (("knock_rummy", True), ("ditch_rummy", False), ("rummy500", False)):
        path = tmp_path / f"{variant}.json"
        argv = ["bench-env", variant, "--seconds", "0.05"]
        if expected:
            argv += ["--deadwood-hands", "50"]
        assert main([*argv, "--json", str(path)]) == 0
        out = capsys.readouterr().out
        assert ("deadwood solver:" in out) is expected, variant
        assert ("deadwood_solver" in json.loads(path.read_text())) is expected, variant
        if not expected:  # the flag is refused where there is no solver to time
            path.unlink()
            assert main([*argv, "--deadwood-hands", "50", "--json", str(path)]) == 2
            err = capsys.readouterr().err
            assert f"--deadwood-hands times Knock Rummy's deadwood solver: {variant}" in err
            assert not path.exists()


@pytest.mark.parametrize("command", ["demo", "arena", "evaluate", "play"])
def test_a_bad_seed_is_refused_by_its_flag_before_anything_runs(command, capsys) -> None:
    args = {
        "demo": ["demo", "knock_rummy"],
        "arena": ["arena", "knock_rummy", "--agents", "random", "random"],
        "evaluate": ["evaluate", "nowhere.rz"],
        "play": ["play", "knock_rummy"],
    }[command]
    with pytest.raises(SystemExit) as exc:
        main([*args, "--seed", "-1"])
    assert exc.value.code == 2
    out, err = capsys.readouterr()
    assert "argument --seed: expected a non-negative integer, got -1" in err
    assert out == ""  # nothing played or printed first


# ------------------------------------------------------------------ interrupts and pipes
def test_ctrl_c_during_a_run_says_how_to_resume_it(tmp_path, monkeypatch, capsys) -> None:
    import rummyzoo.training.train as train_module

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(train_module, "train", interrupted)
    run = tmp_path / "r1"
    assert main(["train", "configs/smoke_ppo.yaml", "--run-dir", str(run)]) == 130
    err = capsys.readouterr().err
    # stopped before the run wrote its config: there is nothing to resume, and it says so
    assert f"interrupted; it stopped before {run} held a run: start it again" in err
    assert "Traceback" not in err
    run.mkdir()
    (run / "config.yaml").write_bytes(Path("configs/smoke_ppo.yaml").read_bytes())
    assert main(["train", "--resume", str(run)]) == 130
    assert f"continue the run with: rummyzoo train --resume {run} " in capsys.readouterr().err


def test_a_stop_whose_interrupt_python_swallowed_still_stops_the_run(
    tmp_path, monkeypatch, capsys
) -> None:
    """A signal that lands where Python swallows the exception (a weakref callback, a
    ``__del__``: it only prints "Exception ignored") must not be lost: the handler noted it,
    and the run's next step stops it."""
    from rummyzoo.training.run_state import stop_requested
    from rummyzoo.training.vec_env import BatchedSeatEnv

    step_wait = BatchedSeatEnv.step_wait
    calls = []

    def swallowed(self):
        calls.append(1)
        if len(calls) == 40:  # in the first rollouts: the handler ran, its exception was lost
            stop_requested.set()
        assert len(calls) < 400, "the stop was lost"
        return step_wait(self)

    monkeypatch.setattr(BatchedSeatEnv, "step_wait", swallowed)
    run = tmp_path / "r"
    args = ["train", "configs/smoke_ppo.yaml", "--run-dir", str(run), "--quiet"]
    assert main([*args, "--set", "n_timesteps=10000000"]) == 130
    assert f"continue the run with: rummyzoo train --resume {run} " in capsys.readouterr().err
    assert len(calls) == 40 and not stop_requested.is_set()  # cleared for the next run


def test_sigterm_stops_a_run_as_ctrl_c_does(tmp_path) -> None:
    """What a batch scheduler, ``docker stop`` or ``kill`` send: the run used to die without a
    word, its lock file left behind."""
    import signal
    import subprocess
    import sys

    run = tmp_path / "r"
    command = [sys.executable, "-m", "rummyzoo.cli.main", "train", "configs/smoke_ppo.yaml",
               "--run-dir", str(run), "--set", "n_timesteps=10000000", "--quiet"]  # fmt: skip
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 300
        while not (run / "checkpoints" / "last.zip").exists():  # training, past its start
            assert proc.poll() is None and time.monotonic() < deadline
            time.sleep(0.2)
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=120)
    finally:
        proc.kill()
    assert proc.returncode == 143, err  # 128 + SIGTERM, as a process the signal ended
    # the checkpoint of step 0 or a later one, whichever the run had reached
    assert re.search(
        f"continue the run with: rummyzoo train --resume {re.escape(str(run))} \\(it goes on "
        r"from its last checkpoint, at step \d+\)",
        err,
    ), err
    assert "Traceback" not in err and "Exception ignored" not in err, err
    assert not (run / ".lock").exists()


def test_a_stop_swallowed_where_python_cannot_raise_it_prints_nothing(
    tmp_path, monkeypatch
) -> None:
    """A stop's KeyboardInterrupt that lands in a ``__del__`` (or a weakref callback) does not
    reach the unraisable hook (Python's prints "Exception ignored" and a traceback) during a
    run, whose next step raises it; any other exception there still does, and after the run
    the hook is the one before it again."""
    import gc
    import sys

    from rummyzoo.training.run_state import stop_requested
    from rummyzoo.training.train import RunInterrupted, _resumable

    seen: list[BaseException] = []

    def recording(unraisable) -> None:
        seen.append(unraisable.exc_value)

    monkeypatch.setattr(sys, "unraisablehook", recording)

    class Raises:
        def __init__(self, exc: BaseException) -> None:
            self.exc = exc

        def __del__(self) -> None:
            raise self.exc

    with pytest.raises(RunInterrupted), _resumable(tmp_path / "r"):
        Raises(KeyboardInterrupt("before the stop"))  # not a stop: passed on
        stop_requested.set()
        Raises(KeyboardInterrupt("the stop"))
        Raises(ValueError("a real error"))
        gc.collect()
        raise KeyboardInterrupt  # what the run's next step does
    assert [str(e) for e in seen] == ["before the stop", "a real error"]
    assert sys.unraisablehook is recording and not stop_requested.is_set()

    # a stop swallowed after the run's last step stops the run all the same
    with pytest.raises(RunInterrupted), _resumable(tmp_path / "r"):
        stop_requested.set()
        Raises(KeyboardInterrupt("the stop"))
        gc.collect()
    assert [str(e) for e in seen] == ["before the stop", "a real error"]
    assert sys.unraisablehook is recording and not stop_requested.is_set()


def test_a_run_puts_back_only_its_own_unraisable_hook(tmp_path, monkeypatch) -> None:
    """A hook that something else set during the run stays after it; a run outside the main
    thread (no signal handlers, no hook of its own) leaves the hook alone."""
    import sys
    import threading

    from rummyzoo.training.train import _resumable

    def before(unraisable) -> None:
        pass

    def later(unraisable) -> None:
        pass

    monkeypatch.setattr(sys, "unraisablehook", before)
    with _resumable(tmp_path / "r"):
        assert sys.unraisablehook is not before  # the run's own
        sys.unraisablehook = later
    assert sys.unraisablehook is later

    sys.unraisablehook = before
    seen: list = []

    def in_thread() -> None:
        with _resumable(tmp_path / "t"):
            seen.append(sys.unraisablehook)
            sys.unraisablehook = later
        seen.append(sys.unraisablehook)

    thread = threading.Thread(target=in_thread)
    thread.start()
    thread.join()
    assert seen == [before, later]


def test_a_closed_pipe_ends_the_command_quietly(monkeypatch) -> None:
    import rummyzoo.cli.demo as demo_module

    def closed(*args, **kwargs):
        raise BrokenPipeError

    monkeypatch.setattr(demo_module, "play_demo", closed)
    read, write = os.pipe()
    saved = os.dup(1)
    try:
        os.dup2(write, 1)  # main points fd 1 elsewhere once the pipe is gone
        assert main(["demo", "knock_rummy"]) == 141
    finally:
        os.dup2(saved, 1)
        for fd in (read, write, saved):
            os.close(fd)


def test_evaluate_with_one_deal_and_a_damaged_run_summary(tmp_path, capsys) -> None:
    from rummyzoo.training.train import train_from_file

    run = tmp_path / "run"
    train_from_file("configs/smoke_ppo.yaml", ["env_options.target_score=null"], str(run), ["t"])
    (run / "summary.json").write_text('{"x": 1}')
    out = tmp_path / "e.json"
    best = str(run / "checkpoints" / "last.rz")
    assert (
        main(["evaluate", best, "--deals", "1", "--opponents", "random", "--json", str(out)]) == 0
    )
    shown = capsys.readouterr().out
    assert "[none: 1 deal]" in shown and "summary.json cannot be read" in shown
    assert f"{best} (trained 256 steps, knock_rummy, 2 players" in shown  # which network
    assert out.exists()


def test_an_output_that_cannot_show_a_suit_says_so(tmp_path) -> None:
    import subprocess
    import sys

    from rummyzoo.agents.arena import record_episode
    from rummyzoo.envs.replay import save_replay

    path = save_replay(
        record_episode("knock_rummy", 2, ["random", "random"], seed=1), tmp_path / "g.json"
    )
    env = {**os.environ, "PYTHONIOENCODING": "cp1252"}
    done = subprocess.run(
        [sys.executable, "-m", "rummyzoo.cli.main", "replay", str(path)],
        capture_output=True, text=True, env=env, check=False,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert (
        "encoding (cp1252) cannot show" in done.stderr and "PYTHONIOENCODING=utf-8" in done.stderr
    )
    assert "corrupt" not in done.stderr and "Traceback" not in done.stderr


@pytest.mark.parametrize(
    ("argv", "unknown"),
    [
        (["evaluate", "nowhere.rz", "--players", "3"], "--players 3"),
        (["demo", "knock_rummy", "-x"], "-x"),
    ],
)
def test_an_unknown_flag_is_refused_by_its_command(argv, unknown, capsys) -> None:
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    out, err = capsys.readouterr()
    assert err.splitlines()[-1] == f"rummyzoo {argv[0]}: error: unrecognized arguments: {unknown}"
    assert f"usage: rummyzoo {argv[0]}" in err and out == ""


def test_a_run_records_the_command_as_parsed_however_it_was_started(monkeypatch, tmp_path):
    import rummyzoo.training.train as train_module

    seen = []

    def record(config, overrides, run_dir, argv, **kwargs):
        seen.append(argv)
        raise KeyboardInterrupt

    monkeypatch.setattr(train_module, "train_from_file", record)
    monkeypatch.setattr("sys.argv", ["/usr/lib/python3/runpy.py", "whatever"])  # python -m
    given = ["train", "configs/smoke_ppo.yaml", "--run-dir", str(tmp_path / "r"), "--set", "seed=3"]
    assert main(given) == 130
    assert seen == [["rummyzoo", *given]]


def test_arena_refuses_a_negative_save_limit_before_playing(capsys, tmp_path):
    base = ["arena", "knock_rummy", "--agents", "random", "random"]
    code = main([*base, "--save-games", str(tmp_path / "g"), "--save-limit", "-1"])
    assert code == 2
    assert "--save-limit must be 0 (every game) or more, got -1" in capsys.readouterr().err
    # a limit without games to keep is no setting at all: said, not ignored
    assert main([*base, "--save-limit", "5"]) == 2
    assert "--save-limit limits the games --save-games keeps" in capsys.readouterr().err


def test_replay_refuses_terminal_flags_with_a_page(tmp_path, capsys):
    from rummyzoo.agents.arena import record_episode
    from rummyzoo.envs.replay import save_replay

    path = save_replay(
        record_episode("knock_rummy", 2, ["random", "random"], seed=1), tmp_path / "g.json"
    )
    page = tmp_path / "g.html"
    for flags, named in ((["--step"], "--step is"), (["--step", "--no-color"], "--step and")):
        assert main(["replay", str(path), "--html", str(page), *flags]) == 2
        assert f"{named}" in capsys.readouterr().err and not page.exists()


@pytest.mark.parametrize(
    ("command", "flag"),
    [
        (["arena", "knock_rummy", "--agents", "random", "random", "--deals", "50"], "--json"),
        (["arena", "knock_rummy", "--agents", "random", "random"], "--csv"),
        (["arena", "knock_rummy", "--agents", "random", "random"], "--heatmap"),
        (["evaluate", "no_such.rz"], "--json"),
        (["bench-env", "knock_rummy", "--seconds", "5"], "--json"),
        (["bench-train", "configs/knock_bench.yaml", "--steps", "4096"], "--json"),
    ],
)
def test_an_output_file_that_is_a_folder_is_refused_before_any_work(
    command, flag, tmp_path, capsys
):
    started = time.perf_counter()
    assert main([*command, flag, str(tmp_path)]) == 2
    assert time.perf_counter() - started < 3  # nothing was played first
    err = capsys.readouterr().err
    assert f"{flag} {tmp_path} is a folder: give the name of a file to write" in err
    # a name that ends in a slash names a folder too, one still to make as well
    new = f"{tmp_path / 'results'}/"
    assert main([*command, flag, new]) == 2
    assert f"{flag} {new} is a folder: give the name" in capsys.readouterr().err
    assert not (tmp_path / "results").exists()


def test_outputs_that_cannot_be_written_are_refused_before_any_work(tmp_path, capsys) -> None:
    """An output folder nothing can be written in, or a picture with a suffix matplotlib does
    not write, is refused with one line naming the flag before a game is played; no other
    output of the run is written."""
    from rummyzoo.cli import main as cli

    first = tmp_path / "a.json"
    base = ["arena", "knock_rummy", "--agents", "random", "random", "--deals", "2"]
    for extra, message in (
        (["--json", str(first), "--csv", "/proc/x.csv"], "--csv /proc/x.csv: cannot write in"),
        (["--json", str(first), "--heatmap", str(tmp_path / "h.txt")], "--heatmap"),
    ):
        assert cli.main([*base, "--workers", "1", *extra]) == 2
        err = capsys.readouterr().err
        assert message in err and len(err.strip().splitlines()) == 1
        assert not first.exists()
    # a heatmap named without a suffix is written as a PNG, and the line says so
    assert cli.main([*base, "--workers", "1", "--heatmap", str(tmp_path / "h")]) == 0
    assert f"wrote {tmp_path / 'h.png'}" in capsys.readouterr().out
    assert (tmp_path / "h.png").is_file()


def test_a_file_that_is_no_config_is_named_as_such(tmp_path, capsys) -> None:
    from rummyzoo.cli import main as cli

    binary = tmp_path / "last.rz"
    binary.write_bytes(b"PK\x03\x04\xc8\xff\x00binary")
    assert cli.main(["train", str(binary)]) == 2
    err = capsys.readouterr().err
    assert "is not a YAML text file (it looks like a checkpoint)" in err
    run = tmp_path / "run"
    run.mkdir()
    (run / "config.yaml").write_text("garbage: [")
    assert cli.main(["curves", str(run), "--out", str(tmp_path / "c.png")]) == 2
    err = capsys.readouterr().err
    assert "config.yaml is not a valid YAML config" in err and len(err.strip().splitlines()) == 1
    assert cli.main(["export", str(binary), str(tmp_path), "--trust"]) == 2
    assert "OUT" in capsys.readouterr().err


# ------------------------------------------------------------------ outputs and inputs
@pytest.fixture(scope="module")
def inputs(tmp_path_factory) -> dict[str, Path]:
    """A checkpoint, a replay and a config that commands read."""
    from rummyzoo.agents.arena import record_episode
    from rummyzoo.agents.checkpoints import save_checkpoint
    from rummyzoo.envs.replay import save_replay
    from rummyzoo.training.config import load_config
    from rummyzoo.training.run_folder import checkpoint_meta
    from rummyzoo.training.train import build_model, build_vec_env

    folder = tmp_path_factory.mktemp("inputs")
    config = load_config("configs/smoke_ppo.yaml", ["n_envs=1"])
    env = build_vec_env(config)
    checkpoint = save_checkpoint(
        build_model(config, env, None), folder / "a.rz", checkpoint_meta(config, 0)
    )
    env.close()
    replay = save_replay(
        record_episode("knock_rummy", 2, ["random", "random"], seed=1), folder / "g.json"
    )
    (folder / "b.rz").write_bytes(checkpoint.read_bytes())  # an opponent's checkpoint
    yaml = folder / "s.yaml"
    yaml.write_bytes(Path("configs/smoke_ppo.yaml").read_bytes())
    return {"CKPT": checkpoint, "REPLAY": replay, "CONFIG": yaml}


@pytest.mark.parametrize(
    "argv, message",
    [
        (["replay", "REPLAY", "--html", "REPLAY"], "--html REPLAY: the file must end in .html "
         "or .htm"),
        (["replay", "REPLAY", "--html", "TMP/other.json"], "--html TMP/other.json: the file must "
         "end in .html or .htm"),
        (["play", "knock_rummy", "--save", "TMP/page.html"], "--save TMP/page.html: the file "
         "must end in .json"),
        (["arena", "knock_rummy", "--agents", "random", "CKPT", "--json", "CKPT"],
         "--json CKPT would overwrite CKPT"),
        (["arena", "knock_rummy", "--agents", "random", "CKPT", "--csv", "DIR/./a.rz"],
         "--csv DIR/./a.rz would overwrite CKPT"),
        (["evaluate", "CKPT", "--json", "CKPT"], "--json CKPT would overwrite CKPT"),
        (["bench-train", "CONFIG", "--steps", "64", "--json", "CONFIG"],
         "--json CONFIG would overwrite CONFIG"),
        (["arena", "knock_rummy", "--agents", "random", "random", "--json", "TMP/x.json",
          "--csv", "TMP/x.json"], "--json and --csv name the same path (TMP/x.json): give each "
         "its own"),
        (["arena", "knock_rummy", "--agents", "random", "random", "--save-games", "TMP/sg",
          "--json", "TMP/sg"], "--json and --save-games name the same path (TMP/sg)"),
        (["arena", "knock_rummy", "--agents", "random", "random", "--save-games", "CONFIG/sg"],
         "--save-games CONFIG/sg: CONFIG is a file, not a folder"),
        (["arena", "knock_rummy", "--agents", "random", "random", "--save-games", ""],
         "--save-games '': give a folder name"),
        (["play", "knock_rummy", "--opponents", "CKPT", "--save", "CKPT"],
         "--save CKPT: the file must end in .json"),
        (["play", "knock_rummy", "--opponents", "REPLAY", "--save", "REPLAY"],
         "--save REPLAY would overwrite REPLAY"),
        (["replay", "REPLAY", "--html", ""], "--html '': give a file name"),
        (["play", "knock_rummy", "--save", ""], "--save '': give a file name"),
        (["export", "CKPT", "", "--trust"], "OUT '': give a file name"),
        (["train", "CONFIG", "--run-dir", ""], "--run-dir '': give a folder"),
        (["train", "CONFIG", "--set", "n_timesteps=256", "--set", "n_timesteps = 512"],
         "--set n_timesteps is given twice ('n_timesteps=256', 'n_timesteps = 512'): give it "
         "once"),
        (["bench-train", "CONFIG", "--compare", "n_envs=2 n_envs=4"],
         "--compare n_envs is given twice"),
        (["train", "CONFIG", "--set", "self_play.pool_size=3", "--set", "self_play={pool_size: 2}"],
         "--set 'self_play={pool_size: 2}' replaces the whole of self_play, so the earlier "
         "'self_play.pool_size=3' is lost: set the whole first, then the keys inside it"),
        (["bench-train", "CONFIG", "--compare", "pool=2 pool=3"], "--compare 'pool=2 pool=3': "
         "pool= is given twice"),
        (["bench-rllib", "CONFIG", "--set", "backend=sb3"], "--set backend=sb3: bench-rllib "
         "times the rllib backend; drop it"),
        (["evaluate", "CKPT", "--opponents", "random", "knock.greedy", "random"],
         "--opponents names random twice: give each opponent once"),
        (["evaluate", "CKPT", "--opponents", "random", "DIR/b.rz", "--json", "DIR/b.rz"],
         "--json DIR/b.rz would overwrite DIR/b.rz"),
        (["bench-rllib", "configs/smoke_dqn.yaml"], "configs/smoke_dqn.yaml cannot train on "
         "RLlib, which this command times: the rllib backend trains algo: ppo"),
        (["train", "CONFIG", "--progress-every", "nan"], "--progress-every must be a positive "
         "number of seconds, got nan"),
    ],
)  # fmt: skip
def test_bad_outputs_and_settings_are_refused_in_one_line_before_any_work(
    inputs, tmp_path, capsys, argv, message
) -> None:
    """Writing over a file the command reads (the replay it shows, a checkpoint it plays, the
    config it runs), two outputs on one path or an empty name is refused before any work
    (these used to play, then overwrite the input, or save nowhere); so are a progress
    interval that is no number, and settings one of which would be lost or undone."""
    names = {k: str(v) for k, v in inputs.items()} | {
        "TMP": str(tmp_path),
        "DIR": str(inputs["CKPT"].parent),
    }

    def filled(text: str) -> str:
        for key, value in names.items():
            text = text.replace(key, value)
        return text

    files = [*inputs.values(), inputs["CKPT"].parent / "b.rz"]
    before = {p: p.read_bytes() for p in files}
    assert main([filled(a) for a in argv]) == 2
    out, err = capsys.readouterr()
    assert err.startswith(f"rummyzoo {argv[0]}: error: {filled(message)}"), err
    assert out == ""  # nothing played first
    assert {p: p.read_bytes() for p in files} == before
    assert list(tmp_path.iterdir()) == []  # nothing written


def test_a_network_too_large_for_the_memory_is_refused_in_one_line(
    monkeypatch, tmp_path, capsys
) -> None:
    """torch's failure to allocate a network's weights, a traceback before, is one line that
    names the setting (torch is made to fail as it does: a real attempt could succeed lazily
    and be killed later on a machine that overcommits memory)."""
    import rummyzoo.training.train as train_module

    def too_large(*args, **kwargs):
        raise RuntimeError("[enforce fail at alloc_cpu.cpp:118] DefaultCPUAllocator: can't "
                           "allocate memory: you tried to allocate 124800000000 bytes")  # fmt: skip

    monkeypatch.setattr(train_module, "_build_model", too_large)
    run = tmp_path / "r"
    argv = ["train", "configs/smoke_ppo.yaml", "--run-dir", str(run), "--set",
            "policy_kwargs.net_arch=[4096,4096,4096]"]  # fmt: skip
    assert main(argv) == 2
    assert capsys.readouterr().err == (
        "rummyzoo train: error: the network (policy_kwargs.net_arch [4096, 4096, 4096]) does "
        "not fit in the memory of device cpu: make its layers smaller\n"
    )
    assert not run.exists()


@pytest.mark.parametrize(
    ("config", "setting", "named"),
    [
        ("smoke_ppo", "hyperparams.n_steps=2000000000",
         "the rollout buffer (hyperparams.n_steps x n_envs = 2,000,000,000 x 2 steps)"),
        ("smoke_dqn", "hyperparams.buffer_size=2000000000",
         "the replay buffer (hyperparams.buffer_size 2,000,000,000 steps)"),
    ],
)  # fmt: skip
def test_a_buffer_too_large_for_the_memory_is_named(config, setting, named, tmp_path, capsys):
    """A buffer numpy cannot allocate is named as what does not fit (it was blamed on the
    network), and no run folder is made."""
    run = tmp_path / "r"
    argv = ["train", f"configs/{config}.yaml", "--run-dir", str(run), "--set", setting]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert (
        err
        == f"rummyzoo train: error: {named} does not fit in this machine's memory: make it smaller\n"
    )
    assert not run.exists()


def test_a_network_whose_weights_no_checkpoint_holds_is_refused_before_the_run(
    monkeypatch, tmp_path, capsys
) -> None:
    """A network's size depends on its input as well as on net_arch: one whose weights are
    more than a checkpoint may hold is refused as it is built, not at its first save or load
    (the bound made small here, for a small network)."""
    from rummyzoo.agents import limits

    monkeypatch.setattr(limits, "MAX_WEIGHTS_BYTES", 10_000)
    run = tmp_path / "r"
    assert main(["train", "configs/smoke_ppo.yaml", "--run-dir", str(run)]) == 2
    err = capsys.readouterr().err
    assert "rummyzoo train: error: the network (policy_kwargs.net_arch" in err
    assert "bytes of weights, more than a checkpoint holds (10,000 at most)" in err
    assert not run.exists()


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGKILL], ids=["SIGTERM", "SIGKILL"])
def test_a_kill_stops_the_arena_and_its_worker_processes(tmp_path, signum) -> None:
    """``kill`` of a long arena run: the command says it was interrupted and exits 143, and
    its worker processes end with it (they went on playing their deals, orphaned). ``kill
    -9`` (or the out-of-memory killer) gives the command no say, and its workers end by
    themselves (they were left blocked on the pool's pipes for good)."""
    import contextlib
    import subprocess
    import sys

    import psutil

    command = [sys.executable, "-m", "rummyzoo.cli.main", "arena", "knock_rummy", "--agents",
               "knock.smart", "knock.greedy", "--deals", "200000", "--workers", "2"]  # fmt: skip
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    parent = psutil.Process(proc.pid)
    children: list[psutil.Process] = []

    def workers() -> list[psutil.Process]:  # not multiprocessing's resource tracker
        found = []
        for child in parent.children(recursive=True):
            with contextlib.suppress(psutil.Error):
                if "resource_tracker" not in " ".join(child.cmdline()):
                    found.append(child)
        return found

    try:
        deadline = time.monotonic() + 120
        while len(children := workers()) < 2:  # the workers started
            assert proc.poll() is None and time.monotonic() < deadline
            time.sleep(0.2)
        time.sleep(3)  # playing their first deals: each has 12,500 to play, half a minute
        proc.send_signal(signum)
        sent = time.monotonic()
        # (orphaned workers would hold the command's output open: read until they end)
        _, err = proc.communicate(timeout=60)
        _, alive = psutil.wait_procs(children, timeout=20)
        took = time.monotonic() - sent
    finally:
        proc.kill()
        for child in children:
            with contextlib.suppress(psutil.NoSuchProcess):
                child.kill()
    if signum == signal.SIGTERM:
        assert proc.returncode == 143, err
        assert "interrupted; terminated" in err and "Traceback" not in err, err
    else:
        assert proc.returncode == -signal.SIGKILL
    assert not alive, [p.pid for p in alive]
    assert took < 10, f"the workers finished their deals first ({took:.0f} s)"


@pytest.mark.parametrize("signum, code", [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_a_stop_that_lands_in_a_del_still_stops_the_command(monkeypatch, capsys, signum, code):
    """Ctrl-C or SIGTERM whose KeyboardInterrupt lands in a ``__del__`` (or a weakref
    callback), where Python prints it and goes on: the command used to run on to its end."""
    from rummyzoo.cli import curves

    class Landing:
        def __del__(self) -> None:
            signal.raise_signal(signum)  # its handler raises here, inside __del__

    lines_after = []

    def command(args) -> int:
        Landing()  # freed at once
        for i in range(1000):  # 2 seconds or more
            lines_after.append(i)
            time.sleep(0.002)
        return 0

    monkeypatch.setattr(curves, "run", command)
    hook = sys.unraisablehook
    assert main(["curves", "no-such-run", "--out", "x.png"]) == code
    assert len(lines_after) < 1000  # stopped in the loop, not after it
    err = capsys.readouterr().err
    assert "Exception ignored" not in err and "interrupted" in err
    assert sys.unraisablehook is hook  # put back
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


@pytest.mark.parametrize("signum, code", [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_a_stop_that_lands_in_a_del_as_the_command_ends_still_counts(
    monkeypatch, capsys, signum, code
):
    """Where the command ends before the stop comes again, it ends as stopped, and the stop
    is not sent after it (a SIGTERM then would meet the default handler and kill the
    process)."""
    from rummyzoo.cli import curves

    class Landing:
        def __del__(self) -> None:
            signal.raise_signal(signum)

    def command(args) -> int:
        Landing()
        return 0  # at once: within the moment before the stop is sent again

    monkeypatch.setattr(curves, "run", command)
    assert main(["curves", "no-such-run", "--out", "x.png"]) == code
    assert "interrupted" in capsys.readouterr().err
    time.sleep(0.1)  # (a stop sent after the command would land here)
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


@pytest.mark.parametrize("signum, code", [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_a_stop_before_the_command_fails_stays_inside_the_command(
    monkeypatch, capsys, signum, code
):
    """A stop sent again while the command's error was being reported landed in the except
    clause that reported it, and left ``main`` as a traceback (exit 1 for SIGTERM)."""
    from rummyzoo.cli import curves

    class Landing:
        def __del__(self) -> None:
            signal.raise_signal(signum)

    class SlowToSay(ValueError):
        def __str__(self) -> str:
            time.sleep(0.05)  # (the stop would come again meanwhile)
            return "bad input"

    def command(args) -> int:
        Landing()
        raise SlowToSay

    monkeypatch.setattr(curves, "run", command)
    assert main(["curves", "no-such-run", "--out", "x.png"]) in (2, code)
    assert "Traceback" not in capsys.readouterr().err
    time.sleep(0.1)
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_a_stop_that_lands_in_the_stop_hook_itself_is_kept():
    """A stop handled while the hook ran (printing another unraisable, say) was printed as
    "Exception ignored in sys.unraisablehook" and lost."""
    from types import SimpleNamespace

    from rummyzoo.cli.main import _StopsAgain

    def previous(unraisable) -> None:
        raise KeyboardInterrupt  # as a Ctrl-C landing while the other is printed

    hook = _StopsAgain(previous)
    hook(SimpleNamespace(exc_value=RuntimeError("another object's __del__")))
    assert hook.disarm() == signal.SIGINT  # kept, for the command's end to count
    time.sleep(0.05)  # (disarmed: nothing is sent)


def test_the_top_level_help_says_what_the_tool_does(capsys) -> None:
    with pytest.raises(SystemExit) as stop:
        main(["--help"])
    assert stop.value.code == 0
    helptext = " ".join(capsys.readouterr().out.split())
    # a user's description, not how the command line is built
    assert "Knock Rummy, Ditch Rummy and 500 Rum as reinforcement-learning environments" in helptext
    assert "parent parsers" not in helptext


def test_arena_and_evaluate_write_their_files_before_a_closed_pipe_stops_them(
    tmp_path, monkeypatch
) -> None:
    """``rummyzoo arena ... --json F | head`` wrote nothing: the table was printed first and the
    closed pipe ended the command before the files. The files now come first."""
    from run_helpers import untrained_checkpoint

    import rummyzoo.cli.arena as arena_module
    import rummyzoo.cli.evaluate as evaluate_module

    def closed(*args, **kwargs):
        raise BrokenPipeError  # the reader went away: the commands' first print fails

    monkeypatch.setattr(arena_module, "print", closed, raising=False)
    monkeypatch.setattr(evaluate_module, "print", closed, raising=False)
    checkpoint = untrained_checkpoint(tmp_path / "net.rz")
    read, write = os.pipe()
    saved = os.dup(1)
    try:
        os.dup2(write, 1)
        arena = ["arena", "knock_rummy", "--agents", "random", "knock.greedy", "--deals", "2"]
        files = ["--json", str(tmp_path / "a.json"), "--csv", str(tmp_path / "a.csv")]
        assert main([*arena, *files, "--workers", "1"]) == 141
        evaluate = ["evaluate", str(checkpoint), "--opponents", "random", "--deals", "2"]
        assert main([*evaluate, "--json", str(tmp_path / "e.json"), "--workers", "1"]) == 141
        # --report prints each opponent's whole report: after the file too
        report = [*evaluate, "--report", "--json", str(tmp_path / "r.json"), "--workers", "1"]
        assert main(report) == 141
    finally:
        os.dup2(saved, 1)
        for fd in (read, write, saved):
            os.close(fd)
    assert json.loads((tmp_path / "a.json").read_text())["agents"]
    assert (tmp_path / "a.csv").read_text()
    assert json.loads((tmp_path / "e.json").read_text())["results"]["random"]["games"] == 4
    assert json.loads((tmp_path / "r.json").read_text())["results"]["random"]["games"] == 4


def test_evaluate_says_what_a_warm_start_is_and_where_its_run_stands(tmp_path, capsys):
    """A run's step-0 network is named as its warm start (it printed "trained 0 steps"), and
    the run it comes from, not finished, is said to have stopped and how to go on (nothing
    was said of it)."""
    import json

    from run_helpers import untrained_checkpoint

    run = tmp_path / "run"
    net = untrained_checkpoint(run / "checkpoints" / "best.rz")
    (run / "config.yaml").write_text("variant: knock_rummy\nn_timesteps: 4096\n")
    (run / "checkpoints" / "last.zip").write_bytes(b"")  # (the checkpoint beside state.json)
    pretrain = {"teacher": "knock.smart", "decisions": 2048}
    (run / "state.json").write_text(json.dumps({"steps": 1024, "pretrain": pretrain}))
    argv = ["evaluate", str(net), "--opponents", "random", "--deals", "2", "--workers", "1"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "(the warm start only (2,048 decisions imitated from knock.smart), knock_rummy" in out
    assert f"the run it comes from, {run}: stopped at step 1,024 of 4,096: rummyzoo train " in out
    (run / "state.json").write_text(json.dumps({"steps": 1024}))  # a run without one
    assert main(argv) == 0
    assert "(untrained: 0 steps, knock_rummy" in capsys.readouterr().out


def test_a_page_or_a_replay_goes_to_a_stream_under_any_name(tmp_path) -> None:
    """``replay --html /dev/stdout`` and ``play --save /dev/stdout`` write the stream (the
    name checks of a page and a replay are for files: they made /dev/stdout.html)."""
    import subprocess
    import sys

    from rummyzoo.agents.arena import record_episode
    from rummyzoo.envs.replay import save_replay

    game = save_replay(
        record_episode("knock_rummy", 2, ["random", "random"], seed=1), tmp_path / "g.json"
    )
    cli = [sys.executable, "-m", "rummyzoo.cli.main"]
    page = subprocess.run([*cli, "replay", str(game), "--html", "/dev/stdout"],
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    assert page.returncode == 0 and page.stdout.startswith("<!DOCTYPE html>"), page.stderr
    played = subprocess.run([*cli, "play", "knock_rummy", "--seed", "1", "--save", "/dev/stdout"],
                            input="quit\n", capture_output=True, text=True, timeout=120)  # fmt: skip
    assert played.returncode == 0 and '"variant": "knock_rummy"' in played.stdout, played.stderr
    assert not Path("/dev/stdout.html").exists() and not Path("/dev/stdout.json").exists()


def test_num_players_as_an_option_points_where_each_command_takes_it(tmp_path, capsys) -> None:
    """evaluate has no --players (it plays the checkpoint's count): the refusal says so, where
    it sent the player to --players, which evaluate then refused."""
    from run_helpers import untrained_checkpoint

    untrained_checkpoint(tmp_path / "net.rz")
    assert main(["evaluate", str(tmp_path / "net.rz"), "--option", "num_players=3"]) == 2
    err = capsys.readouterr().err
    assert "--option num_players: the player count is no option" in err
    assert "evaluate plays the checkpoint's own count" in err
