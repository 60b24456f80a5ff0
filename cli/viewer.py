"""HTML pages of games: one self-contained replay page (``rummyzoo replay FILE --html OUT``) and
the pieces the web app (``rummyzoo serve``) builds its pages from.

A replay page holds everything it needs (styles, the viewer script and the verified game's
frames, see :func:`rummyzoo.envs.replay.replay_frames`): it opens from disk with no network and
no server. It steps through every move and hand end: the hands (all open, or one seat's view),
the stock, the discard pile, the melds, the scores, the move played and the legal alternatives,
with buttons, a slider, a hand picker and keys (arrows or j/k to step, PageUp/PageDown for the
previous/next hand, Home/End).
"""

from __future__ import annotations

import html
import json
from importlib import resources
from pathlib import Path
from typing import Any

from rummyzoo.envs.files import atomic_write_text
from rummyzoo.envs.replay import hands_played, load_replay, replay_frames

__all__ = ["page", "replay_page", "static_text", "write_replay_html"]

VARIANT_TITLES = {"knock_rummy": "Knock Rummy", "ditch_rummy": "Ditch Rummy", "rummy500": "500 Rum"}


def static_text(name: str) -> str:
    """A file of the viewer (``viewer.js``, ``viewer.css``) as text."""
    return resources.files("rummyzoo.cli").joinpath("static", name).read_text(encoding="utf-8")


def json_for_script(value: Any) -> str:
    """JSON that is safe inside a ``<script>`` element: ``<``, ``>`` and ``&`` (which JSON
    holds only inside strings) as ``\\u`` escapes, so no ``</script>`` or ``<!--`` can end or
    change it, and ``JSON.parse`` reads the same strings."""
    text = json.dumps(value, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def page(title: str, body: str, head: str = "", scripts: str = "") -> str:
    """A whole HTML page with the viewer's styles inlined (``body`` is trusted HTML)."""
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{html.escape(title)}</title><style>{static_text('viewer.css')}</style>{head}"
        f"</head><body>{body}{scripts}</body></html>\n"
    )


def replay_page(data: dict[str, Any], view: int | None = None, source: str = "<replay>") -> str:
    """The self-contained HTML page of a replay (verified first).

    :raises ReplayError: the replay does not re-play exactly.
    :raises ValueError: ``view`` is not a seat of the game.
    """
    payload = replay_frames(data, view, source)
    variant = VARIANT_TITLES.get(payload["variant"], payload["variant"])
    who = ", ".join(f"player_{s} = {a}" for s, a in enumerate(payload["agents"]))
    final = ", ".join(f"player_{s} {p:+g}" for s, p in enumerate(payload["final"]))
    seen = "every hand open" if view is None else f"player_{view}'s view"
    options = ", ".join(f"{k}={v!r}" for k, v in payload["options"].items()) or "default options"
    seed = "" if payload["seed"] is None else f"seed {payload['seed']} &middot; "
    hands = (
        hands_played(data, payload["hands"])
        if data.get("finished", True)
        else (f"stops mid-game after {payload['hands']} finished hand(s)")
    )
    body = (
        f"<header><h1>{html.escape(variant)}, {payload['num_players']} players: "
        f'{html.escape(who)}</h1><div class="sub">{seed}'
        f"{html.escape(options)} &middot; {html.escape(seen)} &middot; {html.escape(hands)}, "
        f'final {html.escape(final)}</div></header><main><div id="viewer"></div></main>'
    )
    scripts = (
        f'<script type="application/json" id="replay-data">{json_for_script(payload)}</script>'
        f"<script>{static_text('viewer.js')}</script>"
        "<script>window.viewer = RZ.Viewer(document.getElementById('viewer'), "
        "JSON.parse(document.getElementById('replay-data').textContent));</script>"
    )
    title = f"{variant} replay" + ("" if payload["seed"] is None else f" (seed {payload['seed']})")
    return page(title, body, scripts=scripts)


def write_replay_html(path: str | Path, out: str | Path, view: int | None = None) -> Path:
    """Write the replay page of the replay file ``path`` to ``out`` (folders are created).

    :raises ReplayError: unreadable or corrupt replay (nothing is written then).
    """
    data = load_replay(path)
    text = replay_page(data, view, str(path))
    out = Path(out)
    atomic_write_text(out, text)
    return out
