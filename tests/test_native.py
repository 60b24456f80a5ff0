"""The compiled array builders (``envs/_native.c``): results and clear errors on bad input."""

from __future__ import annotations

import os

import numpy as np
import pytest

from rummyzoo.envs.native import load_kernels

# The module itself, whatever RUMMYZOO_PURE_PYTHON says (that switch only changes the default).
kernels = load_kernels()
#: CI builds the kernels and sets this: a failed build fails these tests instead of skipping them.
REQUIRED = os.environ.get("RUMMYZOO_REQUIRE_COMPILED", "") not in ("", "0")
needs_kernels = pytest.mark.skipif(
    kernels is None and not REQUIRED, reason="the compiled kernels are not built here"
)


@needs_kernels
def test_gather_rows_copies_rows_then_writes_features():
    planes = np.arange(12, dtype=np.float32).reshape(3, 4)
    out = kernels.gather_rows(planes, bytes([2, 0]), 1, 9.5, 7, 0.25)
    assert out.dtype == np.float32 and out.flags.writeable and out.flags.owndata
    assert out.tolist() == [8.0, 9.5, 10.0, 11.0, 0.0, 1.0, 2.0, 0.25]
    out[0] = -1.0  # a copy: the planes stay as they were
    assert planes[2, 0] == 8.0


@needs_kernels
@pytest.mark.parametrize(
    ("args", "error"),
    [
        ((np.zeros((3, 4), np.float64), b"\x00"), TypeError),  # wrong dtype
        ((np.zeros((3, 4), np.float32)[:, ::2], b"\x00"), TypeError),  # not contiguous
        ((np.zeros(4, np.float32), b"\x00"), TypeError),  # not 2-d
        ((np.zeros((3, 4), np.float32), [0]), TypeError),  # rows not bytes
        ((np.zeros((3, 4), np.float32), b"\x03"), IndexError),  # no row 3
        ((np.zeros((3, 4), np.float32), b"\x00", 4, 1.0), IndexError),  # feature past the end
        ((np.zeros((3, 4), np.float32), b"\x00", 1), TypeError),  # an index without a value
        ((np.zeros((3, 4), np.float32), b"\x00", 1, "x"), TypeError),
    ],
)
def test_gather_rows_rejects_bad_input(args, error):
    with pytest.raises(error):
        kernels.gather_rows(*args)


@needs_kernels
def test_card_mask_marks_both_blocks_but_the_excluded_card():
    planes = np.zeros((2, 5), np.float32)
    planes[1, [0, 2, 4]] = 1.0
    mask = kernels.card_mask(planes, 1, 12, 2, 7, 4)
    assert mask.dtype == np.int8
    assert np.flatnonzero(mask).tolist() == [2, 4, 7, 9]
    assert np.flatnonzero(kernels.card_mask(planes, 1, 12, 1, -1, -1)).tolist() == [1, 3, 5]


@needs_kernels
@pytest.mark.parametrize(
    "args",
    [
        (2, 12, 2, 7, -1),  # no row 2
        (1, 8, 2, 7, -1),  # second block past the end
        (1, 12, -1, 7, -1),  # negative base
    ],
)
def test_card_mask_rejects_bad_input(args):
    with pytest.raises(IndexError):
        kernels.card_mask(np.zeros((2, 5), np.float32), *args)


@needs_kernels
def test_deal_round_the_table():
    planes = np.zeros((4, 52), np.float32)
    deck = np.arange(52, dtype=np.int64)[::-1].copy()  # 51, 50, ...
    masks, cards = kernels.deal(planes, deck, 5, 2, 1)
    assert cards == deck.tolist()
    # Cards 51, 49, 47 go to seat 1; 50, 48 to seat 0.
    assert masks == [(1 << 50) | (1 << 48), (1 << 51) | (1 << 49) | (1 << 47)]
    assert np.flatnonzero(planes[0]).tolist() == [48, 50]
    assert np.flatnonzero(planes[1]).tolist() == [47, 49, 51]
    assert not planes[2:].any()


@needs_kernels
@pytest.mark.parametrize(
    ("deck", "args", "error"),
    [
        (np.arange(52, dtype=np.int32), (5, 2, 0), TypeError),  # wrong dtype
        (np.arange(104, dtype=np.int64)[::2], (5, 2, 0), TypeError),  # not contiguous
        (np.arange(52, dtype=np.int64), (53, 2, 0), ValueError),  # more cards than the deck
        (np.arange(52, dtype=np.int64), (5, 5, 0), ValueError),  # more players than rows
        (np.arange(52, dtype=np.int64), (5, 2, -1), ValueError),
        (np.arange(52, dtype=np.int64) + 1, (5, 2, 0), ValueError),  # card 52 does not exist
    ],
)
def test_deal_rejects_bad_input(deck, args, error):
    planes = np.zeros((4, 52), np.float32)
    with pytest.raises(error):
        kernels.deal(planes, deck, *args)
    assert not planes.any()  # nothing dealt


def test_random_policy_draws_like_numpy():
    """The policy takes the documented pick, ``legal[int(rng.random() * legal.size)]``, from the
    same random stream, also after the generator is reseeded in place (as the arena does between
    deals): the compiled pick where built, the numpy code under RUMMYZOO_PURE_PYTHON=1 and for
    masks of other dtypes."""
    from rummyzoo.agents.random_agent import RandomPolicy
    from rummyzoo.envs.seeding import new_generator, seed_generator

    policy = RandomPolicy()
    masks = np.random.default_rng(1).random((3000, 106)) < 0.1
    masks[:, 7] = True
    rngs = [new_generator(), new_generator()]
    for rng in rngs:
        seed_generator(rng, 5, 0)
    picks, expected = [], []
    for i, mask in enumerate(masks):
        if i == 1500:
            for rng in rngs:
                seed_generator(rng, 9, 1)
        kind = (np.int8, np.bool_, np.uint8)[i % 3]
        picks.append(policy.act(None, mask.astype(kind), rngs[0]))
        legal = np.flatnonzero(mask)
        expected.append(int(legal[int(rngs[1].random() * legal.size)]))
    assert picks == expected
    assert all(masks[i, a] for i, a in enumerate(picks))
    assert rngs[0].random() == rngs[1].random()  # both streams used alike


@pytest.mark.parametrize("mask", [np.zeros(5, np.int8), np.zeros(5, np.float32)])
def test_random_policy_rejects_an_empty_mask(mask):
    from rummyzoo.agents.random_agent import RandomPolicy

    with pytest.raises(ValueError, match="all-zero"):
        RandomPolicy().act(None, mask, np.random.default_rng(0))


@needs_kernels
def test_uniform_nonzero_rejects_a_bad_capsule():
    with pytest.raises(ValueError):
        kernels.uniform_nonzero(np.ones(3, np.int8), object())


@needs_kernels
def test_mask_names_lists_the_cards_lowest_first():
    from rummyzoo.envs.cards import CARD_NAMES, parse_cards, to_mask

    mask = to_mask(parse_cards("Ks As 2c Td 9h"))
    assert kernels.mask_names(mask, CARD_NAMES) == ["2c", "Td", "9h", "As", "Ks"]
    assert kernels.mask_names(0, CARD_NAMES) == []
    assert kernels.mask_names((1 << 52) - 1, CARD_NAMES) == list(CARD_NAMES)
    with pytest.raises(ValueError, match="52 bits"):
        kernels.mask_names(1 << 52, CARD_NAMES)
    with pytest.raises(TypeError, match="52 names"):
        kernels.mask_names(1, CARD_NAMES[:51])
    with pytest.raises(OverflowError):
        kernels.mask_names(-1, CARD_NAMES)


@needs_kernels
@pytest.mark.parametrize(
    ("positions", "values"),
    [
        (range(13), range(12)),  # 12 rank values
        ([*range(13), 13], range(13)),  # no rank 13
        ([*range(13), 0, 1], range(13)),  # 15 positions
        ([], range(13)),
        (range(13), [*range(12), -1]),  # a negative value
    ],
)
@needs_kernels
def test_solver_rejects_bad_tables(positions, values):
    with pytest.raises(ValueError):
        kernels.Solver(list(positions), list(values))
