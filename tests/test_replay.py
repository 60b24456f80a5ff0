"""Replays: record, save, load, re-simulate; tampered files are rejected; arena and CLI saving."""

from __future__ import annotations

import copy
import json
import re

import pytest

from rummyzoo.agents.arena import record_episode, run_arena, save_arena_games
from rummyzoo.agents.arena.evaluate import sample_game
from rummyzoo.agents.random_agent import RandomPolicy
from rummyzoo.cli.main import main
from rummyzoo.cli.replay import STEP_PROMPT, show_replay
from rummyzoo.envs.replay import ReplayError, load_replay, save_replay, verify_replay

#: (variant, agents, options): matches of a few hands, so later decks come from the seed too.
GAMES = [
    ("knock_rummy", ["knock.smart", "knock.greedy"], {"target_score": 60}),
    ("ditch_rummy", ["ditch.smart", "random"], {"target_score": 300}),
    ("rummy500", ["random", "random"], {"target_score": 300}),
]


@pytest.fixture(scope="module", params=GAMES, ids=[g[0] for g in GAMES])
def recorded(request):
    variant, agents, options = request.param
    return record_episode(variant, 2, agents, seed=5, options=options)


def test_round_trip_reproduces_points(recorded, tmp_path):
    path = save_replay(recorded, tmp_path / "game.json")
    loaded = load_replay(path)
    assert loaded == json.loads(json.dumps(recorded))
    assert loaded["finished"] and not loaded["truncated"]
    assert len(loaded["decks"]) == len(loaded["points"]) >= 1
    checked = verify_replay(path)
    assert checked["points"] == loaded["points"]
    assert checked["final"] == loaded["final"]
    assert checked["moves"] == len(loaded["actions"])
    assert sum(p[0] for p in loaded["points"]) == pytest.approx(loaded["final"][0])


def test_recording_is_deterministic(recorded):
    again = record_episode(
        recorded["variant"], 2, recorded["agents"], seed=5, options=recorded["options"]
    )
    assert again == recorded


def _rejects(replay, tmp_path, message):
    path = tmp_path / "tampered.json"
    path.write_text(json.dumps(replay))
    with pytest.raises(ReplayError, match=message):
        verify_replay(path)
    assert main(["replay", str(path)]) == 2


def test_a_file_that_never_ends_is_refused():
    """A device or a pipe named as a replay is read up to what a replay may hold (it was
    read to the end of memory)."""
    with pytest.raises(ReplayError, match=r"replay /dev/zero is larger than a replay may be"):
        load_replay("/dev/zero")
    assert main(["replay", "/dev/zero"]) == 2


def test_changed_points_are_corrupt(recorded, tmp_path):
    bad = copy.deepcopy(recorded)
    bad["points"][0][1] += 1
    _rejects(bad, tmp_path, r"is corrupt: hand 1 scores .* but the replay records")
    bad = copy.deepcopy(recorded)
    bad["final"][0] -= 3
    _rejects(bad, tmp_path, r"is corrupt: final points are")


def test_changed_action_is_corrupt(recorded, tmp_path):
    bad = copy.deepcopy(recorded)
    seat, name = bad["actions"][2]
    bad["actions"][2] = [seat, "pass" if name != "pass" else "draw stock"]
    with pytest.raises(ReplayError, match=r"is corrupt: action 2"):
        verify_replay(bad)
    bad = copy.deepcopy(recorded)
    bad["actions"][1][1] = "dance a jig"
    _rejects(bad, tmp_path, r"is corrupt: action 1: unknown action name 'dance a jig'")
    bad = copy.deepcopy(recorded)
    bad["actions"][0][0] = 1
    _rejects(bad, tmp_path, r"is corrupt: action 0 .* recorded for seat 1, but seat 0 is to act")
    bad = copy.deepcopy(recorded)
    del bad["actions"][-1]
    _rejects(bad, tmp_path, r"is corrupt: the recorded actions stop after")
    bad = copy.deepcopy(recorded)
    bad["actions"].append(bad["actions"][-1])
    _rejects(bad, tmp_path, r"is corrupt: the game ends after action")


def test_changed_deck_is_corrupt(recorded, tmp_path):
    bad = copy.deepcopy(recorded)
    deck = bad["decks"][-1]
    deck[0], deck[-1] = deck[-1], deck[0]
    with pytest.raises(ReplayError, match=r"is corrupt: hand \d+ is dealt a different deck"):
        verify_replay(bad)


def test_a_deck_never_dealt_and_a_format_of_true_are_corrupt(recorded, tmp_path):
    """Both were accepted: a deck past the game's last hand, and ``"format": true`` (which
    equals 1 in Python)."""
    bad = copy.deepcopy(recorded)
    bad["decks"].append(list(bad["decks"][-1]))
    hands = len(recorded["decks"])
    _rejects(bad, tmp_path, rf"the game deals {hands} hand\(s\), but {hands + 1} decks are")
    bad = copy.deepcopy(recorded)
    bad["format"] = True
    _rejects(bad, tmp_path, r"is corrupt: format True is not 1")


def test_broken_files_are_corrupt(tmp_path):
    path = tmp_path / "broken.json"
    path.write_text('{"format": 1, "variant": ')
    with pytest.raises(ReplayError, match=r"replay .*broken.json is corrupt: not valid JSON"):
        load_replay(path)
    path.write_text(json.dumps({"format": 1, "variant": "knock_rummy"}))
    with pytest.raises(ReplayError, match=r"is corrupt: missing key\(s\): num_players, options"):
        load_replay(path)
    path.write_text(json.dumps([1, 2]))
    with pytest.raises(ReplayError, match="expected a JSON object"):
        load_replay(path)
    with pytest.raises(ReplayError, match="cannot read replay"):
        load_replay(tmp_path / "missing.json")


def test_files_that_are_no_replays_are_corrupt_naming_the_file(tmp_path, recorded):
    path = tmp_path / "odd.json"
    for content, why in [
        (b"\x89PNG\xad\x00", "not UTF-8 text"),
        (b"[" * 100_000 + b"]" * 100_000, "not valid JSON"),
        (b'{"seed": ' + b"9" * 5000 + b"}", "not valid JSON"),
    ]:
        path.write_bytes(content)
        with pytest.raises(ReplayError, match=f"replay {re.escape(str(path))} is corrupt: {why}"):
            load_replay(path)
    for key in ("final", "points"):
        bad = copy.deepcopy(recorded)
        bad[key] = [10**400, 0] if key == "final" else [[10**400, 0] for _ in bad["points"]]
        with pytest.raises(ReplayError, match=f"{key}"):
            verify_replay(bad)


def test_bad_fields_are_corrupt(recorded):
    for key, value, message in [
        ("format", 2, "format 2 is not 1"),
        ("variant", "gin", "unknown variant 'gin'"),
        ("points", [[1.0]], "points must list 2 numbers per hand"),
        ("actions", [[0]], r"action 0 must be \[seat, name\]"),
        ("options", {"bogus_option": 1}, "cannot rebuild the env: unknown option"),
        ("num_players", 9, r"cannot rebuild the env: \w+ supports 2-\d players, got 9"),
    ]:
        bad = copy.deepcopy(recorded)
        bad[key] = value
        if key == "num_players":
            bad["agents"] = ["random"] * 9
            bad["points"] = [[0.0] * 9 for _ in bad["points"]]
            bad["final"] = [0.0] * 9
        with pytest.raises(ReplayError, match=message):
            verify_replay(bad)


def test_record_game_wants_one_label_per_policy():
    from rummyzoo.agents.registry import make_agent
    from rummyzoo.envs.replay import record_game

    policies = [make_agent("knock.greedy", "knock_rummy", 2) for _ in range(2)]
    with pytest.raises(ValueError, match=r"one label per policy: 2 policies, 1 labels"):
        record_game("knock_rummy", policies, ["g"], seed=1)
    assert record_game("knock_rummy", policies, ["a", "b"], seed=1)["num_players"] == 2


def test_a_whole_game_recorded_as_unfinished_or_truncated_is_refused():
    replay = record_episode("knock_rummy", 2, ["knock.greedy", "knock.greedy"], seed=1)
    assert replay["finished"] and not replay["truncated"]
    for key, value, message in [
        (
            "finished",
            False,
            r"the game ends after action \d+, but the replay records it as unfinished",
        ),
        ("truncated", True, r"the game ends by play, but the replay records truncated: true"),
    ]:
        bad = copy.deepcopy(replay)
        bad[key] = value
        with pytest.raises(ReplayError, match=message):
            verify_replay(bad)
    capped = record_episode(
        "knock_rummy",
        2,
        ["random", "random"],
        seed=1,
        options={"max_hands": 1, "target_score": 1000},
    )
    assert capped["truncated"]
    verify_replay(capped)
    capped["truncated"] = False
    with pytest.raises(
        ReplayError, match=r"ends at a turn or hand cap, but the replay records truncated: false"
    ):
        verify_replay(capped)


def test_unfinished_game_replays(tmp_path):
    replay = record_episode("knock_rummy", 2, ["knock.greedy", "knock.greedy"], seed=1)
    partial = copy.deepcopy(replay)
    partial["actions"] = partial["actions"][:2]  # a draw and a discard
    partial["points"], partial["final"], partial["finished"] = [], [0.0, 0.0], False
    assert verify_replay(partial)["moves"] == 2
    lines: list[str] = []
    show_replay(save_replay(partial, tmp_path / "partial.json"), output=lines.append)
    assert "game over" not in "\n".join(lines)
    assert lines[-2].startswith("the recording stops here, mid-game, after 2 moves")
    partial["finished"] = True
    with pytest.raises(ReplayError, match="stop after 2 moves, before the game ends"):
        verify_replay(partial)
    partial["actions"], partial["finished"] = [], False  # left before the first move
    lines.clear()
    show_replay(save_replay(partial, tmp_path / "none.json"), output=lines.append)
    assert any("to draw" in line for line in lines)  # the deal is shown
    assert lines[-2].startswith("the recording stops here, mid-game, after 0 moves")


def test_a_game_left_between_two_hands_replays(tmp_path):
    from rummyzoo.envs.replay import HandOver, ReplaySimulation

    replay = record_episode(
        "knock_rummy", 2, ["knock.greedy", "knock.greedy"], seed=3, options={"target_score": 100}
    )
    assert len(replay["points"]) > 1
    events = ReplaySimulation(replay).events()
    moves = next(i for i, e in enumerate(events) if isinstance(e, HandOver))  # hand 1's moves
    partial = copy.deepcopy(replay)
    partial["actions"] = partial["actions"][:moves]
    partial["points"], partial["decks"] = partial["points"][:1], partial["decks"][:1]
    partial["final"], partial["finished"] = list(partial["points"][0]), False
    summary = verify_replay(partial)
    assert summary["hands"] == 1 and summary["moves"] == moves
    lines: list[str] = []
    show_replay(save_replay(partial, tmp_path / "left.json"), output=lines.append)
    assert lines[-2].startswith(f"the recording stops here, mid-game, after {moves} moves and 1")
    partial["finished"] = True  # a finished game must have every hand
    with pytest.raises(ReplayError, match="hand 2 is dealt, but only 1 deck"):
        verify_replay(partial)


def test_arena_games_are_the_arena_games(tmp_path):
    """The saved games are the arena's, their agents named as its report names them (a
    checkpoint was named by its whole path)."""
    from run_helpers import untrained_checkpoint

    checkpoint = untrained_checkpoint(tmp_path / "run" / "best.rz")
    agents = ["knock.smart", str(checkpoint), "random"]
    options = {"target_score": 40}
    result = run_arena("knock_rummy", 2, agents, deals=2, seed=9, options=options)
    paths = save_arena_games(
        "knock_rummy", 2, agents, deals=2, seed=9, options=options, folder=tmp_path, limit=None
    )
    assert len(paths) == result.games == 12
    for game, path in enumerate(paths):
        replay = load_replay(path)
        assert replay["final"] == result.points[game].tolist()
        assert replay["source"]["deal"] == result.deal[game]
        seating = result.seatings[result.seating[game]]
        assert replay["agents"] == [result.labels[a] for a in seating]
    assert "best.rz" in result.labels
    assert len(save_arena_games("knock_rummy", 2, agents, [1], 9, options, tmp_path / "k", 3)) == 3


def test_sample_game_from_training(tmp_path):
    """The sample game's text and replay come from one play of the game."""
    text, replay = sample_game(RandomPolicy(), "knock.greedy", "knock_rummy", 2, {}, seed=4)
    path = save_replay(replay, tmp_path / "s.json")
    assert load_replay(path)["agents"] == ["learner", "knock.greedy"]
    summary = verify_replay(path)
    moves = [f"player_{seat}: {name}" for seat, name in replay["actions"]]
    assert [line for line in text.splitlines() if line in moves] == moves  # the same moves
    assert summary["moves"] == len(moves) > 0
    final = ", ".join(f"player_{s} {p:+g}" for s, p in enumerate(replay["points"][-1]))
    assert text.endswith("points: " + final)


def test_cli_arena_saves_games_and_replay_shows_them(tmp_path, capsys):
    folder = tmp_path / "games"
    code = main(
        [
            "arena",
            "knock_rummy",
            "--agents",
            "knock.greedy",
            "random",
            "--deals",
            "2",
            "--workers",
            "1",
            "--quiet",
            "--save-games",
            str(folder),
            "--save-limit",
            "3",
        ]
    )
    assert code == 0
    files = sorted(folder.glob("*.json"))
    assert len(files) == 3
    assert f"saved 3 game(s) to {folder}" in capsys.readouterr().out
    replay = load_replay(files[0])
    assert main(["replay", str(files[0]), "--seat", "1"]) == 0
    out = capsys.readouterr().out
    assert "player_1's hand only" in out and "replay verified" in out
    assert "player_0: [10 cards]" in out  # the other seat's hand stays hidden
    assert f"seed {replay['seed']}" not in out  # nor the seed, which deals every card
    assert f"{len(replay['actions'])}. player_" in out
    assert main(["replay", str(files[0]), "--open"]) == 0
    out = capsys.readouterr().out
    assert "player_0: [10 cards]" not in out and f"seed {replay['seed']}" in out


def test_a_seats_view_shows_the_others_moves_without_hand_positions(tmp_path):
    """Ditch Rummy's actions name positions in the mover's sorted hidden hand, which tell how
    its hidden cards rank: a seat's view of a replay (page and terminal) tells it the other
    seat's moves by the cards they put face up alone; the open view and its own moves keep
    them."""
    from rummyzoo.envs.replay import replay_frames

    data = record_episode("ditch_rummy", 2, ["ditch.smart", "ditch.greedy"], seed=5)
    positions = re.compile(r"(meld|ditch|single)( \d+)+")

    def moves(view, seat):
        frames = replay_frames(data, view)["frames"]
        return [f["move"] for f in frames if f["kind"] == "move" and f["seat"] == seat]

    assert any(positions.match(m) for m in moves(None, 1))
    assert any(positions.match(m) for m in moves(0, 0))
    seen = moves(0, 1)
    assert not [m for m in seen if positions.match(m)]
    assert any(re.match(r"(meld|ditch|single)\b", m) for m in seen)
    lines: list[str] = []
    show_replay(save_replay(data, tmp_path / "g.json"), view=0, output=lines.append)
    theirs = [line.split(": ", 1)[1] for line in lines if "player_1 (ditch.greedy): " in line]
    assert theirs and not [m for m in theirs if positions.match(m)]


def test_step_mode_waits_and_eof_runs_on(recorded, tmp_path):
    path = save_replay(recorded, tmp_path / "g.json")
    lines: list[str] = []
    prompts: list[str] = []

    def read_line(prompt: str) -> str | None:
        prompts.append(prompt)
        return "" if len(prompts) < 3 else None  # Enter twice, then end of input

    show_replay(path, view=0, step=True, output=lines.append, read_line=read_line)
    assert prompts == [STEP_PROMPT] * 3  # EOF stops the waiting; the replay runs to the end
    assert STEP_PROMPT == "[Enter] next, q quit> "
    assert f"{len(recorded['actions'])}. player_" in "\n".join(lines)
    assert lines[-1].startswith("replay verified")
    with pytest.raises(ValueError, match=r"--seat must be 0\.\.1"):
        show_replay(path, view=5, output=lines.append)


@pytest.mark.parametrize("word", ["q", "quit", " Q "])
def test_step_mode_q_stops_there(recorded, tmp_path, word):
    path = save_replay(recorded, tmp_path / "g.json")
    lines: list[str] = []
    answers = iter(["", "", word])
    prompts: list[str] = []

    def read_line(prompt: str) -> str | None:
        prompts.append(prompt)
        return next(answers)

    summary = show_replay(path, step=True, output=lines.append, read_line=read_line)
    text = "\n".join(lines)
    assert len(prompts) == 3  # no prompt after q
    assert re.search(r"^ +3\. player_", text, re.M) and not re.search(r"^ +4\. player_", text, re.M)
    total = len(recorded["actions"])
    assert lines[-1].startswith(f"replay stopped after move 3 of {total}")
    assert "game over after" not in text
    assert summary["moves"] == total  # the whole game was verified before it was shown


def test_cli_step_prompts_and_q_quits(recorded, tmp_path, capsys, monkeypatch):
    path = save_replay(recorded, tmp_path / "g.json")
    answers = iter(["", "q"])
    asked: list[str] = []

    def fake_input(prompt: str = "") -> str:
        asked.append(prompt)
        return next(answers)

    monkeypatch.setattr("builtins.input", fake_input)
    assert main(["replay", str(path), "--step", "--no-color"]) == 0
    out = capsys.readouterr().out
    assert asked == [STEP_PROMPT, STEP_PROMPT]
    assert out.rstrip().splitlines()[-1].startswith("replay stopped after move 2 of ")

    def eof(prompt: str = "") -> str:
        asked.append(prompt)
        raise EOFError

    asked.clear()
    monkeypatch.setattr("builtins.input", eof)
    assert main(["replay", str(path), "--step", "--no-color"]) == 0
    assert asked == [STEP_PROMPT]  # end of input: no more waiting
    assert capsys.readouterr().out.rstrip().splitlines()[-1].startswith("replay verified")


def test_drawn_seeds_are_numbers_javascript_reads_exactly():
    from rummyzoo.envs.replay import random_seed

    seeds = [random_seed() for _ in range(2000)]
    assert all(0 <= s < 2**53 for s in seeds) and len(set(seeds)) == len(seeds)
    assert max(seeds) > 2**50  # the whole range is used, not a few bits of it


def test_a_replays_names_are_shown_with_their_control_characters_escaped(tmp_path):
    """A crafted name could clear the screen, set the terminal's title or print lines of its
    own ("replay verified") when the replay was shown."""
    replay = record_episode("knock_rummy", 2, ["knock.greedy", "knock.greedy"], seed=1)
    replay["agents"][0] = "\x1b]0;title\x07\x1b[2Jme\nreplay verified"
    lines: list[str] = []
    show_replay(save_replay(replay, tmp_path / "crafted.json"), output=lines.append)
    text = "\n".join(lines)
    assert "\x1b" not in text and "\x07" not in text
    assert "player_0 = \\x1b]0;title\\x07\\x1b[2Jme\\nreplay verified" in text
    assert (
        sum(line == "replay verified: every hand's points match the record" for line in lines) == 1
    )


def test_a_replay_whose_first_deck_was_given_says_its_seed_did_not_deal_it(tmp_path):
    replay = record_episode("knock_rummy", 2, ["knock.greedy", "knock.greedy"], seed=1)
    for given in (False, True):
        replay["dealt_from_seed"] = not given
        lines: list[str] = []
        show_replay(save_replay(replay, tmp_path / f"{given}.json"), output=lines.append)
        note = "seed 1 (the first deck was given, not dealt from the seed)"
        assert (note in lines[0]) == given, lines[0]


def test_a_replay_cut_by_the_turn_cap_counts_the_hand_it_cut(tmp_path):
    replay = record_episode(
        "knock_rummy",
        2,
        ["random", "random"],
        seed=1,
        options={"max_turns": 4, "target_score": 100},
    )
    assert replay["truncated"] and len(replay["decks"]) == len(replay["points"]) + 1
    lines: list[str] = []
    show_replay(save_replay(replay, tmp_path / "cut.json"), output=lines.append)
    assert lines[-2].startswith(
        f"game over after {len(replay['actions'])} moves, {len(replay['decks'])} hand(s), the "
        "last cut short by the turn cap:"
    ), lines[-2]
    # the page's header counts it too (it counted the hands with points: "0 hand(s)" for a
    # game whose one hand the cap cut)
    from rummyzoo.cli.viewer import replay_page

    cut = f"{len(replay['decks'])} hand(s), the last cut short by the turn cap"
    assert cut in replay_page(replay)
