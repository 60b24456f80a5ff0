/* Knock Rummy's compiled turn (KnockKernel): the moves of a hand that touch no random stream
 * (all but a discard at the stock's end), the legal mask and the observation, on the game's
 * own state objects.
 *
 * KnockRummyGame (envs/knock_rummy/rules.py) holds one kernel per game and calls it from both
 * faces: the AEC env through the game's apply / legal_mask / observe, one state at a time, and
 * the vector engine through step(), every game of a call in one loop, so that no game goes
 * through Python between two of its decisions. The rules' Python code does the rest (the deal,
 * the end of the stock, the turn cap) and is the pure-Python twin of every part here: the test
 * suite runs both and compares them move for move.
 *
 * Moves played here: drawing from the stock, taking the top discard, discarding while the stock
 * stays above the exhaustion threshold, and knocking, up to the showdown's points (the match's
 * totals and the next deal stay with the Python code). A discard at the stock's end is left to
 * the Python code, the state untouched (apply answers False, step lists the game).
 */
#include "_native.h"

#define KNOCK_MAX_PLAYERS 6
#define KNOCK_CARDS 52
#define DRAW_STOCK 0
#define TAKE_DISCARD 1
#define DISCARD_BASE 2
#define KNOCK_BASE (DISCARD_BASE + KNOCK_CARDS)
#define KNOCK_ACTIONS (KNOCK_BASE + KNOCK_CARDS)
#define MAX_VIEW_ROWS (3 * KNOCK_MAX_PLAYERS + 3)

typedef struct {
    PyObject_HEAD
    int ready;      /* 1 once __init__ succeeded (a failed one leaves it 0: the methods refuse) */
    Solver *solver; /* a Solver (owned) */
    int players, knock_limit, allow_taken, void_threshold, max_turns;
    int rummy_bonus, undercut_penalty, penalty_to_winners_only, floor_shares;
    int rows_per_view, obs_size, stock_at, phase_at, turn_at, scores_at; /* scores_at -1: none */
    double score_scale, turn_scale;
    unsigned char view_rows[KNOCK_MAX_PLAYERS][MAX_VIEW_ROWS];
    int to_act_cell[KNOCK_MAX_PLAYERS][KNOCK_MAX_PLAYERS];
    int dealer_cell[KNOCK_MAX_PLAYERS][KNOCK_MAX_PLAYERS];
    PyObject *draw_masks[4]; /* read-only int8 masks by (stock left) + 2 * (discard pile) */
    PyObject *phases[2];     /* the Phase members DRAW and DISCARD, set on the states */
    Slots match_slots;       /* Match's fields */
    Slots slots;             /* KnockState's fields */
} KnockKernel;

/* Attribute names, interned once. */
static PyObject *n_current, *n_planes, *n_stock, *n_stock_pos, *n_discard, *n_bits, *n_taken,
    *n_phase, *n_turn, *n_dealer, *n_knocker, *n_deadwood, *n_melds, *n_winners, *n_points;

enum { S_CURRENT, S_PLANES, S_STOCK, S_STOCK_POS, S_DISCARD, S_BITS, S_TAKEN, S_PHASE, S_TURN, S_DEALER, S_KNOCKER, S_DEADWOOD, S_MELDS, S_WINNERS, S_POINTS, S_OVER, NUM_STATE_SLOTS };
static PyObject **const state_names[NUM_STATE_SLOTS] = {&n_current, &n_planes, &n_stock, &n_stock_pos, &n_discard, &n_bits, &n_taken, &n_phase, &n_turn, &n_dealer, &n_knocker, &n_deadwood, &n_melds, &n_winners, &n_points, &n_over};

int knock_intern_names(void) {
    if (n_current)
        return 0;
    INTERN(n_current, "current")
    INTERN(n_planes, "planes")
    INTERN(n_stock, "stock")
    INTERN(n_stock_pos, "stock_pos")
    INTERN(n_discard, "discard")
    INTERN(n_bits, "bits")
    INTERN(n_taken, "taken")
    INTERN(n_phase, "phase")
    INTERN(n_turn, "turn")
    INTERN(n_dealer, "dealer")
    INTERN(n_knocker, "knocker")
    INTERN(n_deadwood, "deadwood")
    INTERN(n_melds, "melds")
    INTERN(n_winners, "winners")
    INTERN(n_points, "points")
    return 0;
}

/* ------------------------------------------------------------------ state access */

/* What one hand's state holds, read from the state object (new references). */
typedef struct {
    PyObject *planes, *stock, *discard, *bits;
    float *rows; /* the planes' data */
    long current, phase, stock_pos, turn, taken, dealer;
} Hand;

static void hand_release(Hand *h) {
    Py_CLEAR(h->planes);
    Py_CLEAR(h->stock);
    Py_CLEAR(h->discard);
    Py_CLEAR(h->bits);
}

static int hand_read(KnockKernel *k, PyObject *state, Hand *h) {
    memset(h, 0, sizeof(Hand));
    if (slot_long(&k->slots, state, S_CURRENT, &h->current) < 0 || slot_long(&k->slots, state, S_PHASE, &h->phase) < 0 ||
        slot_long(&k->slots, state, S_STOCK_POS, &h->stock_pos) < 0 || slot_long(&k->slots, state, S_TURN, &h->turn) < 0 ||
        slot_long(&k->slots, state, S_TAKEN, &h->taken) < 0 || slot_long(&k->slots, state, S_DEALER, &h->dealer) < 0)
        return -1;
    if (!(h->planes = slot_get(&k->slots, state, S_PLANES)) || check_planes(h->planes, 2) < 0 ||
        !(h->stock = slot_list(&k->slots, state, S_STOCK, "Knock Rummy")) || !(h->discard = slot_list(&k->slots, state, S_DISCARD, "Knock Rummy")) ||
        !(h->bits = slot_list(&k->slots, state, S_BITS, "Knock Rummy")))
        goto fail;
    PyArrayObject *planes = (PyArrayObject *)h->planes;
    if (PyArray_DIM(planes, 0) != 3 * k->players + 3 || PyArray_DIM(planes, 1) != KNOCK_CARDS ||
        !PyArray_ISWRITEABLE(planes) || PyList_GET_SIZE(h->bits) != k->players ||
        h->current < 0 || h->current >= k->players || h->dealer < 0 ||
        h->dealer >= k->players || h->phase < 0 || h->phase > 1 || h->stock_pos < 0 ||
        h->turn < 0 || h->turn >= INT_MAX) {
        PyErr_SetString(PyExc_ValueError, "not a Knock Rummy state of this game");
        goto fail;
    }
    h->rows = (float *)PyArray_DATA(planes);
    return 0;
fail:
    hand_release(h);
    return -1;
}

static int card_at(PyObject *list, Py_ssize_t i, long *card) {
    *card = PyLong_AsLong(PyList_GET_ITEM(list, i));
    if (*card == -1 && PyErr_Occurred())
        return -1;
    if (*card < 0 || *card >= KNOCK_CARDS) {
        PyErr_SetString(PyExc_ValueError, "a Knock Rummy card id is in 0..51");
        return -1;
    }
    return 0;
}

static int hand_bits(Hand *h, long seat, uint64_t *bits) {
    *bits = PyLong_AsUnsignedLongLong(PyList_GET_ITEM(h->bits, seat));
    if (*bits == (uint64_t)-1 && PyErr_Occurred())
        return -1;
    if (*bits >> KNOCK_CARDS) {
        PyErr_SetString(PyExc_ValueError, "a Knock Rummy hand is a 52-bit card mask");
        return -1;
    }
    return 0;
}

static int set_hand_bits(Hand *h, long seat, uint64_t bits) {
    PyObject *v = PyLong_FromUnsignedLongLong(bits);
    return v ? PyList_SetItem(h->bits, seat, v) : -1;
}

/* ------------------------------------------------------------------ the moves */

/* The showdown after ``knocker``'s knock (KnockRummyGame._showdown and score_showdown): each
 * seat's optimal deadwood and melds, the winners (the lowest deadwood; a knocker tying for it
 * leaves the win to the others), and the points, exactly: every value is kept as a numerator
 * over the winners' count where a split share is fractional, and divided once at the end, as
 * Python's float() of a Fraction rounds. Sets deadwood, melds, winners, points, knocker, over. */
static int showdown(KnockKernel *k, PyObject *state, Hand *h, long knocker) {
    const int n = k->players;
    long long deadwood[KNOCK_MAX_PLAYERS], points[KNOCK_MAX_PLAYERS];
    PyObject *dead = PyList_New(n), *melds = PyList_New(n), *winners = NULL, *values = NULL;
    if (!dead || !melds)
        goto fail;
    long long low = 0;
    for (int i = 0; i < n; i++) {
        uint64_t bits, chosen[MAX_CHOSEN + 5];
        int count;
        if (hand_bits(h, i, &bits) < 0)
            goto fail;
        int value = solve_core(k->solver, bits, chosen, &count);
        if (value < 0)
            goto fail;
        deadwood[i] = value;
        low = (i == 0 || value < low) ? value : low;
        PyObject *d = PyLong_FromLong(value), *m = PyTuple_New(count);
        if (d)
            PyList_SET_ITEM(dead, i, d);
        if (m)
            PyList_SET_ITEM(melds, i, m);
        if (!d || !m)
            goto fail;
        for (int j = 0; j < count; j++) {
            PyObject *meld = PyLong_FromUnsignedLongLong(chosen[j]);
            if (!meld)
                goto fail;
            PyTuple_SET_ITEM(m, j, meld);
        }
    }
    int won[KNOCK_MAX_PLAYERS], nwon = 0, knocker_won = 0;
    for (int i = 0; i < n; i++) {
        won[i] = deadwood[i] == low;
        nwon += won[i];
    }
    if (nwon > 1 && won[knocker]) {
        won[knocker] = 0;
        nwon--;
    }
    knocker_won = won[knocker];
    long long pot = 0;
    for (int i = 0; i < n; i++) {
        points[i] = low - deadwood[i];
        pot -= points[i];
    }
    /* pot >= 0: split it among the winners (a numerator over scale where it does not divide) */
    long long scale = 1;
    if (nwon == 1 || pot % nwon == 0 || k->floor_shares) {
        long long share = nwon == 1 ? pot : pot / nwon;
        for (int i = 0; i < n; i++)
            points[i] += won[i] ? share : 0;
    } else {
        scale = nwon;
        for (int i = 0; i < n; i++)
            points[i] = points[i] * scale + (won[i] ? pot : 0);
    }
    long long mine = deadwood[knocker];
    if (mine == 0 && nwon == 1 && knocker_won) {
        for (int i = 0; i < n; i++) {
            if (i != knocker) {
                points[i] -= k->rummy_bonus * scale;
                points[knocker] += k->rummy_bonus * scale;
            }
        }
    }
    for (int i = 0; i < n; i++) {
        if (deadwood[i] < mine && !(k->penalty_to_winners_only && !won[i])) {
            points[knocker] -= k->undercut_penalty * scale;
            points[i] += k->undercut_penalty * scale;
        }
    }
    winners = PyList_New(nwon);
    values = PyList_New(n);
    if (!winners || !values)
        goto fail;
    for (int i = 0, w = 0; i < n; i++) {
        PyObject *v = PyFloat_FromDouble((double)points[i] / (double)scale);
        if (!v)
            goto fail;
        PyList_SET_ITEM(values, i, v);
        if (won[i]) {
            PyObject *seat = PyLong_FromLong(i);
            if (!seat)
                goto fail;
            PyList_SET_ITEM(winners, w++, seat);
        }
    }
    int failed = slot_set_long(&k->slots, state, S_KNOCKER, knocker) < 0 ||
                 slot_set(&k->slots, state, S_DEADWOOD, dead) < 0 ||
                 slot_set(&k->slots, state, S_MELDS, melds) < 0 ||
                 slot_set(&k->slots, state, S_WINNERS, winners) < 0 ||
                 slot_set(&k->slots, state, S_POINTS, values) < 0 ||
                 slot_set(&k->slots, state, S_OVER, Py_True) < 0;
    Py_DECREF(dead);
    Py_DECREF(melds);
    Py_DECREF(winners);
    Py_DECREF(values);
    return failed ? -1 : 0;
fail:
    Py_XDECREF(dead);
    Py_XDECREF(melds);
    Py_XDECREF(winners);
    Py_XDECREF(values);
    return -1;
}

/* Play ``action`` if it is a move played here (see the top of this file): 1 when played (h
 * then describes the state after it), 2 when played and it ended the hand (a knock), 0 when it
 * is left to the Python code (nothing changed), -1 on error. ``turn_cap``: a discard that
 * reaches the match's turn cap is left to the Python code too (the vector engine's step). */
static int play_move(KnockKernel *k, PyObject *state, Hand *h, long action, int turn_cap) {
    const long n = k->players, seat = h->current, top = 3 * n;
    float *rows = h->rows;
    long card;
    uint64_t bits;
    if (action == DRAW_STOCK) {
        if (h->phase != 0 || h->stock_pos >= PyList_GET_SIZE(h->stock) ||
            (turn_cap && h->turn >= k->max_turns))
            return 0;
        if (card_at(h->stock, h->stock_pos, &card) < 0 || hand_bits(h, seat, &bits) < 0)
            return -1;
        rows[seat * KNOCK_CARDS + card] = 1.0f;
        if (set_hand_bits(h, seat, bits | 1ULL << card) < 0 ||
            slot_set_long(&k->slots, state, S_STOCK_POS, h->stock_pos + 1) < 0 ||
            slot_set_long(&k->slots, state, S_TAKEN, -1) < 0 ||
            slot_set(&k->slots, state, S_PHASE, k->phases[1]) < 0)
            return -1;
        h->stock_pos++;
        h->taken = -1;
        h->phase = 1;
        return 1;
    }
    Py_ssize_t piled = PyList_GET_SIZE(h->discard);
    if (action == TAKE_DISCARD) {
        if (h->phase != 0 || piled == 0 || (turn_cap && h->turn >= k->max_turns))
            return 0;
        if (card_at(h->discard, piled - 1, &card) < 0 || hand_bits(h, seat, &bits) < 0)
            return -1;
        long below = -1;
        if (piled > 1 && card_at(h->discard, piled - 2, &below) < 0)
            return -1;
        if (PyList_SetSlice(h->discard, piled - 1, piled, NULL) < 0)
            return -1;
        rows[top * KNOCK_CARDS + card] = 0.0f;
        if (below >= 0) {
            rows[top * KNOCK_CARDS + below] = 1.0f;
            rows[(top + 1) * KNOCK_CARDS + below] = 0.0f;
        }
        rows[seat * KNOCK_CARDS + card] = 1.0f;
        rows[(n + seat) * KNOCK_CARDS + card] = 1.0f;
        if (set_hand_bits(h, seat, bits | 1ULL << card) < 0 ||
            slot_set_long(&k->slots, state, S_TAKEN, card) < 0 ||
            slot_set(&k->slots, state, S_PHASE, k->phases[1]) < 0)
            return -1;
        h->taken = card;
        h->phase = 1;
        return 1;
    }
    if (action < DISCARD_BASE || action >= KNOCK_ACTIONS || h->phase != 1)
        return 0; /* not a move of this phase */
    int knock = action >= KNOCK_BASE;
    if (!knock && (PyList_GET_SIZE(h->stock) - h->stock_pos <= k->void_threshold ||
                   (turn_cap && h->turn + 1 >= k->max_turns)))
        return 0; /* the stock's end or the turn cap: the Python code ends the hand */
    card = action - (knock ? KNOCK_BASE : DISCARD_BASE);
    if (hand_bits(h, seat, &bits) < 0)
        return -1;
    if (!(bits >> card & 1))
        return 0;
    long old = -1;
    if (piled && card_at(h->discard, piled - 1, &old) < 0)
        return -1;
    PyObject *thrown = PyLong_FromLong(card);
    if (!thrown)
        return -1;
    int appended = PyList_Append(h->discard, thrown);
    Py_DECREF(thrown);
    if (appended < 0)
        return -1;
    rows[seat * KNOCK_CARDS + card] = 0.0f;
    rows[(n + seat) * KNOCK_CARDS + card] = 0.0f;
    rows[(2 * n + seat) * KNOCK_CARDS + card] = 1.0f;
    if (old >= 0) {
        rows[top * KNOCK_CARDS + old] = 0.0f;
        rows[(top + 1) * KNOCK_CARDS + old] = 1.0f;
    }
    rows[top * KNOCK_CARDS + card] = 1.0f;
    if (set_hand_bits(h, seat, bits & ~(1ULL << card)) < 0 || slot_set_long(&k->slots, state, S_TAKEN, -1) < 0 ||
        slot_set_long(&k->slots, state, S_TURN, h->turn + 1) < 0)
        return -1;
    h->taken = -1;
    h->turn++;
    if (knock)
        return showdown(k, state, h, seat) < 0 ? -1 : 2;
    if (slot_set_long(&k->slots, state, S_CURRENT, (seat + 1) % n) < 0 ||
        slot_set(&k->slots, state, S_PHASE, k->phases[0]) < 0)
        return -1;
    h->current = (seat + 1) % n;
    h->phase = 0;
    return 1;
}

/* The legal actions of the seat to act in a hand not over: a shared draw mask (*shared, a
 * borrowed reference) or written into out (KNOCK_ACTIONS entries, *shared NULL). */
static int legal_into(KnockKernel *k, Hand *h, npy_int8 *out, PyObject **shared) {
    *shared = NULL;
    if (h->phase == 0) {
        int which = (h->stock_pos < PyList_GET_SIZE(h->stock)) + 2 * (PyList_GET_SIZE(h->discard) > 0);
        *shared = k->draw_masks[which];
        return 0;
    }
    uint64_t hand;
    if (hand_bits(h, h->current, &hand) < 0)
        return -1;
    long excluded = k->allow_taken ? -1 : h->taken;
    memset(out, 0, KNOCK_ACTIONS);
    for (uint64_t rest = hand; rest; rest &= rest - 1) {
        int card = __builtin_ctzll(rest);
        if (card != excluded) {
            out[DISCARD_BASE + card] = 1;
            if (k->knock_limit < 0)
                out[KNOCK_BASE + card] = 1;
        }
    }
    if (k->knock_limit >= 0) {
        int after[64], order[64], count;
        if (deadwood_after(k->solver, hand, after, order, &count) < 0)
            return -1;
        for (int i = 0; i < count; i++) {
            int card = order[i];
            if (after[card] <= k->knock_limit && out[DISCARD_BASE + card])
                out[KNOCK_BASE + card] = 1;
        }
    }
    return 0;
}

/* The observation of ``seat`` into out (obs_size floats); totals: the match totals by seat
 * (read only where the observation shows scores). */
static int observe_into(KnockKernel *k, Hand *h, long seat, int over, PyObject *totals,
                        float *out) {
    const unsigned char *rows = k->view_rows[seat];
    for (int r = 0; r < k->rows_per_view; r++)
        memcpy(out + r * KNOCK_CARDS, h->rows + rows[r] * KNOCK_CARDS, sizeof(float) * KNOCK_CARDS);
    double stock = (double)(PyList_GET_SIZE(h->stock) - h->stock_pos) / KNOCK_CARDS;
    out[k->stock_at] = (float)stock;
    out[k->phase_at + h->phase] = (seat == h->current && !over) ? 1.0f : 0.0f;
    out[k->to_act_cell[seat][h->current]] = 1.0f;
    out[k->dealer_cell[seat][h->dealer]] = 1.0f;
    out[k->turn_at] = (float)((double)h->turn / k->turn_scale);
    if (k->scores_at >= 0) {
        const double *by_seat;
        if (read_scores(totals, k->players, &by_seat) < 0)
            return -1;
        for (long j = 0; j < k->players; j++)
            out[k->scores_at + j] = (float)(by_seat[(seat + j) % k->players] / k->score_scale);
    }
    return 0;
}

/* ------------------------------------------------------------------ methods */

#define KERNEL_NAME "KnockKernel"

static PyObject *KnockKernel_apply(KnockKernel *k, PyObject *const *args, Py_ssize_t nargs) {
    long action;
    if (method_args(k->ready, KERNEL_NAME, nargs, 2, "apply(state, action)", args, &action) < 0)
        return NULL;
    Hand h;
    if (hand_read(k, args[0], &h) < 0)
        return NULL;
    int played = play_move(k, args[0], &h, action, 0);
    hand_release(&h);
    if (played < 0)
        return NULL;
    return PyBool_FromLong(played);
}

static PyObject *KnockKernel_mask(KnockKernel *k, PyObject *state) {
    if (check_ready(k->ready, KERNEL_NAME) < 0)
        return NULL;
    int is_over = slot_true(&k->slots, state, S_OVER);
    if (is_over < 0)
        return NULL;
    if (is_over) {
        Py_INCREF(k->draw_masks[0]);
        return k->draw_masks[0];
    }
    Hand h;
    if (hand_read(k, state, &h) < 0)
        return NULL;
    npy_int8 row[KNOCK_ACTIONS];
    PyObject *shared, *out = NULL;
    if (legal_into(k, &h, row, &shared) == 0) {
        if (shared) {
            Py_INCREF(shared);
            out = shared;
        } else {
            npy_intp size = KNOCK_ACTIONS;
            out = PyArray_SimpleNew(1, &size, NPY_INT8);
            if (out)
                memcpy(PyArray_DATA((PyArrayObject *)out), row, KNOCK_ACTIONS);
        }
    }
    hand_release(&h);
    return out;
}

static PyObject *KnockKernel_observe(KnockKernel *k, PyObject *const *args, Py_ssize_t nargs) {
    long seat;
    int is_over;
    if (observe_args(k->ready, KERNEL_NAME, nargs, args, k->players, &seat, &is_over) < 0)
        return NULL;
    Hand h;
    if (hand_read(k, args[0], &h) < 0)
        return NULL;
    npy_intp size = k->obs_size;
    PyObject *out = PyArray_ZEROS(1, &size, NPY_FLOAT32, 0);
    if (out && observe_into(k, &h, seat, is_over, args[2],
                            (float *)PyArray_DATA((PyArrayObject *)out)) < 0)
        Py_CLEAR(out);
    hand_release(&h);
    return out;
}

/* The hand of a match (a new reference to its state, h read from it), NULL on error. */
static PyObject *match_hand(KnockKernel *k, PyObject *match, Hand *h) {
    PyObject *state = slot_get(&k->match_slots, match, MATCH_STATE);
    if (state && hand_read(k, state, h) < 0)
        Py_CLEAR(state);
    return state;
}

/* Game i's rows (the seat to act, its observation and legal mask) from its hand h. */
static int write_rows(KnockKernel *k, Batch *b, int64_t i, PyObject *match, Hand *h, int over) {
    PyObject *totals = NULL, *shared;
    if (k->scores_at >= 0 && !(totals = slot_get(&k->match_slots, match, MATCH_SEAT_TOTALS)))
        return -1;
    npy_int8 *row = b->masks + i * KNOCK_ACTIONS;
    b->current[i] = h->current;
    int bad = observe_into(k, h, h->current, over, totals, b->obs + i * k->obs_size) < 0;
    Py_XDECREF(totals);
    if (bad)
        return -1;
    if (over) {
        memcpy(row, PyArray_DATA((PyArrayObject *)k->draw_masks[0]), KNOCK_ACTIONS);
        return 0;
    }
    if (legal_into(k, h, row, &shared) < 0)
        return -1;
    if (shared)
        memcpy(row, PyArray_DATA((PyArrayObject *)shared), KNOCK_ACTIONS);
    return 0;
}

/* A move of the vector engine's step (batch_play_fn): a knock is played up to its showdown and
 * left for the caller to finish; a move that reaches the turn cap is left to the Python code. */
static int batch_play(PyObject *kernel, Batch *b, int64_t i, PyObject *match, long action) {
    KnockKernel *k = (KnockKernel *)kernel;
    Hand h;
    PyObject *state = match_hand(k, match, &h);
    if (!state)
        return -1;
    int played = play_move(k, state, &h, action, 1);
    if (played == 1 && write_rows(k, b, i, match, &h, 0) < 0)
        played = -1;
    hand_release(&h);
    Py_DECREF(state);
    return played;
}

static int batch_write_rows(PyObject *kernel, Batch *b, int64_t i, PyObject *match) {
    KnockKernel *k = (KnockKernel *)kernel;
    Hand h;
    PyObject *state = match_hand(k, match, &h);
    if (!state)
        return -1;
    int over = slot_true(&k->slots, state, S_OVER);
    int bad = over < 0 || write_rows(k, b, i, match, &h, over) < 0;
    hand_release(&h);
    Py_DECREF(state);
    return bad ? -1 : 0;
}

/* step(matches, games, actions, observations, action_masks, current) -> (unplayed, ended), as
 * Game.play_batch describes: a knock is played up to its showdown's points and listed in
 * ``ended``; the moves left to the Python code are listed in ``unplayed``. */
static PyObject *KnockKernel_step(KnockKernel *k, PyObject *const *args, Py_ssize_t nargs) {
    return kernel_step((PyObject *)k, k->ready, KERNEL_NAME, args, nargs, k->obs_size, KNOCK_ACTIONS,
                       batch_play, &k->match_slots);
}

/* rows(matches, games, observations, action_masks, current): the rows of each game named, from
 * its match's hand now (as the vector engine writes them after the Python code played). */
static PyObject *KnockKernel_rows(KnockKernel *k, PyObject *const *args, Py_ssize_t nargs) {
    return kernel_rows((PyObject *)k, k->ready, KERNEL_NAME, args, nargs, k->obs_size, KNOCK_ACTIONS,
                       batch_write_rows);
}

/* ------------------------------------------------------------------ type */

static int read_cells(PyObject *dict, const char *key, int players, int cells[][KNOCK_MAX_PLAYERS],
                      int size) {
    PyObject *v = PyDict_GetItemString(dict, key);
    PyObject *outer = v ? PySequence_Fast(v, key) : NULL;
    if (!outer) {
        if (!PyErr_Occurred())
            PyErr_Format(PyExc_KeyError, "KnockKernel: missing %s", key);
        return -1;
    }
    int ok = PySequence_Fast_GET_SIZE(outer) == players;
    for (int viewer = 0; ok && viewer < players; viewer++) {
        PyObject *inner = PySequence_Fast(PySequence_Fast_GET_ITEM(outer, viewer), key);
        ok = inner && PySequence_Fast_GET_SIZE(inner) == players;
        for (int seat = 0; ok && seat < players; seat++) {
            long cell = PyLong_AsLong(PySequence_Fast_GET_ITEM(inner, seat));
            ok = cell >= 0 && cell < size;
            cells[viewer][seat] = (int)cell;
        }
        Py_XDECREF(inner);
    }
    Py_DECREF(outer);
    if (!ok && !PyErr_Occurred())
        PyErr_Format(PyExc_ValueError, "KnockKernel: %s must be players x players cells", key);
    return ok ? 0 : -1;
}

/* KnockKernel(solver, layout): layout is a dict of the game's constants (see
 * KnockRummyGame._native_layout). */
static int KnockKernel_init(KnockKernel *k, PyObject *args, PyObject *kwds) {
    PyObject *solver, *layout;
    static char *kwlist[] = {"solver", "layout", NULL};
    if (init_once(k->ready, KERNEL_NAME) < 0)
        return -1;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O!O!", kwlist, &SolverType, &solver,
                                     &PyDict_Type, &layout))
        return -1;
    int big = INT_MAX;
    if (read_int(layout, KERNEL_NAME, "players", &k->players, 2, KNOCK_MAX_PLAYERS) < 0 ||
        read_int(layout, KERNEL_NAME, "knock_limit", &k->knock_limit, -1, big) < 0 ||
        read_int(layout, KERNEL_NAME, "allow_taken", &k->allow_taken, 0, 1) < 0 ||
        read_int(layout, KERNEL_NAME, "void_threshold", &k->void_threshold, 0, KNOCK_CARDS) < 0 ||
        read_int(layout, KERNEL_NAME, "max_turns", &k->max_turns, 1, INT_MAX) < 0 ||
        read_int(layout, KERNEL_NAME, "rummy_bonus", &k->rummy_bonus, 0, big) < 0 ||
        read_int(layout, KERNEL_NAME, "undercut_penalty", &k->undercut_penalty, 0, big) < 0 ||
        read_int(layout, KERNEL_NAME, "penalty_to_winners_only", &k->penalty_to_winners_only, 0, 1) < 0 ||
        read_int(layout, KERNEL_NAME, "floor_shares", &k->floor_shares, 0, 1) < 0 ||
        read_int(layout, KERNEL_NAME, "stock_at", &k->stock_at, 0, big) < 0 ||
        read_int(layout, KERNEL_NAME, "phase_at", &k->phase_at, 0, big) < 0 ||
        read_int(layout, KERNEL_NAME, "turn_at", &k->turn_at, 0, big) < 0 ||
        read_int(layout, KERNEL_NAME, "scores_at", &k->scores_at, -1, big) < 0)
        return -1;
    PyObject *rows = PyDict_GetItemString(layout, "view_rows");
    PyObject *rows_seq = rows ? PySequence_Fast(rows, "view_rows") : NULL;
    if (!rows_seq) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_KeyError, "KnockKernel: missing view_rows");
        return -1;
    }
    int ok = PySequence_Fast_GET_SIZE(rows_seq) == k->players;
    k->rows_per_view = -1;
    for (int v = 0; ok && v < k->players; v++) {
        PyObject *b = PySequence_Fast_GET_ITEM(rows_seq, v);
        ok = PyBytes_Check(b) && PyBytes_GET_SIZE(b) <= MAX_VIEW_ROWS &&
             (k->rows_per_view < 0 || PyBytes_GET_SIZE(b) == k->rows_per_view);
        for (Py_ssize_t r = 0; ok && r < PyBytes_GET_SIZE(b); r++)
            ok = (unsigned char)PyBytes_AS_STRING(b)[r] < 3 * k->players + 3;
        if (ok) {
            k->rows_per_view = (int)PyBytes_GET_SIZE(b);
            memcpy(k->view_rows[v], PyBytes_AS_STRING(b), (size_t)k->rows_per_view);
        }
    }
    Py_DECREF(rows_seq);
    if (!ok) {
        PyErr_SetString(PyExc_ValueError, "KnockKernel: view_rows must hold one bytes per seat");
        return -1;
    }
    k->obs_size = k->rows_per_view * KNOCK_CARDS;
    if (k->stock_at >= k->obs_size || k->phase_at + 1 >= k->obs_size ||
        k->turn_at >= k->obs_size || k->scores_at + k->players > k->obs_size) {
        PyErr_SetString(PyExc_ValueError, "KnockKernel: a feature lies outside the observation");
        return -1;
    }
    if (read_cells(layout, "to_act_cells", k->players, k->to_act_cell, k->obs_size) < 0 ||
        read_cells(layout, "dealer_cells", k->players, k->dealer_cell, k->obs_size) < 0)
        return -1;
    PyObject *scale = PyDict_GetItemString(layout, "score_scale");
    PyObject *turns = PyDict_GetItemString(layout, "turn_scale");
    k->score_scale = scale ? PyFloat_AsDouble(scale) : -1.0;
    k->turn_scale = turns ? PyFloat_AsDouble(turns) : -1.0;
    if (PyErr_Occurred())
        return -1;
    if (!(k->score_scale > 0) || !(k->turn_scale > 0)) {
        PyErr_SetString(PyExc_ValueError, "KnockKernel: score_scale and turn_scale must be > 0");
        return -1;
    }
    PyObject *masks = PyDict_GetItemString(layout, "draw_masks");
    PyObject *phases = PyDict_GetItemString(layout, "phases");
    if (!masks || !PyList_Check(masks) || PyList_GET_SIZE(masks) != 4 || !phases ||
        !PyTuple_Check(phases) || PyTuple_GET_SIZE(phases) != 2) {
        PyErr_SetString(PyExc_ValueError, "KnockKernel: draw_masks (4) and phases (2) needed");
        return -1;
    }
    for (int i = 0; i < 4; i++) {
        PyObject *m = PyList_GET_ITEM(masks, i);
        if (check_array(m, NPY_INT8, 1, KNOCK_ACTIONS, 0, 0, "a draw mask") < 0)
            return -1;
        Py_INCREF(m);
        Py_XSETREF(k->draw_masks[i], m);
    }
    for (int i = 0; i < 2; i++) {
        PyObject *p = PyTuple_GET_ITEM(phases, i);
        if (PyLong_AsLong(p) != i) {
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_ValueError, "KnockKernel: phases are DRAW (0), DISCARD (1)");
            return -1;
        }
        Py_INCREF(p);
        Py_XSETREF(k->phases[i], p);
    }
    PyObject *match_class = PyDict_GetItemString(layout, "match_class");
    if (!match_class) {
        PyErr_SetString(PyExc_KeyError, "KnockKernel: missing match_class");
        return -1;
    }
    PyObject *state_class = PyDict_GetItemString(layout, "state_class");
    if (!state_class) {
        PyErr_SetString(PyExc_KeyError, "KnockKernel: missing state_class");
        return -1;
    }
    if (match_slots_init(&k->match_slots, match_class) < 0 ||
        slots_init(&k->slots, state_class, state_names, NUM_STATE_SLOTS) < 0)
        return -1;
    Py_INCREF(solver);
    Py_XSETREF(k->solver, (Solver *)solver);
    k->ready = 1;
    return 0;
}

static void KnockKernel_dealloc(KnockKernel *k) {
    Py_XDECREF(k->solver);
    for (int i = 0; i < 4; i++)
        Py_XDECREF(k->draw_masks[i]);
    for (int i = 0; i < 2; i++)
        Py_XDECREF(k->phases[i]);
    slots_clear(&k->match_slots);
    slots_clear(&k->slots);
    Py_TYPE(k)->tp_free((PyObject *)k);
}

KERNEL_METHODS(KnockKernel, )

PyTypeObject KnockKernelType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "rummyzoo.envs._native.KnockKernel",
    .tp_basicsize = sizeof(KnockKernel),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "KnockKernel(solver, layout): Knock Rummy's compiled turn for one game config.",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)KnockKernel_init,
    .tp_dealloc = (destructor)KnockKernel_dealloc,
    .tp_methods = KnockKernel_methods,
};
