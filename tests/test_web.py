"""Games as data and on web pages: the table views, the replay page and the web app's API (its
bad requests included). The browser itself is driven in test_browser.py."""

from __future__ import annotations

import io
import json
import re
import signal
import socket
from collections import Counter
from pathlib import Path
from urllib.parse import quote

import numpy as np
import pytest

from rummyzoo.agents.registry import make_agent
from rummyzoo.cli.main import main
from rummyzoo.cli.serve import create_app
from rummyzoo.cli.viewer import replay_page
from rummyzoo.envs.registry import VARIANTS, make_match
from rummyzoo.envs.replay import (
    ReplayError,
    load_replay,
    record_game,
    replay_frames,
    save_replay,
    verify_replay,
)

pytestmark = pytest.mark.above_rules  # make test runs these once, with the compiled kernels

HEURISTIC = {
    "knock_rummy": "knock.smart",
    "ditch_rummy": "ditch.smart",
    "rummy500": "rummy500.smart",
}


def _game(variant: str, seed: int = 3, options=None) -> dict:
    options = {"target_score": None} if options is None else options
    policies = [
        make_agent(HEURISTIC[variant], variant, 2, options),
        make_agent("random", variant, 2),
    ]
    return record_game(
        variant, policies, [HEURISTIC[variant], "random"], seed=seed, options=options
    )


def _view_cards(view: dict) -> tuple[int, Counter]:
    """Every card the open view shows, counted (face-down stock cards by their count), and the
    cards it names face up with how often each appears."""
    count = 0
    named: Counter = Counter()
    for pile in view["piles"]:
        count += pile["count"]
        if pile["cards"] is not None:
            assert len(pile["cards"]) == pile["count"]
            named.update(pile["cards"])
    for meld in view["table"]:
        count += len(meld["cards"])
        named.update(meld["cards"])
    for seat in view["seats"]:
        assert seat["hand"] is not None
        count += len(seat["hand"]) + sum(len(m) for m in seat["melds"])
        count += len(seat.get("singles", []))
        named.update(seat["hand"])
        named.update(seat.get("singles", []))
        for meld in seat["melds"]:
            named.update(meld)
    return count, named


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_table_view_shows_every_card_once_and_hides_other_hands(variant):
    match = make_match(variant, 3, {"target_score": None}, "test")
    rng = np.random.default_rng(0)
    for seed in range(3):
        match.reset(seed)
        while not match.state.over:
            totals = match.totals_by_seat()
            open_view = match.game.table_view(match.state, None, totals)
            count, named = _view_cards(open_view)
            assert count == 52 * match.game.num_decks
            assert max(named.values(), default=0) <= match.game.num_decks, named.most_common(1)
            seat = match.state.current
            mine = match.game.table_view(match.state, seat, totals)
            for entry in mine["seats"]:
                if entry["seat"] == seat:
                    assert entry["hand"] == open_view["seats"][seat]["hand"]
                else:  # only the count and the cards this seat has seen
                    assert entry["hand"] is None
                    assert entry["count"] == len(open_view["seats"][entry["seat"]]["hand"])
                    assert set(entry["known"]) <= set(open_view["seats"][entry["seat"]]["hand"])
            json.dumps(mine)  # plain data
            match.play(int(rng.choice(np.flatnonzero(match.legal_mask()))))
        final = match.game.table_view(match.state, 0, match.totals_by_seat())
        assert final["over"] and final["current"] is None
        assert all(s["hand"] is not None and s["points"] is not None for s in final["seats"])


def test_knock_table_view_in_card_strings():
    from rummyzoo.envs.cards import CARD_NAMES

    dealt = "As 2s 3s 4s 5s 6s 7s 8s 9s Ts Ah 2h 3h 4h 5h 6h 7h 8h 9h Th Kd".split()  # noqa: SIM905
    deck = dealt + [c for c in CARD_NAMES if c not in dealt]
    match = make_match("knock_rummy", 2, {"target_score": None}, "test")
    match.reset(1, deck)
    view = match.game.table_view(match.state, None, match.totals_by_seat())
    shown = [c for s in view["seats"] for c in s["hand"]] + view["piles"][1]["cards"]
    assert sorted(shown) == sorted(dealt)  # 10 + 10 cards and the top discard
    assert [s["count"] for s in view["seats"]] == [10, 10]
    assert view["piles"][0] == {"name": "stock", "count": 31, "cards": None}
    hidden = match.game.table_view(match.state, 1, match.totals_by_seat())
    assert hidden["seats"][0]["hand"] is None and hidden["seats"][0]["known"] == []
    assert hidden["seats"][1]["hand"] == view["seats"][1]["hand"]


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_replay_frames_follow_the_game(variant):
    replay = _game(variant)
    payload = replay_frames(replay)
    moves = [f for f in payload["frames"] if f["kind"] == "move"]
    assert len(moves) == len(replay["actions"])
    ends = [f for f in payload["frames"] if f["kind"] == "hand_over"]
    assert [e["points"] for e in ends] == replay["points"]
    for frame, (seat, _name) in zip(moves, replay["actions"], strict=True):
        assert frame["seat"] == seat and frame["table"]["current"] == seat
        assert frame["move"] in frame["legal"] and len(frame["legal"]) == frame["legal_count"]
    # From a seat's view the other hands are hidden, and so are the other seat's alternatives
    # (their number too: 500 Rum's count of legal digs tells which pile cards they can meld),
    # and the seed, which deals every hidden card.
    seat_view = replay_frames(replay, view=1)
    assert payload["seed"] == replay["seed"] and seat_view["seed"] is None
    for frame in seat_view["frames"]:
        if frame["kind"] == "move":
            assert frame["table"]["seats"][0]["hand"] is None
            assert (frame["legal"] is None) == (frame["seat"] == 0)
            assert (frame["legal_count"] is None) == (frame["seat"] == 0)
    assert f"seed {replay['seed']}" not in replay_page(replay, 1, "x")
    assert "(seed None)" not in replay_page(replay, 1, "x")  # the title says no seed either
    with pytest.raises(ValueError, match=r"view must be a seat 0\.\.1"):
        replay_frames(replay, view=2)


def test_replay_page_is_self_contained_and_escapes_names(tmp_path):
    replay = _game("knock_rummy")
    replay["agents"][1] = "</script><b>x"
    replay["agents"][0] = "a<!--b&c>"  # "<!--" was written "<\\!--", which JSON refuses
    text = replay_page(replay)
    assert "</script><b>x" not in text  # the name cannot end the data block
    assert not re.search(r"(src|href)=\"https?://", text)  # nothing from the network
    data = re.search(r'<script type="application/json" id="replay-data">(.*?)</script>', text, re.S)
    payload = json.loads(data.group(1))
    assert payload["agents"] == ["a<!--b&c>", "</script><b>x"]
    assert "<!--" not in data.group(1)
    assert len(payload["frames"]) == len(replay["actions"]) + len(replay["points"])


def test_replay_html_command(tmp_path, capsys):
    path = save_replay(_game("rummy500"), tmp_path / "g.json")
    out = tmp_path / "pages" / "g.html"
    assert main(["replay", str(path), "--html", str(out), "--seat", "0"]) == 0
    assert "wrote" in capsys.readouterr().out
    text = out.read_text()
    assert "RZ.Viewer" in text and "player_0&#x27;s view" in text
    # A corrupt replay is refused and nothing is written.
    bad = load_replay(path)
    bad["points"][0][0] += 1
    save_replay(bad, tmp_path / "bad.json")
    assert main(["replay", str(tmp_path / "bad.json"), "--html", str(tmp_path / "bad.html")]) == 2
    assert "is corrupt" in capsys.readouterr().err
    assert not (tmp_path / "bad.html").exists()


# ---------------------------------------------------------------------------- the web app
@pytest.fixture
def runs(tmp_path):
    root = tmp_path / "runs"
    (root / "r1" / "games").mkdir(parents=True)
    (root / "r1" / "config.yaml").write_text("variant: knock_rummy\n")
    save_replay(_game("knock_rummy"), root / "r1" / "games" / "sample_000000001.json")
    secret = tmp_path / "secret.json"
    secret.write_text(json.dumps(_game("knock_rummy", seed=9)))
    (root / "r1" / "games" / "link.json").symlink_to(secret)  # points outside the runs folder
    return root


def _no_traceback(response) -> None:
    assert b"Traceback" not in response.data


def test_serve_pages(runs):
    client = create_app(runs).test_client()
    index = client.get("/")
    assert index.status_code == 200 and b'href="/runs/r1"' in index.data
    run = client.get("/runs/r1")
    assert run.status_code == 200 and b"sample_000000001.json" in run.data
    game = client.get("/runs/r1/game/games/sample_000000001.json")
    assert game.status_code == 200 and b"RZ.Viewer" in game.data
    assert client.get("/runs/r1/game/games/sample_000000001.json?seat=1").status_code == 200
    assert client.get("/play").status_code == 200


@pytest.mark.parametrize(
    ("url", "status", "message"),
    [
        ("/runs/nope", 404, "unknown run"),
        ("/runs/r1/game/games/missing.json", 404, "unknown game"),
        ("/runs/r1/game/../../secret.json", 404, "not in the runs folder"),
        ("/runs/r1/game/games/link.json", 404, "not in the runs folder"),
        ("/runs/r1/game/%2Fetc%2Fpasswd", 404, "not found"),
        ("/runs/r1/game/games/sample_000000001.json?seat=5", 400, "view must be a seat"),
        ("/nowhere", 404, "not found"),
        # a name the file system refuses (too long): 500 and the server's path before
        ("/runs/r1/game/games/" + "a" * 300 + ".json", 404, "unknown game"),
    ],
)
def test_serve_bad_pages(runs, url, status, message):
    response = create_app(runs).test_client().get(url)
    assert response.status_code == status, response.data[-400:]
    assert message.lower() in response.get_data(as_text=True).lower()
    _no_traceback(response)


def test_serve_refuses_a_corrupt_game(runs):
    bad = load_replay(runs / "r1" / "games" / "sample_000000001.json")
    bad["final"] = [0, 0]
    save_replay(bad, runs / "r1" / "games" / "bad.json")
    response = create_app(runs).test_client().get("/runs/r1/game/games/bad.json")
    assert response.status_code == 400 and b"is corrupt" in response.data
    _no_traceback(response)


def test_serve_lists_a_run_whose_summary_is_damaged(runs):
    client = create_app(runs).test_client()
    for damaged in ("[1]", '{"evaluations": "x"}', "{not json"):
        (runs / "r1" / "summary.json").write_text(damaged)
        for url in ("/", "/runs/r1"):
            response = client.get(url)
            assert response.status_code == 200 and b"r1" in response.data, (damaged, url)


def test_serve_reads_a_runs_state_only_from_small_files_in_the_runs_folder(runs, tmp_path):
    """A run's state.json and lock file are read as its config.yaml is: inside the runs
    folder, regular files, and not whole: a link to a file outside was read, a pipe in their
    place held the listing up for good, a link to /dev/zero filled the memory. A config nested
    past Python's recursion made the listing fail (500). Each such run is listed, said
    unreadable, and the others as before."""
    import os
    import threading

    outside = tmp_path / "outside.json"
    outside.write_text('{"steps": 424242}')
    made = {}
    for name, part, kind in [
        ("linked", "state.json", outside),
        ("piped", "state.json", "fifo"),
        ("locked", ".lock", "fifo"),
        ("zeros", "state.json", Path("/dev/zero")),
        ("deep", None, None),
        ("a;touch PWNED #", None, None),
    ]:
        run = runs / name
        run.mkdir()
        (run / "config.yaml").write_text(
            "[" * 5000 + "]" * 5000 if name == "deep" else "variant: knock_rummy\nn_timesteps: 9\n"
        )
        if kind == "fifo":
            os.mkfifo(run / part)
        elif kind is not None:
            (run / part).symlink_to(kind)
        made[name] = run
    client = create_app(runs).test_client()
    answers = {}

    def fetch() -> None:
        answers["/"] = client.get("/")
        for name in made:
            answers[name] = client.get(f"/runs/{quote(name)}")

    reader = threading.Thread(target=fetch, daemon=True)
    reader.start()
    reader.join(timeout=60)
    assert not reader.is_alive(), "a run's files held the pages up"
    listing = answers["/"].get_data(as_text=True)
    assert answers["/"].status_code == 200 and "424,242" not in listing
    for name in made:
        assert answers[name].status_code == 200, name
    text = {name: answers[name].get_data(as_text=True) for name in made}
    assert "its state.json lies outside the runs folder: not read" in text["linked"]
    assert "its state.json cannot be read" in text["piped"]
    assert "its state.json lies outside the runs folder: not read" in text["zeros"]
    # and read by any command (evaluate's "where it stands", --resume), a device is refused
    from rummyzoo.training.run_folder import run_progress

    assert run_progress(made["zeros"])["status"] == "unreadable"
    assert "stopped before its first checkpoint" in text["locked"]
    assert "stopped before its first checkpoint" in text["deep"]
    # the command a page suggests is quoted for the shell
    assert "rummyzoo train --resume &#x27;" in text["a;touch PWNED #"]
    assert "PWNED #&#x27; goes on" in text["a;touch PWNED #"]


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("{not json", "malformed JSON"),
        ("[" * 30_000 + "]" * 30_000, "malformed JSON"),  # under the body limit
        ('{"variant": "knock_rummy", "seed": ' + "9" * 5000 + "}", "malformed JSON"),
        ("[1, 2]", "expected a JSON object"),
        ('{"variant": "poker"}', "unknown variant 'poker'"),
        ('{"variant": ["knock_rummy"]}', "unknown variant ['knock_rummy']"),  # was a 500
        ('{"variant": {}}', "unknown variant {}"),
        ('{"variant": "knock_rummy", "seed": "12x"}', "seed must be a non-negative int"),
        ('{"variant": "knock_rummy", "players": 7}', "players"),
        ('{"variant": "knock_rummy", "seat": 3}', "seat must be 0..1"),
        ('{"variant": "knock_rummy", "opponent": "nobody"}', "nobody"),
        ('{"variant": "knock_rummy", "opponent": "../secret.json"}', "not in the runs folder"),
        ('{"variant": "knock_rummy", "opponent": "json:JSONDecoder"}', "unknown opponent"),
        ('{"variant": "knock_rummy", "opponent": "r1/config.yaml"}', "is a .rz file"),
        ('{"variant": "knock_rummy", "opponent": "knock.smart(samples=9)"}', "no parameters"),
        ('{"variant": "knock_rummy", "options": {"no_such_rule": 1}}', "no_such_rule"),
        ('{"variant": "knock_rummy", "colour": "red"}', "unknown field(s): colour"),
    ],
)
def test_serve_bad_new_games(runs, body, message):
    response = (
        create_app(runs)
        .test_client()
        .post("/api/games", data=body, content_type="application/json")
    )
    assert response.status_code in (400, 404), response.json
    assert message in response.json["error"]
    _no_traceback(response)


def test_serve_takes_json_only_so_other_sites_cannot_post(runs):
    client = create_app(runs).test_client()
    body = '{"variant": "knock_rummy"}'
    for kind in ("text/plain", "application/x-www-form-urlencoded", None):
        response = client.post("/api/games", data=body, content_type=kind)
        assert response.status_code == 415 and "application/json" in response.json["error"]
    assert client.post("/api/games", data=body, content_type="application/json").status_code == 201


def test_serve_never_imports_a_module_a_request_names(runs, tmp_path, monkeypatch):
    flag = tmp_path / "imported"
    (tmp_path / "rz_side_effect.py").write_text(f"open({str(flag)!r}, 'w').close()\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    response = (
        create_app(runs)
        .test_client()
        .post("/api/games", json={"variant": "knock_rummy", "opponent": "rz_side_effect:Agent"})
    )
    assert response.status_code == 400 and "unknown opponent" in response.json["error"]
    assert not flag.exists()


def test_an_illegal_action_id_plays_no_other_move(runs):
    """Each action id that is not legal is refused, in every state of Ditch Rummy games (an
    id went through its name's words, which a legal move's points could match: "single 2"
    played "single 1: 9c (+2)")."""
    client = create_app(runs).test_client()
    count = make_match("ditch_rummy", 2, {"target_score": None}, "test").game.num_actions
    rng = np.random.default_rng(0)
    refused = 0
    for seed in range(1, 5):
        state = client.post(
            "/api/games",
            json={"variant": "ditch_rummy", "opponent": "ditch.greedy", "seed": seed,
                  "options": {"target_score": None}},
        ).json  # fmt: skip
        while state["status"] == "your_move":
            legal = {m["action"] for m in state["legal"]}
            for action in sorted(set(range(count)) - legal):
                bad = client.post(f"/api/games/{state['id']}/move", json={"action": action})
                assert bad.status_code == 400 and "not a legal move now" in bad.json["error"]
                refused += 1
            # melds and singles first, as a player keeping a hand going plays
            moves = [m for m in state["legal"] if "(+" in m["description"]] or state["legal"]
            choice = moves[int(rng.integers(len(moves)))]["action"]
            state = client.post(f"/api/games/{state['id']}/move", json={"action": choice}).json
        assert state["status"] == "over"
    assert refused > 100


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_serve_plays_a_whole_game(runs, variant):
    client = create_app(runs).test_client()
    start = client.post(
        "/api/games",
        json={
            "variant": variant,
            "opponent": "random",
            "options": {"target_score": None},
            "seed": 5,
        },
    )
    assert start.status_code == 201
    state = start.json
    game = state["id"]
    # Bad moves: a clear message, and nothing changes.
    for body, message in [
        ({"move": "no such move"}, "a move name (the buttons list them)"),
        ({"action": 10**6}, "out of range"),
        ({"action": "x"}, "action must be an action id"),
        ({}, 'send {"move"'),
    ]:
        bad = client.post(f"/api/games/{game}/move", json=body)
        assert bad.status_code == 400 and message in bad.json["error"], bad.json
        assert client.get(f"/api/games/{game}").json == state
    illegal = next(
        a for a in range(10**4)
        if a not in {m["action"] for m in state["legal"]}
    )  # fmt: skip
    bad = client.post(f"/api/games/{game}/move", json={"action": illegal})
    assert bad.status_code == 400 and "not a legal move now" in bad.json["error"]
    assert (
        client.post(f"/api/games/{game}/move", data="{oops", content_type="application/json")
        .json["error"]
        .startswith("malformed JSON")
    )
    rng = np.random.default_rng(0)
    moves = 0
    while state["status"] == "your_move":
        assert state["table"]["current"] == 0
        assert all(s["hand"] is None for s in state["table"]["seats"][1:])  # hidden
        choice = state["legal"][int(rng.integers(len(state["legal"])))]
        # Alternate the two ways to send a move: by id and by name (as typed).
        body = {"action": choice["action"]} if moves % 2 else {"move": choice["name"]}
        response = client.post(f"/api/games/{game}/move", json=body)
        assert response.status_code == 200, response.json
        state = response.json
        moves += 1
    assert state["status"] == "over" and state["error"] is None and moves > 0
    assert client.post(f"/api/games/{game}/move", json={"move": "1"}).status_code == 409
    saved = runs / "web_games" / state["replay"]
    summary = verify_replay(saved)
    assert summary["final"] == state["totals"]
    assert load_replay(saved)["agents"][0] == "human"
    assert client.get(f"/runs/web_games/game/{state['replay']}").status_code == 200


def test_serve_keeps_a_seed_it_picked_secret_until_the_game_is_over(runs):
    """The seed deals every card and seeds the opponents: the server's own pick is shown once
    the game is over (a seed the player chose, they know already); a seed sent as its digits
    (as the form sends it: JavaScript numbers lose digits past 2**53) is taken exactly."""
    client = create_app(runs).test_client()
    body = {"variant": "knock_rummy", "options": {"target_score": None}}
    start = client.post("/api/games", json=body)
    assert start.status_code == 201 and start.json["seed"] is None
    game = start.json["id"]
    page = client.get(f"/play/{game}").get_data(as_text=True)
    assert "seed shown when the game is over" in page
    state = start.json
    while state["status"] == "your_move":
        state = client.post(f"/api/games/{game}/move", json={"move": "1"}).json
    assert state["status"] == "over" and isinstance(state["seed"], int)
    assert load_replay(runs / "web_games" / state["replay"])["seed"] == state["seed"]
    big = 3395192043594990118  # past 2**53
    chosen = client.post("/api/games", json={**body, "seed": str(big)})
    assert chosen.status_code == 201 and chosen.json["seed"] == big
    assert f"seed {big}" in client.get(f"/play/{chosen.json['id']}").get_data(as_text=True)


def test_serve_logs_the_opponents_moves_without_hand_positions(runs):
    """A Ditch Rummy move names positions in its mover's sorted hidden hand; the log tells the
    human the opponent's moves by the cards they put face up alone."""
    client = create_app(runs).test_client()
    start = client.post(
        "/api/games", json={"variant": "ditch_rummy", "options": {"target_score": None}, "seed": 4}
    )
    game = start.json["id"]
    state = start.json
    while state["status"] == "your_move":
        response = client.post(
            f"/api/games/{game}/move", json={"action": state["legal"][-1]["action"]}
        )
        assert response.status_code == 200, response.json
        state = response.json
    assert state["status"] == "over" and state["error"] is None
    theirs = [line.split(": ", 1)[1] for line in state["log"] if line.startswith("player_1: ")]
    assert any(re.match(r"(meld|ditch|single)\b", move) for move in theirs), theirs
    assert not [m for m in theirs if re.match(r"(meld|ditch|single)( \d+)+", m)]


def test_serve_takes_one_move_per_decision_from_requests_sent_at_once(runs):
    """Two moves sent at once for one decision (naming it, as the page does): one is played,
    the other refused with 409. (Both were taken before, the second played unchecked at the
    next decision, which ended the game with an illegal action.) A move that names no
    decision is checked against the one open when it arrives."""
    import threading

    app = create_app(runs)
    start = app.test_client().post(
        "/api/games", json={"variant": "ditch_rummy", "options": {"target_score": None}, "seed": 2}
    )
    game = start.json["id"]
    for _ in range(6):
        state = app.test_client().get(f"/api/games/{game}").json
        if state["status"] != "your_move":
            break
        move = {"action": state["legal"][0]["action"], "decision": state["decision"]}
        gate = threading.Barrier(2)
        codes = []

        def send(move=move, gate=gate, codes=codes):
            client = app.test_client()
            gate.wait()
            codes.append(client.post(f"/api/games/{game}/move", json=move).status_code)

        threads = [threading.Thread(target=send) for _ in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert sorted(codes) == [200, 409], codes
    final = app.test_client().get(f"/api/games/{game}").json
    assert final["error"] is None
    if final["status"] == "your_move":
        stale = {"action": final["legal"][0]["action"], "decision": final["decision"] - 1}
        refused = app.test_client().post(f"/api/games/{game}/move", json=stale)
        assert refused.status_code == 409 and "has passed" in refused.json["error"]
        early = {**stale, "decision": final["decision"] + 1}
        refused = app.test_client().post(f"/api/games/{game}/move", json=early)
        assert refused.status_code == 409 and "is not open yet" in refused.json["error"]
        for bad in ("x", -1, True, 1.5):  # no decision's number: a bad request, not a stale one
            refused = app.test_client().post(
                f"/api/games/{game}/move", json={**stale, "decision": bad}
            )
            assert refused.status_code == 400, (bad, refused.json)
            assert "decision must be the number of a decision" in refused.json["error"]
        assert app.test_client().get(f"/api/games/{game}").json == final


def test_serve_makes_room_with_finished_or_idle_games_only(runs, monkeypatch):
    """At the limit of games in memory, a finished game makes room, then one nobody asked
    about for the idle limit; a game in play is never dropped for a new one (503 instead),
    and a game left unfinished is not saved as a replay."""
    import rummyzoo.cli.serve as serve

    monkeypatch.setattr(serve, "MAX_GAMES", 2)
    serve_game = serve.WebGame
    client = create_app(runs).test_client()
    body = {"variant": "knock_rummy", "options": {"target_score": None}, "seed": 1}
    first = client.post("/api/games", json=body).json["id"]
    second = client.post("/api/games", json=body).json["id"]
    made = []  # the games (and their opponents: a checkpoint is loaded) made from here on
    monkeypatch.setattr(serve, "WebGame", lambda *a, **k: made.append(a) or serve_game(*a, **k))
    refused = client.post("/api/games", json=body)
    assert refused.status_code == 503 and "2 games are being played" in refused.json["error"]
    assert made == []  # refused before any was made
    for game in (first, second):  # both still there
        assert client.get(f"/api/games/{game}").status_code == 200
    monkeypatch.setattr(serve, "IDLE_LIMIT", 0.0)  # every game now counts as idle
    third = client.post("/api/games", json=body)
    assert third.status_code == 201 and len(made) == 1
    assert client.get(f"/api/games/{first}").status_code == 404  # the longest idle went
    assert not (runs / "web_games").exists() or not list((runs / "web_games").iterdir())


def test_serve_lists_a_replay_saved_with_its_keys_in_another_order(runs):
    data = load_replay(runs / "r1" / "games" / "sample_000000001.json")
    (runs / "r1" / "games" / "sorted.json").write_text(json.dumps(data, sort_keys=True))
    (runs / "r1" / "games" / "other.json").write_text(json.dumps({"format": True, "x": 1}))
    page = create_app(runs).test_client().get("/runs/r1").get_data(as_text=True)
    assert "sorted.json" in page and "other.json" not in page


def test_serve_unknown_game(runs):
    client = create_app(runs).test_client()
    for response in (client.get("/api/games/abc"), client.post("/api/games/abc/move", json={})):
        assert response.status_code == 404 and "unknown game" in response.json["error"]
    assert client.get("/play/abc").status_code == 404


def test_serve_play_against_a_checkpoint_path_is_kept_inside(runs):
    client = create_app(runs).test_client()
    response = client.post(
        "/api/games", json={"variant": "knock_rummy", "opponent": "r1/checkpoints/best.rz"}
    )
    assert response.status_code == 404 and "unknown checkpoint" in response.json["error"]


def test_a_run_pages_checkpoint_opens_the_form_at_its_own_game(runs):
    """A run's "play against" link starts the form at the checkpoint's variant and player
    count (a Ditch Rummy network of 3 players, here), and the resume set's own copy of
    best.rz is not offered."""
    from run_helpers import untrained_checkpoint

    folder = runs / "r1" / "checkpoints"
    folder.mkdir()
    untrained_checkpoint(folder / "best.rz", ("variant=ditch_rummy", "num_players=3"))
    (folder / "best_at_checkpoint.rz").write_bytes((folder / "best.rz").read_bytes())
    client = create_app(runs).test_client()
    run = client.get("/runs/r1").text
    assert "play against best.rz" in run and "best_at_checkpoint" not in run
    form = client.get("/play?opponent=r1/checkpoints/best.rz").text
    assert '<option value="ditch_rummy" selected>' in form and 'value="3"></label>' in form
    assert "best_at_checkpoint" not in form
    assert (
        'value="r1/checkpoints/best.rz" data-variant="ditch_rummy" data-players="3" data-teams="false" selected'
        in form
    )
    plain = client.get("/play").text  # no checkpoint: the first variant, 2 players
    assert " selected>" not in plain.split('id="opponent"')[0] and 'value="2"></label>' in plain


def test_only_checkpoint_files_are_offered_and_an_unreadable_one_is_named(runs):
    """A folder named x.rz is not offered (choosing it answered "unknown checkpoint"), and a
    request that leaves the variant to a checkpoint that does not read is told why (it was
    asked for a variant)."""
    from run_helpers import untrained_checkpoint

    folder = runs / "r1" / "checkpoints"
    folder.mkdir()
    untrained_checkpoint(folder / "best.rz")
    (folder / "dir.rz").mkdir()
    (folder / "junk.rz").write_bytes(b"not a zip")
    client = create_app(runs).test_client()
    for page in (client.get("/runs/r1").text, client.get("/play").text):
        assert "best.rz" in page and "dir.rz" not in page
    response = client.post("/api/games", json={"opponent": "r1/checkpoints/junk.rz"})
    assert response.status_code == 400
    error = response.json["error"]
    assert error.startswith("checkpoint r1/checkpoints/junk.rz ") and "send a variant" not in error
    assert str(runs) not in error and ": checkpoint" not in error, error


def test_a_checkpoint_plays_under_the_rules_it_learnt(runs):
    """A checkpoint trained on hands of 7 cards was played on hands of 10 (the form sends no
    rules options), with a warning on the server's console only; the rules a request sets
    still win."""
    from run_helpers import untrained_checkpoint

    folder = runs / "r1" / "checkpoints"
    folder.mkdir()
    untrained_checkpoint(folder / "best.rz", ("env_options.hand_size=7",))
    client = create_app(runs).test_client()
    game = {"variant": "knock_rummy", "opponent": "r1/checkpoints/best.rz"}
    for options, cards in (({"target_score": None}, 7), ({"hand_size": 10}, 10)):
        response = client.post("/api/games", json={**game, "options": options})
        assert response.status_code == 201, response.json
        assert [s["count"] for s in response.json["table"]["seats"]] == [cards, cards]
        # the page says which rules are in force, and those the checkpoint's learning gave
        # (as the terminal's banner does: the page named none)
        page = client.get(f"/play/{response.json['id']}").get_data(as_text=True)
        said = "the rules r1/checkpoints/best.rz learnt: hand_size=7"
        assert (said in page) == (cards == 7), page
        assert response.json["learnt"] == (["hand_size"] if cards == 7 else [])
        assert response.json["options"]["hand_size"] == cards
        assert ("options: hand_size=10" in page) == (cards == 10)
    # its rules only: the match is the request's (the checkpoint trained on matches to 100)
    untrained_checkpoint(folder / "match.rz", ("env_options.target_score=100",))
    response = client.post("/api/games", json={**game, "opponent": "r1/checkpoints/match.rz"})
    assert response.status_code == 201 and response.json["table"]["target"] is None
    # and for its own game only: another variant is refused as such, not for its options
    other = {**game, "variant": "ditch_rummy"}
    refused = client.post("/api/games", json=other).json["error"]
    assert "hand_size" not in refused and "knock_rummy" in refused, refused
    # rules its game refuses (an edited file): named as the checkpoint's, as the request names it
    from run_helpers import edit_meta

    edit_meta(
        folder / "best.rz", folder / "edited.rz", lambda m: m["options"].update(hand_size="x")
    )
    response = client.post("/api/games", json={**game, "opponent": "r1/checkpoints/edited.rz"})
    assert response.status_code == 400
    error = response.json["error"]
    assert error.startswith("checkpoint r1/checkpoints/edited.rz has rules options the game"), error
    # a rule the request changes that the learnt ones then refuse: the learnt option is said
    # to be the checkpoint's (it was named as if the request had set it)
    untrained_checkpoint(
        folder / "ditch.rz",
        (
            "variant=ditch_rummy",
            "env_options={draw_rule: up_to_3, max_hand: 8, target_score: null}",
        ),
    )
    ditch = {"opponent": "r1/checkpoints/ditch.rz", "options": {"draw_rule": "fill_to_3"}}
    error = client.post("/api/games", json=ditch).json["error"]
    assert "got 8 (max_hand=8: the rules r1/checkpoints/ditch.rz learnt, taken where none" in error
    assert str(runs) not in error


def test_a_checkpoint_opponent_gives_a_request_its_game(runs):
    """A request that names a checkpoint and no variant plays the checkpoint's variant and
    player count; a refusal names the checkpoint as the request did, not by the server's
    path; the form's choice of a checkpoint carries its game for the page to set."""
    from run_helpers import untrained_checkpoint

    folder = runs / "r1" / "checkpoints"
    folder.mkdir()
    untrained_checkpoint(folder / "best.rz", ("variant=ditch_rummy", "num_players=3"))
    client = create_app(runs).test_client()
    net = "r1/checkpoints/best.rz"
    response = client.post("/api/games", json={"opponent": net})
    assert response.status_code == 201, response.json
    assert len(response.json["table"]["seats"]) == 3
    assert response.json["variant"] == "ditch_rummy"
    refused = client.post("/api/games", json={"opponent": net, "variant": "knock_rummy"})
    assert refused.status_code == 400
    error = refused.json["error"]
    assert f"checkpoint {net} does not match" in error and str(runs) not in error, error
    form = client.get("/play").text
    assert f'value="{net}" data-variant="ditch_rummy" data-players="3" data-teams="false">' in form
    # any checkpoint of the folder, one the form does not list too (a snapshot of the pool)
    (runs / "r1" / "pool").mkdir()
    (runs / "r1" / "pool" / "snap.rz").write_bytes((folder / "best.rz").read_bytes())
    snap = client.post("/api/games", json={"opponent": "r1/pool/snap.rz"})
    assert snap.status_code == 201 and snap.json["variant"] == "ditch_rummy", snap.json
    none = client.post("/api/games", json={"opponent": "random"})
    assert none.status_code == 400 and none.json["error"].startswith("send a variant: one of")


def test_a_damaged_game_is_named_as_the_page_names_it(runs):
    (runs / "r1" / "not_a_game.json").write_text("{}")
    response = create_app(runs).test_client().get("/runs/r1/game/not_a_game.json")
    assert response.status_code == 400
    assert "replay r1/not_a_game.json is corrupt" in response.text
    assert str(runs) not in response.text


def test_replay_error_for_bad_file(tmp_path):
    (tmp_path / "x.json").write_text("{")
    with pytest.raises(ReplayError):
        load_replay(tmp_path / "x.json")


def test_serve_makes_only_its_default_runs_folder_and_refuses_a_bad_seat(
    runs, tmp_path, capsys, monkeypatch
):

    page = "/runs/r1/game/games/sample_000000001.json?seat=abc"
    response = create_app(runs).test_client().get(page)
    assert response.status_code == 400 and "seat must be a seat number or open" in response.text
    served = []

    class _Server:
        def serve_forever(self):
            served.append(True)

        def server_close(self):
            pass

    monkeypatch.setattr("werkzeug.serving.make_server", lambda *a, **k: _Server())
    missing = tmp_path / "new_runs"
    assert main(["serve", str(missing)]) == 2  # named: a slip of the name is refused
    assert f"runs folder {missing} does not exist" in capsys.readouterr().err
    assert not missing.exists() and not served
    (tmp_path / "fresh").mkdir()
    monkeypatch.chdir(tmp_path / "fresh")
    assert main(["serve"]) == 0  # the default: made where there is none yet
    assert served and (tmp_path / "fresh" / "runs").is_dir()
    assert "created the runs folder runs" in capsys.readouterr().out


def test_serve_refuses_a_bad_port_and_a_port_in_use_in_one_line(tmp_path, capsys):
    import socket

    for port in ("-1", "0", "99999", "x"):
        with pytest.raises(SystemExit) as stop:
            main(["serve", str(tmp_path), "--port", port])
        assert stop.value.code == 2
        assert "--port" in capsys.readouterr().err
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    try:
        port = taken.getsockname()[1]
        assert main(["serve", str(tmp_path), "--port", str(port)]) == 2
    finally:
        taken.close()
    err = capsys.readouterr().err
    assert f"cannot serve on 127.0.0.1:{port}" in err and "Traceback" not in err
    assert not (tmp_path / "r").exists()  # refused before anything was made


def test_serve_answers_only_loopback_names_and_reads_small_bodies(runs):
    client = create_app(runs).test_client()
    for host in ("localhost", "localhost:8000", "127.0.0.1:8000", "[::1]:8000"):
        assert client.get("/", headers={"Host": host}).status_code == 200, host
    rebound = client.get("/", headers={"Host": "evil.example:8000"})
    assert rebound.status_code == 403 and "localhost only" in rebound.text
    # bound to every address on purpose: any name is answered
    assert (
        create_app(runs, "0.0.0.0")
        .test_client()
        .get("/", headers={"Host": "evil.example"})
        .status_code
        == 200
    )
    big = client.post("/api/games", json={"variant": "a" * 200_000})
    assert big.status_code == 413 and len(big.data) < 2_000
    # the same in chunks (no length given): it was cut at the limit and read
    chunked = {
        "headers": {"Transfer-Encoding": "chunked", "Content-Type": "application/json"},
        "environ_overrides": {"wsgi.input_terminated": True},
    }
    padded = b'{"variant": "knock_rummy"}' + b" " * 100_000
    assert client.post("/api/games", input_stream=io.BytesIO(padded), **chunked).status_code == 413
    small = io.BytesIO(b'{"variant": "knock_rummy"}')
    assert client.post("/api/games", input_stream=small, **chunked).status_code == 201
    too_long = {"variant": "knock_rummy", "opponent": "r1/games/" + "a" * 300 + ".rz"}
    missing = client.post("/api/games", json=too_long)
    assert missing.status_code == 404 and "unknown checkpoint" in missing.json["error"]
    long_move = client.post("/api/games", json={"variant": "a" * 20_000})
    assert long_move.status_code == 400 and len(long_move.data) < 2_000


def test_serve_links_are_encoded_and_links_out_are_not_listed(runs, tmp_path):
    odd = runs / "a#b" / "games"
    odd.mkdir(parents=True)
    (runs / "a#b" / "config.yaml").write_text("variant: knock_rummy\n")
    save_replay(_game("knock_rummy"), odd / "x#1.json")
    client = create_app(runs).test_client()
    index = client.get("/").text
    assert 'href="/runs/a%23b"' in index
    page = client.get("/runs/a%23b").text
    assert 'href="/runs/a%23b/game/games/x%231.json"' in page
    assert client.get("/runs/a%23b/game/games/x%231.json").status_code == 200
    # r1/games/link.json points outside the runs folder: never read, so never listed
    assert "link.json" not in client.get("/runs/r1").text
    outside = tmp_path / "outside.yaml"
    outside.write_text("secret: 1\n")
    (runs / "r1" / "config.yaml").unlink()
    (runs / "r1" / "config.yaml").symlink_to(outside)
    assert "secret" not in client.get("/runs/r1").text


@pytest.mark.parametrize(
    "entry",
    [{"win_rate": "x"}, {"win_rate": 0.5, "win_rate_ci": [None, 1]},
     {"win_rate": 0.5, "win_rate_ci": 0.3}, {"win_rate": float("nan")}],
)  # fmt: skip
def test_serve_shows_a_run_whose_evaluations_are_damaged(runs, entry):
    evals = {"evaluations": [{"steps": 10, "results": {"random": entry}}]}
    (runs / "r1" / "evaluations.json").write_text(json.dumps(evals))
    client = create_app(runs).test_client()
    assert client.get("/").status_code == 200
    page = client.get("/runs/r1")
    assert page.status_code == 200 and "sample_000000001.json" in page.text


def test_serve_seat_and_move_of_other_digits_are_refused_not_crashed(runs):
    client = create_app(runs).test_client()
    page = client.get("/runs/r1/game/games/sample_000000001.json?seat=\u00b2")
    assert page.status_code == 400 and "seat must be a seat number" in page.text
    game = client.post(
        "/api/games", json={"variant": "knock_rummy", "opponent": "random", "seed": 3}
    ).get_json()
    move = client.post(f"/api/games/{game['id']}/move", json={"move": "\u00b2"})
    assert move.status_code == 400 and "unknown move" in move.get_json()["error"]
    # an empty move is told where the moves are on the page (it was told to type help,
    # which the page does not take)
    empty = client.post(f"/api/games/{game['id']}/move", json={"move": ""}).get_json()["error"]
    assert empty == "type a move's number or name (the buttons list them)"
    both = client.post(f"/api/games/{game['id']}/move", json={"move": "1", "action": 0})
    assert both.status_code == 400 and both.json["error"] == "send move or action, not both"


def test_serve_game_ends_when_its_replay_cannot_be_saved(runs):
    (runs / "web_games").write_text("a file where the folder goes")
    client = create_app(runs).test_client()
    state = client.post(
        "/api/games", json={"variant": "knock_rummy", "opponent": "random", "seed": 3}
    ).get_json()
    for _ in range(500):
        if state["status"] == "over":
            break
        state = client.post(
            f"/api/games/{state['id']}/move", json={"action": state["legal"][0]["action"]}
        ).get_json()
    assert state["status"] == "over"
    assert "could not be saved" in state["error"] and state["replay"] is None


def test_serve_shows_the_knock_deadwood_hint_as_the_terminal_does(runs):
    client = create_app(runs).test_client()
    state = client.post(
        "/api/games", json={"variant": "knock_rummy", "opponent": "random", "seed": 3}
    ).get_json()
    assert state["status"] == "your_move" and state["hint"] is None  # the draw: no hint
    draw = next(m["action"] for m in state["legal"] if m["name"] == "draw stock")
    state = client.post(f"/api/games/{state['id']}/move", json={"action": draw}).get_json()
    assert state["status"] == "your_move" and state["hint"].startswith("your deadwood: ")


def test_serve_shows_how_the_last_hand_of_a_match_ended_with_every_hand_open(runs):
    client = create_app(runs).test_client()
    state = client.post(
        "/api/games",
        json={"variant": "knock_rummy", "opponent": "random", "seed": 3,
              "options": {"target_score": 100}},
    ).get_json()  # fmt: skip
    assert "last_hand" not in state
    while state["status"] == "your_move" and "last_hand" not in state:
        last = state["legal"][-1]["action"]  # knocks as soon as it may
        state = client.post(f"/api/games/{state['id']}/move", json={"action": last}).get_json()
    assert state["status"] == "your_move"  # the match goes on with hand 2
    ended = state["last_hand"]
    assert ended["hand"] == 1 and ended["points"] == state["hands"][0]["points"]
    hands = [seat["hand"] for seat in ended["table"]["seats"]]
    assert all(isinstance(h, list) and h for h in hands)  # the opponent's cards shown too
    assert 'id="last-hand"' in client.get(f"/play/{state['id']}").text


def test_serve_leaves_out_names_that_are_not_utf8_and_reads_any_config(runs):
    """A run, game or checkpoint whose file name is not UTF-8 is left out of the pages (it made
    the whole page an error); a config.yaml that is not UTF-8 is shown with its bad bytes
    replaced."""
    import os

    bad_run = os.fsdecode(b"bad\xffname")
    (runs / bad_run / "games").mkdir(parents=True)
    (runs / bad_run / "config.yaml").write_text("variant: knock_rummy\n")
    save_replay(_game("knock_rummy"), runs / "r1" / "games" / os.fsdecode(b"g\xfe.json"))
    (runs / "r1" / "checkpoints").mkdir()
    (runs / "r1" / "checkpoints" / os.fsdecode(b"c\xfd.rz")).write_bytes(b"x")
    (runs / "r1" / "config.yaml").write_bytes(b"variant: knock_rummy\na: \xff\xfe\n")
    client = create_app(runs).test_client()
    for url in ("/", "/runs/r1", "/play"):
        page = client.get(url)
        assert page.status_code == 200, url
        _no_traceback(page)
    assert "sample_000000001.json" in client.get("/runs/r1").text
    assert "variant: knock_rummy" in client.get("/runs/r1").text


@pytest.mark.parametrize("agent", [float("nan"), None, {"a": 1}, "\ud800x"])
def test_a_replay_whose_agents_are_not_names_is_refused(tmp_path, agent):
    data = json.loads(json.dumps(_game("knock_rummy")))
    data["agents"][0] = agent
    path = tmp_path / "odd.json"
    path.write_text(json.dumps(data))
    with pytest.raises(ReplayError, match=r"agents\[0\] must be a name"):
        load_replay(path)


def test_serve_drops_a_connection_that_stalls(monkeypatch):
    """A client that opens a connection and never finishes its request holds a server thread
    no longer than the connection timeout."""
    import socket
    import threading

    from werkzeug.serving import make_server

    import rummyzoo.cli.serve as serve

    monkeypatch.setattr(serve, "CONNECTION_TIMEOUT", 1)
    server = make_server(
        "127.0.0.1", 0, create_app(Path("."), "127.0.0.1"), threaded=True,
        request_handler=serve._handler_class(),
    )  # fmt: skip
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        with socket.create_connection(("127.0.0.1", server.server_port), timeout=10) as conn:
            conn.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # never finished
            conn.settimeout(10)
            assert conn.recv(100) == b""  # the server closed it (before our own timeout)
    finally:
        server.shutdown()


@pytest.mark.parametrize(("host", "warned"), [("0.0.0.0", True), ("127.0.0.1", False)])
def test_serve_warns_where_it_listens_beyond_this_machine(
    tmp_path, capsys, monkeypatch, host, warned
):
    import socket

    import werkzeug.serving

    class Served:
        def serve_forever(self) -> None:
            pass

        def server_close(self) -> None:
            pass

    monkeypatch.setattr(werkzeug.serving, "make_server", lambda *a, **k: Served())
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    assert main(["serve", str(tmp_path), "--host", host, "--port", str(port)]) == 0
    err = capsys.readouterr().err
    assert ("warning: 0.0.0.0 is not this machine alone" in err) == warned


@pytest.mark.parametrize("moves", [0, 3])
def test_a_recording_that_stops_mid_hand_ends_with_the_table_as_it_stands(moves):
    """The page stopped at the frame before the last recorded move (or showed nothing for a
    recording of no moves), where the terminal replay shows the table as it stands."""
    replay = _game("knock_rummy")
    replay["actions"] = replay["actions"][:moves]
    replay["points"], replay["final"], replay["finished"] = [], [0.0, 0.0], False
    replay["decks"] = replay["decks"][:1]
    payload = replay_frames(replay, view=0)
    assert [f["kind"] for f in payload["frames"]] == ["move"] * moves + ["stop"]
    stop = payload["frames"][-1]
    assert stop["moves"] == moves and stop["hand"] == 1
    if moves:  # the table after the last move, not the one the mover saw before it
        assert stop["table"] != payload["frames"][-2]["table"]
    assert stop["table"]["seats"][1]["hand"] is None  # seat 0's view still hides seat 1


def test_an_opponent_that_fails_is_named_in_the_games_error(runs, monkeypatch):
    """The game's error says which agent raised it and at which seat, as the command line does
    (it showed the error's type and text alone)."""
    from rummyzoo.agents.knock import GreedyKnock

    def broken(self, observation, action_mask, rng):
        raise ValueError("web bug")

    monkeypatch.setattr(GreedyKnock, "act", broken)
    client = create_app(runs).test_client()
    state = client.post("/api/games", json={"variant": "knock_rummy", "opponent": "knock.greedy",
                                             "seed": 3}).json  # fmt: skip
    while state["status"] == "your_move":
        choice = state["legal"][0]
        state = client.post(
            f"/api/games/{state['id']}/move", json={"action": choice["action"]}
        ).json
    assert state["error"] == (
        "ValueError: web bug (raised by agent 'knock.greedy' (seat 1) while choosing its action)"
    ), state


@pytest.mark.parametrize("signum, code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_serve_stopped_says_so_and_exits_as_every_command(tmp_path, signum, code):
    """werkzeug's loop returned quietly on Ctrl-C (and on SIGTERM, raised as one): the command
    ended with status 0, as if it had finished."""
    import subprocess
    import sys
    import time
    import urllib.request

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    command = [
        sys.executable,
        "-m",
        "rummyzoo.cli.main",
        "serve",
        str(tmp_path),
        "--port",
        str(port),
    ]
    # (SIGINT as a terminal sends it: Python's handler, not the ignored one of a background job)
    proc = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while True:  # until it answers
            assert proc.poll() is None and time.monotonic() < deadline
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=5).close()
                break
            except OSError:
                time.sleep(0.2)
        proc.send_signal(signum)
        _, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert proc.returncode == code, err
    assert "rummyzoo serve: interrupted" in err and "Traceback" not in err, err


def test_a_long_games_log_keeps_its_line_numbers(runs, monkeypatch):
    """The state carries the log's last lines only, and the page's list numbered them from 1:
    deep in a long match the first line shown was "1."."""
    import rummyzoo.cli.serve as serve

    monkeypatch.setattr(serve, "LOG_LINES", 3)
    client = create_app(runs).test_client()
    state = client.post(
        "/api/games", json={"variant": "knock_rummy", "opponent": "random", "seed": 3}
    ).get_json()
    assert state["log_start"] == 1
    played = 0
    while state["status"] == "your_move" and played < 4:
        move = {"move": state["legal"][0]["name"], "decision": state["decision"]}
        state = client.post(f"/api/games/{state['id']}/move", json=move).get_json()
        played += 1
    lines = played * 2  # each move's line and the opponent's
    assert played == 4 and len(state["log"]) == 3
    assert state["log_start"] == lines - 3 + 1 >= 4
    script = (Path(serve.__file__).parent / "static" / "play.js").read_text()
    assert "logBox.start = state.log_start" in script


def test_a_500_rum_player_who_went_out_holds_nothing_not_minus_0():
    """The end of a 500 Rum hand notes each hand's cards left against its seat: "in hand -0"
    for the player who went out."""
    match = make_match("rummy500", 2, {"target_score": None}, "test")
    rng = np.random.default_rng(0)
    for seed in range(40):
        match.reset(seed)
        while not match.state.over:
            match.play(int(rng.choice(np.flatnonzero(match.legal_mask()))))
        if match.state.end_reason == "went out":
            break
    assert match.state.end_reason == "went out"  # (the setup the check is for)
    notes = [
        note
        for seat in match.game.table_view(match.state, None, match.totals_by_seat())["seats"]
        for note in seat["notes"]
    ]
    assert "in hand 0" in notes and "in hand -0" not in notes, notes


def test_a_folder_of_arena_games_is_listed_with_its_games(runs):
    """``rummyzoo arena ... --save-games runs/arena_games`` puts the replays in the folder
    itself: it is listed, and its games open; a folder of other JSON is not."""
    from rummyzoo.agents.arena import run_arena

    run_arena("knock_rummy", 2, ["random", "knock.greedy"], deals=1, save_games=runs / "ag")
    (runs / "notes").mkdir()
    (runs / "notes" / "x.json").write_text('{"a": 1}')
    client = create_app(runs).test_client()
    index = client.get("/").text
    assert 'href="/runs/ag"' in index and "/runs/notes" not in index
    page = client.get("/runs/ag").text
    names = sorted(p.name for p in (runs / "ag").glob("*.json"))
    assert len(names) == 2 and all(name in page for name in names)
    assert client.get(f"/runs/ag/game/{names[0]}").status_code == 200
    assert client.get("/runs/notes").status_code == 404


def test_a_runs_state_and_its_damaged_evaluations_are_shown(runs, monkeypatch):
    """The index and a run's page say whether a run trains now (its lock's process lives),
    stopped (and how to go on) or finished, and name an evaluations file that cannot be read
    where no sound one is left (the page showed no evaluations and said nothing)."""
    import os

    run = runs / "r2"
    (run / "checkpoints").mkdir(parents=True)
    (run / "config.yaml").write_text("variant: knock_rummy\nn_timesteps: 4096\n")
    (run / "state.json").write_text(json.dumps({"steps": 1024}))
    (run / "checkpoints" / "last.zip").write_bytes(b"")  # (the checkpoint beside it)
    monkeypatch.chdir(runs.parent)  # where the server was started: the runs are in runs/
    client = create_app(runs).test_client()
    stopped = "stopped at step 1,024 of 4,096: rummyzoo train --resume runs/r2 goes on"
    assert stopped in client.get("/").text and stopped in client.get("/runs/r2").text
    from rummyzoo.training.run_folder import run_lock

    with run_lock(run):  # as a run that trains holds it
        assert f"training (pid {os.getpid()}), its last checkpoint at step 1,024 of 4,096" in (
            client.get("/runs/r2").text
        )
    # a killed run's lock file, naming a pid that lives (another process has it now)
    (run / ".lock").write_text(f"{os.getpid()}\n")
    assert stopped in client.get("/runs/r2").text
    (run / ".lock").unlink()
    (run / "summary.json").write_text(json.dumps({"steps": 4096}))
    (run / "state.json").write_text(json.dumps({"steps": 4096}))
    assert "finished: 4,096 steps" in client.get("/runs/r2").text
    (run / "summary.json").unlink()
    (run / "state.json").write_text("{")
    (run / "evaluations.json").write_text("[1, 2, 3]")
    page = client.get("/runs/r2").text
    assert "r2/evaluations.json is corrupt" in page and str(runs) not in page, page
    assert "(its evaluations cannot be read)" in client.get("/").text
    # a damaged file among sound ones: the evaluations shown, the damaged file named
    results = {"random": {"win_rate": 0.75, "win_rate_ci": [0.6, 0.9], "games": 20}}
    history = [{"steps": 512, "results": results}]
    (run / "evaluations.json").write_text(json.dumps({"evaluations": history}))
    page = client.get("/runs/r2").text
    assert "random 0.750 [0.600, 0.900]" in page and "r2/state.json is not readable JSON" in page
    assert page.count("<h3>evaluations</h3>") == 1


def test_a_replay_too_long_for_a_page_is_refused_by_the_page_and_the_command(
    runs, tmp_path, monkeypatch, capsys
):
    """A page holds a table for every move: a file under the size cap may hold a million
    moves (4 GB of memory and more to make its page), so a page takes up to MAX_FRAME_MOVES
    and refuses more in one line, pointing at the terminal's replay, which steps through any
    length. (The cap is lowered here to the game's moves less one.)"""
    import rummyzoo.envs.replay as replay

    game = runs / "r1" / "games" / "sample_000000001.json"
    moves = len(load_replay(game)["actions"])
    monkeypatch.setattr(replay, "MAX_FRAME_MOVES", moves)
    assert (
        create_app(runs).test_client().get("/runs/r1/game/games/sample_000000001.json").status_code
        == 200
    )
    monkeypatch.setattr(replay, "MAX_FRAME_MOVES", moves - 1)
    response = create_app(runs).test_client().get("/runs/r1/game/games/sample_000000001.json")
    assert response.status_code == 400
    assert f"has {moves:,} moves: a page shows at most {moves - 1:,}" in response.get_data(True)
    _no_traceback(response)
    assert main(["replay", str(game), "--html", str(tmp_path / "g.html")]) == 2
    err = capsys.readouterr().err
    assert f"has {moves:,} moves" in err and "`rummyzoo replay FILE` steps through" in err
    assert not (tmp_path / "g.html").exists()
    assert main(["replay", str(game)]) == 0  # the terminal's replay shows it all


def test_a_teams_game_ends_with_the_teams_verdict(runs):
    """Partners win together: a team's win was said "you share the win", the words of a tie
    for first, in the browser and in the terminal (the same words: ``verdict``)."""
    from rummyzoo.cli.display import verdict

    said = {}
    client = create_app(runs).test_client()
    for seed in range(1, 9):
        state = client.post(
            "/api/games",
            json={"variant": "ditch_rummy", "players": 4, "opponent": "random", "seed": seed,
                  "options": {"target_score": None, "teams": True}},
        ).json  # fmt: skip
        while state["status"] == "your_move":
            move = state["legal"][0]["action"]
            state = client.post(f"/api/games/{state['id']}/move", json={"action": move}).json
        totals = state["totals"]
        mine = totals[0] > totals[1] and totals[0] > totals[3]
        said[state["verdict"]] = said.get(state["verdict"], 0) + 1
        assert state["verdict"] == ("your team wins" if mine else "player_1 and player_3 win")
    assert "your team wins" in said and "player_1 and player_3 win" in said, said
    who = lambda s: f"p{s}"  # noqa: E731
    assert verdict([5, 5, 1], 0, [0, 1, 2], who) == "you share the win"
    assert verdict([5, 5, 5, 5], 1, [0, 1, 0, 1], who) == "a tie"
    assert verdict([7, 1], 1, [0, 1], who) == "p0 wins"
    assert verdict([7, 1], 0, [0, 1], who) == "you win"
