"""The networks of trained agents: masked Q-networks and card-shared networks.

Masked DQN networks
-------------------
The learner's input ends with the legal-action mask (``mask_in_obs``); :class:`MaskedQNetwork`
takes its greedy action among the legal ones only (:mod:`rummyzoo.training.dqn` trains it).

Card-shared networks
--------------------
One small scorer applied to each of the 52 cards.

In the rummy games most actions name a card ("discard Kh", "knock Kh"), and what makes a
card a good choice is the same for every card: is it in my hand, how much deadwood is left
without it, has an opponent picked up its neighbours... A plain MLP must learn that rule 52
times, once per output unit. The ``cards`` architecture learns it once:

* the network input is read as per-card channels: every 52-wide block of the observation that
  the env's ``observation_layout`` names (own hand, top and buried discards, each opponent's
  known and thrown cards), the 52-wide feature blocks (e.g. deadwood after each discard) and,
  for DQN, the legal-action mask of each card action; each card also gets its rank (one-hot)
  and pip value;
* a context MLP reads the whole input (scores, phase, stock size...) into a vector shared by
  all cards;
* one scorer MLP, shared by the 52 cards, maps [card channels, context] to that card's
  action scores (``discard``, ``knock``); the context alone scores the card-free actions
  (``draw stock``, ``take discard``).

The scores are logits for MaskablePPO (:class:`CardActorCriticPolicy`) and Q-values for the
masked DQN (:class:`CardDQNPolicy`). The value network of PPO stays a plain MLP.

A layout (:func:`card_layout`) is a plain dict saved with the model, so a checkpoint rebuilds
the same network wherever it is loaded.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch as th
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
from stable_baselines3.common.torch_layers import create_mlp
from stable_baselines3.dqn.policies import DQNPolicy, QNetwork
from torch import nn

from rummyzoo.envs.cards import NUM_CARDS, NUM_RANKS, PIP_VALUES


def mask_from_obs(obs: th.Tensor | np.ndarray, num_actions: int):
    """The legal-action mask stored in the last ``num_actions`` entries of observations."""
    return obs[..., -num_actions:] > 0.5


def masked_max(q_values: th.Tensor, mask: th.Tensor) -> th.Tensor:
    """Max over legal actions per row; rows with no legal action (terminal states) give 0."""
    masked = q_values.masked_fill(~mask, -th.inf)
    best = masked.max(dim=1).values
    return th.where(mask.any(dim=1), best, th.zeros_like(best))


class MaskedQNetwork(QNetwork):
    """Q-network whose greedy action ignores illegal actions."""

    def _predict(self, observation: th.Tensor, deterministic: bool = True) -> th.Tensor:
        q_values = self(observation)
        mask = mask_from_obs(observation, int(self.action_space.n))
        return q_values.masked_fill(~mask, -th.inf).argmax(dim=1).reshape(-1)


class MaskedDQNPolicy(DQNPolicy):
    """DQN policy built on :class:`MaskedQNetwork`."""

    def make_q_net(self) -> MaskedQNetwork:
        net_args = self._update_features_extractor(self.net_args, features_extractor=None)
        return MaskedQNetwork(**net_args).to(self.device)


def card_layout(
    variant: str,
    num_players: int,
    options: dict[str, Any],
    features: str | None,
    mask_in_obs: bool,
) -> dict[str, Any]:
    """Where the per-card channels sit in the network input, and how actions map to cards.

    :raises ValueError: the variant's actions are not laid out per card.
    """
    from rummyzoo.agents.features import make_features
    from rummyzoo.envs.registry import make_game

    game = make_game(variant, num_players, **options)
    segments = getattr(game, "action_segments", None)
    if segments is None:
        raise ValueError(
            f"the 'cards' network needs actions laid out per card; {variant} does not declare "
            "them (use the 'mlp' network)"
        )
    starts = []
    for name, (start, stop) in game.observation_layout.items():
        if name != "padding" and (stop - start) % NUM_CARDS == 0:
            starts += range(start, stop, NUM_CARDS)
    pos = game.obs_size
    feats = make_features(features, variant, num_players, options)
    if feats is not None:
        starts += [pos + k for k in getattr(feats, "card_blocks", ())]
        pos += feats.size
    if mask_in_obs:
        offset = 0
        for kind, count in segments:
            if kind == "card":
                starts += [pos + offset + NUM_CARDS * k for k in range(count)]
                offset += NUM_CARDS * count
            else:
                offset += count
        pos += game.num_actions
    return {
        "input_size": pos,
        "card_blocks": [int(s) for s in starts],
        "action_segments": [[kind, int(count)] for kind, count in segments],
        "num_actions": int(game.num_actions),
    }


def _card_identity() -> th.Tensor:
    """(52, 14): rank one-hot and pip value / 10 of each card."""
    ident = np.zeros((NUM_CARDS, NUM_RANKS + 1), dtype=np.float32)
    for c in range(NUM_CARDS):
        ident[c, c % NUM_RANKS] = 1.0
        ident[c, NUM_RANKS] = PIP_VALUES[c] / 10.0
    return th.as_tensor(ident)


class CardScorer(nn.Module):
    """Scores of every action from the network input (see the module docstring)."""

    def __init__(
        self,
        layout: dict[str, Any],
        context_arch: list[int],
        card_arch: list[int],
        context_size: int = 64,
        activation_fn: type[nn.Module] = nn.ReLU,
    ) -> None:
        super().__init__()
        self.layout = layout
        blocks = layout["card_blocks"]
        index = np.asarray(blocks)[:, None] + np.arange(NUM_CARDS)[None, :]
        self.register_buffer("card_index", th.as_tensor(index.reshape(-1), dtype=th.long))
        self.register_buffer("identity", _card_identity())
        self.num_blocks = len(blocks)
        self.context = nn.Sequential(
            *create_mlp(layout["input_size"], context_size, context_arch, activation_fn),
            activation_fn(),
        )
        self.segments = [(kind, int(count)) for kind, count in layout["action_segments"]]
        card_out = sum(c for k, c in self.segments if k == "card")
        free_out = sum(c for k, c in self.segments if k != "card")
        width = self.num_blocks + self.identity.shape[1] + context_size
        self.card_net = nn.Sequential(*create_mlp(width, card_out, card_arch, activation_fn))
        self.free_net = nn.Linear(context_size, free_out)

    def output_layers(self) -> list[nn.Linear]:
        """The layers that produce the scores (initialised small for PPO's first policy)."""
        return [self.card_net[-1], self.free_net]

    @property
    def value_inputs(self) -> int:
        """Inputs of PPO's value MLP (all of them)."""
        return int(self.layout["input_size"])

    def value_input(self, x: th.Tensor) -> th.Tensor:
        return x

    def forward(self, x: th.Tensor) -> th.Tensor:
        batch = x.shape[0]
        ctx = self.context(x)
        cards = x.index_select(1, self.card_index).reshape(batch, self.num_blocks, NUM_CARDS)
        per_card = th.cat(
            [
                cards.transpose(1, 2),
                self.identity.expand(batch, -1, -1),
                ctx.unsqueeze(1).expand(-1, NUM_CARDS, -1),
            ],
            dim=2,
        )
        card_scores = self.card_net(per_card)  # (batch, 52, card channels)
        free_scores = self.free_net(ctx)
        out = []
        card_k = free_k = 0
        for kind, count in self.segments:
            if kind == "card":
                part = card_scores[:, :, card_k : card_k + count]
                out.append(part.transpose(1, 2).reshape(batch, count * NUM_CARDS))
                card_k += count
            else:
                out.append(free_scores[:, free_k : free_k + count])
                free_k += count
        return th.cat(out, dim=1)


def action_layout(
    variant: str,
    num_players: int,
    options: dict[str, Any],
    features: str | None,
    mask_in_obs: bool,
) -> dict[str, Any]:
    """Where the action descriptions sit in the network input (see :class:`ActionScorer`).

    :raises ValueError: the features hold no action descriptions.
    """
    from rummyzoo.agents.features import make_features
    from rummyzoo.envs.registry import make_game

    game = make_game(variant, num_players, **options)
    feats = make_features(features, variant, num_players, options)
    block = getattr(feats, "action_block", None)
    if block is None:
        from rummyzoo.agents.action_features import ACTION_FEATURES

        known = ", ".join(n for n, c in ACTION_FEATURES.items() if c.variant == variant)
        given = (
            "no features are given" if features is None else (f"features {features!r} hold none")
        )
        if not known:
            raise ValueError(
                f"the 'actions' network reads action descriptions, which {variant} has none of "
                "(its actions are cards: use network: cards, or mlp)"
            )
        raise ValueError(
            f"the 'actions' network reads action descriptions, and {given}; use features: {known}"
        )
    offset, actions, width = block
    size = game.obs_size + feats.size + (game.num_actions if mask_in_obs else 0)
    return {
        "input_size": int(size),
        "action_start": int(game.obs_size + offset),
        "action_width": int(width),
        "num_actions": int(actions),
    }


def action_context_index(layout: dict[str, Any]) -> np.ndarray:
    """Input positions outside the action descriptions (what the context network reads)."""
    start = layout["action_start"]
    stop = start + layout["num_actions"] * layout["action_width"]
    return np.concatenate((np.arange(start), np.arange(stop, layout["input_size"])))


class ActionScorer(nn.Module):
    """One scorer shared by every action, over the action's description and a context vector.

    * a context MLP reads the input outside the description block (the observation, other
      features, DQN's mask) into a ``context_size`` vector;
    * the scorer MLP maps [description of action a, context] to the score of a, the same
      weights for every action (its first layer adds the two parts' projections, so the
      context is projected once per row, not once per action);
    * an action whose description is all zeros (one the observer cannot play) is not scored:
      its score is 0, and the legal-action mask removes it.
    """

    def __init__(
        self,
        layout: dict[str, Any],
        context_arch: list[int],
        card_arch: list[int],
        context_size: int = 64,
        activation_fn: type[nn.Module] = nn.ReLU,
    ) -> None:
        super().__init__()
        self.layout = layout
        index = action_context_index(layout)
        self.register_buffer("context_index", th.as_tensor(index, dtype=th.long))
        self.start = int(layout["action_start"])
        self.num_actions = int(layout["num_actions"])
        self.width = int(layout["action_width"])
        self.context = nn.Sequential(
            *create_mlp(len(index), context_size, context_arch, activation_fn), activation_fn()
        )
        hidden = card_arch[0] if card_arch else 64
        self.desc_in = nn.Linear(self.width, hidden)
        self.context_in = nn.Linear(context_size, hidden, bias=False)
        self.act = activation_fn()
        self.head = nn.Sequential(*create_mlp(hidden, 1, card_arch[1:], activation_fn))

    @property
    def value_inputs(self) -> int:
        """Inputs of PPO's value MLP: those outside the description block."""
        return int(self.context_index.numel())

    def value_input(self, x: th.Tensor) -> th.Tensor:
        return x.index_select(1, self.context_index)

    def output_layers(self) -> list[nn.Linear]:
        return [self.head[-1]]

    def forward(self, x: th.Tensor) -> th.Tensor:
        batch = x.shape[0]
        ctx = self.context_in(self.context(self.value_input(x)))
        stop = self.start + self.num_actions * self.width
        desc = x[:, self.start : stop].reshape(batch * self.num_actions, self.width)
        # Only the described actions are scored (every legal one is; the rest score 0 and are
        # masked out): in 500 Rum about one action in ten.
        rows = desc.abs().sum(dim=1).nonzero().squeeze(1)
        # index_select, not indexing: the gradient of each row of ctx sums over its actions,
        # and indexing's backward on CPU sums them in an order that changes with the threads'
        # timing (a seeded run's updates on two threads then differed in the last bits)
        own = ctx.index_select(0, rows // self.num_actions)
        hidden = self.act(self.desc_in(desc.index_select(0, rows)) + own)
        scores = self.head(hidden).squeeze(-1)
        out = x.new_zeros(batch * self.num_actions)
        return out.index_put((rows,), scores).reshape(batch, self.num_actions)


class ScorerExtractor(nn.Module):
    """PPO's "mlp_extractor" slot for a scorer network: the policy latent is the scorer's
    action scores (the logits themselves); the value MLP reads the scorer's value input (the
    whole input for :class:`CardScorer`, the input outside the description block for
    :class:`ActionScorer`)."""

    scorer_class: type[nn.Module] = nn.Module

    def __init__(
        self,
        feature_dim: int,
        layout: dict[str, Any],
        net_arch: dict[str, list[int]],
        activation_fn: type[nn.Module],
    ) -> None:
        super().__init__()
        if feature_dim != layout["input_size"]:
            raise ValueError(
                f"the network's layout expects inputs of size {layout['input_size']}, got "
                f"{feature_dim}"
            )
        self.scorer = self.scorer_class(
            layout, net_arch["pi"], card_arch=[64, 64], activation_fn=activation_fn
        )
        vf = net_arch["vf"]
        self.value_net = nn.Sequential(
            *create_mlp(self.scorer.value_inputs, vf[-1], vf[:-1], activation_fn),
            activation_fn(),
        )
        self.latent_dim_pi = int(layout["num_actions"])
        self.latent_dim_vf = int(vf[-1])

    def forward(self, features: th.Tensor) -> tuple[th.Tensor, th.Tensor]:
        return self.forward_actor(features), self.forward_critic(features)

    def forward_actor(self, features: th.Tensor) -> th.Tensor:
        return self.scorer(features)

    def forward_critic(self, features: th.Tensor) -> th.Tensor:
        return self.value_net(self.scorer.value_input(features))


class CardExtractor(ScorerExtractor):
    scorer_class = CardScorer


class ActionExtractor(ScorerExtractor):
    scorer_class = ActionScorer


class _ScorerNetwork:
    """Mixin of the policies over a scorer: the layout (``layout_key``: a plain dict) is a
    constructor argument, saved with the others."""

    layout_key = ""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        setattr(self, self.layout_key, kwargs.pop(self.layout_key))
        super().__init__(*args, **kwargs)

    @property
    def layout(self) -> dict[str, Any]:
        return getattr(self, self.layout_key)

    def _get_constructor_parameters(self) -> dict[str, Any]:
        data = super()._get_constructor_parameters()  # type: ignore[misc]
        data[self.layout_key] = self.layout
        return data


class _ScorerActorCritic(_ScorerNetwork, MaskableActorCriticPolicy):
    """MaskablePPO policy whose logits come from a scorer (``extractor_class``)."""

    extractor_class: type[ScorerExtractor] = ScorerExtractor

    def _build_mlp_extractor(self) -> None:
        arch = self.net_arch
        if isinstance(arch, list):
            arch = {"pi": arch, "vf": arch}
        self.mlp_extractor = self.extractor_class(
            self.features_dim, self.layout, arch, self.activation_fn
        )

    def _build(self, lr_schedule: Any) -> None:
        super()._build(lr_schedule)
        self.action_net = nn.Identity()  # the extractor's policy latent is already the logits
        if self.ortho_init:
            for layer in self.mlp_extractor.scorer.output_layers():
                nn.init.orthogonal_(layer.weight, gain=0.01)
                if layer.bias is not None:
                    nn.init.zeros_(layer.bias)
        self.optimizer = self.optimizer_class(
            self.parameters(), lr=lr_schedule(1), **self.optimizer_kwargs
        )


class _ScorerQNetwork(_ScorerNetwork, MaskedQNetwork):
    """Masked Q-network whose Q-values come from a scorer (``scorer_class``)."""

    scorer_class: type[nn.Module] = nn.Module

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        size = self.layout["input_size"]
        if self.features_dim != size:
            raise ValueError(
                f"the network's layout expects inputs of size {size}, got {self.features_dim}"
            )
        self.q_net = self.scorer_class(
            self.layout, list(self.net_arch), card_arch=[64, 64], activation_fn=self.activation_fn
        )


class _ScorerDQNPolicy(_ScorerNetwork, MaskedDQNPolicy):
    """Masked DQN policy built on a scorer Q-network (``q_net_class``)."""

    q_net_class: type[_ScorerQNetwork] = _ScorerQNetwork

    def make_q_net(self) -> _ScorerQNetwork:
        net_args = self._update_features_extractor(self.net_args, features_extractor=None)
        net_args[self.layout_key] = self.layout
        return self.q_net_class(**net_args).to(self.device)


class CardActorCriticPolicy(_ScorerActorCritic):
    """MaskablePPO policy whose logits come from a :class:`CardScorer`."""

    layout_key = "card_layout"
    extractor_class = CardExtractor


class CardQNetwork(_ScorerQNetwork):
    """Masked Q-network whose Q-values come from a :class:`CardScorer`."""

    layout_key = "card_layout"
    scorer_class = CardScorer


class CardDQNPolicy(_ScorerDQNPolicy):
    """Masked DQN policy built on :class:`CardQNetwork`."""

    layout_key = "card_layout"
    q_net_class = CardQNetwork


class ActionActorCriticPolicy(_ScorerActorCritic):
    """MaskablePPO policy whose logits come from an :class:`ActionScorer`."""

    layout_key = "action_layout"
    extractor_class = ActionExtractor


class ActionQNetwork(_ScorerQNetwork):
    """Masked Q-network whose Q-values come from an :class:`ActionScorer`."""

    layout_key = "action_layout"
    scorer_class = ActionScorer


class ActionDQNPolicy(_ScorerDQNPolicy):
    """Masked DQN policy built on :class:`ActionQNetwork`."""

    layout_key = "action_layout"
    q_net_class = ActionQNetwork


# ---------------------------------------------------------------------------- the one table
#: Activations a network may use, by the name configs and checkpoints give them.
ACTIVATIONS: dict[str, type[nn.Module]] = {
    "relu": nn.ReLU,
    "tanh": nn.Tanh,
    "elu": nn.ELU,
    "leaky_relu": nn.LeakyReLU,
}
#: The policy class of each network type and algorithm (``mlp``: stable-baselines3's own).
POLICY_CLASSES: dict[tuple[str, str], type] = {
    ("mlp", "ppo"): MaskableActorCriticPolicy,
    ("mlp", "dqn"): MaskedDQNPolicy,
    ("cards", "ppo"): CardActorCriticPolicy,
    ("cards", "dqn"): CardDQNPolicy,
    ("actions", "ppo"): ActionActorCriticPolicy,
    ("actions", "dqn"): ActionDQNPolicy,
}
#: The layout builder of each scorer network type, and the policy keyword it goes in.
LAYOUTS = {"cards": (card_layout, "card_layout"), "actions": (action_layout, "action_layout")}


def network_type(policy: Any) -> tuple[str, str]:
    """``(network type, algorithm)`` of a policy object (its exact class; None-safe).

    :raises KeyError: a policy class not in :data:`POLICY_CLASSES`.
    """
    for key, cls in POLICY_CLASSES.items():
        if type(policy) is cls:
            return key
    raise KeyError(type(policy).__name__)
