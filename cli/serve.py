"""``rummyzoo serve [RUNS_DIR]``: a local web app over a runs folder (Flask).

Pages:

=====================================  ==========================================================
``/``                                  the runs (folders with a ``config.yaml``, a ``games/``
                                       folder or replay files)
``/runs/<run>``                        a run: its config, evaluations, checkpoints and games
``/runs/<run>/game/<file>[?seat=N]``   a saved game (sample, arena, web game) in the viewer;
                                       ``<file>`` is its path in the run folder (``games/...``)
``/play``                              a new game against any agent (random, a heuristic, a
                                       checkpoint of a run), then ``/play/<id>`` to play it
=====================================  ==========================================================

JSON API of a game in the browser (what ``/play/<id>`` uses; a POST's body is JSON, sent with
``Content-Type: application/json``, so that a page of another site cannot post to it):

* ``POST /api/games`` ``{"variant", "players", "seat", "opponent", "options", "seed"}``
  starts a game (``opponent``: ``random``, a heuristic's or an entry point's bare name, or
  ``<run>/checkpoints/x.rz``; never a ``module:Class`` or parameters; ``seed``: an int, its
  digits as text, or null for one the server picks, which it shows only once the game is
  over: the seed deals every card); 64 games at once (a finished one, or one without a request
  for 30 minutes, makes room; else 503);
* ``GET /api/games/<id>``: the table from the human's seat, the legal moves, the log;
* ``POST /api/games/<id>/move`` ``{"move": "discard Kh"}`` (a name, a number of the list, or
  the words of one move, as in the terminal game) or ``{"action": 12}``, checked against the
  decision open when it arrives; with ``"decision"`` (the number a state gives the open
  decision) a move answers that decision only, and one sent for a decision that has passed
  gets 409 (two sent at once for one decision: one is played).

The rules checks and messages are the terminal game's (:func:`rummyzoo.cli.play.match_move`).
Every finished game is saved as a replay in ``RUNS_DIR/web_games/``. Bad requests (an unknown
run or game, a path outside the runs folder, an illegal move, malformed JSON) get a clear error
page, or a JSON error from ``/api``; no traceback is shown and no file outside the runs folder
is read. The server binds to 127.0.0.1 unless told otherwise.
"""

from __future__ import annotations

import argparse
import html
import ipaddress
import json
import os
import queue
import socket
import sys
import threading
import time
import uuid
from pathlib import Path
from typing import Any
from urllib.parse import quote

import numpy as np

from rummyzoo.cli.common import Parents
from rummyzoo.cli.display import verdict
from rummyzoo.envs.core import finite_number, short_repr

__all__ = ["create_app"]

#: Seconds a move request waits for the opponents to play up to the human's next decision.
MOVE_TIMEOUT = 60.0
#: Games kept in memory at once (the oldest finished ones make room first, then idle ones).
MAX_GAMES = 64
#: The log's last lines a game's state carries.
LOG_LINES = 200
#: Seconds without a request after which a game in play may make room for a new one.
IDLE_LIMIT = 1800.0
#: The largest JSON file whose keys a run's page reads to tell whether it is a replay saved
#: in another key order (rummyzoo writes "format" first).
MAX_SCANNED = 4 * 1024 * 1024
#: The largest request body the server reads (a move or a new game's settings is far less).
MAX_BODY = 64 * 1024
#: The longest error message sent back (a long value a request sent is cut, not echoed whole).
MAX_MESSAGE = 600
#: Seconds a connection may stall before the server drops it.
CONNECTION_TIMEOUT = 30


def _is_file(path: Path) -> bool:
    """Whether a path a request named is a file: False also where the file system refuses the
    name (too long: ``Path.is_file`` raises there)."""
    try:
        return path.is_file()
    except OSError:
        return False


def _url(*parts: str) -> str:
    """A link's path from its parts, each percent-encoded (``/`` kept), then HTML-escaped."""
    return html.escape("/" + "/".join(quote(p) for p in parts))


class RequestError(Exception):
    """A request the app refuses: ``status`` and a message for the user."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


# ---------------------------------------------------------------------------- the runs folder
def _looks_like_replay(data: Any) -> bool:
    """A replay's format and variant keys (a run's state or summary has neither)."""
    return (
        isinstance(data, dict)
        and type(data.get("format")) is int
        and data["format"] == 1
        and isinstance(data.get("variant"), str)
    )


class RunsFolder:
    """Paths inside the runs folder, and only there."""

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root).resolve()

    def inside(self, relative: str, what: str, base: Path | None = None) -> Path:
        """``relative`` (to ``base``, default the runs folder) resolved under the runs folder;
        a path that leaves it (``..``, an absolute path, a link out) is refused before anything
        is read."""
        if not relative or "\x00" in relative or Path(relative).is_absolute():
            raise RequestError(404, f"{what} {relative!r} is not in the runs folder")
        path = ((base or self.root) / relative).resolve()
        if not self.holds(path):
            raise RequestError(404, f"{what} {relative!r} is not in the runs folder")
        return path

    def holds(self, path: Path) -> bool:
        """Whether ``path``, links followed, is the runs folder or inside it, under a name a
        page can show and a link can name (a file name that is not UTF-8 is left out)."""
        try:
            str(path).encode("utf-8")
        except UnicodeEncodeError:
            return False
        path = path.resolve()
        return path == self.root or self.root in path.parents

    def runs(self) -> list[Path]:
        if not self.root.is_dir():
            return []
        return sorted(
            p
            for p in self.root.iterdir()
            if p.is_dir()
            and self.holds(p)  # a run folder that links out of the runs folder is not listed
            and (
                (p / "config.yaml").is_file()
                or (p / "games").is_dir()
                or p.name == "web_games"
                # a folder of saved games (arena --save-games DIR)
                or any(self.is_replay(f) for f in p.glob("*.json"))
            )
        )

    def run(self, name: str) -> Path:
        path = self.inside(name, "run")
        if path.parent != self.root or path not in self.runs():
            raise RequestError(404, f"unknown run {name!r} (not a run folder in {self.root})")
        return path

    def games(self, run: Path) -> list[Path]:
        """The replay files of a run (sample games, arena games, web games)."""
        return [path for path in sorted(run.rglob("*.json")) if self.is_replay(path)]

    def is_replay(self, path: Path) -> bool:
        """Whether ``path`` is a replay file inside the runs folder (a link out is never
        read; an unreadable file is none)."""
        if not path.is_file() or not self.holds(path):
            return False
        try:
            with path.open() as f:
                head = f.read(200)
                if '"format": 1' in head and '"variant"' in head:  # as rummyzoo saves one
                    return True
                if path.stat().st_size <= MAX_SCANNED:  # keys in another order
                    return _looks_like_replay(json.loads(head + f.read()))
        except (OSError, ValueError, RecursionError):
            pass
        return False

    def checkpoints(self) -> list[str]:
        """Checkpoints (``.rz``) of every run, relative to the runs folder."""
        out = []
        for run in self.runs():
            for path in _playable(run):
                if self.holds(path):
                    out.append(str(path.relative_to(self.root)))
        return out


def _playable(run: Path) -> list[Path]:
    """The checkpoints of a run a player may choose: its ``.rz`` files, but the resume set's
    own copy of ``best.rz``."""
    from rummyzoo.training.run_state import BEST_AT_CHECKPOINT

    found = sorted((run / "checkpoints").glob("*.rz"))
    # (a folder named x.rz is no checkpoint to offer)
    return [p for p in found if p.name != BEST_AT_CHECKPOINT and p.is_file()]


# ---------------------------------------------------------------------------- a game in the browser
class WebGame:
    """One human game, played by the shared play loop in its own thread.

    The human's seat is a policy whose ``act`` publishes the table and the legal moves, then
    waits for a move from the web; the opponents play in between.
    """

    name = "human"

    def __init__(
        self,
        variant: str,
        num_players: int,
        seat: int,
        opponent: Any,
        opponent_label: str,
        options: dict[str, Any],
        seed: int | None,
        save_dir: Path,
        learnt: dict[str, Any] | None = None,
    ) -> None:
        """``learnt``: the options of ``options`` taken from the rules a checkpoint opponent
        learnt (the page says so, as the terminal's banner does)."""
        from rummyzoo.agents.registry import make_agent
        from rummyzoo.envs.registry import check_players
        from rummyzoo.envs.replay import Recorder, make_play_match, random_seed

        check_players(variant, num_players)
        if isinstance(seat, bool) or not isinstance(seat, int) or not 0 <= seat < num_players:
            raise ValueError(f"seat must be 0..{num_players - 1}, got {seat!r}")
        self.id = uuid.uuid4().hex[:12]
        self.variant = variant
        self.seat = seat
        self.match = make_play_match(variant, num_players, options)
        self.options = dict(options)  # the game's options as given (rules and match)
        self.learnt = dict(learnt or {})
        self.seed = random_seed() if seed is None else seed
        self.seed_given = seed is not None  # else shown only once the game is over
        self.touched = time.monotonic()  # the last request about this game
        self.abandoned = False
        self.labels = [opponent_label] * num_players
        self.labels[seat] = "human"
        self.policies: list[Any] = [
            self if s == seat else make_agent(opponent, variant, num_players, options)
            for s in range(num_players)
        ]
        self.recorder = Recorder(variant, options, self.labels, self.seed)
        self.save_dir = save_dir
        self.log: list[str] = []
        self.hands: list[dict[str, Any]] = []
        self.moves: queue.Queue[int | None] = queue.Queue()
        self.changed = threading.Condition()
        self.waiting: dict[str, Any] | None = None  # the human's decision, while it is open
        self.version = 0
        self.over = False
        self.error: str | None = None
        self.replay_file: str | None = None
        self.thread = threading.Thread(target=self._play, name=f"game-{self.id}", daemon=True)

    # -- the play loop's side
    def reset(self, seat: int | None = None) -> None:
        return None

    def start(self) -> None:
        """Start the game and wait for the human's first decision (or the end)."""
        version = self.version
        self.thread.start()
        self.wait_for_turn(version)

    def _play(self) -> None:
        from rummyzoo.envs.play import play_episode

        rngs = [np.random.default_rng([self.seed, s]) for s in range(len(self.labels))]
        try:
            play_episode(
                self.match, self.policies, rngs, seed=self.seed, on_event=self._on_event,
                labels=self.labels,
            )  # fmt: skip
        except _Abandoned:
            self.abandoned = True
        except Exception as exc:  # shown to the user (which agent raised it); the thread ends
            notes = "".join(f" ({note})" for note in getattr(exc, "__notes__", ()))
            self.error = f"{type(exc).__name__}: {exc}{notes}"
        finally:
            self._finish()

    def _finish(self) -> None:
        from rummyzoo.envs.replay import save_replay

        try:
            replay = self.recorder.to_dict(source="rummyzoo serve")
            if replay["decks"] and not self.abandoned:  # a game left unfinished is not kept
                path = save_replay(replay, self.save_dir / f"game_{self.id}.json")
                self.replay_file = path.name
        except OSError as exc:  # a runs folder it cannot write to: the game still ends
            why = f"{type(exc).__name__}: {exc.strerror or exc}"
            self.error = f"{self.error}; " if self.error else ""
            self.error += f"the game's replay could not be saved in {self.save_dir}: {why}"
        with self.changed:
            self.over = True
            self.waiting = None
            self.version += 1
            self.changed.notify_all()

    def _on_event(self, event: Any, match: Any) -> None:
        from rummyzoo.envs.match import HandEnd
        from rummyzoo.envs.play import Decision
        from rummyzoo.envs.replay import describe_action, hand_over

        self.recorder(event, match)
        if type(event) is Decision:
            who = "you" if event.seat == self.seat else f"player_{event.seat}"
            public = event.seat != self.seat  # no positions in another's hidden hand
            self.log.append(f"{who}: {describe_action(match, event.action, public)}")
        elif type(event) is HandEnd:
            over = hand_over(event, match)
            table = match.game.table_view(
                over.state, None, np.asarray(over.totals, dtype=np.float64)
            )
            self.hands.append(
                {"hand": over.number, "points": over.points, "totals": over.totals, "table": table}
            )
            if over.points is None:
                self.log.append(f"hand {over.number} stopped at a cap (no points)")
            else:
                points = ", ".join(f"player_{s} {p:+g}" for s, p in enumerate(over.points))
                self.log.append(f"hand {over.number} over: {points}")

    def act(self, observation: Any, action_mask: np.ndarray, rng: Any) -> int:
        from rummyzoo.envs.replay import legal_moves

        match = self.match
        game = match.game
        moves = legal_moves(match)
        legal = [m["action"] for m in moves]
        for m, label in zip(moves, game.move_labels(match.state, legal), strict=True):
            m["description"] = label
        decision = {
            "table": game.table_view(match.state, self.seat, match.totals_by_seat()),
            "legal": moves,
            "hint": game.move_hint(match.state, self.seat, legal),
        }
        with self.changed:
            self.waiting = decision
            self.version += 1
            self.changed.notify_all()
        action = self.moves.get()
        if action is None:
            raise _Abandoned
        return action

    # -- the web's side
    def wait_for_turn(self, version: int, timeout: float = MOVE_TIMEOUT) -> None:
        """Block until the game has moved on from ``version`` (a new decision, or the end)."""
        with self.changed:
            self.changed.wait_for(lambda: self.version > version or self.over, timeout=timeout)

    def play(self, request: dict[str, Any]) -> None:
        """Play the human's move (``move``: text as in the terminal game, or ``action``).

        :raises RequestError: no move is awaited, or it is not a legal move (the terminal
            game's message).
        """
        self.touched = time.monotonic()
        with self.changed:  # one move per decision: checked and claimed under the lock
            if self.over:
                raise RequestError(409, "the game is over: start a new one")
            decision = self.waiting
            if decision is None:
                raise RequestError(409, "it is not your move yet")
            version = self.version
            answered = request.get("decision", version)
            if isinstance(answered, bool) or not isinstance(answered, int) or answered < 0:
                raise RequestError(
                    400, f"decision must be the number of a decision, got {short_repr(answered)}"
                )
            if answered != version:  # sent for a decision that has passed (or not come)
                when = "has passed" if answered < version else "is not open yet"
                raise RequestError(
                    409, f"decision {short_repr(answered)} {when}: the game is at {version}"
                )
            action = self._chosen(decision, request)
            self.waiting = None
            self.moves.put(action)
        self.wait_for_turn(version)

    def _chosen(self, decision: dict[str, Any], request: dict[str, Any]) -> int:
        """The legal action ``request`` names at ``decision``.

        :raises RequestError: a malformed request or a move that is not legal.
        """
        from rummyzoo.cli.play import match_move, not_legal

        legal = [m["action"] for m in decision["legal"]]
        labels = [m["description"] for m in decision["legal"]]
        game = self.match.game
        state = self.match.state

        def why(action: int) -> str:
            return game.illegal_reason(state, action)

        if "action" in request and "move" in request:
            raise RequestError(400, "send move or action, not both")
        if "action" in request:
            action = request["action"]
            if isinstance(action, bool) or not isinstance(action, int):
                raise RequestError(400, f"action must be an action id (an int), got {action!r}")
            if not 0 <= action < game.num_actions:
                raise RequestError(
                    400, f"action {action} is out of range 0..{game.num_actions - 1}"
                )
            if action not in legal:  # the id itself, not a move its name's words could match
                raise RequestError(400, not_legal(game, action, why, legal))
            return action
        if "move" not in request:
            raise RequestError(400, 'send {"move": "<name or number>"} or {"action": <id>}')
        text = request["move"]
        if not isinstance(text, str):
            raise RequestError(400, f"move must be text, got {text!r}")
        action, reason = match_move(text, legal, labels, game, why, "the buttons list them")
        if action is None:
            raise RequestError(400, reason)
        return action

    def abandon(self) -> None:
        if not self.over:
            self.moves.put(None)

    def state(self) -> dict[str, Any]:
        self.touched = time.monotonic()
        with self.changed:  # the decision and its number, together
            decision = self.waiting
            version = self.version
            over = self.over
        totals = self.match.totals_by_seat().tolist()
        lines = len(self.log)  # (once: the game's thread may add lines meanwhile)
        first = max(lines - LOG_LINES, 0)
        out: dict[str, Any] = {
            "id": self.id,
            "variant": self.variant,
            "seat": self.seat,
            "agents": self.labels,
            "options": self.options,
            "learnt": sorted(self.learnt),
            # the seed deals every hand and seeds the opponents: known, it shows their cards
            "seed": self.seed if over or self.seed_given else None,
            "status": "over" if over else ("your_move" if decision is not None else "waiting"),
            "log": self.log[first:lines],
            "log_start": first + 1,  # the number of its first line (the page's list's)
            "hands": [{k: h[k] for k in ("hand", "points", "totals")} for h in self.hands],
            "totals": totals,
            "error": self.error,
        }
        if self.hands:  # how the last hand ended, every hand open (the terminal shows it too)
            last = self.hands[-1]
            out["last_hand"] = {k: last[k] for k in ("hand", "points", "table")}
        if decision is not None:
            out["decision"] = version  # a move may name it, to answer this one only
            out["table"] = decision["table"]
            out["legal"] = decision["legal"]
            out["hint"] = decision["hint"]
        elif self.hands:
            out["table"] = self.hands[-1]["table"]
        if over:
            best = max(totals)
            winners = [s for s, t in enumerate(totals) if t == best]
            out["winners"] = winners
            groups = self.match.game.score_groups.tolist()
            out["verdict"] = verdict(totals, self.seat, groups, lambda s: f"player_{s}")
            out["replay"] = self.replay_file
        return out


class _Abandoned(Exception):
    """The game was dropped from the server before it ended."""


# ---------------------------------------------------------------------------- pages
def _table_rows(rows: list[list[str]], head: list[str]) -> str:
    th = "".join(f"<th>{html.escape(h)}</th>" for h in head)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows)
    return f'<table class="list"><tr>{th}</tr>{body}</table>'


def _rules_line(game: WebGame) -> str:
    """The game's options, as the terminal's banner says them: the rules a checkpoint
    opponent learnt named so, the others as given (HTML)."""
    shown = ", ".join(f"{k}={v!r}" for k, v in game.options.items() if k not in game.learnt)
    learnt = ", ".join(f"{k}={game.options[k]!r}" for k in sorted(game.learnt))
    parts = [html.escape(f"options: {shown}" if shown else "default options")]
    if learnt:
        opponent = next(label for label in game.labels if label != "human")
        parts.append(
            f'<span id="learnt">{html.escape(f"the rules {opponent} learnt: {learnt}")}</span>'
        )
    return f'<span id="rules">{" &middot; ".join(parts)}</span>'


def _header(title: str, sub: str = "") -> str:
    nav = '<a href="/">runs</a> &middot; <a href="/play">play a game</a>'
    return (
        f'<header><h1>{html.escape(title)}</h1><div class="sub">{nav}'
        f"{' &middot; ' + sub if sub else ''}</div></header>"
    )


def _evaluations(folder: RunsFolder, run: Path) -> tuple[list[dict[str, Any]], str | None]:
    """A run's saved evaluations, and what is wrong with its files that hold them and cannot
    be read (each named by its path in the runs folder), else None."""
    from rummyzoo.training.curves import EVALUATION_FILES, read_evaluations

    if not all(folder.holds(run / name) for name in EVALUATION_FILES):  # a link out
        return [], None
    try:
        history, damaged = read_evaluations(run)
    except ValueError as exc:  # the run is listed without its evaluations, and says why
        history, damaged = [], [str(exc)]
    if not damaged:
        return history, None
    return history, "; ".join(why.replace(str(folder.root) + os.sep, "") for why in damaged)


def _rate_cell(opponent: Any, result: Any, interval: bool) -> str | None:
    """``opponent 0.512 [0.480, 0.544]`` of one saved evaluation; None where the entry is
    damaged (not a number where one belongs)."""
    if not isinstance(result, dict) or not finite_number(result.get("win_rate")):
        return None
    cell = f"{html.escape(str(opponent))} {result['win_rate']:.3f}"
    if not interval:
        return cell
    ci = result.get("win_rate_ci")
    if not (isinstance(ci, list) and len(ci) == 2 and all(finite_number(x) for x in ci)):
        return cell
    return f"{cell} [{ci[0]:.3f}, {ci[1]:.3f}]"


def _host_name(header: str) -> str:
    """The name or address of a ``Host`` header, without its port (``[::1]:8000`` -> ``::1``)."""
    if header.startswith("["):
        return header[1:].split("]", 1)[0]
    return header.rsplit(":", 1)[0] if header.count(":") == 1 else header


def _loopback(host: str) -> bool:
    """Whether ``host`` (a name or an address) is this machine only."""
    if host.lower().rstrip(".") == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def create_app(runs_dir: str | Path = "runs", host: str = "127.0.0.1") -> Any:
    """The Flask app over ``runs_dir`` (see the module docstring).

    Bound to this machine only (``host`` a loopback address, the default), the app answers
    only requests addressed to it by a loopback name (``localhost``, ``127.0.0.1``, ``[::1]``):
    a page of another site whose name has been pointed at 127.0.0.1 (DNS rebinding) gets 403.
    """
    from flask import Flask, jsonify, request
    from werkzeug.exceptions import HTTPException

    from rummyzoo.agents.checkpoints import learnt_rules_said, trained_rules
    from rummyzoo.agents.registry import agent_names
    from rummyzoo.cli.viewer import VARIANT_TITLES, page, replay_page, static_text
    from rummyzoo.envs.registry import VARIANTS
    from rummyzoo.envs.replay import ReplayError, load_replay

    folder = RunsFolder(runs_dir)
    app = Flask("rummyzoo.serve")
    app.url_map.merge_slashes = False  # "//etc/x" stays an absolute path, refused as such
    app.json.sort_keys = False  # the API's keys in the order the state gives them
    app.config["MAX_CONTENT_LENGTH"] = MAX_BODY
    local_only = _loopback(host)
    games: dict[str, WebGame] = {}
    lock = threading.Lock()

    def wants_json() -> bool:
        return request.path.startswith("/api/")

    def error_response(status: int, message: str) -> Any:
        if len(message) > MAX_MESSAGE:  # a long value the request sent is not sent back whole
            message = message[: MAX_MESSAGE - 3] + "..."
        if wants_json():
            return jsonify({"error": message, "status": status}), status
        body = _header(f"error {status}") + (
            f'<main><div class="error" id="error">{html.escape(message)}</div>'
            '<p><a href="/">back to the runs</a></p></main>'
        )
        return page(f"error {status}", body), status

    @app.errorhandler(RequestError)
    def _refused(exc: RequestError) -> Any:
        return error_response(exc.status, exc.message)

    @app.errorhandler(HTTPException)
    def _http(exc: HTTPException) -> Any:
        return error_response(exc.code or 500, exc.description or exc.name)

    @app.errorhandler(Exception)
    def _unexpected(exc: Exception) -> Any:
        app.logger.exception("request failed")
        return error_response(500, f"internal error: {type(exc).__name__}: {exc}")

    @app.before_request
    def _check_host() -> None:
        if local_only and not _loopback(_host_name(request.host)):
            raise RequestError(
                403,
                f"this server answers requests to localhost only, not to {short_repr(request.host)}",
            )

    # -- runs and games
    @app.get("/")
    def index() -> Any:
        rows = []
        for run in folder.runs():
            n_games = len(folder.games(run))
            evals, damaged = _evaluations(folder, run)
            last = "" if damaged is None or evals else "(its evaluations cannot be read)"
            if evals and isinstance(evals[-1].get("results"), dict):
                cells = (_rate_cell(o, r, False) for o, r in evals[-1]["results"].items())
                last = ", ".join(c for c in cells if c is not None)
            rows.append(
                [f'<a href="{_url("runs", run.name)}">{html.escape(run.name)}</a>',
                 html.escape(run_state(run)), str(n_games), last]
            )  # fmt: skip
        listing = (
            _table_rows(rows, ["run", "state", "games", "last evaluation (win rate)"])
            if rows
            else "<p>no runs yet: train one with <code>rummyzoo train CONFIG</code></p>"
        )
        body = _header("rummyzoo runs", html.escape(str(folder.root))) + f"<main>{listing}</main>"
        return page("rummyzoo runs", body)

    def run_state(run: Path) -> str:
        """Where a run stands (training now, stopped, finished); empty for a folder of games."""
        from rummyzoo.training.run_folder import LOCK_FILE, run_progress

        if not (run / "config.yaml").is_file() or not folder.holds(run / "config.yaml"):
            return ""
        for name in ("state.json", LOCK_FILE):  # what run_progress reads, as config.yaml
            if os.path.lexists(run / name) and not folder.holds(run / name):
                return f"its {name} lies outside the runs folder: not read"
        # the run named as a command typed where the server was started finds it
        shown = os.path.relpath(run)
        return run_progress(Path(shown if not shown.startswith("..") else run))["text"]

    @app.get("/runs/<name>")
    def run_page(name: str) -> Any:
        run = folder.run(name)
        parts = []
        state = run_state(run)
        if state:
            parts.append(f'<p class="run-state" id="run-state">{html.escape(state)}</p>')
        config = run / "config.yaml"
        if config.is_file() and folder.holds(config):
            with config.open(encoding="utf-8", errors="replace") as f:
                text = f.read(20000)
            parts.append(f"<h3>config</h3><pre>{html.escape(text)}</pre>")
        evals, damaged = _evaluations(folder, run)
        if evals or damaged is not None:
            section = "<h3>evaluations</h3>"
            if damaged is not None:  # (left out, and said)
                section += f'<div class="error" id="damaged">{html.escape(damaged)}</div>'
            rows = []
            for e in evals:
                results = e.get("results") if isinstance(e.get("results"), dict) else {}
                cells = (_rate_cell(o, r, True) for o, r in results.items())
                rows.append(
                    [html.escape(str(e.get("steps", ""))), "; ".join(c for c in cells if c)]
                )
            if rows:
                section += _table_rows(rows, ["steps", "win rate [95% CI]"])
            parts.append(section)
        game_rows = []
        for path in folder.games(run):
            rel = path.relative_to(run).as_posix()
            game_rows.append([f'<a href="{_url("runs", name, "game", rel)}">'
                              f"{html.escape(rel)}</a>"])  # fmt: skip
        parts.append(
            "<h3>games</h3>"
            + (_table_rows(game_rows, ["replay"]) if game_rows else "<p>no saved games</p>")
        )
        ckpts = [c for c in _playable(run) if folder.holds(c)]
        if ckpts:
            links = "".join(
                f'<li><a href="/play?opponent={html.escape(quote(f"{name}/checkpoints/{c.name}"))}">'
                f"play against {html.escape(c.name)}</a></li>"
                for c in ckpts
            )
            parts.append(f"<h3>checkpoints</h3><ul>{links}</ul>")
        body = _header(f"run {name}") + "<main>" + "".join(parts) + "</main>"
        return page(f"run {name}", body)

    @app.get("/runs/<name>/game/<path:file>")
    def game_page(name: str, file: str) -> Any:
        run = folder.run(name)
        path = folder.inside(file, "game", base=run)
        if run not in path.parents or path.suffix != ".json" or not _is_file(path):
            raise RequestError(404, f"unknown game {file!r} in run {name!r}")
        seat_text = request.args.get("seat")
        if seat_text not in (None, "", "open") and not (
            seat_text.isascii() and seat_text.isdigit() and len(seat_text) <= 3
        ):
            raise RequestError(
                400, f"seat must be a seat number or open, got {short_repr(seat_text)}"
            )
        try:
            try:
                data = load_replay(path)
            except ReplayError as exc:  # named as the page names it, not by its whole path
                raise ReplayError(str(exc).replace(str(path), f"{name}/{file}")) from None
            seat = None if seat_text in (None, "", "open") else int(seat_text)
            return page_or_error(lambda: replay_page(data, seat, f"{name}/{file}"))
        except ValueError as exc:  # ReplayError too
            raise RequestError(400, str(exc)) from None

    def page_or_error(build: Any) -> Any:
        try:
            return build()
        except ReplayError as exc:
            raise RequestError(400, str(exc)) from None

    # -- playing
    def heuristic_choices() -> list[str]:
        names: list[str] = []
        for variant in VARIANTS:
            names += [n for n in agent_names(variant) if n not in names]
        return names

    read_games: dict[tuple[str, int, int], tuple[str, int, bool] | None] = {}

    def checkpoint_game(path: Path) -> tuple[str, int, bool] | None:
        """The variant, players and whether it was trained in teams, of the checkpoint at
        ``path`` (None: unreadable, or of no variant here); read once while the file stays as
        it is."""
        try:
            stat = path.stat()
        except OSError:
            return None
        key = (str(path), stat.st_mtime_ns, stat.st_size)
        if key not in read_games:
            if len(read_games) > 4096:  # (files rewritten again and again)
                read_games.clear()
            read_games[key] = _read_game(path)
        return read_games[key]

    def checkpoint_problem(path: Path, label: str) -> str:
        """Why the checkpoint at ``path`` gives no game (what :func:`checkpoint_game` passed
        over), for a request that leaves the variant to it."""
        from rummyzoo.agents.checkpoints import read_meta

        try:
            meta = read_meta(path)
        except (OSError, ValueError) as exc:
            # named as the request names it, not by the server's path
            why = str(exc).replace(str(path), label)
            return why if why.startswith(f"checkpoint {label}") else f"checkpoint {label}: {why}"
        return (
            f"checkpoint {label} names no variant here ({meta.get('variant')!r}): send a "
            f"variant: one of {', '.join(VARIANTS)}"
        )

    def _read_game(path: Path) -> tuple[str, int, bool] | None:
        from rummyzoo.agents.checkpoints import read_meta

        try:
            meta = read_meta(path)
        except (OSError, ValueError):
            return None
        variant, players = meta.get("variant"), meta.get("num_players")
        if variant not in VARIANTS or not isinstance(players, int):
            return None
        options = meta.get("options")
        teams = isinstance(options, dict) and options.get("teams") is True
        return variant, players, teams

    @app.get("/play")
    def play_form() -> Any:
        chosen = request.args.get("opponent", "")
        # each checkpoint's game, read once: choosing one in the form sets its variant and
        # players, and the form starts with the chosen one's
        games = {name: checkpoint_game(folder.root / name) for name in folder.checkpoints()}
        variant_chosen, players, teams_chosen = games.get(chosen) or ("", 2, False)
        variants = "".join(
            f'<option value="{v}"{" selected" if v == variant_chosen else ""}>'
            f"{html.escape(VARIANT_TITLES.get(v, v))}</option>"
            for v in VARIANTS
        )

        def choice(name: str) -> str:
            # a checkpoint's option carries its game, which choosing it sets in the form
            game = games.get(name)
            data = (
                ""
                if game is None
                else f' data-variant="{game[0]}" data-players="{game[1]}"'
                f' data-teams="{"true" if game[2] else "false"}"'
            )
            selected = " selected" if name == chosen else ""
            return (
                f'<option value="{html.escape(name)}"{data}{selected}>{html.escape(name)}</option>'
            )

        options = "".join(choice(o) for o in [*heuristic_choices(), *games])
        body = (
            _header("play a game")
            + f"""<main><form id="new-game" class="panel">
<p><label>variant <select name="variant" id="variant">{variants}</select></label>
<label>players <input name="players" id="players" type="number" min="2" max="8" value="{players}"></label>
<label>your seat <input name="seat" id="seat" type="number" min="0" max="7" value="0"></label></p>
<p><label>opponents <select name="opponent" id="opponent">{options}</select></label></p>
<p><label>match to <input id="target" type="number" min="1" placeholder="one hand"> points
(empty: one hand)</label>
<label><input type="checkbox" id="teams"{" checked" if teams_chosen else ""}> teams (Ditch Rummy, 4 players)</label>
<label>seed <input id="seed" type="number" min="0" placeholder="random"></label></p>
<p><button type="submit" id="start">start</button></p></form>
<div id="form-error"></div>
<p>Opponents: random play, the heuristics of each variant (use the variant's own, e.g.
knock.smart for Knock Rummy) or a checkpoint of a run. Players: Knock Rummy 2-6, Ditch Rummy
2-4, 500 Rum 2-8. The rules of each variant, with every option and its default, are its env's
documentation (<code>python -m pydoc rummyzoo.envs.knock_rummy_v0</code>, and
<code>ditch_rummy_v0</code>, <code>rummy500_v0</code>); a game's move box takes a move's number,
its name or its words.</p></main>"""
        )
        script = """<script>
document.getElementById('opponent').addEventListener('change', (e) => {
  // a checkpoint plays its own variant and player count
  const chosen = e.target.selectedOptions[0];
  if (chosen && chosen.dataset.variant) {
    document.getElementById('variant').value = chosen.dataset.variant;
    document.getElementById('players').value = chosen.dataset.players;
    document.getElementById('teams').checked = chosen.dataset.teams === 'true';
  }
});
document.getElementById('new-game').addEventListener('submit', async (e) => {
  e.preventDefault();
  const seed = document.getElementById('seed').value;
  const target = document.getElementById('target').value;
  const teams = document.getElementById('teams');
  const body = { variant: document.getElementById('variant').value,
    players: Number(document.getElementById('players').value),
    seat: Number(document.getElementById('seat').value),
    opponent: document.getElementById('opponent').value,
    options: Object.assign(
      { target_score: target === '' ? null : Number(target) },
      // Ditch Rummy is told either way (a checkpoint trained in teams plays them unless told
      // not to); another variant only when ticked, which its game refuses, naming it
      document.getElementById('variant').value === 'ditch_rummy' || teams.checked
        ? { teams: teams.checked } : {}),
    seed: seed === '' ? null : seed };
  const r = await fetch('/api/games', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
  const data = await r.json();
  if (!r.ok) { document.getElementById('form-error').innerHTML = '<div class="error" id="error"></div>';
    document.getElementById('error').textContent = data.error; return; }
  location.href = '/play/' + data.id;
});
</script>"""
        return page("play a game", body, scripts=script)

    def json_body() -> dict[str, Any]:
        # A page of another site can send a form or text/plain to this server, but not
        # application/json without the browser asking first (which this server never allows).
        if request.mimetype != "application/json":
            raise RequestError(
                415, f"send JSON with Content-Type: application/json (got {request.mimetype!r})"
            )
        # MAX_CONTENT_LENGTH refuses a body whose length is given; one sent in chunks was cut
        # at the limit and read (``get_data``): what follows the limit refuses it too
        stream = request.stream
        raw = stream.read(MAX_BODY + 1)
        if len(raw) > MAX_BODY or stream.read(1):  # (the stream may raise 413 itself)
            raise RequestError(413, f"the request body is over {MAX_BODY} bytes")
        try:
            data = json.loads(raw)
        except (ValueError, RecursionError) as exc:  # a number too long, nesting too deep
            raise RequestError(400, f"malformed JSON: {exc}") from None
        if not isinstance(data, dict):
            raise RequestError(400, f"expected a JSON object, got {type(data).__name__}")
        return data

    def resolve_opponent(spec: Any) -> tuple[Any, str]:
        if not isinstance(spec, str) or not spec:
            raise RequestError(400, f"opponent must be an agent name, got {spec!r}")
        if spec.endswith(".rz") or "/" in spec:
            path = folder.inside(spec, "checkpoint")
            if path.suffix != ".rz":  # nothing else of the folder is opened as one
                raise RequestError(400, f"a checkpoint opponent is a .rz file, got {spec!r}")
            if not _is_file(path):
                raise RequestError(404, f"unknown checkpoint {spec!r} in the runs folder")
            return str(path), spec
        # Only the names of installed agents: a ``module:Class`` would import code a request
        # names, and parameters could make one decision take as long as a request asks.
        if spec not in agent_names():
            raise RequestError(
                400,
                f"unknown opponent {spec!r}: the server plays random, a heuristic or an entry "
                "point by its bare name (no parameters, no module:Class), or a checkpoint "
                "<run>/checkpoints/x.rz of the runs folder",
            )
        return spec, spec

    @app.post("/api/games")
    def new_game() -> Any:
        data = json_body()
        unknown = sorted(set(data) - {"variant", "players", "seat", "opponent", "options", "seed"})
        if unknown:
            raise RequestError(400, f"unknown field(s): {', '.join(unknown)}")
        opponent, label = resolve_opponent(data.get("opponent", "random"))
        # a checkpoint's own variant and player count where the request leaves them out
        game_of = checkpoint_game(Path(opponent)) if opponent.endswith(".rz") else None
        variant = data.get("variant", game_of[0] if game_of else None)
        if variant is None and opponent.endswith(".rz"):  # a checkpoint that does not read
            raise RequestError(400, f"{checkpoint_problem(Path(opponent), label)}")
        if variant is None:
            raise RequestError(400, f"send a variant: one of {', '.join(VARIANTS)}")
        if not isinstance(variant, str) or variant not in VARIANTS:
            raise RequestError(400, f"unknown variant {variant!r}: choose {', '.join(VARIANTS)}")
        players = data.get("players", game_of[1] if game_of and game_of[0] == variant else 2)
        seat = data.get("seat", 0)
        seed = data.get("seed")
        options = data.get("options", {})
        for key, value in (("players", players), ("seat", seat)):
            if isinstance(value, bool) or not isinstance(value, int):
                raise RequestError(400, f"{key} must be an int, got {value!r}")
        if isinstance(seed, str) and seed.isascii() and seed.isdigit() and len(seed) <= 40:
            seed = int(seed)  # as typed in the form (a JSON number past 2**53 loses digits)
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or seed < 0):
            raise RequestError(
                400,
                f"seed must be a non-negative int (or its digits) or null, got {short_repr(seed)}",
            )
        if not isinstance(options, dict):
            raise RequestError(400, f"options must be an object, got {options!r}")
        with lock:
            room()  # before the game and its opponents (checkpoints loaded) are made
        adopted: dict[str, Any] = {}
        try:
            if opponent.endswith(".rz"):  # a checkpoint plays the rules it learnt, unless told
                learnt = trained_rules(opponent, variant, players)
                adopted = {k: v for k, v in learnt.items() if k not in options}
                options = {**learnt, **options}
            game = WebGame(
                variant,
                players,
                seat,
                opponent,
                label,
                options,
                seed,
                folder.root / "web_games",
                learnt=adopted,
            )
        except ValueError as exc:  # (a checkpoint named as the request names it)
            said = learnt_rules_said(str(exc), adopted, opponent)
            raise RequestError(400, said.replace(opponent, label)) from None
        with lock:
            gone = room()  # (again: another request may have taken the room meanwhile)
            if gone is not None:
                games.pop(gone).abandon()
            games[game.id] = game
        game.start()
        return jsonify(game.state()), 201

    def room() -> str | None:
        """The game to drop for a new one (None: there is room), else 503. Under ``lock``."""
        if len(games) < MAX_GAMES:
            return None
        # a finished game makes room, else one nobody has asked about for IDLE_LIMIT
        finished = next((k for k, g in games.items() if g.over), None)
        if finished is not None:
            return finished
        idle = min(games, key=lambda k: games[k].touched)
        if time.monotonic() - games[idle].touched < IDLE_LIMIT:
            raise RequestError(
                503, f"{MAX_GAMES} games are being played: finish one, or try again later"
            )
        return idle

    def find_game(game_id: str) -> WebGame:
        game = games.get(game_id)
        if game is None:
            raise RequestError(
                404,
                f"unknown game {game_id!r}: a game lives until the server stops, or until a new "
                f"one takes its place once {MAX_GAMES} are open (a finished or idle one); a "
                "finished game's replay is in the runs folder's web_games/",
            )
        return game

    @app.get("/api/games/<game_id>")
    def game_state(game_id: str) -> Any:
        return jsonify(find_game(game_id).state())

    @app.post("/api/games/<game_id>/move")
    def game_move(game_id: str) -> Any:
        game = find_game(game_id)
        game.play(json_body())
        return jsonify(game.state())

    @app.get("/play/<game_id>")
    def play_page(game_id: str) -> Any:
        game = find_game(game_id)
        title = VARIANT_TITLES.get(game.variant, game.variant)
        shown = game.over or game.seed_given
        seed = f"seed {game.seed}" if shown else "seed shown when the game is over"
        # play.js shows a hidden seed at the end (one the server picked: below 2**53, which
        # JavaScript reads exactly); one shown already keeps the server's digits
        hidden = "" if shown else ' data-hidden="1"'
        seed = f'<span id="seed"{hidden}>{html.escape(seed)}</span>'
        body = _header(
            f"{title}: you are player_{game.seat}", f"{seed} &middot; {_rules_line(game)}"
        ) + (
            '<main><div id="game"></div><div id="message"></div>'
            '<div class="panel"><div class="label">your move (click one, or type it):</div>'
            '<div class="moves" id="moves"></div>'
            '<form id="move-form"><input id="move-text" size="30" placeholder="e.g. discard Kh">'
            '<button type="submit">play</button></form></div>'
            '<details class="panel" id="last-hand" hidden><summary id="last-hand-title"></summary>'
            '<div id="last-hand-table"></div></details>'
            '<div class="panel"><div class="label">log</div><ol class="log" id="log"></ol></div></main>'
        )
        script = (
            f"<script>{static_text('viewer.js')}</script><script>const GAME_ID = "
            f"{json.dumps(game.id)};</script><script>{static_text('play.js')}</script>"
        )
        return page(f"{title} game", body, scripts=script)

    return app


# ---------------------------------------------------------------------------- command
def register(sub: argparse._SubParsersAction, parents: Parents) -> None:
    serve = sub.add_parser(
        "serve",
        help="a local web app: browse runs and their games, play any agent in the browser",
        description="Serve a runs folder on a local web page: the runs, their evaluations, "
        "sample and arena games in the replay viewer, and games against any agent (random, a "
        "heuristic, a checkpoint) played in the browser.",
    )
    serve.add_argument(
        "runs_dir",
        nargs="?",
        default=None,
        help="the runs folder (default runs, made if there is none yet; a folder named here "
        "must exist)",
    )
    serve.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    serve.add_argument("--port", type=_port, default=8000, help="port, 1-65535 (default 8000)")
    serve.set_defaults(func=run)


def _port(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a port number, got {text!r}") from None
    if not 1 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"a port is 1-65535, got {value}")
    return value


def _check_address(host: str, port: int) -> None:
    """Bind ``host:port`` once and let it go: a port in use or an address that is not this
    machine's is one line (the web server's own start prints several and exits)."""
    try:
        family = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0][0]
        with socket.socket(family, socket.SOCK_STREAM) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as the server does
            probe.bind((host, port))
    except OSError as exc:
        raise ValueError(f"cannot serve on {host}:{port}: {exc.strerror or exc}") from None


def _handler_class() -> type:
    from werkzeug.serving import WSGIRequestHandler

    class Handler(WSGIRequestHandler):
        #: seconds a connection may stall, sending or reading (a client that never finishes
        #: its request, or never reads the answer, holds a thread no longer than that)
        timeout = CONNECTION_TIMEOUT

    return Handler


def run(args: argparse.Namespace) -> int:
    """Serve a runs folder until interrupted."""
    from werkzeug.serving import make_server

    named = args.runs_dir is not None
    runs = Path(args.runs_dir if named else "runs")
    if runs.exists() and not runs.is_dir():
        raise ValueError(f"runs folder {runs} is a file")
    if named and not runs.exists():  # a slip of the name would leave a stray empty folder
        raise ValueError(
            f"runs folder {runs} does not exist: name the folder your runs are in, or none "
            "(runs, made if there is none yet, where rummyzoo train writes runs by default)"
        )
    _check_address(args.host, args.port)
    server = make_server(
        args.host,
        args.port,
        create_app(runs, args.host),
        threaded=True,
        request_handler=_handler_class(),
    )
    if not runs.exists():  # nothing trained yet: /play works, and saves its games there
        runs.mkdir(parents=True)
        print(f"rummyzoo serve: created the runs folder {runs} (no runs yet; /play works)")
    host = f"[{args.host}]" if ":" in args.host else args.host
    print(
        f"rummyzoo serve: http://{host}:{args.port}/ (runs folder {runs}; Ctrl-C stops)",
        flush=True,
    )
    if not _loopback(args.host):
        print(
            f"rummyzoo serve: warning: {args.host} is not this machine alone: whoever can reach "
            "it can read the run folders' pages and games and start games, with no login",
            file=sys.stderr,
            flush=True,
        )
    from http.server import HTTPServer

    try:
        # the standard library's loop, not werkzeug's, which returns quietly on Ctrl-C (and on
        # SIGTERM, which the command raises as one): the stop reaches the command's end, which
        # says so and exits 130 or 143 as every command does
        if isinstance(server, HTTPServer):  # (werkzeug's servers are)
            HTTPServer.serve_forever(server)
        else:
            server.serve_forever()
    finally:
        server.server_close()
    return 0
