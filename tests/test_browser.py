"""In a real browser (headless Chromium from the system packages, driven by Selenium): the
replay page shows the replay's cards and scores, a whole game is played through ``rummyzoo
serve``, and TensorBoard serves a smoke run's dashboard. Skipped only where no browser is
installed (the reason is printed), unless ``RUMMYZOO_REQUIRE_BROWSER=1`` (CI) makes that a
failure."""

from __future__ import annotations

import json
import os
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from rummyzoo.agents.registry import make_agent
from rummyzoo.cli.browser import browser_missing, headless_chromium, serve_in_thread, tensorboard
from rummyzoo.cli.viewer import write_replay_html
from rummyzoo.envs.replay import load_replay, record_game, replay_frames, save_replay, verify_replay

MISSING = browser_missing()
#: CI installs the browser and sets this: a failed install then fails the suite.
REQUIRED = os.environ.get("RUMMYZOO_REQUIRE_BROWSER", "") not in ("", "0")
pytestmark = [
    pytest.mark.skipif(
        MISSING is not None and not REQUIRED, reason=f"no headless browser: {MISSING}"
    ),
    pytest.mark.above_rules,  # make test runs these once, with the compiled kernels
]

ROOT = Path(__file__).resolve().parent.parent


def test_the_browser_is_installed_where_it_is_required():
    assert MISSING is None, f"RUMMYZOO_REQUIRE_BROWSER=1, and no headless browser: {MISSING}"


def test_the_browser_leaves_nothing_in_the_temp_dir(monkeypatch):
    """The browser's profile is a folder of its own, removed once it has quit, and Chromium
    then removes its own temporary folders (its process singleton's): nothing is left in the
    temp dir."""
    import shutil
    import tempfile
    import time

    temp = tempfile.mkdtemp(prefix="rz-")  # short: Chromium's socket paths must stay short
    try:
        monkeypatch.setenv("TMPDIR", temp)
        monkeypatch.setattr(tempfile, "tempdir", None)  # gettempdir() reads TMPDIR again
        with headless_chromium(320, 240) as browser:
            browser.get("data:text/html,<p>hello</p>")
            assert "hello" in browser.page_source
            assert os.listdir(temp)  # the profile, and Chromium's own folders, while it runs
        deadline = time.monotonic() + 10  # (the browser's last processes may take a moment)
        while os.listdir(temp) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert os.listdir(temp) == []
    finally:
        shutil.rmtree(temp, ignore_errors=True)


@pytest.fixture(scope="module")
def driver():
    with headless_chromium() as d:
        yield d


def _shown(driver) -> dict:
    """What the page shows now: every seat's hand (card strings, None when face down), the
    discard pile, the scores and the step counter."""
    from selenium.webdriver.common.by import By

    seats = {}
    for box in driver.find_elements(By.CSS_SELECTOR, ".seat"):
        cards = box.find_elements(By.CSS_SELECTOR, ".cards.hand .card")
        hidden = box.find_elements(By.CSS_SELECTOR, ".hidden-hand")
        seats[int(box.get_attribute("data-seat"))] = (
            None if hidden else [c.get_attribute("data-card") for c in cards]
        )
    discard = [
        c.get_attribute("data-card")
        for c in driver.find_elements(By.CSS_SELECTOR, '[data-pile="discard pile"] .card')
    ]
    scores = [
        float(td.text) for td in driver.find_elements(By.CSS_SELECTOR, "#scores td[data-seat]")
    ]
    return {
        "seats": seats,
        "discard": discard,
        "scores": scores,
        "counter": driver.find_element(By.ID, "step-counter").text,
        "move": driver.find_element(By.ID, "move").text,
    }


def _expected(frame: dict) -> dict:
    table = frame["table"]
    return {
        "seats": {s["seat"]: s["hand"] for s in table["seats"]},
        "discard": table["piles"][1]["cards"],
        "scores": table["scores"] or [],
    }


def test_the_screenshot_script_names_what_is_missing(tmp_path):
    """``python -m rummyzoo.cli.browser RUN OUT`` (``make screenshots``) before the run has
    games, or without a browser: one line saying so, exit 1, nothing written (tracebacks
    before)."""
    import subprocess
    import sys

    out = tmp_path / "shots"
    done = subprocess.run(
        [sys.executable, "-m", "rummyzoo.cli.browser", str(tmp_path / "norun"), str(out)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert done.stderr.strip() == f"error: no sample games in {tmp_path / 'norun' / 'games'} " + (
        "(train the run first)"
    )
    assert not out.exists()


@pytest.mark.parametrize("view", [None, 1])
def test_replay_page_shows_the_replays_cards_and_scores(tmp_path, driver, view):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    policies = [
        make_agent("knock.smart", "knock_rummy", 2),
        make_agent("knock.greedy", "knock_rummy", 2),
    ]
    replay = record_game(
        "knock_rummy", policies, ["knock.smart", "knock.greedy"], seed=11,
        options={"target_score": 100},
    )  # fmt: skip
    assert len(replay["points"]) >= 2  # a match of several hands
    path = save_replay(replay, tmp_path / "game.json")
    page = write_replay_html(path, tmp_path / "game.html", view)
    frames = replay_frames(replay, view)["frames"]
    driver.get(page.resolve().as_uri())
    body = driver.find_element(By.TAG_NAME, "body")

    def check(index: int) -> None:
        shown = _shown(driver)
        assert shown["counter"] == f"step {index + 1} / {len(frames)}"
        expected = _expected(frames[index])
        assert shown["seats"] == expected["seats"], index
        assert shown["discard"] == expected["discard"], index
        assert shown["scores"] == expected["scores"], index

    check(0)
    driver.find_element(By.ID, "next").click()
    body.send_keys(Keys.ARROW_RIGHT)
    body.send_keys("j")
    check(3)
    body.send_keys(Keys.ARROW_LEFT)
    check(2)
    body.send_keys(Keys.PAGE_DOWN)  # the next hand's first move
    second = next(i for i, f in enumerate(frames) if f["hand"] == 2)
    check(second)
    assert _shown(driver)["move"].startswith("hand 2, move")
    body.send_keys(Keys.END)
    check(len(frames) - 1)
    assert "over" in _shown(driver)["move"]
    body.send_keys(Keys.HOME)
    check(0)


def _start_knock_against_random(driver: Any, base: str, seed: str = "") -> Any:
    """Start a Knock Rummy game against random play from the /play form; a waiter of 30 s
    once the game's page shows it."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select, WebDriverWait

    driver.get(f"{base}/play")
    Select(driver.find_element(By.ID, "variant")).select_by_visible_text("Knock Rummy")
    Select(driver.find_element(By.ID, "opponent")).select_by_value("random")
    driver.find_element(By.ID, "seed").send_keys(seed)  # none: the server draws one
    driver.find_element(By.ID, "start").click()
    wait = WebDriverWait(driver, 30)
    wait.until(lambda d: "/play/" in d.current_url)
    wait.until(lambda d: d.execute_script("return document.body.getAttribute('data-status')"))
    return wait


def _play_to_the_end(driver: Any, wait: Any) -> int:
    """Click moves (the first, now and then the last: a knock) until the game is over; the
    moves clicked."""
    from selenium.webdriver.common.by import By

    moves = 0
    while True:
        status = driver.find_element(By.TAG_NAME, "body").get_attribute("data-status")
        if status == "over":
            return moves
        assert status == "your_move"
        assert driver.find_elements(By.CSS_SELECTOR, '.seat[data-seat="1"] .hidden-hand')
        before = driver.find_element(By.ID, "log").text
        buttons = driver.find_elements(By.CSS_SELECTOR, ".move-button")
        buttons[-1 if moves % 3 == 2 else 0].click()  # now and then a knock
        moves += 1
        wait.until(
            lambda d, before=before: (
                d.find_element(By.ID, "log").text != before
                or d.find_element(By.TAG_NAME, "body").get_attribute("data-status") == "over"
            )
        )


def test_a_seed_past_what_javascript_reads_exactly_is_shown_as_given(tmp_path, driver):
    """A seed the player gave keeps every digit at the game's end (the page wrote it again
    from the JSON number, which JavaScript rounds past 2**53: ...891 became ...000)."""
    from selenium.webdriver.common.by import By

    big = "12345678901234567891"
    with serve_in_thread(tmp_path) as base:
        wait = _start_knock_against_random(driver, base, seed=big)
        assert driver.find_element(By.ID, "seed").text == f"seed {big}"
        _play_to_the_end(driver, wait)
        assert driver.find_element(By.ID, "seed").text == f"seed {big}"


def test_play_a_whole_game_in_the_browser(tmp_path, driver):
    from selenium.webdriver.common.by import By

    runs = tmp_path / "runs"
    runs.mkdir()
    with serve_in_thread(runs) as base:
        wait = _start_knock_against_random(driver, base)
        # the seed deals every hidden card: not shown while the game is played
        assert driver.find_element(By.ID, "seed").text == "seed shown when the game is over"
        # A typed move that is not legal: the terminal game's message, and the game goes on.
        driver.find_element(By.ID, "move-text").send_keys("knock Zz\n")
        wait.until(lambda d: d.find_elements(By.ID, "error"))
        assert "unknown move" in driver.find_element(By.ID, "error").text
        moves = _play_to_the_end(driver, wait)
        verdict = driver.find_element(By.ID, "verdict").text
        assert verdict.startswith("game over:") and moves > 0
        shown = driver.find_element(By.ID, "seed").text  # and shown once it is over
    saved = list((runs / "web_games").glob("game_*.json"))
    assert len(saved) == 1
    assert shown == f"seed {load_replay(saved[0])['seed']}"
    summary = verify_replay(saved[0])
    assert load_replay(saved[0])["agents"] == ["human", "random"]
    assert summary["moves"] >= moves


def test_choosing_a_checkpoint_sets_its_game_in_the_form(tmp_path, driver):
    """The /play form: choosing a 3-player Ditch Rummy checkpoint as the opponent sets the
    variant and the players to its own, and the game starts with them."""
    from run_helpers import untrained_checkpoint
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select, WebDriverWait

    runs = tmp_path / "runs"
    folder = runs / "r1" / "checkpoints"
    folder.mkdir(parents=True)
    (runs / "r1" / "config.yaml").write_text("variant: ditch_rummy\n")
    untrained_checkpoint(folder / "best.rz", ("variant=ditch_rummy", "num_players=3"))
    with serve_in_thread(runs) as base:
        driver.get(f"{base}/play")
        Select(driver.find_element(By.ID, "variant")).select_by_visible_text("Knock Rummy")
        Select(driver.find_element(By.ID, "opponent")).select_by_value("r1/checkpoints/best.rz")
        assert driver.find_element(By.ID, "variant").get_attribute("value") == "ditch_rummy"
        assert driver.find_element(By.ID, "players").get_attribute("value") == "3"
        driver.find_element(By.ID, "start").click()
        wait = WebDriverWait(driver, 30)
        wait.until(lambda d: "/play/" in d.current_url)
        wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, '.seat[data-seat="2"]'))


def test_the_form_plays_a_teams_checkpoint_in_teams_or_not_as_ticked(tmp_path, driver):
    """Choosing a Ditch Rummy checkpoint trained in teams ticks the form's teams box, and
    unticking it plays without teams (an unticked box sent nothing, and the checkpoint's own
    rules put the teams back: the form could not turn them off). A checkpoint trained
    without teams unticks it."""
    from run_helpers import untrained_checkpoint
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select, WebDriverWait

    runs = tmp_path / "runs"
    folder = runs / "r1" / "checkpoints"
    folder.mkdir(parents=True)
    (runs / "r1" / "config.yaml").write_text("variant: ditch_rummy\n")
    four = ("variant=ditch_rummy", "num_players=4")
    untrained_checkpoint(folder / "teams.rz", (*four, "env_options.teams=true"))
    untrained_checkpoint(folder / "alone.rz", four)
    with serve_in_thread(runs) as base:
        for untick in (False, True):
            driver.get(f"{base}/play")
            box = driver.find_element(By.ID, "teams")
            opponent = Select(driver.find_element(By.ID, "opponent"))
            opponent.select_by_value("r1/checkpoints/teams.rz")
            assert box.is_selected()
            opponent.select_by_value("r1/checkpoints/alone.rz")
            assert not box.is_selected()
            opponent.select_by_value("r1/checkpoints/teams.rz")
            assert box.is_selected()
            if untick:
                box.click()
            driver.find_element(By.ID, "start").click()
            wait = WebDriverWait(driver, 30)
            wait.until(lambda d: "/play/" in d.current_url)
            game = driver.current_url.rstrip("/").rsplit("/", 1)[1]
            with urllib.request.urlopen(f"{base}/api/games/{game}") as answer:
                state = json.load(answer)
            assert state["options"]["teams"] is (not untick)
            assert ("teams" in state["learnt"]) is False  # the form said so either way
        # the page of a chosen teams checkpoint starts ticked
        driver.get(f"{base}/play?opponent=r1/checkpoints/teams.rz")
        assert driver.find_element(By.ID, "teams").is_selected()


def test_a_refused_click_shows_the_game_as_it_is_now(tmp_path, driver):
    """A move made elsewhere (another tab, the API) left the page on the old decision: every
    later click was refused with "decision 1 has passed" until the page was reloaded."""
    from selenium.webdriver.common.by import By

    runs = tmp_path / "runs"
    runs.mkdir()
    with serve_in_thread(runs) as base:
        wait = _start_knock_against_random(driver, base, "5")
        status = "return document.body.getAttribute('data-status')"
        wait.until(lambda d: d.execute_script(status) == "your_move")
        game = driver.current_url.rstrip("/").rsplit("/", 1)[1]
        with urllib.request.urlopen(f"{base}/api/games/{game}") as answer:
            state = json.load(answer)
        move = json.dumps({"move": state["legal"][0]["name"], "decision": state["decision"]})
        request = urllib.request.Request(
            f"{base}/api/games/{game}/move", move.encode(), {"Content-Type": "application/json"}
        )
        urllib.request.urlopen(request).close()  # played elsewhere: the page does not know
        log = driver.find_element(By.ID, "log").text
        driver.find_elements(By.CSS_SELECTOR, ".move-button")[0].click()
        wait.until(lambda d: d.find_elements(By.ID, "error"))
        assert "has passed" in driver.find_element(By.ID, "error").text
        wait.until(lambda d: d.find_element(By.ID, "log").text != log)  # the game as it is
        assert driver.find_element(By.ID, "error").text  # the message stays


def test_tensorboard_serves_the_dashboard(tmp_path, driver):
    from rummyzoo.training.train import train_from_file

    run = tmp_path / "run"
    # (the round robin's ratings have intervals from 10 deals on)
    train_from_file(str(ROOT / "configs" / "smoke_ppo.yaml"),
                    ["env_options.target_score=null", "evaluation.cross_table_deals=10"],
                    str(run), ["test"], progress="off")  # fmt: skip

    with tensorboard(run / "tb") as url:

        def get(path: str):
            with urllib.request.urlopen(url + path, timeout=30) as response:
                return json.loads(response.read())

        scalars = get("/data/plugin/scalars/tags")
        tags = {tag for run_tags in scalars.values() for tag in run_tags}
        for tag in (
            "eval/random/win_rate", "eval/random/win_rate_low", "eval/random/win_rate_high",
            "eval/random/points_per_hand", "rating/learner", "rating/learner_low",
            "rating/random", "strategy/knock_rate", "strategy/take_discard_rate",
        ):  # fmt: skip
            assert tag in tags, tag
        layout = get("/data/plugin/custom_scalars/layout")
        charts = {c["title"]: c for cat in layout["category"] for c in cat["chart"]}
        band = charts["win rate vs random (95% CI)"]["margin"]["series"][0]
        assert band == {
            "value": "eval/random/win_rate",
            "lower": "eval/random/win_rate_low",
            "upper": "eval/random/win_rate_high",
        }
        assert "learner's rating (95% CI; random = 0)" in charts
        images = get("/data/plugin/images/tags")
        assert any("eval/cross_table" in t for t in images.values())
        histograms = get("/data/plugin/histograms/tags")
        assert any("strategy/knock_turn_hist" in t or "strategy/deadwood_at_knock_hist" in t
                   for t in histograms.values())  # fmt: skip
        text_runs = get("/data/plugin/text/tags")
        run_name, tag = next(
            (r, t)
            for r, tags in text_runs.items()
            for t in tags
            if t.startswith("text/sample_game")
        )
        query = urllib.parse.urlencode({"run": run_name, "tag": tag})
        samples = get(f"/data/plugin/text/text?{query}")
        assert "<table>" in samples[-1]["text"] and "legal alternatives" in samples[-1]["text"]
        # The dashboard page itself renders the layout's categories and charts in the browser
        # (TensorBoard draws them inside shadow roots: their text is gathered through them).
        driver.get(f"{url}/#custom_scalars")
        assert "TensorBoard" in driver.title
        page_text = """
            const texts = [];
            const walk = (node) => {
                if (node.nodeType === Node.TEXT_NODE) { texts.push(node.textContent); return; }
                if (node.shadowRoot) walk(node.shadowRoot);
                for (const child of node.childNodes) walk(child);
            };
            walk(document.body);
            return texts.join(' ');
        """
        from selenium.webdriver.support.ui import WebDriverWait

        wanted = ("win rate vs random (95% CI)", "learner's rating (95% CI; random = 0)")
        try:
            WebDriverWait(driver, 60, poll_frequency=0.5).until(
                lambda d: all(title in d.execute_script(page_text) for title in wanted)
            )
        except Exception:  # say what the page showed instead
            shown = " ".join(driver.execute_script(page_text).split())[:600]
            raise AssertionError(f"the dashboard shows no {wanted}: {shown!r}") from None


def test_replay_page_of_a_recording_that_stops_mid_hand_ends_on_the_table_as_it_stands(
    tmp_path, driver
):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    policies = [make_agent("knock.greedy", "knock_rummy", 2) for _ in range(2)]
    replay = record_game("knock_rummy", policies, ["knock.greedy"] * 2, seed=3)
    replay["actions"] = replay["actions"][:3]
    replay["points"], replay["final"], replay["finished"] = [], [0.0, 0.0], False
    replay["decks"] = replay["decks"][:1]
    path = save_replay(replay, tmp_path / "partial.json")
    page = write_replay_html(path, tmp_path / "partial.html")
    frames = replay_frames(replay)["frames"]
    driver.get(page.resolve().as_uri())
    driver.find_element(By.TAG_NAME, "body").send_keys(Keys.END)
    shown = _shown(driver)
    assert shown["counter"] == f"step {len(frames)} / {len(frames)}" == "step 4 / 4"
    assert shown["move"] == (
        "the recording stops here, mid-game, after 3 move(s): the table as it stands"
    )
    assert shown["seats"] == _expected(frames[-1])["seats"]
