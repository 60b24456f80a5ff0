"""Policy improvement over a fitted value of ditch.smart's play in Ditch Rummy.

One step of policy iteration with a learned value instead of rollouts: fit a network ``V`` to
what is left of a hand's margin, from a seat's observation, over hands of (epsilon-)smart
against itself, then play greedily: at each decision after the draw, try every legal action
on a copy of the game and take the one whose margin earned so far plus ``V`` of the
observation after it is highest (``--delta D``: only where that beats smart's own action by
more than ``D`` points; smart decides otherwise, and every draw). An action that ends the hand
counts the player's own final points and the rival's earned points less its hand's expected
penalty (the rival's hidden cards valued at the mean of the cards the player has not seen). Each deal is played with the
greedy player in either seat and again with ditch.smart in its place, as in
``ditch_rollouts.py``: the figure is the mean, over hands, of its margin less smart's on the
same deal and seat.

    python docs/experiments/ditch_afterstates.py collect --seed 11 --hands 55000 --out c.npz
    python docs/experiments/ditch_afterstates.py collect --seed 12 --hands 55000 --out d.npz
    python docs/experiments/ditch_afterstates.py fit --data c.npz d.npz --out v.pt
    python docs/experiments/ditch_afterstates.py play --value v.pt --seed 101 --deals 300

``collect`` records, in each hand, 8 states at random and every state right after an
exploratory action (``--epsilon``: the share of decisions after the draw where either player
plays a uniformly random legal action instead of smart's), each with both seats'
observations; the target is the seat's final margin less the margin it had earned so far
(``--epsilon 0 --whole-margin`` records smart's own play with the whole margin as the target).
"""

from __future__ import annotations

import argparse
import time
from typing import Any

import numpy as np
import torch as th

from rummyzoo.agents.ditch import SmartDitch
from rummyzoo.envs.ditch_rummy.rules import DitchState, Phase

SMART = SmartDitch(num_players=2, options={"target_score": None})
GAME = SMART.game
NO_TOTALS = np.zeros(2)
SCALE = 50.0  # points per unit of the network's output


def network(inputs: int) -> th.nn.Module:
    return th.nn.Sequential(
        th.nn.Linear(inputs, 512),
        th.nn.ReLU(),
        th.nn.Linear(512, 256),
        th.nn.ReLU(),
        th.nn.Linear(256, 1),
    )


def smart_action(s: DitchState, rng: np.random.Generator) -> int:
    return SMART.act(GAME.observe(s, s.current, NO_TOTALS), GAME.legal_mask(s), rng)


def collect(args: argparse.Namespace) -> None:
    rng = np.random.default_rng(args.seed)
    cap = args.hands * (args.per_hand + 8) * 2
    xs = np.empty((cap, GAME.obs_size), np.float16)
    ys = np.empty(cap, np.float32)
    n = 0
    start = time.perf_counter()
    for h in range(args.hands):
        s = GAME.new_hand(rng, h % 2, GAME.shuffled_deck(rng))
        states, forced = [], []
        while not s.over:
            earned = 0 if args.whole_margin else s.earned[0] - s.earned[1]
            obs = GAME.observe(s, 0, NO_TOTALS), GAME.observe(s, 1, NO_TOTALS)
            states.append((*obs, earned))
            mask = GAME.legal_mask(s)
            legal = np.flatnonzero(mask)
            action = SMART.act(GAME.observe(s, s.current, NO_TOTALS), mask, rng)
            if s.phase != Phase.DRAW and legal.size > 1 and rng.random() < args.epsilon:
                action = int(rng.choice(legal))
                forced.append(len(states))  # the state after it
            GAME.apply(s, action, rng)
        final = s.points[0] - s.points[1]
        size = min(args.per_hand, len(states))
        pick = set(rng.choice(len(states), size=size, replace=False).tolist())
        pick |= {k for k in forced if k < len(states)}
        for k in pick:
            if n + 2 > cap:
                break
            obs0, obs1, earned = states[k]
            xs[n], ys[n] = obs0, final - earned
            xs[n + 1], ys[n + 1] = obs1, -(final - earned)
            n += 2
    np.savez(args.out, X=xs[:n], Y=ys[:n])
    print(f"{n} samples from {args.hands} hands, {time.perf_counter() - start:.0f} s")


def fit(args: argparse.Namespace) -> None:
    th.set_num_threads(2)
    th.manual_seed(0)
    xs = np.concatenate([np.load(f)["X"] for f in args.data])
    ys = np.concatenate([np.load(f)["Y"] for f in args.data])
    n = len(ys)
    rng = np.random.default_rng(0)
    perm = rng.permutation(n)
    held, train = perm[: n // 20], perm[n // 20 :]
    net = network(xs.shape[1])
    opt = th.optim.Adam(net.parameters(), lr=1e-3)
    x_held = th.from_numpy(xs[held].astype(np.float32))
    y_held = th.from_numpy(ys[held] / SCALE)
    print(f"{n} samples, target standard deviation {ys.std():.1f} points")
    batch = 2048
    for epoch in range(args.epochs):
        start = time.perf_counter()
        rng.shuffle(train)
        lr = 1e-3 if epoch < args.epochs - 2 else (3e-4 if epoch == args.epochs - 2 else 1e-4)
        for group in opt.param_groups:
            group["lr"] = lr
        for i in range(0, len(train) - batch + 1, batch):
            idx = np.sort(train[i : i + batch])
            x = th.from_numpy(xs[idx].astype(np.float32))
            y = th.from_numpy(ys[idx] / SCALE)
            loss = ((net(x)[:, 0] - y) ** 2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
        with th.no_grad():
            pred = th.cat([net(x_held[i : i + 8192])[:, 0] for i in range(0, len(x_held), 8192)])
        mse = float(((pred - y_held) ** 2).mean())
        explained = 1 - mse / float(y_held.var())
        print(
            f"epoch {epoch}: held-out error {np.sqrt(mse) * SCALE:.1f} points (standard "
            f"deviation), explained variance {explained:.3f}, {time.perf_counter() - start:.0f} s"
        )
    th.save({"state": net.state_dict(), "inputs": xs.shape[1]}, args.out)


def rival_penalty(s: DitchState, me: int) -> float:
    """What the rival's hand is expected to cost it if the hand ends now, from what ``me``
    sees: its size times the mean penalty of the cards ``me`` has not seen."""
    unseen = GAME.decode(GAME.observe(s, me, NO_TOTALS)).unseen
    penalties = [SMART.penalty[o] for o in range(unseen.bit_length()) if unseen >> o & 1]
    return len(s.hands[1 - me]) * float(np.mean(penalties)) if penalties else 0.0


class Greedy:
    def __init__(self, path: str, delta: float) -> None:
        saved = th.load(path)
        self.net = network(saved["inputs"])
        self.net.load_state_dict(saved["state"])
        self.net.eval()
        self.delta = delta
        self.decisions = self.deviations = 0

    def act(self, s: DitchState, rng: np.random.Generator) -> int:
        legal = np.flatnonzero(GAME.legal_mask(s))
        own = smart_action(s, rng)
        if legal.size == 1 or s.phase == Phase.DRAW:
            return own
        me = s.current
        q = np.empty(legal.size)
        obs, where = [], []
        for k, action in enumerate(legal.tolist()):
            t = s.copy()
            GAME.apply(t, action, rng)
            if t.over:  # own points exact, the rival's hand at the unseen cards' mean penalty
                q[k] = t.points[me] - t.earned[1 - me] + rival_penalty(s, me)
            else:
                q[k] = t.earned[me] - t.earned[1 - me]
                obs.append(GAME.observe(t, me, NO_TOTALS))
                where.append(k)
        if obs:
            with th.no_grad():
                q[where] += self.net(th.from_numpy(np.stack(obs)))[:, 0].numpy() * SCALE
        self.decisions += 1
        best = int(q.argmax())
        if legal[best] != own and q[best] - q[int(np.flatnonzero(legal == own)[0])] > self.delta:
            self.deviations += 1
            return int(legal[best])
        return own


def margin(deck: np.ndarray, seat: int, player: Greedy | None) -> float:
    rng = np.random.default_rng(0)
    s = GAME.new_hand(rng, 1, deck)
    while not s.over:
        if player is not None and s.current == seat:
            action = player.act(s, rng)
        else:
            action = smart_action(s, rng)
        GAME.apply(s, action, rng)
    return float(s.points[seat] - s.points[1 - seat])


def play(args: argparse.Namespace) -> list[dict[str, float]]:
    th.set_num_threads(1)
    results = []
    start = time.perf_counter()
    decks = [GAME.shuffled_deck(np.random.default_rng([args.seed, d])) for d in range(args.deals)]
    smart = np.array([[margin(deck, seat, None) for seat in (0, 1)] for deck in decks]).ravel()
    for delta in args.delta:
        player = Greedy(args.value, delta)
        own = np.array([[margin(deck, seat, player) for seat in (0, 1)] for deck in decks]).ravel()
        gains = own - smart
        se = gains.std(ddof=1) / np.sqrt(gains.size)
        print(
            f"delta {delta:g}: {gains.mean():+.1f} points a hand against smart's play of the same "
            f"deals, 95% CI [{gains.mean() - 1.96 * se:+.1f}, {gains.mean() + 1.96 * se:+.1f}], "
            f"{gains.size} hands; hands won {np.mean(own > 0):.3f} (smart {np.mean(smart > 0):.3f}); "
            f"other than smart at {player.deviations} of {player.decisions} decisions; "
            f"{time.perf_counter() - start:.0f} s"
        )
        results.append(
            {
                "delta": delta,
                "gain_per_hand": float(gains.mean()),
                "hands": int(gains.size),
                "deviations": player.deviations,
                "decisions": player.decisions,
            }
        )
    return results


def main(argv: list[str] | None = None) -> Any:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    c = sub.add_parser("collect")
    c.add_argument("--seed", type=int, required=True)
    c.add_argument("--hands", type=int, default=55000)
    c.add_argument("--per-hand", type=int, default=8)
    c.add_argument("--epsilon", type=float, default=0.1)
    c.add_argument("--whole-margin", action="store_true")
    c.add_argument("--out", required=True)
    f = sub.add_parser("fit")
    f.add_argument("--data", nargs="+", required=True)
    f.add_argument("--epochs", type=int, default=5)
    f.add_argument("--out", required=True)
    p = sub.add_parser("play")
    p.add_argument("--value", required=True)
    p.add_argument("--seed", type=int, required=True)
    p.add_argument("--deals", type=int, default=300)
    p.add_argument("--delta", type=float, nargs="+", default=[0.0, 3.0, 8.0])
    args = parser.parse_args(argv)
    return {"collect": collect, "fit": fit, "play": play}[args.command](args)


if __name__ == "__main__":
    main()
