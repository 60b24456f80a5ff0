"""``rummyzoo play``: a human game through text streams and through a real pseudo-terminal."""

from __future__ import annotations

import fcntl
import io
import json
import os
import pty
import re
import select
import subprocess
import sys
import termios
import time
from pathlib import Path

import numpy as np
import pytest

from rummyzoo.cli.display import colour_cards
from rummyzoo.cli.play import (
    default_opponents,
    match_move,
    play_game,
    rules_summary,
    strongest_agent,
)
from rummyzoo.envs.core import ConfigError
from rummyzoo.envs.registry import make_env, make_match
from rummyzoo.envs.replay import verify_replay

RUMMYZOO = str(Path(sys.executable).with_name("rummyzoo"))
#: Bad answers tried before a legal one, in turn: each must re-prompt with its reason.
BAD_ANSWERS = (
    ("bogus move", "unknown move 'bogus move'"),
    ("999", "there is no move 999"),
    ("", "type a move's number or name"),
    # past int()'s 4,300-digit limit, which ended the game with an error
    ("9" * 5000, "there is no move 999999... (5000 digits)"),
)


class Scripted(io.TextIOBase):
    """Answers the prompts of a game: bad input first, then move 1; EOF after ``limit`` lines.

    It reads what the game wrote so far to see which prompt it answers.
    """

    def __init__(self, screen: io.StringIO, limit: int | None = None) -> None:
        self.screen = screen
        self.limit = limit
        self.lines = 0
        self.moves = 0
        self.bad_given = 0
        self.continues = 0

    def readable(self) -> bool:
        return True

    def readline(self, size: int = -1) -> str:
        if self.limit is not None and self.lines >= self.limit:
            return ""
        self.lines += 1
        prompt = self.screen.getvalue().rsplit("\n", 1)[-1]
        if prompt.startswith("press Enter"):
            self.continues += 1
            return "\n"
        assert prompt == "your move> ", prompt
        if self.bad_given <= self.moves and self.moves < 30:
            answer = BAD_ANSWERS[self.moves % len(BAD_ANSWERS)][0]
            self.bad_given = self.moves + 1
            return answer + "\n"
        self.moves += 1
        return "1\n"


GAMES = [
    ("knock_rummy", {}, "knock.smart"),
    ("ditch_rummy", {"target_score": None}, "ditch.smart"),
    ("rummy500", {"target_score": None}, None),
]


@pytest.mark.parametrize("variant, options, opponent", GAMES)
def test_full_game_with_bad_input(variant, options, opponent):
    screen = io.StringIO()
    answers = Scripted(screen)
    result = play_game(
        variant,
        2,
        seed=3,
        options=options,
        input_stream=answers,
        output_stream=screen,
        color=False,
    )
    text = screen.getvalue()
    assert result.finished
    assert "game over:" in text and "goodbye" not in text
    assert "== hand 1 over ==" in text and "hand points: player_0" in text
    for _, reason in BAD_ANSWERS:
        assert reason in text
    assert "\x1b[" not in text  # no colour when asked for none
    expected = opponent or strongest_agent(variant)
    assert f"player_1 = {expected}" in text
    assert re.search(rf"player_1 \({re.escape(expected)}\): ", text)  # opponent moves by name
    assert answers.moves > 0
    # the human's view: never the opponent's hidden cards before the hand is over
    if variant == "knock_rummy":
        before_end = text.split("== hand 1 over ==")[0]
        assert "player_1: [10 cards]" in before_end
    if variant == "ditch_rummy":  # the opponent's moves without positions in its hidden hand
        theirs = re.findall(rf"player_1 \({re.escape(expected)}\): (.*)", text)
        assert any(re.match(r"(meld|ditch|single)\b", move) for move in theirs), theirs
        assert not [move for move in theirs if re.match(r"(meld|ditch|single)( \d+)+", move)]
    # the game it played re-plays exactly
    checked = verify_replay(result.replay)
    assert checked["final"] == result.totals
    assert checked["points"] == result.points


def test_three_players_human_in_the_middle_seat():
    screen = io.StringIO()
    result = play_game(
        "knock_rummy",
        3,
        opponents=["random", "knock.greedy"],
        seat=1,
        seed=6,
        input_stream=Scripted(screen),
        output_stream=screen,
        color=False,
    )
    text = screen.getvalue()
    assert result.finished and result.replay["agents"] == ["random", "human", "knock.greedy"]
    assert "you are player_1; player_0 = random, player_2 = knock.greedy" in text
    assert "-- player_1, your move --" in text
    assert text.index("player_0 (random): ") < text.index("your move> ")
    assert "player_0: [7 cards]" in text and "player_2: [7 cards]" in text


def test_knock_match_deals_again_and_shows_totals():
    screen = io.StringIO()
    answers = Scripted(screen)
    result = play_game(
        "knock_rummy",
        2,
        opponents=["knock.greedy"],
        seed=1,
        options={"target_score": 150},
        input_stream=answers,
        output_stream=screen,
        color=False,
    )
    text = screen.getvalue()
    assert result.finished and len(result.points) >= 2
    assert answers.continues == len(result.points) - 1
    assert "press Enter to deal hand 2" in text
    assert "scores: player_0" in text and "(target 150)" in text
    assert verify_replay(result.replay)["final"] == result.totals


def test_eof_mid_game_says_goodbye_and_saves(tmp_path):
    screen = io.StringIO()
    path = tmp_path / "left.json"
    result = play_game(
        "knock_rummy",
        2,
        seed=2,
        input_stream=Scripted(screen, limit=5),
        output_stream=screen,
        color=False,
        save=str(path),
    )
    text = screen.getvalue()
    assert not result.finished
    assert "goodbye" in text and "game over" not in text
    assert result.replay["finished"] is False
    assert verify_replay(path)["moves"] == len(result.replay["actions"])


def test_an_opponent_that_fails_leaves_the_game_so_far_saved(tmp_path):
    """The replay is written whatever ends the game: an opponent's error too (then raised)."""
    from rummyzoo.agents.base import BasePolicy

    class Failing(BasePolicy):
        name = "failing"

        def __init__(self):
            self.calls = 0

        def act(self, observation, action_mask, rng):
            self.calls += 1
            if self.calls == 3:
                raise RuntimeError("the opponent broke")
            return int(np.flatnonzero(action_mask)[0])

    screen = io.StringIO()
    path = tmp_path / "broken.json"
    with pytest.raises(RuntimeError, match="the opponent broke"):
        play_game(
            "knock_rummy",
            2,
            opponents=[Failing()],
            seed=2,
            input_stream=Scripted(screen),
            output_stream=screen,
            color=False,
            save=str(path),
        )
    assert f"saved the game to {path}" in screen.getvalue()
    assert verify_replay(path)["moves"] >= 4  # both players' moves before the error


def test_quit_and_help_and_names():
    answers = io.StringIO("help\nmoves\ntable\ndraw\nknock 10h\nquit\n")
    screen = io.StringIO()
    result = play_game(
        "knock_rummy",
        2,
        opponents=["random"],
        seed=0,
        input_stream=answers,
        output_stream=screen,
        color=False,
    )
    text = screen.getvalue()
    assert "commands:" in text and "Rules (docs/rules.md section 1)" in text
    assert "you: draw stock" in text
    assert "'knock 10♥' is not a legal move now" in text  # refused with the reason
    assert "goodbye" in text and not result.finished
    assert result.replay["actions"][0] == [0, "draw stock"]


@pytest.mark.parametrize(
    ("variant", "players", "options"),
    [
        ("ditch_rummy", 2, {}),
        ("ditch_rummy", 3, {"draw_rule": "up_to_3"}),
        ("rummy500", 2, {}),
        ("knock_rummy", 2, {}),
    ],
)
def test_the_name_of_an_illegal_move_plays_no_other_move(variant, players, options):
    """Typed as it is named, an illegal move is refused: its words are not matched against
    the legal moves' labels (Ditch Rummy's "single 2" played "single 1: 9c (+2)" through
    the label's points, "meld 1 5" played "meld 1 2: set 7h 7s (+5)")."""
    match = make_match(variant, players, {"target_score": None, **options}, "the test")
    game = match.game
    rng = np.random.default_rng(0)
    refused = 0
    for seed in range(3):
        match.reset(seed)
        while not match.over:
            legal = [int(a) for a in np.flatnonzero(match.legal_mask())]
            labels = game.move_labels(match.state, legal)
            for action in rng.choice(game.num_actions, min(40, game.num_actions), replace=False):
                if int(action) in legal:
                    continue
                name = game.action_name(int(action))
                chosen, reason = match_move(name, legal, labels, game)
                assert chosen is None, (name, labels)
                assert "is not a legal move now" in reason
                refused += 1
            match.step(int(rng.choice(legal)))
    assert refused > 100


def test_illegal_and_ambiguous_names_re_prompt():
    env = make_env("knock_rummy", 2, wrapped=False)
    env.reset(seed=0)
    raw = env.unwrapped
    legal = raw.legal_actions()
    labels = [raw.action_name(a) for a in legal]
    assert match_move("DRAW STOCK", legal, labels, raw) == (raw.action_index("draw stock"), "")
    assert match_move("2", legal, labels, raw) == (legal[1], "")
    assert match_move("take", legal, labels, raw)[0] == raw.action_index("take discard")
    action, reason = match_move("knock Kh", legal, labels, raw)
    assert action is None and "'knock Kh' is not a legal move now; legal: draw stock" in reason
    action, reason = match_move("0", legal, labels, raw)
    assert action is None and "choose a number 1-2" in reason
    action, reason = match_move("knock", legal, labels, raw)  # many such moves, none legal
    assert action is None and reason.startswith("no 'knock' move is legal now; legal: draw stock")
    env.step(raw.action_index("draw stock"))
    legal = raw.legal_actions()
    labels = [raw.action_name(a) for a in legal]
    card = labels[0].split()[1]
    action, reason = match_move(card, legal, labels, raw)
    assert action is None and "could be any of" in reason
    symbol = colour_cards(card)  # e.g. 10♥ for Th
    assert match_move(f"discard {symbol}", legal, labels, raw)[0] == legal[0]
    assert match_move(f"knock {card.lower()}", legal, labels, raw)[0] == raw.action_index(
        f"knock {card}"
    )
    # the start of moves that exist, none legal now: not an "unknown move"
    action, reason = match_move("take", legal, labels, raw)
    assert action is None and reason.startswith("'take discard' is not a legal move now")
    action, reason = match_move("draw", legal, labels, raw)
    assert action is None and reason.startswith("'draw stock' is not a legal move now")
    for digit in ("\u00b2", "\u2460", "\u0663"):  # isdigit() true, int() refuses or misreads
        action, reason = match_move(digit, legal, labels, raw)
        assert action is None and reason.startswith("unknown move"), digit


def test_ditch_moves_by_card_words():
    from rummyzoo.envs.ditch_rummy.scripting import deck_with_top
    from rummyzoo.envs.replay import describe_action

    env = make_env("ditch_rummy", 2, wrapped=False, target_score=None)
    env.reset(seed=0, options={"deck": deck_with_top("9c 9h Kd")})
    raw = env.unwrapped
    env.step(raw.action_index("draw 3"))
    legal = raw.legal_actions()
    labels = [describe_action(raw.match, a) for a in legal]
    action, _ = match_move("ditch Kd", legal, labels, raw)
    assert raw.action_name(action) == "ditch 2"
    action, _ = match_move("set", legal, labels, raw)
    assert raw.action_name(action) == "meld 0 1"


def test_ctrl_c_leaves_cleanly():
    class Interrupting(io.TextIOBase):
        def readline(self, size: int = -1) -> str:
            raise KeyboardInterrupt

    screen = io.StringIO()
    result = play_game(
        "ditch_rummy", 2, seed=0, input_stream=Interrupting(), output_stream=screen, color=False
    )
    assert "goodbye" in screen.getvalue() and not result.finished


def test_a_seed_picked_for_the_game_is_shown_only_once_it_is_over():
    """The seed deals every card: one the game picked is not in the banner (a player could
    play the same seed again and read the opponent's hand and the stock), only at the end;
    one the player gave is shown from the start."""
    screen = io.StringIO()
    result = play_game(
        "knock_rummy", 2, input_stream=io.StringIO("quit\n"), output_stream=screen, color=False
    )
    text = screen.getvalue()
    before, after = text.split("goodbye", 1)
    assert f"{result.seed}" not in before and "its seed shown when it is over" in before
    assert f"(seed {result.seed})" in after
    screen = io.StringIO()
    result = play_game(
        "knock_rummy", 2, seed=7, input_stream=io.StringIO("quit\n"), output_stream=screen,
        color=False,
    )  # fmt: skip
    assert "; seed 7" in screen.getvalue().split("goodbye", 1)[0]
    finished = io.StringIO()
    moves = "\n".join(["1"] * 400) + "\n"
    result = play_game(
        "knock_rummy", 2, opponents=["random"], input_stream=io.StringIO(moves),
        output_stream=finished, color=False, options={"target_score": None},
    )  # fmt: skip
    assert result.finished and "final points: " in finished.getvalue()
    assert finished.getvalue().rstrip().endswith(f"(seed {result.seed})")


def test_opponents_default_cycle_and_errors():
    assert strongest_agent("knock_rummy") == "knock.smart"
    assert default_opponents("knock_rummy", 4, ["random", "knock.greedy"]) == [
        "random",
        "knock.greedy",
        "random",
    ]
    assert default_opponents("knock_rummy", 3, None) == ["knock.smart", "knock.smart"]
    with pytest.raises(ValueError, match="3 opponents given for 1 other seat"):
        default_opponents("knock_rummy", 2, ["random"] * 3)
    with pytest.raises(ValueError, match=r"seat must be 0\.\.1"):
        play_game("knock_rummy", 2, seat=2, input_stream=io.StringIO(), output_stream=io.StringIO())
    with pytest.raises(ConfigError, match="set by rummyzoo"):
        play_game(
            "knock_rummy",
            2,
            options={"reward": "scaled"},
            input_stream=io.StringIO(),
            output_stream=io.StringIO(),
        )
    assert "Rules (docs/rules.md section 3)" in rules_summary("rummy500")


@pytest.mark.parametrize("variant", ["knock_rummy", "ditch_rummy", "rummy500"])
def test_the_rules_help_is_plain_text_and_names_the_games_options(variant):
    text = rules_summary(variant)
    assert "``" not in text and "**" not in text and not re.search(r"\*\w", text)
    assert text.endswith(
        "this game plays the default options (every option and its default: python -m pydoc "
        f"rummyzoo.envs.{variant}_v0)"
    )
    shown = rules_summary(variant, {"target_score": 100})
    assert "this game's options: target_score=100 " in shown


def test_colour_cards():
    assert colour_cards("discard Th, 9d/p0 [0]As") == "discard 10♥, 9♦/p0 [0]A♠"
    red = colour_cards("Kh", color=True)
    assert red.startswith("\x1b[1;31m") and "K♥" in red
    assert colour_cards("player_0 draws", color=True) == "player_0 draws"


# ------------------------------------------------------------------ a real terminal
def _run_in_pty(
    args: list[str], answer, timeout: float = 120.0, resend_after: float | None = None
) -> tuple[int, str]:
    """Run the CLI on a pseudo-terminal; ``answer(screen)`` gives the bytes to type (or None).

    Keys are typed a moment after the prompt appears, as a person would: readline may flush
    pending input while it sets up the terminal. With ``resend_after``, the last reply is typed
    again when the program has printed nothing for that many seconds (a key pressed again).
    """
    master, slave = pty.openpty()
    env = {**os.environ, "COLUMNS": "100", "TERM": "xterm"}
    env.pop("NO_COLOR", None)

    def own_terminal() -> None:
        # A session of its own with the pty as controlling terminal, so Ctrl-C is a SIGINT.
        os.setsid()
        fcntl.ioctl(0, termios.TIOCSCTTY, 0)

    proc = subprocess.Popen(
        [RUMMYZOO, *args], stdin=slave, stdout=slave, stderr=slave, env=env, preexec_fn=own_terminal
    )
    os.close(slave)
    screen = b""
    answered = 0
    last_reply: bytes | None = None
    last_output = time.monotonic()
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 0.2)
            if ready:
                try:
                    chunk = os.read(master, 65536)
                except OSError:
                    break  # the child closed the terminal
                if not chunk:
                    break
                screen += chunk
                last_output = time.monotonic()
            text = screen.decode("utf-8", "replace")
            prompts = text.count("your move> ") + text.count("(quit to leave)> ")
            if prompts > answered and text.rstrip().endswith(">"):
                answered = prompts
                reply = answer(text)
                if reply is not None:
                    time.sleep(0.2)
                    os.write(master, reply)
                    last_reply = reply
                    last_output = time.monotonic()
            elif (
                resend_after is not None
                and last_reply is not None
                and proc.poll() is None
                and time.monotonic() - last_output > resend_after
            ):
                os.write(master, last_reply)
                last_output = time.monotonic()
            if proc.poll() is not None and not ready:
                break
        code = proc.wait(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(master)
    return code, screen.decode("utf-8", "replace")


def test_cli_full_game_in_a_terminal():
    def answer(screen: str) -> bytes:
        if screen.rstrip().endswith("(quit to leave)>"):
            return b"\n"
        return b"nonsense\n" if screen.count("your move> ") == 1 else b"1\n"

    code, screen = _run_in_pty(
        ["play", "knock_rummy", "--opponents", "knock.smart", "--seed", "4"], answer
    )
    assert code == 0, screen
    assert "unknown move 'nonsense'" in screen
    assert "game over:" in screen and "== hand 1 over ==" in screen
    assert "\x1b[1;31m" in screen  # red diamonds and hearts on a colour terminal


@pytest.mark.parametrize("key, word", [(b"\x03", "goodbye"), (b"\x04", "goodbye")])
def test_cli_ctrl_c_and_ctrl_d_exit_cleanly(key, word):
    code, screen = _run_in_pty(
        ["play", "ditch_rummy", "--seed", "1", "--no-color"], lambda screen: key, resend_after=3.0
    )
    assert code == 0, screen
    assert word in screen and "Traceback" not in screen
    assert "\x1b[1;31m" not in screen


def test_a_number_past_the_list_is_no_move_however_long_and_leading_zeros_are_fine():
    from rummyzoo.cli.play import match_move

    raw = make_env("knock_rummy", 2).unwrapped
    raw.reset(seed=0)
    legal = [int(a) for a in np.flatnonzero(raw.observe(raw.agent_selection)["action_mask"])]
    labels = [raw.action_name(a) for a in legal]
    assert match_move("0002", legal, labels, raw) == (legal[1], "")
    for text in ("9" * 5000, "1" + "0" * 40):
        action, why = match_move(text, legal, labels, raw)
        assert action is None and why.startswith("there is no move"), why


def test_sigterm_keeps_the_game_and_exits_143(tmp_path):
    """``kill`` of a game waiting for the player's move: the game so far is saved and the
    command exits 143, as a process the signal ended would (it used to exit 0, as if the
    player had left)."""
    import signal

    saved = tmp_path / "game.json"
    command = [sys.executable, "-m", "rummyzoo.cli.main", "play", "knock_rummy", "--seed", "3",
               "--no-color", "--save", str(saved)]  # fmt: skip
    proc = subprocess.Popen(
        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    try:
        os.set_blocking(proc.stdout.fileno(), False)
        screen, deadline = b"", time.monotonic() + 60
        while b"your move>" not in screen:  # waiting for the player
            assert proc.poll() is None and time.monotonic() < deadline, screen
            select.select([proc.stdout], [], [], 0.5)
            screen += proc.stdout.read() or b""
        proc.send_signal(signal.SIGTERM)
        code = proc.wait(timeout=30)
        screen += proc.stdout.read() or b""
        err = proc.stderr.read().decode()
    finally:
        if proc.poll() is None:
            proc.kill()
    text = screen.decode()
    assert code == 143, (text, err)
    assert "stopped: the game was terminated" in text and "goodbye" not in text, text
    assert "interrupted; terminated" in err and "Traceback" not in err, err
    verify_replay(json.loads(saved.read_text()))


def test_an_opponent_object_for_another_game_is_refused_before_the_game():
    """An agent object is checked as a name is: one built for another variant or player count
    is refused with a message naming it, before anything is shown or played (the game began
    with it)."""
    from rummyzoo.agents.registry import make_agent

    screen = io.StringIO()
    for other, message in [
        (make_agent("ditch.smart", "ditch_rummy", 2), "built for ditch_rummy with 2 players"),
        (make_agent("knock.smart", "knock_rummy", 3), "built for knock_rummy with 3 players"),
        (object(), "not a Policy|needs|missing"),
    ]:
        with pytest.raises(ValueError, match=message):
            play_game("knock_rummy", 2, opponents=[other], seed=0, input_stream=io.StringIO(),
                      output_stream=screen, color=False)  # fmt: skip
    assert screen.getvalue() == ""


def test_a_checkpoint_opponent_gives_its_players_and_rules_unless_told(tmp_path, recwarn):
    """Against a checkpoint trained at 3 seats with knock_max_deadwood 10, ``play`` with no
    --players and no options plays 3 seats under that rule (it says so), and no warning that
    the checkpoint plays rules it did not learn; an option given wins over the learnt one."""
    from run_helpers import edit_meta, untrained_checkpoint

    net = untrained_checkpoint(
        tmp_path / "net.rz", ("num_players=3", "env_options.knock_max_deadwood=10")
    )
    screen = io.StringIO()
    result = play_game(
        "knock_rummy",
        opponents=[str(net)],
        seed=4,
        options={"target_score": None},
        input_stream=Scripted(screen, limit=2),
        output_stream=screen,
        color=False,
    )
    text = screen.getvalue()
    assert len(result.totals) == 3
    assert "the rules net.rz learnt: knock_max_deadwood=10 (--option sets another)" in text
    assert result.replay["options"]["knock_max_deadwood"] == 10
    assert not [w for w in recwarn if "other rules" in str(w.message)]
    screen = io.StringIO()
    with pytest.warns(UserWarning, match="trained under other rules"):
        result = play_game(
            "knock_rummy",
            opponents=[str(net)],
            seed=4,
            options={"target_score": None, "knock_max_deadwood": 20},
            input_stream=Scripted(screen, limit=2),
            output_stream=screen,
            color=False,
        )
    assert result.replay["options"]["knock_max_deadwood"] == 20
    assert "learnt" not in screen.getvalue()
    with pytest.raises(ValueError, match="num_players: checkpoint 3, env 2"):
        play_game("knock_rummy", 2, opponents=[str(net)], input_stream=io.StringIO(""))
    # rules its game refuses (an edited file): the error names the checkpoint (it named only
    # the option, as if the player had given it)
    edited = edit_meta(net, tmp_path / "edited.rz", lambda m: m["options"].update(hand_size="x"))
    with pytest.raises(ValueError, match=r"checkpoint \S+edited.rz has rules options the game"):
        play_game("knock_rummy", opponents=[str(edited)], input_stream=io.StringIO(""))
    # an option given that the learnt ones then refuse: the learnt one said to be the
    # checkpoint's, not the player's
    ditch = untrained_checkpoint(
        tmp_path / "ditch.rz",
        (
            "variant=ditch_rummy",
            "env_options={draw_rule: up_to_3, max_hand: 8, target_score: null}",
        ),
    )
    with pytest.raises(ValueError, match=r"got 8 \(max_hand=8: the rules \S+ditch.rz learnt"):
        play_game(
            "ditch_rummy",
            opponents=[str(ditch)],
            options={"draw_rule": "fill_to_3"},
            input_stream=io.StringIO(""),
        )
