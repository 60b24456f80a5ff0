"""Helpers for the 500 Rum tests (scripted deals, scripted play, observation planes)."""

from __future__ import annotations

import numpy as np

from rummyzoo.envs import rummy500_v0
from rummyzoo.envs.cards import CARD_NAMES
from rummyzoo.envs.decks import deck_for
from rummyzoo.envs.rummy500.rules import decks_for


def make(hands: list[str], up: str, stock: str = "", **options):
    """A raw 500 Rum env (single hand unless ``target_score`` is given) reset onto the deal
    (:func:`rummyzoo.envs.decks.deck_for`; 5+ hands play with two decks)."""
    options.setdefault("target_score", None)
    hand_size = len(hands[0].split())
    env = rummy500_v0.raw_env(num_players=len(hands), hand_size=hand_size, **options)
    deck = deck_for(hands, up, stock, decks=decks_for(len(hands)))
    env.reset(seed=0, options={"deck": deck})
    return env


def play(env, script: list[str]) -> None:
    """Step the env through readable action names, in turn order."""
    for name in script:
        env.step(env.unwrapped.action_index(name))


def legal_names(env) -> set[str]:
    """Readable names of the legal actions of the agent to act."""
    return {env.unwrapped.action_name(a) for a in env.unwrapped.legal_actions()}


def points(env) -> list[float]:
    """Raw hand points of every agent from ``infos``."""
    return [env.infos[a]["points"] for a in env.possible_agents]


def plane(env, agent: str, name: str, k: int = 0) -> dict[str, int]:
    """Card -> value of the k-th 52-card block of an observation entry (non-zero cards only)."""
    obs = env.observe(agent)["observation"]
    start, _ = env.unwrapped.game.observation_layout[name]
    block = obs[start + 52 * k : start + 52 * (k + 1)]
    return {CARD_NAMES[c]: float(block[c]) for c in np.flatnonzero(block)}
