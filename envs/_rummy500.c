/* 500 Rum's compiled turn (Rummy500Kernel): every move (drawing from the stock, digging into the
 * discard pile, melds, lay-offs, discarding, passing), the end of the hand they bring (going
 * out, the stock's end), the legal mask and the observation, on the game's own state objects.
 *
 * Rummy500Game (envs/rummy500/rules.py) holds one kernel per game and calls it from both faces,
 * as the other variants do (envs/_knock.c, envs/_ditch.c). A move not legal now is left to the
 * Python code, the state untouched; that code is the pure-Python twin of every part here, and
 * the test suite compares them move for move.
 *
 * Cards are card ids (suit * 13 + rank, the ace rank 0); a hand, the discard pile and the
 * lay-off targets are 52-bit masks. The state's card planes are bytes in one bytearray
 * (``cells``: rows of 52, a count per card or a card's place in the discard pile) and its
 * per-hand numbers a small float32 buffer (``buf``); see Rummy500State.
 */
#include "_native.h"

#define R5_MAX_PLAYERS 8
#define R5_CARDS 52
#define R5_RANKS 13
#define R5_MELDS 100
#define R5_ACTIONS 414
#define DRAW_STOCK 0
#define PASS 1
#define DIG_BASE 2
#define DIG_DEEP_BASE (DIG_BASE + R5_CARDS)
#define MELD_BASE (DIG_DEEP_BASE + R5_CARDS)
#define LAY_SET_BASE (MELD_BASE + R5_MELDS)
#define LAY_LOW_BASE (LAY_SET_BASE + R5_CARDS)
#define LAY_HIGH_BASE (LAY_LOW_BASE + R5_CARDS)
#define DISCARD_BASE (LAY_HIGH_BASE + R5_CARDS)
#define LONG_PILE 3
#define R5_SUIT_BITS 0x1FFFULL
#define RANK_REPEAT (1ULL | 1ULL << 13 | 1ULL << 26 | 1ULL << 39)
#define KERNEL_NAME "Rummy500Kernel"

enum { S_WORDS, S_CELLS, S_PILE, S_STOCK, S_STOCK_POS, S_PENDING, S_CURRENT, S_TURN, S_PHASE,
       S_OVER, S_POINTS, S_HAND_VALUES, S_WENT_OUT, S_END_REASON, S_MASK_CACHE, S_BUF, S_TOTALS,
       S_RUNS, S_SETS, S_DEALER, NUM_STATE_SLOTS };

static PyObject *n_words, *n_cells, *n_pile, *n_stock, *n_stock_pos, *n_pending,
    *n_current, *n_turn, *n_phase, *n_points, *n_hand_values, *n_went_out, *n_end_reason,
    *n_mask_cache, *n_buf, *n_totals, *n_runs, *n_sets, *n_dealer;

static PyObject **const state_names[NUM_STATE_SLOTS] = {
    &n_words,      &n_cells,       &n_pile,      &n_stock,     &n_stock_pos,
    &n_pending,    &n_current,     &n_turn,      &n_phase,     &n_over,         &n_points,
    &n_hand_values, &n_went_out,   &n_end_reason, &n_mask_cache, &n_buf,        &n_totals,
    &n_runs,       &n_sets,        &n_dealer};

int rummy500_intern_names(void) {
    if (n_words)
        return 0;
    INTERN(n_words, "words")
    INTERN(n_cells, "cells")
    INTERN(n_pile, "pile")
    INTERN(n_stock, "stock")
    INTERN(n_stock_pos, "stock_pos")
    INTERN(n_pending, "pending")
    INTERN(n_current, "current")
    INTERN(n_turn, "turn")
    INTERN(n_phase, "phase")
    INTERN(n_points, "points")
    INTERN(n_hand_values, "hand_values")
    INTERN(n_went_out, "went_out")
    INTERN(n_end_reason, "end_reason")
    INTERN(n_mask_cache, "mask_cache")
    INTERN(n_buf, "buf")
    INTERN(n_totals, "totals")
    INTERN(n_runs, "runs")
    INTERN(n_sets, "sets")
    INTERN(n_dealer, "dealer")
    return 0;
}

typedef struct {
    PyObject_HEAD
    int ready;
    int players, decks, free_top, end_after_stock, max_turns, obs_size, buf_size, cells_size;
    int row_pile, row_pile_low, row_top, row_known, off_phase, scores_at; /* scores_at -1: none */
    int row_laid, row_runs, row_fits, row_pending, hand_size;
    PyObject *state_class;
    /* the meld table: cards, run positions (runs) or suits (sets), suit (-1: a set), rank (-1:
     * a run), points */
    int meld_cards[R5_MELDS][3], meld_positions[R5_MELDS][3], meld_suit[R5_MELDS],
        meld_rank[R5_MELDS], meld_value[R5_MELDS];
    double inv_cards, inv_turns, score_scale;
    int card_value[R5_CARDS];
    int run_at_bit[R5_CARDS], qka_at_bit[R5_CARDS]; /* meld ids, -1 where none */
    uint64_t run_start_bits;
    signed char set_ids[R5_RANKS][16][4]; /* set meld ids of a rank in a suit pattern, -1 ends */
    int melds_with_count[R5_CARDS];
    int melds_with_id[R5_CARDS][16];
    uint64_t melds_with_mask[R5_CARDS][16];
    unsigned char run_ok[R5_RANKS][1 << R5_RANKS];
    Gather gather; /* each seat's observation from buf and cells */
    PyObject *phases[2], *end_pass, *end_stock, *end_out, *empty_mask;
    PyObject *zero_words; /* an array('Q') of zeros as long as the state's words */
    int row_sizes;        /* the row of cells whose first bytes are the hand sizes */
    Slots slots, match_slots;
} Rummy500Kernel;

/* ------------------------------------------------------------------ state access */

typedef struct {
    PyObject *buf, *cells, *pile, *stock;
    float *v;               /* buf: [0, stock, pile, turn], then per seat 5 blocks */
    uint8_t *c;             /* cells: the planes, then a row of the hand sizes */
    uint8_t *sizes;         /* each seat's hand size (in cells) */
    uint64_t *m, *hands, *points; /* words: the masks (M_PILE ... M_ANY), hands, table points */
    Py_buffer words_view, cells_view; /* held while the move runs: neither can be resized */
    long current, phase, stock_pos, pending, turn;
} Hand;

/* Rummy500State.words: the discard pile, the cards in it twice, the lay-off targets (on a set,
 * below a run, above a run) and their union, then each seat's hand (52-bit masks), then each
 * seat's table points. */
enum { M_PILE, M_DOUBLE, M_FITS, M_ANY = M_FITS + 3, M_HANDS };

static void hand_release(Hand *h) {
    if (h->words_view.obj)
        PyBuffer_Release(&h->words_view);
    if (h->cells_view.obj)
        PyBuffer_Release(&h->cells_view);
    Py_CLEAR(h->buf);
    Py_CLEAR(h->cells);
    Py_CLEAR(h->pile);
    Py_CLEAR(h->stock);
}

static int bad_state(void) {
    PyErr_SetString(PyExc_ValueError, "not a 500 Rum state of this game");
    return -1;
}

/* A 52-bit card mask from a Python int. */
static int as_mask(PyObject *v, uint64_t *out) {
    if (!PyLong_CheckExact(v)) {
        PyErr_SetString(PyExc_TypeError, "a 500 Rum card mask is an int");
        return -1;
    }
    int overflow;
    long long value = PyLong_AsLongLongAndOverflow(v, &overflow);
    if (value == -1 && PyErr_Occurred())
        return -1;
    *out = (uint64_t)value;
    if (overflow || value < 0 || *out >> R5_CARDS) {
        PyErr_SetString(PyExc_ValueError, "a 500 Rum card mask has 52 bits");
        return -1;
    }
    return 0;
}

/* The state's words (an array('Q') of M_HANDS + 2 players items, the class of zero_words)
 * through ``view``: the masks checked below 2**52, the table points below 2**31; NULL with an
 * error else. */
static uint64_t *slot_words(Rummy500Kernel *k, PyObject *state, Py_buffer *view) {
    PyObject *v = slot_get(&k->slots, state, S_WORDS);
    if (!v)
        return NULL;
    int ok = Py_IS_TYPE(v, Py_TYPE(k->zero_words)) &&
             PyObject_GetBuffer(v, view, PyBUF_WRITABLE | PyBUF_FORMAT) == 0;
    Py_DECREF(v); /* the view holds the array */
    if (!ok) {
        PyErr_Clear();
        PyErr_SetString(PyExc_TypeError, "a 500 Rum state's words is an array('Q')");
        return NULL;
    }
    const Py_ssize_t masks = M_HANDS + k->players, count = masks + k->players;
    uint64_t *items = (uint64_t *)view->buf, any = 0, points = 0;
    if (view->itemsize != 8 || !view->format || strcmp(view->format, "Q") ||
        view->len != count * 8) {
        PyErr_Format(PyExc_ValueError, "a 500 Rum state's words is an array('Q') of %zd", count);
        PyBuffer_Release(view);
        return NULL;
    }
    for (Py_ssize_t j = 0; j < masks; j++)
        any |= items[j];
    for (Py_ssize_t j = masks; j < count; j++)
        points |= items[j];
    if (any >> R5_CARDS || points >> 31) {
        PyErr_SetString(PyExc_ValueError, any >> R5_CARDS ? "a 500 Rum card mask has 52 bits"
                                                         : "a 500 Rum table score must be below 2**31");
        PyBuffer_Release(view);
        return NULL;
    }
    return items;
}

/* A bytearray slot of exactly ``size`` bytes (new reference), else TypeError/ValueError. */
static PyObject *slot_bytes(Rummy500Kernel *k, PyObject *state, int i, Py_ssize_t size,
                            const char *what) {
    PyObject *v = slot_get(&k->slots, state, i);
    if (v && !PyByteArray_CheckExact(v)) {
        PyErr_Format(PyExc_TypeError, "a 500 Rum state's %s is a bytearray", what);
        Py_CLEAR(v);
    } else if (v && PyByteArray_GET_SIZE(v) != size) {
        PyErr_Format(PyExc_ValueError, "a 500 Rum state's %s must have %zd bytes", what, size);
        Py_CLEAR(v);
    }
    return v;
}

static int hand_read(Rummy500Kernel *k, PyObject *state, Hand *h) {
    memset(h, 0, sizeof(Hand));
    const char *name = "500 Rum";
    if (slot_long(&k->slots, state, S_CURRENT, &h->current) < 0 ||
        slot_long(&k->slots, state, S_PHASE, &h->phase) < 0 ||
        slot_long(&k->slots, state, S_STOCK_POS, &h->stock_pos) < 0 ||
        slot_long(&k->slots, state, S_PENDING, &h->pending) < 0 ||
        slot_long(&k->slots, state, S_TURN, &h->turn) < 0)
        return -1;
    if (!(h->m = slot_words(k, state, &h->words_view)) ||
        !(h->buf = slot_get(&k->slots, state, S_BUF)) ||
        check_array(h->buf, NPY_FLOAT32, 1, k->buf_size, 0, 1, "a 500 Rum state's buf") < 0 ||
        !(h->cells = slot_bytes(k, state, S_CELLS, k->cells_size, "cells")) ||

        !(h->pile = slot_list(&k->slots, state, S_PILE, name)) ||
        !(h->stock = slot_list(&k->slots, state, S_STOCK, name)))
        goto fail;
    const Py_ssize_t n = k->players;
    if (h->current < 0 || h->current >= n ||
        h->phase < 0 || h->phase > 1 || h->stock_pos < 0 ||
        PyList_GET_SIZE(h->pile) > (Py_ssize_t)R5_CARDS * k->decks ||
        PyList_GET_SIZE(h->stock) > (Py_ssize_t)R5_CARDS * k->decks ||
        h->stock_pos > PyList_GET_SIZE(h->stock) || h->pending < -1 || h->pending >= R5_CARDS ||
        h->turn < 0 || h->turn >= INT_MAX) {
        bad_state();
        goto fail;
    }
    h->v = (float *)PyArray_DATA((PyArrayObject *)h->buf);
    if (PyObject_GetBuffer(h->cells, &h->cells_view, PyBUF_WRITABLE) < 0)
        goto fail;
    h->c = (uint8_t *)h->cells_view.buf;
    h->sizes = h->c + (size_t)k->row_sizes * R5_CARDS;
    h->hands = h->m + M_HANDS;
    h->points = h->hands + n;
    return 0;
fail:
    hand_release(h);
    return -1;
}

static int list_long(PyObject *list, Py_ssize_t i, long *out) {
    return int_value(PyList_GET_ITEM(list, i), out);
}

static int list_set_long(PyObject *list, Py_ssize_t i, long value) {
    PyObject *v = PyLong_FromLong(value);
    return v ? PyList_SetItem(list, i, v) : -1;
}

static int card_of(PyObject *list, Py_ssize_t i, long *card) {
    if (list_long(list, i, card) < 0)
        return -1;
    return (*card < 0 || *card >= R5_CARDS) ? bad_state() : 0;
}

/* Row ``r`` of the card planes (52 bytes). */
static uint8_t *row(Rummy500Kernel *k, Hand *h, int r) { return h->c + (size_t)r * R5_CARDS; }

/* One more copy of a card in a plane of counts (a card has at most ``decks`` copies). */
static int count_up(Rummy500Kernel *k, uint8_t *count) {
    if (*count >= k->decks)
        return bad_state();
    ++*count;
    return 0;
}

/* ------------------------------------------------------------------ the mask */

/* Cards of ``cards`` that belong to some 3-card meld inside it (tables.meldable). */
static uint64_t meldable(Rummy500Kernel *k, uint64_t cards) {
    uint64_t t = cards & (cards >> 1) & (cards >> 2) & k->run_start_bits;
    uint64_t covered = t | (t << 1) | (t << 2);
    t = cards & (cards >> 11) & (cards >> 12) & RANK_REPEAT;
    covered |= t | (t << 11) | (t << 12);
    uint64_t a = cards & R5_SUIT_BITS, b = (cards >> 13) & R5_SUIT_BITS, c = (cards >> 26) & R5_SUIT_BITS,
             d = (cards >> 39) & R5_SUIT_BITS;
    uint64_t three = (a & b & (c | d)) | (c & d & (a | b));
    if (three)
        covered |= cards & (three * RANK_REPEAT);
    return covered;
}

/* Whether ``card`` has a 3-card meld inside ``acc`` (tables.MELD_TEST). */
static int meld_test(Rummy500Kernel *k, int card, uint64_t acc) {
    int rank = card % R5_RANKS, shift = R5_RANKS * (card / R5_RANKS);
    uint64_t others = RANK_REPEAT & ~(1ULL << shift);
    uint64_t same_rank = (acc >> rank) & others; /* two or more: a set */
    return (same_rank & (same_rank - 1)) != 0 ||
           k->run_ok[rank][(acc >> shift) & R5_SUIT_BITS];
}

/* Rummy500Game.dig_options: the cards the seat may dig to (topmost copy, lower copy). */
static int dig_options(Rummy500Kernel *k, Hand *h, long seat, uint64_t *usable_out,
                       uint64_t *deep_out) {
    Py_ssize_t size = PyList_GET_SIZE(h->pile);
    *usable_out = *deep_out = 0;
    if (!size)
        return 0;
    uint64_t hand = h->hands[seat];
    uint64_t usable = h->m[M_PILE] & h->m[M_ANY], cand = h->m[M_PILE] & ~h->m[M_ANY];
    if (size > LONG_PILE)
        cand &= meldable(k, hand | h->m[M_PILE]);
    uint64_t deep_found = 0;
    if (cand) {
        uint64_t acc = hand, seen = 0;
        for (Py_ssize_t idx = size - 1; idx >= 0; idx--) {
            long card;
            if (card_of(h->pile, idx, &card) < 0)
                return -1;
            uint64_t b = 1ULL << card;
            acc |= b;
            if (cand & b) {
                if (meld_test(k, (int)card, acc)) {
                    if (seen & b)
                        deep_found |= b;
                    else
                        usable |= b;
                    cand ^= b;
                }
                if (!cand)
                    break;
            }
            seen |= b;
        }
    }
    uint64_t deep = h->m[M_DOUBLE] & (usable | deep_found);
    if (k->free_top) {
        long top;
        if (card_of(h->pile, size - 1, &top) < 0)
            return -1;
        usable |= 1ULL << top;
    }
    *usable_out = usable;
    *deep_out = deep;
    return 0;
}

/* The legal actions of the seat to act in a hand not over (Rummy500Game.legal_mask, without
 * its cache) into out (R5_ACTIONS entries). */
static int legal_into(Rummy500Kernel *k, Hand *h, npy_int8 *out) {
    memset(out, 0, R5_ACTIONS);
    long seat = h->current;
    if (h->phase == 0) {
        out[h->stock_pos < PyList_GET_SIZE(h->stock) ? DRAW_STOCK : PASS] = 1;
        uint64_t top, deep;
        if (dig_options(k, h, seat, &top, &deep) < 0)
            return -1;
        for (; top; top &= top - 1)
            out[DIG_BASE + __builtin_ctzll(top)] = 1;
        for (; deep; deep &= deep - 1)
            out[DIG_DEEP_BASE + __builtin_ctzll(deep)] = 1;
        return 0;
    }
    uint64_t hand = h->hands[seat];
    if (h->pending >= 0) {
        int p = (int)h->pending;
        for (int j = 0; j < k->melds_with_count[p]; j++)
            if (!(k->melds_with_mask[p][j] & ~hand))
                out[MELD_BASE + k->melds_with_id[p][j]] = 1;
        uint64_t b = 1ULL << p;
        if (h->m[M_FITS] & b)
            out[LAY_SET_BASE + p] = 1;
        if (h->m[M_FITS + 1] & b)
            out[LAY_LOW_BASE + p] = 1;
        if (h->m[M_FITS + 2] & b)
            out[LAY_HIGH_BASE + p] = 1;
        return 0;
    }
    for (uint64_t held = hand; held; held &= held - 1)
        out[DISCARD_BASE + __builtin_ctzll(held)] = 1;
    uint64_t t = hand & (hand >> 1) & (hand >> 2) & k->run_start_bits;
    for (; t; t &= t - 1)
        out[MELD_BASE + k->run_at_bit[__builtin_ctzll(t)]] = 1;
    t = hand & (hand >> 11) & (hand >> 12) & RANK_REPEAT;
    for (; t; t &= t - 1)
        out[MELD_BASE + k->qka_at_bit[__builtin_ctzll(t)]] = 1;
    uint64_t a = hand & R5_SUIT_BITS, b = (hand >> 13) & R5_SUIT_BITS, c = (hand >> 26) & R5_SUIT_BITS,
             d = (hand >> 39) & R5_SUIT_BITS;
    uint64_t three = (a & b & (c | d)) | (c & d & (a | b));
    for (; three; three &= three - 1) {
        int rank = __builtin_ctzll(three);
        int pattern = (int)((a >> rank & 1) | (b >> rank & 1) << 1 | (c >> rank & 1) << 2 |
                            (d >> rank & 1) << 3);
        for (int j = 0; j < 4 && k->set_ids[rank][pattern][j] >= 0; j++)
            out[MELD_BASE + k->set_ids[rank][pattern][j]] = 1;
    }
    for (uint64_t lay = hand & h->m[M_ANY]; lay; lay &= lay - 1) {
        int card = __builtin_ctzll(lay);
        uint64_t low = 1ULL << card;
        if (h->m[M_FITS] & low)
            out[LAY_SET_BASE + card] = 1;
        if (h->m[M_FITS + 1] & low)
            out[LAY_LOW_BASE + card] = 1;
        if (h->m[M_FITS + 2] & low)
            out[LAY_HIGH_BASE + card] = 1;
    }
    return 0;
}

/* ------------------------------------------------------------------ the moves */

/* buf's numbers: [0, stock, discard pile, turn], then per seat block 0 to act, 1 dealer, 2 hand
 * size, 3 table points, 4 totals */
static float *scalars(Rummy500Kernel *k, Hand *h) { return h->v; }
static float *seat_row(Rummy500Kernel *k, Hand *h, int block) {
    return h->v + 4 + block * k->players;
}

/* Rummy500Game._finish: each seat's hand value, the points, the reason. Answers 2. */
static int finish(Rummy500Kernel *k, PyObject *state, Hand *h, PyObject *reason) {
    npy_intp n = k->players;
    PyObject *values = PyList_New(n), *points = PyArray_SimpleNew(1, &n, NPY_FLOAT64);
    if (!values || !points)
        goto fail;
    double *p = (double *)PyArray_DATA((PyArrayObject *)points);
    for (long seat = 0; seat < n; seat++) {
        uint64_t hand = h->hands[seat];
        long earned = (long)h->points[seat];
        const uint8_t *counts = row(k, h, (int)seat);
        long value = 0;
        for (; hand; hand &= hand - 1) {
            int card = __builtin_ctzll(hand);
            value += k->card_value[card] * counts[card];
        }
        PyObject *v = PyLong_FromLong(value);
        if (!v)
            goto fail;
        PyList_SET_ITEM(values, seat, v);
        p[seat] = (double)(earned - value);
    }
    int failed = slot_set(&k->slots, state, S_HAND_VALUES, values) < 0 ||
                 slot_set(&k->slots, state, S_POINTS, points) < 0 ||
                 slot_set(&k->slots, state, S_END_REASON, reason) < 0 ||
                 slot_set(&k->slots, state, S_OVER, Py_True) < 0 ||
                 slot_set(&k->slots, state, S_MASK_CACHE, Py_None) < 0;
    Py_DECREF(values);
    Py_DECREF(points);
    return failed ? -1 : 2;
fail:
    Py_XDECREF(values);
    Py_XDECREF(points);
    return -1;
}

/* One copy of ``card`` into (delta 1) or out of (-1) the seat's hand (_add / _remove). */
static int move_card(Rummy500Kernel *k, Hand *h, long seat, int card, int delta) {
    uint8_t *counts = row(k, h, (int)seat);
    long size = h->sizes[seat] + delta, count = counts[card] + delta;
    if (count < 0 || count > k->decks || size < 0 || size > R5_CARDS * k->decks)
        return bad_state();
    counts[card] = (uint8_t)count;
    if (delta > 0 && count == 1)
        h->hands[seat] |= 1ULL << card;
    else if (delta < 0 && count == 0)
        h->hands[seat] &= ~(1ULL << card);
    if (delta < 0) {
        uint8_t *known = row(k, h, k->row_known + (int)seat) + card;
        if (*known)
            --*known;
    }
    h->sizes[seat] = (uint8_t)size;
    seat_row(k, h, 2)[seat] = (float)((double)size / R5_CARDS);
    return 0;
}

/* Rummy500Game._discard, up to the next seat's turn (or the hand's end). */
static int discard(Rummy500Kernel *k, PyObject *state, Hand *h, int card) {
    long seat = h->current;
    Py_ssize_t piled = PyList_GET_SIZE(h->pile);
    uint8_t *top = row(k, h, k->row_top), *pile = row(k, h, k->row_pile);
    uint8_t *low = k->row_pile_low >= 0 ? row(k, h, k->row_pile_low) : NULL;
    int count = (pile[card] != 0) + (low && low[card]); /* copies in the pile */
    long old = -1; /* the top card before */
    if (piled >= (Py_ssize_t)R5_CARDS * k->decks || count >= k->decks)
        return bad_state();
    if ((piled && card_of(h->pile, piled - 1, &old) < 0) || move_card(k, h, seat, card, -1) < 0)
        return -1;
    if (old >= 0)
        top[old] = 0;
    PyObject *c = PyLong_FromLong(card);
    if (!c)
        return -1;
    int appended = PyList_Append(h->pile, c);
    Py_DECREF(c);
    if (appended < 0)
        return -1;
    top[card] = 1;
    if (count) { /* the other copy is in the pile already and becomes the lower one */
        low[card] = pile[card];
        h->m[M_DOUBLE] |= 1ULL << card;
    }
    h->m[M_PILE] |= 1ULL << card;
    pile[card] = (uint8_t)(piled + 1);
    scalars(k, h)[2] = (float)((double)(piled + 1) * k->inv_cards);
    long size = h->sizes[seat];
    h->turn++;
    if (slot_set_long(&k->slots, state, S_TURN, h->turn) < 0)
        return -1;
    scalars(k, h)[3] = (float)((double)h->turn * k->inv_turns);
    if (!size) { /* went out */
        if (slot_set_long(&k->slots, state, S_WENT_OUT, seat) < 0)
            return -1;
        return finish(k, state, h, k->end_out);
    }
    long next = (seat + 1) % k->players;
    seat_row(k, h, 0)[seat] = 0.0f;
    seat_row(k, h, 0)[next] = 1.0f;
    h->current = next;
    h->phase = 0;
    if (slot_set_long(&k->slots, state, S_CURRENT, next) < 0 ||
        slot_set(&k->slots, state, S_PHASE, k->phases[0]) < 0)
        return -1;
    if (h->stock_pos >= PyList_GET_SIZE(h->stock)) { /* the stock is gone */
        if (k->end_after_stock)
            return finish(k, state, h, k->end_stock);
        npy_intp size = R5_ACTIONS;
        PyObject *mask = PyArray_SimpleNew(1, &size, NPY_INT8);
        if (!mask)
            return -1;
        npy_int8 *m = (npy_int8 *)PyArray_DATA((PyArrayObject *)mask);
        int any = 0;
        if (legal_into(k, h, m) < 0) {
            Py_DECREF(mask);
            return -1;
        }
        for (int a = DIG_BASE; a < MELD_BASE; a++)
            any |= m[a];
        int r = any ? slot_set(&k->slots, state, S_MASK_CACHE, mask) : 0;
        Py_DECREF(mask);
        if (r < 0)
            return -1;
        if (!any)
            return finish(k, state, h, k->end_stock);
    }
    return h->turn >= k->max_turns ? 2 : 1;
}

/* ------------------------------------------------------------------ digs, melds, lay-offs */

/* The table's melds (new references): the runs and the sets. */
typedef struct {
    PyObject *runs, *sets;
} Table;

static void table_release(Table *t) {
    Py_CLEAR(t->runs);
    Py_CLEAR(t->sets);
}

static int table_read(Rummy500Kernel *k, PyObject *state, Table *t) {
    memset(t, 0, sizeof(Table));
    const char *name = "500 Rum";
    if (!(t->runs = slot_list(&k->slots, state, S_RUNS, name)) ||
        !(t->sets = slot_list(&k->slots, state, S_SETS, name))) {
        table_release(t);
        return -1;
    }
    return 0;
}

/* The list at index i of a list of lists (the runs, the sets, a meld's owners). */
static PyObject *inner_list(PyObject *lists, Py_ssize_t i, Py_ssize_t size) {
    PyObject *list = PyList_GET_ITEM(lists, i);
    if (!PyList_CheckExact(list) || (size >= 0 && PyList_GET_SIZE(list) != size)) {
        bad_state();
        return NULL;
    }
    return list;
}

/* Meld j of the runs or the sets (a list of ``size``) where its first item (a run's suit, a
 * set's rank) is ``of``, else NULL (*meld; -1 on error). */
static int meld_of(PyObject *melds, Py_ssize_t j, Py_ssize_t size, long of, PyObject **meld) {
    long first;
    *meld = inner_list(melds, j, size);
    if (!*meld || list_long(*meld, 0, &first) < 0)
        return -1;
    if (first != of)
        *meld = NULL;
    return 0;
}

/* Run j of the table where it is of ``suit`` (*run, else NULL) and its ends, checked (-1 on
 * error). */
static int run_of(PyObject *runs, Py_ssize_t j, long suit, PyObject **run, long *lo, long *hi) {
    if (meld_of(runs, j, 4, suit, run) < 0 ||
        (*run && (list_long(*run, 1, lo) < 0 || list_long(*run, 2, hi) < 0)))
        return -1;
    return *run && (*lo < 0 || *hi > 13 || *lo > *hi) ? bad_state() : 0;
}

/* Points laid on the table by the seat (_score_play). */
static int score_play(Rummy500Kernel *k, Hand *h, long seat, long value) {
    long points = (long)h->points[seat] + value;
    h->points[seat] = (uint64_t)points;
    seat_row(k, h, 3)[seat] = (float)((double)points / 100.0);
    return 0;
}

/* The lay-off targets become new[] (_set_fits): the fit planes where they changed. */
static int set_fits(Rummy500Kernel *k, PyObject *state, Hand *h, const uint64_t *new) {
    for (int r = 0; r < 3; r++) {
        uint8_t *fit = row(k, h, k->row_fits + r);
        for (uint64_t changed = h->m[M_FITS + r] ^ new[r]; changed; changed &= changed - 1) {
            int card = __builtin_ctzll(changed);
            fit[card] = new[r] >> card & 1;
        }
        h->m[M_FITS + r] = new[r];
    }
    h->m[M_ANY] = new[0] | new[1] | new[2];
    return 0;
}

/* Where cards of ``rank`` could be laid off on sets (_refresh_set_fits). */
static int refresh_set_fits(Rummy500Kernel *k, PyObject *state, Hand *h, Table *t, int rank) {
    uint64_t fit = 0;
    for (Py_ssize_t j = 0; j < PyList_GET_SIZE(t->sets); j++) {
        PyObject *group;
        long suits;
        if (meld_of(t->sets, j, 3, rank, &group) < 0 || (group && list_long(group, 1, &suits) < 0))
            return -1;
        if (!group)
            continue;
        for (int suit = 0; suit < 4; suit++)
            if (!(suits >> suit & 1))
                fit |= 1ULL << (suit * R5_RANKS + rank);
    }
    uint64_t new[3] = {(h->m[M_FITS] & ~(RANK_REPEAT << rank)) | fit, h->m[M_FITS + 1], h->m[M_FITS + 2]};
    return set_fits(k, state, h, new);
}

/* Which cards of ``suit`` could extend a run below or above (_refresh_run_fits). */
static int refresh_run_fits(Rummy500Kernel *k, PyObject *state, Hand *h, Table *t, int suit) {
    uint64_t low = 0, high = 0;
    for (Py_ssize_t j = 0; j < PyList_GET_SIZE(t->runs); j++) {
        PyObject *run;
        long lo, hi;
        if (run_of(t->runs, j, suit, &run, &lo, &hi) < 0)
            return -1;
        if (!run)
            continue;
        if (lo >= 1 && !(lo == 1 && hi == 13))
            low |= 1ULL << (suit * R5_RANKS + (lo - 1) % R5_RANKS);
        if (hi <= 12 && !(hi == 12 && lo == 0))
            high |= 1ULL << (suit * R5_RANKS + (hi + 1) % R5_RANKS);
    }
    uint64_t keep = ~(R5_SUIT_BITS << (suit * R5_RANKS));
    uint64_t new[3] = {h->m[M_FITS], (h->m[M_FITS + 1] & keep) | low, (h->m[M_FITS + 2] & keep) | high};
    return set_fits(k, state, h, new);
}

static int clear_pending(Rummy500Kernel *k, PyObject *state, Hand *h) {
    row(k, h, k->row_pending)[h->pending] = 0;
    h->pending = -1;
    return slot_set_long(&k->slots, state, S_PENDING, -1);
}

/* What follows a meld or a lay-off of the seat: going out where its hand is empty. */
static int after_play(Rummy500Kernel *k, PyObject *state, Hand *h, long seat) {
    if (h->sizes[seat])
        return 1;
    h->turn++;
    if (slot_set_long(&k->slots, state, S_TURN, h->turn) < 0 ||
        slot_set_long(&k->slots, state, S_WENT_OUT, seat) < 0)
        return -1;
    scalars(k, h)[3] = (float)((double)h->turn * k->inv_turns);
    return finish(k, state, h, k->end_out);
}

/* A list of ``count`` copies of ``value`` (new). */
static PyObject *filled_list(Py_ssize_t count, long value) {
    PyObject *list = PyList_New(count);
    for (Py_ssize_t i = 0; list && i < count; i++) {
        PyObject *v = PyLong_FromLong(value);
        if (!v) {
            Py_CLEAR(list);
            break;
        }
        PyList_SET_ITEM(list, i, v);
    }
    return list;
}

/* Meld ``m`` of the table from the seat's hand (_meld), where legal now. */
static int play_meld(Rummy500Kernel *k, PyObject *state, Hand *h, int m) {
    long seat = h->current;
    uint64_t hand = h->hands[seat], cards = 0;
    for (int j = 0; j < 3; j++)
        cards |= 1ULL << k->meld_cards[m][j];
    if (cards & ~hand || (h->pending >= 0 && !(cards >> h->pending & 1)))
        return 0;
    Table t;
    if (table_read(k, state, &t) < 0)
        return -1;
    int result = -1, run = k->meld_suit[m] >= 0;
    PyObject *owners = NULL, *meld = NULL;
    for (int j = 0; j < 3; j++) {
        int card = k->meld_cards[m][j];
        if (move_card(k, h, seat, card, -1) < 0 ||
            count_up(k, row(k, h, k->row_laid + (int)seat) + card) < 0)
            goto done;
    }
    if (!(owners = filled_list(run ? 14 : 4, -1)))
        goto done;
    long mask = 0;
    for (int j = 0; j < 3; j++) {
        if (list_set_long(owners, k->meld_positions[m][j], seat) < 0)
            goto done;
        mask |= 1L << k->meld_positions[m][j];
        if (run && count_up(k, row(k, h, k->row_runs) + k->meld_cards[m][j]) < 0)
            goto done;
    }
    if (run)
        meld = Py_BuildValue("[iiiO]", k->meld_suit[m], k->meld_positions[m][0],
                             k->meld_positions[m][2], owners);
    else
        meld = Py_BuildValue("[ilO]", k->meld_rank[m], mask, owners);
    if (!meld || PyList_Append(run ? t.runs : t.sets, meld) < 0 ||
        score_play(k, h, seat, k->meld_value[m]) < 0 ||
        (h->pending >= 0 && (cards >> h->pending & 1) && clear_pending(k, state, h) < 0) ||
        (run ? refresh_run_fits(k, state, h, &t, k->meld_suit[m])
             : refresh_set_fits(k, state, h, &t, k->meld_rank[m])) < 0)
        goto done;
    result = after_play(k, state, h, seat);
done:
    Py_XDECREF(owners);
    Py_XDECREF(meld);
    table_release(&t);
    return result;
}

/* Lay off ``card`` on a set (kind 0), below a run (1) or above one (2) (_lay_off), where legal
 * now. */
static int play_lay_off(Rummy500Kernel *k, PyObject *state, Hand *h, int card, int kind) {
    long seat = h->current;
    uint64_t hand = h->hands[seat];
    if (!(hand >> card & 1) || !(h->m[M_FITS + kind] >> card & 1) ||
        (h->pending >= 0 && h->pending != card))
        return 0;
    Table t;
    if (table_read(k, state, &t) < 0)
        return -1;
    int result = -1, rank = card % R5_RANKS, suit = card / R5_RANKS;
    long value = k->card_value[card];
    PyObject *target = NULL;
    if (kind == 0) {
        for (Py_ssize_t j = 0; j < PyList_GET_SIZE(t.sets) && !target; j++) {
            PyObject *group;
            long suits;
            if (meld_of(t.sets, j, 3, rank, &group) < 0 ||
                (group && list_long(group, 1, &suits) < 0))
                goto done;
            if (group && !(suits >> suit & 1))
                target = group;
        }
        PyObject *owners = target ? inner_list(target, 2, 4) : NULL;
        long suits;
        if (!owners || list_long(target, 1, &suits) < 0 ||
            list_set_long(target, 1, suits | 1L << suit) < 0 ||
            list_set_long(owners, suit, seat) < 0)
            goto done;
    } else {
        int pos = kind == 1 ? rank : (rank == 0 ? 13 : rank);
        long best = 0;
        for (Py_ssize_t j = 0; j < PyList_GET_SIZE(t.runs); j++) {
            PyObject *run;
            long lo, hi;
            if (run_of(t.runs, j, suit, &run, &lo, &hi) < 0)
                goto done;
            if (!run)
                continue;
            /* below: the shortest run keeps the others' ends open (min by its high end); above:
             * max by its low end; the first of equals */
            if (kind == 1 && lo == pos + 1 && !(pos == 0 && hi == 13) && (!target || hi < best)) {
                target = run;
                best = hi;
            } else if (kind == 2 && hi == pos - 1 && !(pos == 13 && lo == 0) &&
                       (!target || lo > best)) {
                target = run;
                best = lo;
            }
        }
        PyObject *owners = target ? inner_list(target, 3, 14) : NULL;
        if (!owners || list_set_long(target, kind == 1 ? 1 : 2, pos) < 0 ||
            list_set_long(owners, pos, seat) < 0)
            goto done;
        if (kind == 1 && pos == 0)
            value = 1; /* the ace low */
        if (count_up(k, row(k, h, k->row_runs) + card) < 0)
            goto done;
    }
    if (move_card(k, h, seat, card, -1) < 0)
        goto done;
    if (count_up(k, row(k, h, k->row_laid + (int)seat) + card) < 0)
        goto done;
    if (score_play(k, h, seat, value) < 0 ||
        (h->pending == card && clear_pending(k, state, h) < 0) ||
        (kind == 0 ? refresh_set_fits(k, state, h, &t, rank)
                   : refresh_run_fits(k, state, h, &t, suit)) < 0)
        goto done;
    result = after_play(k, state, h, seat);
done:
    if (!target && !PyErr_Occurred())
        bad_state(); /* the fit planes name a target the table does not have */
    table_release(&t);
    return result;
}

/* Dig to ``card`` (its topmost copy, or the one under it when ``deep``) (_dig), where legal. */
static int play_dig(Rummy500Kernel *k, PyObject *state, Hand *h, int card, int deep) {
    long seat = h->current;
    uint64_t top, lower;
    if (dig_options(k, h, seat, &top, &lower) < 0)
        return -1;
    if (!((deep ? lower : top) >> card & 1))
        return 0;
    Py_ssize_t size = PyList_GET_SIZE(h->pile), index = -1;
    for (Py_ssize_t i = size - 1, copies = deep ? 2 : 1; i >= 0 && copies; i--) {
        long c;
        if (card_of(h->pile, i, &c) < 0)
            return -1;
        if (c == card && !--copies)
            index = i;
    }
    if (index < 0)
        return bad_state();
    int taken[2 * R5_CARDS], count = 0;
    for (Py_ssize_t i = index; i < size; i++) {
        long c;
        if (card_of(h->pile, i, &c) < 0)
            return -1;
        taken[count++] = (int)c;
    }
    uint8_t *top_row = row(k, h, k->row_top), *pile_row = row(k, h, k->row_pile);
    uint8_t *low_row = k->row_pile_low >= 0 ? row(k, h, k->row_pile_low) : NULL;
    uint8_t *known = row(k, h, k->row_known + (int)seat);
    /* the copies of each card the pile keeps: those its places show less those taken */
    int8_t left[R5_CARDS];
    for (int j = 0; j < count; j++)
        left[taken[j]] = (pile_row[taken[j]] != 0) + (low_row && low_row[taken[j]]);
    for (int j = 0; j < count; j++)
        if (--left[taken[j]] < 0)
            return bad_state();
    if (PyList_SetSlice(h->pile, index, size, NULL) < 0)
        return -1;
    top_row[taken[count - 1]] = 0;
    for (int j = 0; j < count; j++) {
        int c = taken[j];
        if (!left[c]) {
            pile_row[c] = 0;
            h->m[M_PILE] &= ~(1ULL << c);
            if (low_row)
                low_row[c] = 0;
        } else { /* the lower copy stays: it becomes the topmost one */
            if (!low_row)
                return bad_state();
            pile_row[c] = low_row[c];
            low_row[c] = 0;
        }
        h->m[M_DOUBLE] &= ~(1ULL << c);
        if (move_card(k, h, seat, c, 1) < 0 || count_up(k, known + c) < 0)
            return -1;
    }
    Py_ssize_t piled = PyList_GET_SIZE(h->pile);
    if (piled) {
        long c;
        if (card_of(h->pile, piled - 1, &c) < 0)
            return -1;
        top_row[c] = 1;
    }
    scalars(k, h)[2] = (float)((double)piled * k->inv_cards);
    if (!(k->free_top && index == size - 1)) {
        h->pending = card;
        row(k, h, k->row_pending)[card] = 1;
        if (slot_set_long(&k->slots, state, S_PENDING, card) < 0)
            return -1;
    }
    h->phase = 1;
    return slot_set(&k->slots, state, S_PHASE, k->phases[1]) < 0 ? -1 : 1;
}

/* Play ``action`` if it is a move played here and legal now: 1 when played and the hand goes on,
 * 2 when played and the hand is over or at the turn cap, 0 when left to the Python code
 * (nothing changed), -1 on error. */
static int play_move(Rummy500Kernel *k, PyObject *state, Hand *h, long action) {
    long seat = h->current;
    if (action == DRAW_STOCK) {
        if (h->phase != 0 || h->stock_pos >= PyList_GET_SIZE(h->stock))
            return 0;
        long card;
        if (card_of(h->stock, h->stock_pos, &card) < 0)
            return -1;
        h->stock_pos++;
        if (slot_set_long(&k->slots, state, S_STOCK_POS, h->stock_pos) < 0 ||
            slot_set(&k->slots, state, S_MASK_CACHE, Py_None) < 0)
            return -1;
        scalars(k, h)[1] =
            (float)((double)(PyList_GET_SIZE(h->stock) - h->stock_pos) * k->inv_cards);
        if (move_card(k, h, seat, (int)card, 1) < 0)
            return -1;
        h->phase = 1;
        return slot_set(&k->slots, state, S_PHASE, k->phases[1]) < 0 ? -1 : 1;
    }
    if (action == PASS) {
        if (h->phase != 0 || h->stock_pos < PyList_GET_SIZE(h->stock))
            return 0;
        return slot_set(&k->slots, state, S_MASK_CACHE, Py_None) < 0
                   ? -1
                   : finish(k, state, h, k->end_pass);
    }
    if (action < DIG_BASE || action >= R5_ACTIONS)
        return 0;
    if (action < MELD_BASE) {
        if (h->phase != 0)
            return 0;
        int deep = action >= DIG_DEEP_BASE;
        int played = play_dig(k, state, h, (int)(action - (deep ? DIG_DEEP_BASE : DIG_BASE)), deep);
        return played > 0 && slot_set(&k->slots, state, S_MASK_CACHE, Py_None) < 0 ? -1 : played;
    }
    if (h->phase != 1)
        return 0;
    if (action < DISCARD_BASE) {
        int played = action < LAY_SET_BASE
                         ? play_meld(k, state, h, (int)(action - MELD_BASE))
                         : play_lay_off(k, state, h, (int)((action - LAY_SET_BASE) % R5_CARDS),
                                        (int)((action - LAY_SET_BASE) / R5_CARDS));
        return played > 0 && slot_set(&k->slots, state, S_MASK_CACHE, Py_None) < 0 ? -1 : played;
    }
    if (h->pending >= 0)
        return 0;
    int card = (int)(action - DISCARD_BASE);
    uint64_t hand = h->hands[seat];
    if (!(hand >> card & 1))
        return 0;
    if (slot_set(&k->slots, state, S_MASK_CACHE, Py_None) < 0)
        return -1;
    return discard(k, state, h, card);
}

/* The observation of ``seat`` into out: the match totals written into the buffer unless they
 * are the array written last and read-only, as a match's are (a writeable array may have
 * changed in place since; and at the hand's end), then one gather, then the phase. */
static int observe_into(Rummy500Kernel *k, PyObject *state, Hand *h, long seat, int over,
                        PyObject *totals, float *out) {
    PyObject *last = slot_get(&k->slots, state, S_TOTALS);
    if (!last)
        return -1;
    int fresh = last != totals || over || !PyArray_Check(totals) ||
                PyArray_ISWRITEABLE((PyArrayObject *)totals);
    Py_DECREF(last);
    if (fresh) {
        const double *by_seat;
        if (read_scores(totals, k->players, &by_seat) < 0 ||
            slot_set(&k->slots, state, S_TOTALS, totals) < 0)
            return -1;
        if (k->scores_at >= 0)
            for (int i = 0; i < k->players; i++)
                h->v[k->scores_at + i] = (float)(by_seat[i] / k->score_scale);
    }
    gather_apply(&k->gather, (int)seat, h->v, h->c, out);
    if (seat == h->current && !over)
        out[k->off_phase + (h->phase == 0 ? 0 : h->pending >= 0 ? 1 : 2)] = 1.0f;
    return 0;
}

/* ------------------------------------------------------------------ the deal */

/* A new array('Q') of ``total`` items, a copy of ``template`` (zeros) whose first ``count``
 * items are ``items``. */
static PyObject *new_words(PyObject *template, Py_ssize_t total, const uint64_t *items,
                           Py_ssize_t count) {
    PyObject *out = PySequence_Repeat(template, 1);
    Py_buffer view;
    if (!out || PyObject_GetBuffer(out, &view, PyBUF_WRITABLE) < 0) {
        Py_XDECREF(out);
        return NULL;
    }
    if (view.len != total * (Py_ssize_t)sizeof(uint64_t)) {
        PyBuffer_Release(&view);
        Py_DECREF(out);
        PyErr_SetString(PyExc_ValueError, KERNEL_NAME ": its words template changed size");
        return NULL;
    }
    memcpy(view.buf, items, sizeof(uint64_t) * (size_t)count);
    PyBuffer_Release(&view);
    return out;
}

/* A new bytearray of ``size`` zeros. */
static PyObject *zero_bytes(Py_ssize_t size) {
    PyObject *out = PyByteArray_FromStringAndSize(NULL, size);
    if (out)
        memset(PyByteArray_AS_STRING(out), 0, (size_t)size);
    return out;
}

/* deal(dealer, deck) -> a new hand's state (Rummy500Game.new_hand): hand_size cards to each
 * seat one at a time from the dealer's left, the next card face up, the rest the stock. */
static PyObject *Rummy500Kernel_deal(Rummy500Kernel *k, PyObject *const *args,
                                     Py_ssize_t nargs) {
    long dealer;
    if (deal_args(k->ready, KERNEL_NAME, nargs, args, k->players, &dealer) < 0)
        return NULL;
    const long n = k->players, size = k->hand_size;
    PyArrayObject *deck = (PyArrayObject *)PyArray_FROMANY(args[1], NPY_INT64, 1, 1,
                                                           NPY_ARRAY_CARRAY_RO);
    if (!deck)
        return NULL;
    const int64_t *cards = (const int64_t *)PyArray_DATA(deck);
    npy_intp total = PyArray_DIM(deck, 0);
    int bad = total != (npy_intp)R5_CARDS * k->decks;
    for (npy_intp i = 0; !bad && i < total; i++)
        bad = cards[i] < 0 || cards[i] >= R5_CARDS;
    if (bad) {
        PyErr_Format(PyExc_ValueError, "a 500 Rum deck is %d card ids", R5_CARDS * k->decks);
        Py_DECREF(deck);
        return NULL;
    }
    PyObject *values[NUM_STATE_SLOTS] = {NULL};
    PyObject *state = PyObject_CallNoArgs(k->state_class);
    npy_intp buf_size = k->buf_size, seats = n;
    PyObject *buf = values[S_BUF] = state ? PyArray_ZEROS(1, &buf_size, NPY_FLOAT32, 0) : NULL;
    PyObject *cells = values[S_CELLS] = buf ? zero_bytes(k->cells_size) : NULL;
    if (!cells)
        goto fail;
    float *v = (float *)PyArray_DATA((PyArrayObject *)buf);
    uint8_t *c = (uint8_t *)PyByteArray_AS_STRING(cells);
    /* the deal, one card at a time clockwise from the dealer's left */
    uint64_t bits[R5_MAX_PLAYERS] = {0};
    for (long j = 0; j < n * size; j++) {
        long seat = (dealer + 1 + j) % n;
        int card = (int)cards[j];
        c[seat * R5_CARDS + card]++;
        bits[seat] |= 1ULL << card;
    }
    for (long seat = 0; seat < n; seat++)
        c[k->row_sizes * R5_CARDS + seat] = (uint8_t)size;
    int up = (int)cards[n * size];
    values[S_PILE] = Py_BuildValue("[i]", up);
    uint64_t words[M_HANDS + R5_MAX_PLAYERS] = {[M_PILE] = 1ULL << up};
    memcpy(words + M_HANDS, bits, sizeof(uint64_t) * (size_t)n); /* the table points: 0 */
    values[S_WORDS] = new_words(k->zero_words, M_HANDS + 2 * n, words, M_HANDS + n);
    values[S_STOCK] = PyList_New(total - n * size - 1);
    for (npy_intp j = n * size + 1; values[S_STOCK] && j < total; j++)
        PyList_SET_ITEM(values[S_STOCK], j - n * size - 1, PyLong_FromLong((long)cards[j]));
    values[S_STOCK_POS] = PyLong_FromLong(0);
    values[S_RUNS] = PyList_New(0);
    values[S_SETS] = PyList_New(0);
    values[S_DEALER] = PyLong_FromLong(dealer);
    long current = (dealer + 1) % n;
    values[S_CURRENT] = PyLong_FromLong(current);
    values[S_TURN] = PyLong_FromLong(0);
    values[S_PHASE] = Py_NewRef(k->phases[0]);
    values[S_PENDING] = PyLong_FromLong(-1);
    values[S_OVER] = Py_NewRef(Py_False);
    values[S_POINTS] = PyArray_ZEROS(1, &seats, NPY_FLOAT64, 0);
    values[S_HAND_VALUES] = Py_NewRef(Py_None);
    values[S_WENT_OUT] = PyLong_FromLong(-1);
    values[S_END_REASON] = PyUnicode_FromString("");
    values[S_MASK_CACHE] = Py_NewRef(Py_None);
    values[S_TOTALS] = Py_NewRef(Py_None);
    for (int i = 0; i < NUM_STATE_SLOTS; i++)
        if (!values[i] || slot_set(&k->slots, state, i, values[i]) < 0)
            goto fail;
    /* the planes and numbers the observation shows */
    c[k->row_pile * R5_CARDS + up] = 1;
    c[k->row_top * R5_CARDS + up] = 1;
    float *by_seat = v + 4;
    for (long seat = 0; seat < n; seat++)
        by_seat[2 * n + seat] = (float)((double)size / R5_CARDS);
    v[1] = (float)((double)(total - n * size - 1) * k->inv_cards);
    v[2] = (float)k->inv_cards;
    by_seat[current] = 1.0f;
    by_seat[n + dealer] = 1.0f;
    for (int i = 0; i < NUM_STATE_SLOTS; i++)
        Py_XDECREF(values[i]);
    Py_DECREF(deck);
    return state;
fail:
    if (!PyErr_Occurred())
        PyErr_NoMemory();
    for (int i = 0; i < NUM_STATE_SLOTS; i++)
        Py_XDECREF(values[i]);
    Py_XDECREF(state);
    Py_DECREF(deck);
    return NULL;
}

/* ------------------------------------------------------------------ methods */

static PyObject *Rummy500Kernel_apply(Rummy500Kernel *k, PyObject *const *args, Py_ssize_t nargs) {
    long action;
    if (method_args(k->ready, KERNEL_NAME, nargs, 2, "apply(state, action)", args, &action) < 0)
        return NULL;
    Hand h;
    if (hand_read(k, args[0], &h) < 0)
        return NULL;
    int played = play_move(k, args[0], &h, action);
    hand_release(&h);
    if (played < 0)
        return NULL;
    return PyBool_FromLong(played > 0);
}

/* The mask (Rummy500Game.legal_mask): the one cached at the stock's end, taken once, else a new
 * array. */
static PyObject *mask_of(Rummy500Kernel *k, PyObject *state, Hand *h, int over) {
    PyObject *cached = slot_get(&k->slots, state, S_MASK_CACHE);
    if (!cached)
        return NULL;
    if (cached != Py_None) {
        if (slot_set(&k->slots, state, S_MASK_CACHE, Py_None) < 0)
            Py_CLEAR(cached);
        return cached;
    }
    Py_DECREF(cached);
    npy_intp size = R5_ACTIONS;
    PyObject *out = PyArray_ZEROS(1, &size, NPY_INT8, 0);
    if (out && !over && legal_into(k, h, (npy_int8 *)PyArray_DATA((PyArrayObject *)out)) < 0)
        Py_CLEAR(out);
    return out;
}

static PyObject *Rummy500Kernel_mask(Rummy500Kernel *k, PyObject *state) {
    if (check_ready(k->ready, KERNEL_NAME) < 0)
        return NULL;
    int over = slot_true(&k->slots, state, S_OVER);
    if (over < 0)
        return NULL;
    Hand h;
    if (hand_read(k, state, &h) < 0)
        return NULL;
    PyObject *out = mask_of(k, state, &h, over);
    hand_release(&h);
    return out;
}

static PyObject *Rummy500Kernel_observe(Rummy500Kernel *k, PyObject *const *args,
                                        Py_ssize_t nargs) {
    long seat;
    int is_over;
    if (observe_args(k->ready, KERNEL_NAME, nargs, args, k->players, &seat, &is_over) < 0)
        return NULL;
    Hand h;
    if (hand_read(k, args[0], &h) < 0)
        return NULL;
    npy_intp size = k->obs_size;
    PyObject *out = PyArray_SimpleNew(1, &size, NPY_FLOAT32);
    if (out && observe_into(k, args[0], &h, seat, is_over, args[2],
                            (float *)PyArray_DATA((PyArrayObject *)out)) < 0)
        Py_CLEAR(out);
    hand_release(&h);
    return out;
}

static int write_rows(Rummy500Kernel *k, Batch *b, int64_t i, PyObject *match, PyObject *state,
                      Hand *h, int over) {
    PyObject *totals = slot_get(&k->match_slots, match, MATCH_SEAT_TOTALS);
    if (!totals)
        return -1;
    b->current[i] = h->current;
    int bad = observe_into(k, state, h, h->current, over, totals, b->obs + i * k->obs_size) < 0;
    Py_DECREF(totals);
    if (bad)
        return -1;
    npy_int8 *out = b->masks + i * R5_ACTIONS;
    PyObject *cached = slot_get(&k->slots, state, S_MASK_CACHE);
    if (!cached)
        return -1;
    if (cached == Py_None) { /* the common case: written in place */
        Py_DECREF(cached);
        if (over) {
            memset(out, 0, R5_ACTIONS);
            return 0;
        }
        return legal_into(k, h, out);
    }
    Py_DECREF(cached);
    PyObject *mask = mask_of(k, state, h, over);
    if (!mask)
        return -1;
    if (check_array(mask, NPY_INT8, 1, R5_ACTIONS, 0, 0, "a 500 Rum state's mask_cache") < 0) {
        Py_DECREF(mask);
        return -1;
    }
    memcpy(out, PyArray_DATA((PyArrayObject *)mask), R5_ACTIONS);
    Py_DECREF(mask);
    return 0;
}

/* step() as Game.play_batch describes, and rows() (envs/_native.h). */
KERNEL_BATCH(Rummy500Kernel, R5_ACTIONS)

/* ------------------------------------------------------------------ type */

static PyObject *item(PyObject *layout, const char *key) {
    PyObject *v = PyDict_GetItemString(layout, key);
    if (!v)
        PyErr_Format(PyExc_KeyError, KERNEL_NAME ": missing %s", key);
    return v;
}

/* layout[key]: ``count`` ints within low..high into out. */
static int read_ints(PyObject *layout, const char *key, int *out, int count, long low, long high) {
    PyObject *v = item(layout, key);
    PyObject *seq = v ? PySequence_Fast(v, key) : NULL;
    if (!seq)
        return -1;
    int ok = PySequence_Fast_GET_SIZE(seq) == count;
    for (int i = 0; ok && i < count; i++) {
        long x = PyLong_AsLong(PySequence_Fast_GET_ITEM(seq, i));
        ok = !(x == -1 && PyErr_Occurred()) && x >= low && x <= high;
        out[i] = (int)x;
    }
    Py_DECREF(seq);
    if (!ok && !PyErr_Occurred())
        PyErr_Format(PyExc_ValueError, KERNEL_NAME ": %s is %d ints in %ld..%ld", key, count, low,
                     high);
    return ok ? 0 : -1;
}

static int read_double(PyObject *layout, const char *key, double *out) {
    PyObject *v = item(layout, key);
    if (!v)
        return -1;
    *out = PyFloat_AsDouble(v);
    if (PyErr_Occurred())
        return -1;
    if (!(*out > 0)) {
        PyErr_Format(PyExc_ValueError, KERNEL_NAME ": %s must be > 0", key);
        return -1;
    }
    return 0;
}

/* layout["melds_with"]: per card, its melds' (id, mask) pairs; layout["set_ids"]: per rank and
 * suit pattern, the set meld ids. */
static int read_meld_tables(Rummy500Kernel *k, PyObject *layout) {
    PyObject *v = item(layout, "melds_with");
    PyObject *cards = v ? PySequence_Fast(v, "melds_with") : NULL;
    if (!cards)
        return -1;
    int ok = PySequence_Fast_GET_SIZE(cards) == R5_CARDS;
    for (int c = 0; ok && c < R5_CARDS; c++) {
        PyObject *pairs = PySequence_Fast(PySequence_Fast_GET_ITEM(cards, c), "melds_with");
        ok = pairs && PySequence_Fast_GET_SIZE(pairs) <= 16;
        k->melds_with_count[c] = ok ? (int)PySequence_Fast_GET_SIZE(pairs) : 0;
        for (int j = 0; ok && j < k->melds_with_count[c]; j++) {
            PyObject *pair = PySequence_Fast_GET_ITEM(pairs, j);
            long id = -1;
            ok = PyTuple_Check(pair) && PyTuple_GET_SIZE(pair) == 2 &&
                 (id = PyLong_AsLong(PyTuple_GET_ITEM(pair, 0))) >= 0 && id < R5_MELDS &&
                 as_mask(PyTuple_GET_ITEM(pair, 1), &k->melds_with_mask[c][j]) == 0;
            k->melds_with_id[c][j] = (int)id;
        }
        Py_XDECREF(pairs);
    }
    Py_DECREF(cards);
    v = ok ? item(layout, "set_ids") : NULL;
    PyObject *ranks = v ? PySequence_Fast(v, "set_ids") : NULL;
    ok = ranks && PySequence_Fast_GET_SIZE(ranks) == R5_RANKS;
    memset(k->set_ids, -1, sizeof(k->set_ids));
    for (int r = 0; ok && r < R5_RANKS; r++) {
        PyObject *patterns = PySequence_Fast(PySequence_Fast_GET_ITEM(ranks, r), "set_ids");
        ok = patterns && PySequence_Fast_GET_SIZE(patterns) == 16;
        for (int p = 0; ok && p < 16; p++) {
            PyObject *ids = PySequence_Fast(PySequence_Fast_GET_ITEM(patterns, p), "set_ids");
            ok = ids && PySequence_Fast_GET_SIZE(ids) <= 4;
            for (int j = 0; ok && j < PySequence_Fast_GET_SIZE(ids); j++) {
                long id = PyLong_AsLong(PySequence_Fast_GET_ITEM(ids, j));
                ok = id >= 0 && id < R5_MELDS;
                k->set_ids[r][p][j] = (signed char)id;
            }
            Py_XDECREF(ids);
        }
        Py_XDECREF(patterns);
    }
    Py_XDECREF(ranks);
    if (!ok && !PyErr_Occurred())
        PyErr_SetString(PyExc_ValueError, KERNEL_NAME ": bad melds_with or set_ids");
    return ok ? 0 : -1;
}

/* layout["melds"]: per meld id, (cards, positions, suit, rank, value). */
static int read_melds(Rummy500Kernel *k, PyObject *layout) {
    PyObject *v = item(layout, "melds");
    PyObject *melds = v ? PySequence_Fast(v, "melds") : NULL;
    if (!melds)
        return -1;
    int ok = PySequence_Fast_GET_SIZE(melds) == R5_MELDS;
    for (int m = 0; ok && m < R5_MELDS; m++) {
        int cards[3], positions[3], suit, rank, value;
        ok = PyArg_ParseTuple(PySequence_Fast_GET_ITEM(melds, m), "(iii)(iii)iii", &cards[0],
                              &cards[1], &cards[2], &positions[0], &positions[1], &positions[2],
                              &suit, &rank, &value);
        for (int j = 0; ok && j < 3; j++)
            ok = cards[j] >= 0 && cards[j] < R5_CARDS && positions[j] >= 0 &&
                 positions[j] < (suit >= 0 ? 14 : 4);
        ok = ok && suit >= -1 && suit < 4 && rank >= -1 && rank < R5_RANKS && (suit < 0) != (rank < 0);
        if (ok) {
            memcpy(k->meld_cards[m], cards, sizeof(cards));
            memcpy(k->meld_positions[m], positions, sizeof(positions));
            k->meld_suit[m] = suit;
            k->meld_rank[m] = rank;
            k->meld_value[m] = value;
        }
    }
    Py_DECREF(melds);
    if (!ok) {
        PyErr_Clear();
        PyErr_SetString(PyExc_ValueError, KERNEL_NAME ": melds lists the meld table");
    }
    return ok ? 0 : -1;
}

static int Rummy500Kernel_init(Rummy500Kernel *k, PyObject *args, PyObject *kwds) {
    PyObject *layout;
    static char *kwlist[] = {"layout", NULL};
    if (init_once(k->ready, KERNEL_NAME) < 0)
        return -1;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O!", kwlist, &PyDict_Type, &layout))
        return -1;
    const int big = INT_MAX / 2;
    if (read_int(layout, KERNEL_NAME, "players", &k->players, 2, R5_MAX_PLAYERS) < 0 ||
        read_int(layout, KERNEL_NAME, "decks", &k->decks, 1, 2) < 0 ||
        read_int(layout, KERNEL_NAME, "free_top", &k->free_top, 0, 1) < 0 ||
        read_int(layout, KERNEL_NAME, "end_after_stock", &k->end_after_stock, 0, 1) < 0 ||
        read_int(layout, KERNEL_NAME, "max_turns", &k->max_turns, 1, INT_MAX) < 0 ||
        read_int(layout, KERNEL_NAME, "obs_size", &k->obs_size, 1, big) < 0 ||
        read_int(layout, KERNEL_NAME, "cells_size", &k->cells_size, R5_CARDS, big) < 0 ||
        read_int(layout, KERNEL_NAME, "buf_size", &k->buf_size, 4 + 5 * k->players,
                 4 + 5 * k->players) < 0 ||
        read_int(layout, KERNEL_NAME, "row_pile", &k->row_pile, 0, k->cells_size / R5_CARDS - 1) < 0 ||
        read_int(layout, KERNEL_NAME, "row_pile_low", &k->row_pile_low, -1,
                 k->cells_size / R5_CARDS - 1) < 0 ||
        read_int(layout, KERNEL_NAME, "row_top", &k->row_top, 0, k->cells_size / R5_CARDS - 1) < 0 ||
        read_int(layout, KERNEL_NAME, "row_known", &k->row_known, 0,
                 k->cells_size / R5_CARDS - k->players) < 0 ||
        read_int(layout, KERNEL_NAME, "off_phase", &k->off_phase, 0, k->obs_size - 3) < 0 ||
        read_int(layout, KERNEL_NAME, "scores_at", &k->scores_at, -1,
                 k->buf_size - k->players) < 0 ||
        read_double(layout, "inv_cards", &k->inv_cards) < 0 ||
        read_double(layout, "inv_turns", &k->inv_turns) < 0 ||
        read_double(layout, "score_scale", &k->score_scale) < 0 ||
        read_ints(layout, "card_value", k->card_value, R5_CARDS, 0, 1000) < 0 ||
        read_ints(layout, "run_at_bit", k->run_at_bit, R5_CARDS, -1, R5_MELDS - 1) < 0 ||
        read_ints(layout, "qka_at_bit", k->qka_at_bit, R5_CARDS, -1, R5_MELDS - 1) < 0 ||
        read_meld_tables(k, layout) < 0)
        return -1;
    if (k->cells_size % R5_CARDS) {
        PyErr_SetString(PyExc_ValueError, KERNEL_NAME ": cells_size is rows of 52");
        return -1;
    }
    /* pile places scaled by 1 / (cards in the decks), as Rummy500Game.observe scales them */
    if (gather_read(&k->gather, layout, KERNEL_NAME, "gather", k->players, k->obs_size,
                    k->buf_size, k->cells_size, 0, k->inv_cards) < 0)
        return -1;
    int rows = k->cells_size / R5_CARDS;
    if (read_int(layout, KERNEL_NAME, "row_laid", &k->row_laid, 0, rows - k->players) < 0 ||
        read_int(layout, KERNEL_NAME, "row_runs", &k->row_runs, 0, rows - 1) < 0 ||
        read_int(layout, KERNEL_NAME, "row_fits", &k->row_fits, 0, rows - 3) < 0 ||
        read_int(layout, KERNEL_NAME, "row_pending", &k->row_pending, 0, rows - 1) < 0 ||
        read_int(layout, KERNEL_NAME, "row_sizes", &k->row_sizes, 0, rows - 1) < 0 ||
        read_int(layout, KERNEL_NAME, "hand_size", &k->hand_size, 1, R5_CARDS) < 0 ||
        read_melds(k, layout) < 0)
        return -1;
    if (k->players * k->hand_size + 2 > R5_CARDS * k->decks) {
        PyErr_SetString(PyExc_ValueError, KERNEL_NAME ": the hands leave no stock");
        return -1;
    }
    if (k->players * 3 > rows || (k->decks == 2) != (k->row_pile_low >= 0)) {
        PyErr_SetString(PyExc_ValueError, KERNEL_NAME ": rows outside the planes");
        return -1;
    }
    k->run_start_bits = 0;
    for (int c = 0; c < R5_CARDS; c++)
        if (k->run_at_bit[c] >= 0)
            k->run_start_bits |= 1ULL << c;
    PyObject *ok_table = item(layout, "run_ok");
    if (!ok_table)
        return -1;
    if (!PyBytes_Check(ok_table) || PyBytes_GET_SIZE(ok_table) != R5_RANKS << R5_RANKS) {
        PyErr_SetString(PyExc_ValueError, KERNEL_NAME ": run_ok is 13 x 8192 bytes");
        return -1;
    }
    memcpy(k->run_ok, PyBytes_AS_STRING(ok_table), R5_RANKS << R5_RANKS);
    PyObject *phases = item(layout, "phases"), *reasons = item(layout, "end_reasons");
    PyObject *empty = item(layout, "empty_mask"), *state_class = item(layout, "state_class");
    PyObject *match_class = item(layout, "match_class");
    PyObject *zeros = item(layout, "zero_words");
    if (!phases || !reasons || !empty || !state_class || !match_class || !zeros)
        return -1;
    int words_layout[5], expected[5] = {M_PILE, M_DOUBLE, M_FITS, M_ANY, M_HANDS};
    if (read_ints(layout, "words_layout", words_layout, 5, 0, 64) < 0)
        return -1;
    if (memcmp(words_layout, expected, sizeof(expected))) {
        PyErr_SetString(PyExc_ValueError,
                         KERNEL_NAME ": words_layout is (pile, double, fits, any, hands) as built");
        return -1;
    }
    PyObject *array_module = PyImport_ImportModule("array");
    PyObject *array_type = array_module ? PyObject_GetAttrString(array_module, "array") : NULL;
    Py_XDECREF(array_module);
    if (!array_type)
        return -1;
    int is_array = Py_IS_TYPE(zeros, (PyTypeObject *)array_type);
    Py_DECREF(array_type);
    Py_buffer view; /* an array('Q') of M_HANDS + 2 players zeros */
    Py_ssize_t count = M_HANDS + 2 * k->players;
    if (is_array && PyObject_GetBuffer(zeros, &view, PyBUF_FORMAT) < 0)
        return -1;
    int fits = is_array && view.itemsize == 8 && view.format && !strcmp(view.format, "Q") &&
               view.len == count * 8;
    for (Py_ssize_t b = 0; fits && b < view.len; b++)
        fits = !((const char *)view.buf)[b];
    if (is_array)
        PyBuffer_Release(&view);
    if (!fits) {
        PyErr_Format(PyExc_ValueError, KERNEL_NAME ": zero_words is an array('Q') of %zd zeros",
                     count);
        return -1;
    }
    PyObject *own = PySequence_Repeat(zeros, 1); /* the kernel's own copy */
    if (!own)
        return -1;
    Py_XSETREF(k->zero_words, own);
    if (!PyTuple_Check(phases) || PyTuple_GET_SIZE(phases) != 2 ||
        PyLong_AsLong(PyTuple_GET_ITEM(phases, 0)) != 0 ||
        PyLong_AsLong(PyTuple_GET_ITEM(phases, 1)) != 1 || !PyTuple_Check(reasons) ||
        PyTuple_GET_SIZE(reasons) != 3) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_ValueError, KERNEL_NAME ": phases (2) and end_reasons (3)");
        return -1;
    }
    if (!PyType_Check(state_class)) {
        PyErr_SetString(PyExc_TypeError, KERNEL_NAME ": state_class is Rummy500State");
        return -1;
    }
    Py_INCREF(state_class);
    Py_XSETREF(k->state_class, state_class);
    if (check_array(empty, NPY_INT8, 1, R5_ACTIONS, 0, 0, "empty_mask") < 0 ||
        slots_init(&k->slots, state_class, state_names, NUM_STATE_SLOTS) < 0 ||
        match_slots_init(&k->match_slots, match_class) < 0)
        return -1;
    PyObject **keep[] = {&k->phases[0], &k->phases[1], &k->end_pass, &k->end_stock, &k->end_out,
                         &k->empty_mask};
    PyObject *values[] = {PyTuple_GET_ITEM(phases, 0),  PyTuple_GET_ITEM(phases, 1),
                          PyTuple_GET_ITEM(reasons, 0), PyTuple_GET_ITEM(reasons, 1),
                          PyTuple_GET_ITEM(reasons, 2), empty};
    for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++) {
        Py_INCREF(values[i]);
        Py_XSETREF(*keep[i], values[i]);
    }
    k->ready = 1;
    return 0;
}

static void Rummy500Kernel_dealloc(Rummy500Kernel *k) {
    Py_XDECREF(k->state_class);
    Py_XDECREF(k->zero_words);
    gather_free(&k->gather);
    Py_XDECREF(k->phases[0]);
    Py_XDECREF(k->phases[1]);
    Py_XDECREF(k->end_pass);
    Py_XDECREF(k->end_stock);
    Py_XDECREF(k->end_out);
    Py_XDECREF(k->empty_mask);
    slots_clear(&k->slots);
    slots_clear(&k->match_slots);
    Py_TYPE(k)->tp_free((PyObject *)k);
}

KERNEL_METHODS(Rummy500Kernel,
               {"deal", (PyCFunction)(void (*)(void))Rummy500Kernel_deal, METH_FASTCALL,
                "deal(dealer, deck) -> a new hand's state."}, )

PyTypeObject Rummy500KernelType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "rummyzoo.envs._native.Rummy500Kernel",
    .tp_basicsize = sizeof(Rummy500Kernel),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Rummy500Kernel(layout): 500 Rum's compiled turn for one game config.",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)Rummy500Kernel_init,
    .tp_dealloc = (destructor)Rummy500Kernel_dealloc,
    .tp_methods = Rummy500Kernel_methods,
};
