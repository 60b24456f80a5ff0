/* Ditch Rummy's compiled turn (DitchKernel): every move (drawing, melds, singles, ditching a card
 * or the whole hand, ending the turn) and the end of a hand they bring (a blind run, the draw
 * pile's end, a stall), the legal mask and the observation, on the game's own state objects.
 *
 * DitchRummyGame (envs/ditch_rummy/rules.py) holds one kernel per game and calls it from both
 * faces, as Knock Rummy's does (envs/_knock.c): the AEC env one state at a time, the vector
 * engine every game of a call in one loop. A move that is not legal now is left to the Python
 * code, the state untouched; that code is the pure-Python twin of every part here, and the test
 * suite runs both and compares them move for move.
 *
 * Cards in hands and in the draw pile are order ids (game rank * 4 + suit); the discard pile and
 * the observation use card ids (see rules.py). Every public fact is written once, in absolute
 * seat order: the card planes into the state's ``bits`` (uint8, 0 or 1), the numbers into its
 * ``flat`` (float32); a seat's observation is gathered from the two (``gather``: its
 * seat-relative order, zeros where its own hand and the phase go), then its hand and the phase
 * are added.
 */
#include "_native.h"

#define DITCH_MAX_PLAYERS 4
#define DITCH_CARDS 52
#define DITCH_MAX_HAND 10
#define DITCH_MAX_DRAW 3
#define MAX_MELD_COMBOS 256 /* combinations of 2 and 3 of 10 positions: 45 + 120 */
#define KERNEL_NAME "DitchKernel"

enum { PHASE_DRAW = 0, PHASE_PLAY = 1, PHASE_DITCH = 2 };
enum { FACT_PILE, FACT_SIZES, FACT_DRAWN, FACT_DISCARD, FACT_TURN, FACT_IDLE, FACT_TO_ACT,
       FACT_SCORES, FACT_HAND_POINTS, FACT_SETS, FACT_RUNS, FACT_SINGLES, FACT_FIT_SET,
       FACT_FIT_BELOW, FACT_FIT_ABOVE, FACT_DEALER, NUM_FACTS };
static const char *fact_keys[NUM_FACTS] = {
    "fl_pile",        "fl_sizes", "fl_drawn", "fl_discard", "fl_turn",
    "fl_idle",        "fl_to_act", "fl_scores", "fl_hand_points", "fl_sets",
    "fl_runs",        "fl_singles", "fl_fit_set", "fl_fit_below", "fl_fit_above", "fl_dealer"};
/* how many facts each block spans: per seat, per card or per seat and card; the per-card ones
 * are card planes (in ``bits``), the others numbers (in ``flat``) */
enum { SPAN_ONE, SPAN_SEATS, SPAN_CARDS, SPAN_SEAT_CARDS };
static const int fact_span[NUM_FACTS] = {SPAN_ONE,   SPAN_SEATS,      SPAN_ONE,       SPAN_CARDS,
                                         SPAN_ONE,   SPAN_ONE,        SPAN_SEATS,     SPAN_SEATS,
                                         SPAN_SEATS, SPAN_SEAT_CARDS, SPAN_SEAT_CARDS,
                                         SPAN_SEAT_CARDS, SPAN_CARDS, SPAN_CARDS, SPAN_CARDS,
                                         SPAN_SEATS};
#define NO_MELD 0
#define SET 1
#define RUN 2
#define ACE 12
#define JACK 9
#define HAND_POINTS_SCALE 100.0

enum { S_CURRENT, S_PHASE, S_HANDS, S_PILE, S_PILE_POS, S_DISCARD, S_DRAWN, S_ACTIVE, S_IDLE, S_TURN, S_FLAT, S_BITS, S_EARNED, S_SET_COUNT, S_BELOW, S_ABOVE, S_POINTS, S_END_REASON, S_ENDED_BY, S_TOTALS, S_MELDS, S_SINGLES, S_OVER, S_DEALER, NUM_STATE_SLOTS };
enum { M_KIND, M_LOW, M_HIGH, M_SUIT, M_ADDED, NUM_MELD_SLOTS };

typedef struct {
    PyObject_HEAD
    int ready; /* 1 once __init__ succeeded (a failed one leaves it 0: the methods refuse) */
    int players, max_hand, max_turns, obs_size, num_actions;
    int meld_base, single_base, single_targets, ditch_base, ditch_all, end_turn;
    int points_set, points_run, same_suit;
    int single_points[DITCH_CARDS]; /* by order id */
    int off_hand, off_pos, off_phase;
    int fact[NUM_FACTS];
    double score_scale;
    int num_combos;
    unsigned char combo_size[MAX_MELD_COMBOS], combo[MAX_MELD_COMBOS][3];
    unsigned char pair_kind[DITCH_CARDS][DITCH_CARDS];
    int penalty[DITCH_CARDS]; /* by order id */
    int card_order[DITCH_CARDS]; /* card id -> order id */
    int flat_size, bits_size;
    Gather gather; /* each seat's observation from the flat buffer */
    PyObject *draw_masks[DITCH_MAX_DRAW + 1], *ditch_masks[DITCH_MAX_HAND + 1], *empty_mask;
    PyObject *phases[3];
    PyObject *end_pile, *end_stall, *end_run; /* the end reasons' strings */
    PyObject *meld_class;                     /* TableMeld */
    Slots slots, meld_slots, match_slots;     /* DitchState's, TableMeld's and Match's fields */
    PyObject *state_class, *flat_template;    /* DitchState, the flat buffer at a deal */
} DitchKernel;

/* order id -> card id (rules.py's ORDER_TO_CARD) */
static int order_card(int o) { return (o & 3) * 13 + ((o >> 2) + 1) % 13; }

static PyObject *n_current, *n_phase, *n_hands, *n_pile, *n_pile_pos, *n_discard, *n_drawn,
    *n_active, *n_idle, *n_turn, *n_flat, *n_bits, *n_earned, *n_set_count, *n_below, *n_above,
    *n_points, *n_end_reason, *n_ended_by, *n_totals, *n_melds, *n_singles, *n_kind, *n_low,
    *n_high, *n_suit, *n_added, *n_dealer;

int ditch_intern_names(void) {
    if (n_current)
        return 0;
    INTERN(n_current, "current")
    INTERN(n_phase, "phase")
    INTERN(n_hands, "hands")
    INTERN(n_pile, "pile")
    INTERN(n_pile_pos, "pile_pos")
    INTERN(n_discard, "discard")
    INTERN(n_drawn, "drawn")
    INTERN(n_active, "active")
    INTERN(n_idle, "idle")
    INTERN(n_turn, "turn")
    INTERN(n_flat, "flat")
    INTERN(n_bits, "bits")
    INTERN(n_earned, "earned")
    INTERN(n_set_count, "set_count")
    INTERN(n_below, "below")
    INTERN(n_above, "above")
    INTERN(n_points, "points")
    INTERN(n_end_reason, "end_reason")
    INTERN(n_ended_by, "ended_by")
    INTERN(n_totals, "totals")
    INTERN(n_melds, "melds")
    INTERN(n_singles, "singles")
    INTERN(n_kind, "kind")
    INTERN(n_low, "low")
    INTERN(n_high, "high")
    INTERN(n_suit, "suit")
    INTERN(n_added, "added")
    INTERN(n_dealer, "dealer")
    return 0;
}

static PyObject **const state_names[NUM_STATE_SLOTS] = {
    &n_current, &n_phase, &n_hands,   &n_pile,     &n_pile_pos,   &n_discard, &n_drawn, &n_active,
    &n_idle,    &n_turn,  &n_flat, &n_bits,   &n_earned,   &n_set_count,  &n_below,   &n_above, &n_points,
    &n_end_reason, &n_ended_by, &n_totals, &n_melds, &n_singles, &n_over, &n_dealer};
static PyObject **const meld_names[NUM_MELD_SLOTS] = {&n_kind, &n_low, &n_high, &n_suit, &n_added};

/* ------------------------------------------------------------------ state access */

/* What one hand's state holds, read from the state object (new references). */
typedef struct {
    PyObject *hands, *pile, *discard, *flat, *bits;
    float *v;   /* the numbers' data (flat) */
    uint8_t *b; /* the card planes' data (bits) */
    long current, phase, pile_pos, drawn, idle, turn;
    int active;
    int hand[DITCH_MAX_HAND], size; /* the hand of the seat to act (order ids, sorted) */
} Hand;

static void hand_release(Hand *h) {
    Py_CLEAR(h->hands);
    Py_CLEAR(h->pile);
    Py_CLEAR(h->discard);
    Py_CLEAR(h->flat);
    Py_CLEAR(h->bits);
}

static int bad_state(void) {
    PyErr_SetString(PyExc_ValueError, "not a Ditch Rummy state of this game");
    return -1;
}

/* The hand of ``seat`` (a tuple of sorted order ids) into cards / size. */
static int read_seat_hand(DitchKernel *k, Hand *h, long seat, int *cards, int *size) {
    PyObject *t = PyList_GET_ITEM(h->hands, seat);
    if (!PyTuple_CheckExact(t)) {
        PyErr_SetString(PyExc_TypeError, "a Ditch Rummy hand must be a tuple");
        return -1;
    }
    Py_ssize_t n = PyTuple_GET_SIZE(t);
    if (n > k->max_hand)
        return bad_state();
    for (Py_ssize_t i = 0; i < n; i++) {
        long o;
        if (int_value(PyTuple_GET_ITEM(t, i), &o) < 0)
            return -1;
        if (o < 0 || o >= DITCH_CARDS || (i && o <= cards[i - 1])) {
            PyErr_SetString(PyExc_ValueError, "a Ditch Rummy hand holds sorted order ids 0..51");
            return -1;
        }
        cards[i] = (int)o;
    }
    *size = (int)n;
    return 0;
}

static int hand_read(DitchKernel *k, PyObject *state, Hand *h) {
    memset(h, 0, sizeof(Hand));
    PyObject *active = NULL;
    if (slot_long(&k->slots, state, S_CURRENT, &h->current) < 0 || slot_long(&k->slots, state, S_PHASE, &h->phase) < 0 ||
        slot_long(&k->slots, state, S_PILE_POS, &h->pile_pos) < 0 || slot_long(&k->slots, state, S_DRAWN, &h->drawn) < 0 ||
        slot_long(&k->slots, state, S_IDLE, &h->idle) < 0 || slot_long(&k->slots, state, S_TURN, &h->turn) < 0 ||
        !(active = slot_get(&k->slots, state, S_ACTIVE)))
        return -1;
    h->active = PyObject_IsTrue(active);
    Py_DECREF(active);
    if (h->active < 0)
        return -1;
    if (!(h->hands = slot_list(&k->slots, state, S_HANDS, "Ditch Rummy")) ||
        !(h->pile = slot_list(&k->slots, state, S_PILE, "Ditch Rummy")) ||
        !(h->discard = slot_list(&k->slots, state, S_DISCARD, "Ditch Rummy")) ||
        !(h->flat = slot_get(&k->slots, state, S_FLAT)) ||
        !(h->bits = slot_get(&k->slots, state, S_BITS)))
        goto fail;
    if (check_array(h->flat, NPY_FLOAT32, 1, k->flat_size, 0, 1, "a Ditch Rummy state's flat") < 0 ||
        check_array(h->bits, NPY_UINT8, 1, k->bits_size, 0, 1, "a Ditch Rummy state's bits") < 0)
        goto fail;
    if (PyList_GET_SIZE(h->hands) != k->players || h->current < 0 || h->current >= k->players ||
        h->phase < 0 || h->phase > 2 || h->pile_pos < 0 ||
        h->pile_pos > PyList_GET_SIZE(h->pile) || h->drawn < 0 || h->drawn > DITCH_MAX_DRAW ||
        h->idle < 0 || h->idle > k->players || h->turn < 0 || h->turn >= INT_MAX) {
        bad_state();
        goto fail;
    }
    h->v = (float *)PyArray_DATA((PyArrayObject *)h->flat);
    h->b = (uint8_t *)PyArray_DATA((PyArrayObject *)h->bits);
    /* every seat's hand and points checked before a move writes anything (the hand's end
     * reads them all) */
    for (long seat = 0; seat < k->players; seat++) {
        int cards[DITCH_MAX_HAND], size;
        if (read_seat_hand(k, h, seat, cards, &size) < 0)
            goto fail;
    }
    PyObject *earned = slot_list(&k->slots, state, S_EARNED, "Ditch Rummy");
    if (!earned)
        goto fail;
    int sized = PyList_GET_SIZE(earned) == k->players;
    Py_DECREF(earned);
    if (!sized) {
        bad_state();
        goto fail;
    }
    if (read_seat_hand(k, h, h->current, h->hand, &h->size) < 0)
        goto fail;
    return 0;
fail:
    hand_release(h);
    return -1;
}

/* Write the public number ``f`` (its place in flat). */
static void put(Hand *h, int f, float value) { h->v[f] = value; }

/* Set (1) or clear (0) the card plane entry ``f`` (its place in bits). */
static void put_bit(Hand *h, int f, int on) { h->b[f] = (uint8_t)(on != 0); }

static int set_active(DitchKernel *k, PyObject *state, int value) {
    return slot_set(&k->slots, state, S_ACTIVE, value ? Py_True : Py_False);
}

/* The hand of the seat to act becomes cards[0..size) (a new tuple). */
static int set_hand(DitchKernel *k, Hand *h, const int *cards, int size) {
    PyObject *t = PyTuple_New(size);
    if (!t)
        return -1;
    for (int i = 0; i < size; i++) {
        PyObject *o = PyLong_FromLong(cards[i]);
        if (!o) {
            Py_DECREF(t);
            return -1;
        }
        PyTuple_SET_ITEM(t, i, o);
    }
    if (PyList_SetItem(h->hands, h->current, t) < 0)
        return -1;
    memcpy(h->hand, cards, sizeof(int) * (size_t)size);
    h->size = size;
    put(h, k->fact[FACT_SIZES] + (int)h->current, (float)((double)size / k->max_hand));
    return 0;
}

static int discard_card(DitchKernel *k, Hand *h, int order) {
    int card = order_card(order);
    PyObject *c = PyLong_FromLong(card);
    if (!c)
        return -1;
    int r = PyList_Append(h->discard, c);
    Py_DECREF(c);
    if (r == 0)
        put_bit(h, k->fact[FACT_DISCARD] + card, 1);
    return r;
}

/* ------------------------------------------------------------------ the moves */

/* The hand's end (DitchRummyGame._end_hand): each seat's points, what it earned less the penalty
 * of every card it still holds; ``by``: the seat that ended it (-1: none). Answers 2. */
static int end_hand(DitchKernel *k, PyObject *state, Hand *h, PyObject *reason, long by) {
    PyObject *earned = slot_list(&k->slots, state, S_EARNED, "Ditch Rummy");
    if (!earned)
        return -1;
    npy_intp n = k->players;
    PyObject *points = NULL;
    if (PyList_GET_SIZE(earned) != n) {
        bad_state();
        goto fail;
    }
    if (!(points = PyArray_SimpleNew(1, &n, NPY_FLOAT64)))
        goto fail;
    double *p = (double *)PyArray_DATA((PyArrayObject *)points);
    for (long seat = 0; seat < n; seat++) {
        int cards[DITCH_MAX_HAND], size;
        long gain;
        if (int_value(PyList_GET_ITEM(earned, seat), &gain) < 0 ||
            read_seat_hand(k, h, seat, cards, &size) < 0)
            goto fail;
        long long total = gain;
        for (int i = 0; i < size; i++)
            total -= k->penalty[cards[i]];
        p[seat] = (double)total;
    }
    int failed = slot_set(&k->slots, state, S_POINTS, points) < 0 ||
                 slot_set(&k->slots, state, S_END_REASON, reason) < 0 ||
                 (by < 0 ? slot_set(&k->slots, state, S_ENDED_BY, Py_None)
                         : slot_set_long(&k->slots, state, S_ENDED_BY, by)) < 0 ||
                 slot_set(&k->slots, state, S_OVER, Py_True) < 0;
    Py_DECREF(points);
    Py_DECREF(earned);
    return failed ? -1 : 2;
fail:
    Py_XDECREF(points);
    Py_DECREF(earned);
    return -1;
}

/* DitchRummyGame._end_turn: 1 when the next seat is to act, 2 when the hand ended or the turn
 * cap is reached, -1 on error. */
static int end_turn(DitchKernel *k, PyObject *state, Hand *h) {
    const long n = k->players;
    h->turn++;
    if (slot_set_long(&k->slots, state, S_TURN, h->turn) < 0)
        return -1;
    put(h, k->fact[FACT_TURN], (float)((double)h->turn / k->max_turns));
    if (!h->active || h->idle) {
        h->idle = h->active ? 0 : h->idle + 1;
        if (slot_set_long(&k->slots, state, S_IDLE, h->idle) < 0)
            return -1;
        put(h, k->fact[FACT_IDLE], (float)((double)h->idle / n));
    }
    if (h->pile_pos >= PyList_GET_SIZE(h->pile))
        return end_hand(k, state, h, k->end_pile, -1);
    if (h->idle >= n)
        return end_hand(k, state, h, k->end_stall, -1);
    put(h, k->fact[FACT_TO_ACT] + (int)h->current, 0.0f);
    h->current = (h->current + 1) % n;
    put(h, k->fact[FACT_TO_ACT] + (int)h->current, 1.0f);
    if (h->drawn)
        put(h, k->fact[FACT_DRAWN], 0.0f);
    h->phase = PHASE_DRAW;
    h->drawn = 0;
    h->active = 0;
    if (slot_set_long(&k->slots, state, S_CURRENT, h->current) < 0 ||
        slot_set(&k->slots, state, S_PHASE, k->phases[PHASE_DRAW]) < 0 ||
        slot_set_long(&k->slots, state, S_DRAWN, 0) < 0 || set_active(k, state, 0) < 0)
        return -1;
    /* the seat to act's hand, for the rows written next */
    if (read_seat_hand(k, h, h->current, h->hand, &h->size) < 0)
        return -1;
    return h->turn >= k->max_turns ? 2 : 1;
}

/* The table's lists of a state (new references), read for melds and singles. */
typedef struct {
    PyObject *melds, *singles, *set_count, *below, *above, *earned;
} Table;

static void table_release(Table *t) {
    Py_CLEAR(t->melds);
    Py_CLEAR(t->singles);
    Py_CLEAR(t->set_count);
    Py_CLEAR(t->below);
    Py_CLEAR(t->above);
    Py_CLEAR(t->earned);
}

static int table_read(DitchKernel *k, PyObject *state, Table *t) {
    memset(t, 0, sizeof(Table));
    if (!(t->melds = slot_list(&k->slots, state, S_MELDS, "Ditch Rummy")) ||
        !(t->singles = slot_list(&k->slots, state, S_SINGLES, "Ditch Rummy")) ||
        !(t->set_count = slot_list(&k->slots, state, S_SET_COUNT, "Ditch Rummy")) ||
        !(t->below = slot_list(&k->slots, state, S_BELOW, "Ditch Rummy")) ||
        !(t->above = slot_list(&k->slots, state, S_ABOVE, "Ditch Rummy")) ||
        !(t->earned = slot_list(&k->slots, state, S_EARNED, "Ditch Rummy")))
        goto fail;
    if (PyList_GET_SIZE(t->singles) != k->players || PyList_GET_SIZE(t->earned) != k->players ||
        PyList_GET_SIZE(t->set_count) != 13 || PyList_GET_SIZE(t->below) != DITCH_CARDS ||
        PyList_GET_SIZE(t->above) != DITCH_CARDS) {
        bad_state();
        goto fail;
    }
    return 0;
fail:
    table_release(t);
    return -1;
}

static int list_long(PyObject *list, Py_ssize_t i, long *out) {
    return int_value(PyList_GET_ITEM(list, i), out);
}

static int list_set_long(PyObject *list, Py_ssize_t i, long value) {
    PyObject *v = PyLong_FromLong(value);
    return v ? PyList_SetItem(list, i, v) : -1;
}

static int append_long(PyObject *list, long value) {
    PyObject *v = PyLong_FromLong(value);
    if (!v)
        return -1;
    int r = PyList_Append(list, v);
    Py_DECREF(v);
    return r;
}

/* Whether the card (order id o) fits the table in the way ``target`` names (0 a set, 1 below a
 * run, 2 above a run; any of them where singles do not join melds): 1, 0, -1 on error. */
static int single_fits(DitchKernel *k, Table *t, int o, int target) {
    long fits[3];
    if (list_long(t->set_count, o >> 2, &fits[0]) < 0 || list_long(t->below, o, &fits[1]) < 0 ||
        list_long(t->above, o, &fits[2]) < 0)
        return -1;
    if (k->single_targets == 1)
        return fits[0] || fits[1] || fits[2];
    return fits[target] != 0;
}

/* Add (delta 1) or remove (-1) one run end where a card of ``rank`` fits (_move_end). */
static int move_end(DitchKernel *k, Hand *h, PyObject *counts, int plane, int rank, int suit,
                    int delta) {
    int first = suit < 0 ? rank * 4 : rank * 4 + suit, last = suit < 0 ? rank * 4 + 3 : first;
    for (int o = first; o <= last; o++) {
        long count;
        if (list_long(counts, o, &count) < 0 || list_set_long(counts, o, count + delta) < 0)
            return -1;
        put_bit(h, plane + order_card(o), count + delta != 0);
    }
    return 0;
}

/* The seat's hand points go up by ``gain`` (_score; its hand size is written by set_hand). */
static int score(DitchKernel *k, Hand *h, Table *t, long gain) {
    long earned;
    if (list_long(t->earned, h->current, &earned) < 0 ||
        list_set_long(t->earned, h->current, earned + gain) < 0)
        return -1;
    put(h, k->fact[FACT_HAND_POINTS] + (int)h->current,
        (float)((double)(earned + gain) / HAND_POINTS_SCALE));
    return 0;
}

/* A meld's int attribute. */

/* The earliest meld that a single (order id o) joins in the way ``target`` names (_extend):
 * its index, -1 where none does, -2 on error. */
static int find_meld(DitchKernel *k, Table *t, int o, int target) {
    long rank = o >> 2, suit = o & 3;
    for (Py_ssize_t j = 0; j < PyList_GET_SIZE(t->melds); j++) {
        PyObject *meld = PyList_GET_ITEM(t->melds, j);
        long msuit, kind, low, high;
        Py_INCREF(meld); /* its attributes may run Python code (a subclass' properties) */
        int bad = slot_long(&k->meld_slots, meld, M_SUIT, &msuit) < 0 ||
                  slot_long(&k->meld_slots, meld, M_KIND, &kind) < 0 ||
                  slot_long(&k->meld_slots, meld, M_LOW, &low) < 0 ||
                  slot_long(&k->meld_slots, meld, M_HIGH, &high) < 0;
        Py_DECREF(meld);
        if (bad)
            return -2;
        if (msuit < -1 || msuit > 3) {
            bad_state();
            return -2;
        }
        if (msuit >= 0 && msuit != suit)
            continue;
        if ((target == 0 && kind == SET && low == rank) ||
            (target == 1 && kind == RUN && low == rank + 1) ||
            (target == 2 && kind == RUN && high == rank - 1))
            return (int)j;
    }
    return -1;
}

/* What extend does to a meld (held by the caller). */
static int extend_meld(DitchKernel *k, Hand *h, Table *t, PyObject *meld, int o, int target) {
    int rank = o >> 2;
    long msuit;
    if (slot_long(&k->meld_slots, meld, M_SUIT, &msuit) < 0)
        return -1;
    if (msuit < -1 || msuit > 3)
        return bad_state();
    if (target == 1) {
        if (move_end(k, h, t->below, k->fact[FACT_FIT_BELOW], rank, (int)msuit, -1) < 0 ||
            (rank > 0 &&
             move_end(k, h, t->below, k->fact[FACT_FIT_BELOW], rank - 1, (int)msuit, 1) < 0) ||
            slot_set_long(&k->meld_slots, meld, M_LOW, rank) < 0)
            return -1;
    } else if (target == 2) {
        if (move_end(k, h, t->above, k->fact[FACT_FIT_ABOVE], rank, (int)msuit, -1) < 0 ||
            (rank < ACE &&
             move_end(k, h, t->above, k->fact[FACT_FIT_ABOVE], rank + 1, (int)msuit, 1) < 0) ||
            slot_set_long(&k->meld_slots, meld, M_HIGH, rank) < 0)
            return -1;
    }
    PyObject *added = slot_list(&k->meld_slots, meld, M_ADDED, "Ditch Rummy meld");
    if (!added)
        return -1;
    int r = append_long(added, order_card(o));
    Py_DECREF(added);
    return r;
}

/* The single joins meld j (_extend): its end moves, the fit planes with it. */
static int extend(DitchKernel *k, Hand *h, Table *t, Py_ssize_t j, int o, int target) {
    if (j >= PyList_GET_SIZE(t->melds))
        return bad_state();
    PyObject *meld = PyList_GET_ITEM(t->melds, j);
    Py_INCREF(meld); /* held: its attributes may run Python code (a subclass' properties) */
    int r = extend_meld(k, h, t, meld, o, target);
    Py_DECREF(meld);
    return r;
}

/* The meld of hand positions combo j (_meld), where legal now: as play_move answers. */
static int play_meld(DitchKernel *k, PyObject *state, Hand *h, Table *t, int j) {
    const unsigned char *c = k->combo[j];
    int csize = k->combo_size[j];
    if (c[csize - 1] >= h->size)
        return 0;
    int orders[3] = {0, 0, 0};
    for (int p = 0; p < csize; p++)
        orders[p] = h->hand[c[p]];
    int kind = k->pair_kind[orders[0]][orders[1]];
    if (!kind || (csize == 3 && k->pair_kind[orders[1]][orders[2]] != kind))
        return 0;
    int rest[DITCH_MAX_HAND], size = 0;
    for (int i = 0, p = 0; i < h->size; i++) {
        if (p < csize && c[p] == i)
            p++;
        else
            rest[size++] = h->hand[i];
    }
    long seat = h->current;
    int low = orders[0] >> 2, high = orders[csize - 1] >> 2;
    int suit = kind == RUN && k->same_suit ? orders[0] & 3 : -1;
    PyObject *cards = PyList_New(csize), *meld = NULL;
    if (!cards)
        return -1;
    int row = k->fact[kind == SET ? FACT_SETS : FACT_RUNS] + DITCH_CARDS * (int)seat;
    for (int p = 0; p < csize; p++) {
        int card = order_card(orders[p]);
        PyObject *v = PyLong_FromLong(card);
        if (!v)
            goto fail;
        PyList_SET_ITEM(cards, p, v);
        put_bit(h, row + card, 1);
    }
    meld = PyObject_CallFunction(k->meld_class, "llOlll", seat, (long)kind, cards, (long)low,
                                 (long)high, (long)suit);
    if (!meld || PyList_Append(t->melds, meld) < 0 || set_hand(k, h, rest, size) < 0)
        goto fail;
    Py_CLEAR(meld);
    Py_CLEAR(cards);
    long gain;
    if (kind == SET) {
        long sets;
        if (list_long(t->set_count, low, &sets) < 0 || list_set_long(t->set_count, low, sets + 1) < 0)
            return -1;
        if (!sets)
            for (int o = low * 4; o < low * 4 + 4; o++)
                put_bit(h, k->fact[FACT_FIT_SET] + order_card(o), 1);
        gain = k->points_set;
    } else {
        if ((low > 0 && move_end(k, h, t->below, k->fact[FACT_FIT_BELOW], low - 1, suit, 1) < 0) ||
            (high < ACE && move_end(k, h, t->above, k->fact[FACT_FIT_ABOVE], high + 1, suit, 1) < 0))
            return -1;
        gain = k->points_run;
    }
    if (score(k, h, t, gain) < 0 || set_active(k, state, 1) < 0)
        return -1;
    h->active = 1;
    if (kind == RUN && csize == 3 && low >= JACK) { /* a blind J-Q-K or Q-K-A run */
        h->turn++;
        if (slot_set_long(&k->slots, state, S_TURN, h->turn) < 0)
            return -1;
        put(h, k->fact[FACT_TURN], (float)((double)h->turn / k->max_turns));
        return end_hand(k, state, h, k->end_run, seat);
    }
    return h->size ? 1 : end_turn(k, state, h);
fail:
    Py_XDECREF(meld);
    Py_DECREF(cards);
    return -1;
}

/* A single (_single), where legal now: as play_move answers. */
static int play_single(DitchKernel *k, PyObject *state, Hand *h, Table *t, int index) {
    int pos = index / k->single_targets, target = index % k->single_targets;
    if (pos >= h->size)
        return 0;
    int o = h->hand[pos], fits = single_fits(k, t, o, target), j = -1;
    if (fits <= 0)
        return fits;
    if (k->single_targets > 1 && (j = find_meld(k, t, o, target)) < 0)
        return j == -1 ? 0 : -1; /* no meld takes it: the Python code says so */
    int rest[DITCH_MAX_HAND], size = 0;
    for (int i = 0; i < h->size; i++)
        if (i != pos)
            rest[size++] = h->hand[i];
    int card = order_card(o);
    PyObject *mine = PyList_GET_ITEM(t->singles, h->current);
    if (!PyList_CheckExact(mine)) {
        PyErr_SetString(PyExc_TypeError, "a Ditch Rummy state's singles must be lists");
        return -1;
    }
    if (append_long(mine, card) < 0 || set_hand(k, h, rest, size) < 0 ||
        (j >= 0 && extend(k, h, t, j, o, target) < 0) || score(k, h, t, k->single_points[o]) < 0 ||
        set_active(k, state, 1) < 0)
        return -1;
    put_bit(h, k->fact[FACT_SINGLES] + DITCH_CARDS * (int)(h->current) + card, 1);
    h->active = 1;
    return h->size ? 1 : end_turn(k, state, h);
}

/* Play ``action`` if it is a move played here and legal now: 1 when played and the hand goes on
 * (h then describes the state after it), 2 when played and the hand is over or the turn cap is
 * reached, 0 when it is left to the Python code (nothing changed), -1 on error. */
static int play_move(DitchKernel *k, PyObject *state, Hand *h, long action) {
    if (action < 0 || action >= k->num_actions)
        return 0;
    if (action < k->meld_base) { /* draw 0-3 */
        long left = PyList_GET_SIZE(h->pile) - h->pile_pos;
        if (h->phase != PHASE_DRAW || action > left || h->size + action > k->max_hand)
            return 0;
        int cards[DITCH_MAX_HAND], size = h->size;
        memcpy(cards, h->hand, sizeof(int) * (size_t)size);
        for (long j = 0; j < action; j++) {
            long o;
            if (int_value(PyList_GET_ITEM(h->pile, h->pile_pos + j), &o) < 0)
                return -1;
            if (o < 0 || o >= DITCH_CARDS)
                return bad_state();
            int at = size++; /* insertion into the sorted hand */
            while (at > 0 && cards[at - 1] > o) {
                cards[at] = cards[at - 1];
                at--;
            }
            cards[at] = (int)o;
        }
        h->drawn = action;
        h->phase = PHASE_PLAY;
        if (slot_set_long(&k->slots, state, S_DRAWN, action) < 0 ||
            slot_set(&k->slots, state, S_PHASE, k->phases[PHASE_PLAY]) < 0)
            return -1;
        if (action) {
            h->pile_pos += action;
            h->active = 1;
            if (set_hand(k, h, cards, size) < 0 || slot_set_long(&k->slots, state, S_PILE_POS, h->pile_pos) < 0 ||
                set_active(k, state, 1) < 0)
                return -1;
            put(h, k->fact[FACT_PILE], (float)((double)(left - action) / DITCH_CARDS));
            put(h, k->fact[FACT_DRAWN], (float)((double)action / DITCH_MAX_DRAW));
        } else if (h->size == 0) {
            return end_turn(k, state, h);
        }
        return 1;
    }
    if (h->phase == PHASE_DRAW)
        return 0;
    if (action < k->ditch_base) { /* melds and singles, in the play step only */
        if (h->phase != PHASE_PLAY)
            return 0;
        Table table;
        if (table_read(k, state, &table) < 0)
            return -1;
        int played = action < k->single_base
                         ? play_meld(k, state, h, &table, (int)(action - k->meld_base))
                         : play_single(k, state, h, &table, (int)(action - k->single_base));
        table_release(&table);
        return played;
    }
    if (action < k->ditch_all) {
        int pos = (int)(action - k->ditch_base);
        if (pos >= h->size)
            return 0;
        int cards[DITCH_MAX_HAND], size = 0, thrown = h->hand[pos];
        for (int i = 0; i < h->size; i++)
            if (i != pos)
                cards[size++] = h->hand[i];
        if (discard_card(k, h, thrown) < 0 || set_hand(k, h, cards, size) < 0)
            return -1;
    } else if (action == k->ditch_all) {
        if (h->size < 2)
            return 0;
        for (int i = 0; i < h->size; i++)
            if (discard_card(k, h, h->hand[i]) < 0)
                return -1;
        if (set_hand(k, h, NULL, 0) < 0)
            return -1;
    }
    if (action != k->end_turn) {
        h->active = 1;
        h->phase = PHASE_DITCH;
        if (set_active(k, state, 1) < 0 ||
            slot_set(&k->slots, state, S_PHASE, k->phases[PHASE_DITCH]) < 0)
            return -1;
        if (h->size && action != k->ditch_all)
            return 1;
    }
    return end_turn(k, state, h);
}

/* The legal actions of the seat to act in a hand not over: a shared mask (*shared, a borrowed
 * reference) or written into out (num_actions entries, *shared NULL). */
static int legal_into(DitchKernel *k, PyObject *state, Hand *h, npy_int8 *out, PyObject **shared) {
    *shared = NULL;
    if (h->phase == PHASE_DRAW) {
        long room = PyList_GET_SIZE(h->pile) - h->pile_pos;
        room = room < DITCH_MAX_DRAW ? room : DITCH_MAX_DRAW;
        room = room < k->max_hand - h->size ? room : k->max_hand - h->size;
        *shared = k->draw_masks[room];
        return 0;
    }
    PyObject *ditch = k->ditch_masks[h->size];
    if (h->phase == PHASE_DITCH) {
        *shared = ditch;
        return 0;
    }
    memcpy(out, PyArray_DATA((PyArrayObject *)ditch), (size_t)k->num_actions);
    const int *hand = h->hand;
    for (int j = 0; j < k->num_combos; j++) {
        const unsigned char *c = k->combo[j];
        if (c[k->combo_size[j] - 1] >= h->size)
            continue;
        int first = k->pair_kind[hand[c[0]]][hand[c[1]]];
        if (first && (k->combo_size[j] == 2 || k->pair_kind[hand[c[1]]][hand[c[2]]] == first))
            out[k->meld_base + j] = 1;
    }
    PyObject *sets = slot_list(&k->slots, state, S_SET_COUNT, "Ditch Rummy");
    PyObject *below = sets ? slot_list(&k->slots, state, S_BELOW, "Ditch Rummy") : NULL;
    PyObject *above = below ? slot_list(&k->slots, state, S_ABOVE, "Ditch Rummy") : NULL;
    int bad = !above;
    if (!bad && (PyList_GET_SIZE(sets) != 13 || PyList_GET_SIZE(below) != DITCH_CARDS ||
                 PyList_GET_SIZE(above) != DITCH_CARDS))
        bad = bad_state() < 0;
    for (int i = 0; !bad && i < h->size; i++) {
        int o = hand[i];
        PyObject *fits[3] = {PyList_GET_ITEM(sets, o >> 2), PyList_GET_ITEM(below, o),
                             PyList_GET_ITEM(above, o)};
        for (int t = 0; !bad && t < 3; t++) {
            long yes;
            bad = int_value(fits[t], &yes) < 0;
            if (!bad && yes)
                out[k->single_base + (k->single_targets == 1 ? i : 3 * i + t)] = 1;
        }
    }
    Py_XDECREF(sets);
    Py_XDECREF(below);
    Py_XDECREF(above);
    return bad ? -1 : 0;
}

/* The observation of ``seat`` into out (obs_size floats): the match totals written into the
 * flat buffer unless they are the array written last (the state's totals) and read-only, as a
 * match's are (a writeable array may have changed in place since), the seat's view gathered
 * from it, its hand added. */
static int observe_into(DitchKernel *k, PyObject *state, Hand *h, long seat, int over,
                        PyObject *totals, float *out) {
    PyObject *last = slot_get(&k->slots, state, S_TOTALS);
    if (!last)
        return -1;
    int same = last == totals && PyArray_Check(totals) &&
               !PyArray_ISWRITEABLE((PyArrayObject *)totals);
    Py_DECREF(last);
    if (!same) {
        const double *by_seat;
        if (read_scores(totals, k->players, &by_seat) < 0)
            return -1;
        for (int i = 0; i < k->players; i++)
            put(h, k->fact[FACT_SCORES] + i, (float)(by_seat[i] / k->score_scale));
        if (slot_set(&k->slots, state, S_TOTALS, totals) < 0)
            return -1;
    }
    gather_apply(&k->gather, (int)seat, h->v, h->b, out);
    int cards[DITCH_MAX_HAND], size;
    if (read_seat_hand(k, h, seat, cards, &size) < 0)
        return -1;
    for (int i = 0; i < size; i++) {
        int card = order_card(cards[i]);
        out[k->off_hand + card] = 1.0f;
        out[k->off_pos + DITCH_CARDS * i + card] = 1.0f;
    }
    if (seat == h->current && !over)
        out[k->off_phase + h->phase] = 1.0f;
    return 0;
}

/* ------------------------------------------------------------------ the deal */

/* A new list of ``count`` zeros. */
static PyObject *zeros_list(Py_ssize_t count) {
    PyObject *list = PyList_New(count), *zero = PyLong_FromLong(0);
    if (!list || !zero) {
        Py_XDECREF(list);
        Py_XDECREF(zero);
        return NULL;
    }
    for (Py_ssize_t i = 0; i < count; i++) {
        Py_INCREF(zero);
        PyList_SET_ITEM(list, i, zero);
    }
    Py_DECREF(zero);
    return list;
}

/* deal(dealer, deck) -> a new hand's state (DitchRummyGame.new_hand): no cards dealt, the whole
 * deck (card ids, top first) the draw pile; the seat after the dealer to act. */
static PyObject *DitchKernel_deal(DitchKernel *k, PyObject *const *args, Py_ssize_t nargs) {
    long dealer;
    if (deal_args(k->ready, KERNEL_NAME, nargs, args, k->players, &dealer) < 0)
        return NULL;
    const long n = k->players;
    PyArrayObject *deck = (PyArrayObject *)PyArray_FROMANY(args[1], NPY_INT64, 1, 1,
                                                           NPY_ARRAY_CARRAY_RO);
    if (!deck)
        return NULL;
    PyObject *state = NULL, *flat = NULL, *values[NUM_STATE_SLOTS] = {NULL};
    const int64_t *cards = (const int64_t *)PyArray_DATA(deck);
    npy_intp size = PyArray_DIM(deck, 0);
    int bad = size != DITCH_CARDS;
    for (npy_intp i = 0; !bad && i < size; i++)
        bad = cards[i] < 0 || cards[i] >= DITCH_CARDS;
    if (bad) {
        PyErr_SetString(PyExc_ValueError, "a Ditch Rummy deck is 52 card ids");
        goto fail;
    }
    if (!(state = PyObject_CallNoArgs(k->state_class)) ||
        !(flat = PyArray_NewCopy((PyArrayObject *)k->flat_template, NPY_CORDER)))
        goto fail;
    PyObject *pile = values[S_PILE] = PyList_New(DITCH_CARDS);
    for (int i = 0; pile && i < DITCH_CARDS; i++) {
        PyObject *o = PyLong_FromLong(k->card_order[cards[i]]);
        if (!o)
            goto fail;
        PyList_SET_ITEM(pile, i, o);
    }
    PyObject *hands = values[S_HANDS] = PyList_New(n);
    PyObject *singles = values[S_SINGLES] = PyList_New(n);
    for (long v = 0; hands && singles && v < n; v++) {
        PyObject *none = PyTuple_New(0), *mine = PyList_New(0);
        if (none)
            PyList_SET_ITEM(hands, v, none);
        if (mine)
            PyList_SET_ITEM(singles, v, mine);
        if (!none || !mine)
            goto fail;
    }
    npy_intp seats = n;
    long current = (dealer + 1) % n;
    values[S_DISCARD] = PyList_New(0);
    values[S_MELDS] = PyList_New(0);
    values[S_SET_COUNT] = zeros_list(13);
    values[S_BELOW] = zeros_list(DITCH_CARDS);
    values[S_ABOVE] = zeros_list(DITCH_CARDS);
    values[S_EARNED] = zeros_list(n);
    values[S_POINTS] = PyArray_ZEROS(1, &seats, NPY_FLOAT64, 0);
    npy_intp planes = k->bits_size;
    values[S_BITS] = PyArray_ZEROS(1, &planes, NPY_UINT8, 0); /* no card on the table yet */
    values[S_CURRENT] = PyLong_FromLong(current);
    values[S_DEALER] = PyLong_FromLong(dealer);
    Py_INCREF(flat);
    values[S_FLAT] = flat;
    /* the fields set from shared objects below */
    static const int shared[] = {S_PILE_POS, S_TURN,       S_DRAWN,    S_IDLE,      S_PHASE,
                                 S_ACTIVE,   S_OVER,       S_END_REASON, S_ENDED_BY, S_TOTALS};
    for (int i = 0; i < NUM_STATE_SLOTS; i++) {
        int later = 0;
        for (size_t j = 0; j < sizeof(shared) / sizeof(int); j++)
            later |= shared[j] == i;
        if (!later && !values[i])
            goto fail;
    }
    Hand h = {.v = (float *)PyArray_DATA((PyArrayObject *)flat)};
    put(&h, k->fact[FACT_DEALER] + (int)dealer, 1.0f);
    put(&h, k->fact[FACT_TO_ACT] + (int)current, 1.0f);
    for (int i = 0; i < NUM_STATE_SLOTS; i++)
        if (values[i] && slot_set(&k->slots, state, i, values[i]) < 0)
            goto fail;
    if (slot_set_long(&k->slots, state, S_PILE_POS, 0) < 0 ||
        slot_set_long(&k->slots, state, S_TURN, 0) < 0 ||
        slot_set_long(&k->slots, state, S_DRAWN, 0) < 0 ||
        slot_set_long(&k->slots, state, S_IDLE, 0) < 0 ||
        slot_set(&k->slots, state, S_PHASE, k->phases[PHASE_DRAW]) < 0 ||
        slot_set(&k->slots, state, S_ACTIVE, Py_False) < 0 ||
        slot_set(&k->slots, state, S_OVER, Py_False) < 0 ||
        slot_set(&k->slots, state, S_END_REASON, Py_None) < 0 ||
        slot_set(&k->slots, state, S_ENDED_BY, Py_None) < 0 ||
        slot_set(&k->slots, state, S_TOTALS, Py_None) < 0)
        goto fail;
    for (int i = 0; i < NUM_STATE_SLOTS; i++)
        Py_XDECREF(values[i]);
    Py_DECREF(flat);
    Py_DECREF(deck);
    return state;
fail:
    for (int i = 0; i < NUM_STATE_SLOTS; i++)
        Py_XDECREF(values[i]);
    Py_XDECREF(flat);
    Py_XDECREF(state);
    Py_DECREF(deck);
    return NULL;
}

/* ------------------------------------------------------------------ methods */

static PyObject *DitchKernel_apply(DitchKernel *k, PyObject *const *args, Py_ssize_t nargs) {
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

static PyObject *DitchKernel_mask(DitchKernel *k, PyObject *state) {
    if (check_ready(k->ready, KERNEL_NAME) < 0)
        return NULL;
    int is_over = slot_true(&k->slots, state, S_OVER);
    if (is_over < 0)
        return NULL;
    if (is_over) {
        Py_INCREF(k->empty_mask);
        return k->empty_mask;
    }
    Hand h;
    if (hand_read(k, state, &h) < 0)
        return NULL;
    npy_intp size = k->num_actions;
    PyObject *shared, *out = PyArray_SimpleNew(1, &size, NPY_INT8);
    if (out && legal_into(k, state, &h, (npy_int8 *)PyArray_DATA((PyArrayObject *)out),
                          &shared) < 0)
        Py_CLEAR(out);
    else if (out && shared) {
        Py_DECREF(out);
        Py_INCREF(shared);
        out = shared;
    }
    hand_release(&h);
    return out;
}

static PyObject *DitchKernel_observe(DitchKernel *k, PyObject *const *args, Py_ssize_t nargs) {
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

/* Game i's rows (the seat to act, its observation and legal mask) from its state. */
static int write_rows(DitchKernel *k, Batch *b, int64_t i, PyObject *match, PyObject *state,
                      Hand *h, int over) {
    PyObject *totals = slot_get(&k->match_slots, match, MATCH_SEAT_TOTALS), *shared;
    if (!totals)
        return -1;
    npy_int8 *row = b->masks + i * k->num_actions;
    b->current[i] = h->current;
    int bad = observe_into(k, state, h, h->current, over, totals, b->obs + i * k->obs_size) < 0;
    Py_DECREF(totals);
    if (bad)
        return -1;
    if (over) {
        memset(row, 0, (size_t)k->num_actions);
        return 0;
    }
    if (legal_into(k, state, h, row, &shared) < 0)
        return -1;
    if (shared)
        memcpy(row, PyArray_DATA((PyArrayObject *)shared), (size_t)k->num_actions);
    return 0;
}

/* step() as Game.play_batch describes, and rows() (envs/_native.h). */
KERNEL_BATCH(DitchKernel, k->num_actions)

/* ------------------------------------------------------------------ type */

/* A borrowed reference to layout[key] (KeyError where missing). */
static PyObject *item(PyObject *layout, const char *key) {
    PyObject *v = PyDict_GetItemString(layout, key);
    if (!v)
        PyErr_Format(PyExc_KeyError, KERNEL_NAME ": missing %s", key);
    return v;
}

/* A mask of the layout (an int8 array of num_actions) kept in *slot (owned). */
static int take_mask(DitchKernel *k, PyObject *mask, PyObject **slot) {
    if (check_array(mask, NPY_INT8, 1, k->num_actions, 0, 0, "a Ditch Rummy mask") < 0)
        return -1;
    Py_INCREF(mask);
    Py_XSETREF(*slot, mask);
    return 0;
}

/* layout[key], a list of ``count`` masks, into out. */
static int read_masks(DitchKernel *k, PyObject *layout, const char *key, PyObject **out,
                      int count) {
    PyObject *masks = item(layout, key);
    if (!masks)
        return -1;
    if (!PyList_Check(masks) || PyList_GET_SIZE(masks) != count) {
        PyErr_Format(PyExc_ValueError, KERNEL_NAME ": %s must be a list of %d masks", key, count);
        return -1;
    }
    for (int i = 0; i < count; i++)
        if (take_mask(k, PyList_GET_ITEM(masks, i), &out[i]) < 0)
            return -1;
    return 0;
}

/* layout[key]: 52 ints by order id, each small enough that a hand's sum of them fits an int. */
static int read_card_ints(PyObject *layout, const char *key, int *out) {
    PyObject *v = item(layout, key);
    PyObject *values = v ? PySequence_Fast(v, key) : NULL;
    if (!values)
        return -1;
    int ok = PySequence_Fast_GET_SIZE(values) == DITCH_CARDS;
    for (int o = 0; ok && o < DITCH_CARDS; o++) {
        long x = PyLong_AsLong(PySequence_Fast_GET_ITEM(values, o));
        ok = !(x == -1 && PyErr_Occurred()) && x >= -(INT_MAX / 64) && x <= INT_MAX / 64;
        out[o] = (int)x;
    }
    Py_DECREF(values);
    if (!ok && !PyErr_Occurred())
        PyErr_Format(PyExc_ValueError, KERNEL_NAME ": %s is 52 small ints", key);
    return ok ? 0 : -1;
}

/* DitchKernel(layout): layout is a dict of the game's constants (see
 * DitchRummyGame._native_layout). */
static int DitchKernel_init(DitchKernel *k, PyObject *args, PyObject *kwds) {
    PyObject *layout;
    static char *kwlist[] = {"layout", NULL};
    if (init_once(k->ready, KERNEL_NAME) < 0)
        return -1;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O!", kwlist, &PyDict_Type, &layout))
        return -1;
    const int big = INT_MAX / 2;
    if (read_int(layout, KERNEL_NAME, "players", &k->players, 2, DITCH_MAX_PLAYERS) < 0 ||
        read_int(layout, KERNEL_NAME, "max_hand", &k->max_hand, 1, DITCH_MAX_HAND) < 0 ||
        read_int(layout, KERNEL_NAME, "max_turns", &k->max_turns, 1, INT_MAX) < 0 ||
        read_int(layout, KERNEL_NAME, "obs_size", &k->obs_size, 1, big / DITCH_MAX_PLAYERS) < 0 ||
        read_int(layout, KERNEL_NAME, "num_actions", &k->num_actions, 1, 4096) < 0 ||
        read_int(layout, KERNEL_NAME, "meld_base", &k->meld_base, DITCH_MAX_DRAW + 1,
                 DITCH_MAX_DRAW + 1) < 0 ||
        read_int(layout, KERNEL_NAME, "single_base", &k->single_base, k->meld_base,
                 k->num_actions) < 0 ||
        read_int(layout, KERNEL_NAME, "single_targets", &k->single_targets, 1, 3) < 0 ||
        read_int(layout, KERNEL_NAME, "ditch_base", &k->ditch_base,
                 k->single_base + k->single_targets * k->max_hand, k->num_actions) < 0 ||
        read_int(layout, KERNEL_NAME, "ditch_all", &k->ditch_all, k->ditch_base + k->max_hand,
                 k->num_actions - 2) < 0 ||
        read_int(layout, KERNEL_NAME, "end_turn", &k->end_turn, k->ditch_all + 1,
                 k->num_actions - 1) < 0 ||
        read_int(layout, KERNEL_NAME, "off_hand", &k->off_hand, 0,
                 k->obs_size - DITCH_CARDS) < 0 ||
        read_int(layout, KERNEL_NAME, "off_pos", &k->off_pos, 0,
                 k->obs_size - DITCH_CARDS * k->max_hand) < 0 ||
        read_int(layout, KERNEL_NAME, "off_phase", &k->off_phase, 0, k->obs_size - 3) < 0)
        return -1;
    if (read_int(layout, KERNEL_NAME, "points_set", &k->points_set, -big / 64, big / 64) < 0 ||
        read_int(layout, KERNEL_NAME, "points_run", &k->points_run, -big / 64, big / 64) < 0 ||
        read_int(layout, KERNEL_NAME, "runs_same_suit", &k->same_suit, 0, 1) < 0 ||
        read_card_ints(layout, "card_penalty", k->penalty) < 0 ||
        read_card_ints(layout, "single_points", k->single_points) < 0)
        return -1;
    PyObject *meld_class = item(layout, "meld_class");
    PyObject *state_class = meld_class ? item(layout, "state_class") : NULL;
    if (!state_class)
        return -1;
    if (!PyType_Check(meld_class) || !PyType_Check(state_class)) {
        PyErr_SetString(PyExc_TypeError,
                        KERNEL_NAME ": meld_class and state_class are TableMeld and DitchState");
        return -1;
    }
    PyObject *match_class = item(layout, "match_class");
    int zero_at;
    if (!match_class ||
        read_int(layout, KERNEL_NAME, "flat_size", &k->flat_size, 1, big / DITCH_MAX_PLAYERS) < 0 ||
        read_int(layout, KERNEL_NAME, "bits_size", &k->bits_size, 1, big / DITCH_MAX_PLAYERS) < 0 ||
        read_int(layout, KERNEL_NAME, "fl_zero", &zero_at, 0, k->flat_size - 1) < 0 ||
        gather_read(&k->gather, layout, KERNEL_NAME, "gather", k->players, k->obs_size,
                    k->flat_size, k->bits_size, zero_at, 0.0) < 0)
        return -1;
    PyObject *template = item(layout, "flat_template");
    if (!template ||
        check_array(template, NPY_FLOAT32, 1, k->flat_size, 0, 0, "flat_template") < 0)
        return -1;
    Py_INCREF(template);
    Py_XSETREF(k->flat_template, template);
    Py_INCREF(state_class);
    Py_XSETREF(k->state_class, state_class);
    for (int o = 0; o < DITCH_CARDS; o++)
        k->card_order[order_card(o)] = o;
    if (slots_init(&k->slots, state_class, state_names, NUM_STATE_SLOTS) < 0 ||
        slots_init(&k->meld_slots, meld_class, meld_names, NUM_MELD_SLOTS) < 0 ||
        match_slots_init(&k->match_slots, match_class) < 0)
        return -1;
    Py_INCREF(meld_class);
    Py_XSETREF(k->meld_class, meld_class);
    if (k->single_targets == 2) {
        PyErr_SetString(PyExc_ValueError, KERNEL_NAME ": single_targets is 1 or 3");
        return -1;
    }
    for (int f = 0; f < NUM_FACTS; f++) {
        /* every fact's block (the per-seat ones span the players) lies inside the flat layout */
        int span = fact_span[f] == SPAN_SEATS        ? k->players
                   : fact_span[f] == SPAN_CARDS      ? DITCH_CARDS
                   : fact_span[f] == SPAN_SEAT_CARDS ? DITCH_CARDS * k->players
                                                     : 1;
        int size = fact_span[f] == SPAN_CARDS || fact_span[f] == SPAN_SEAT_CARDS ? k->bits_size
                                                                                  : k->flat_size;
        if (read_int(layout, KERNEL_NAME, fact_keys[f], &k->fact[f], 0, size - span) < 0)
            return -1;
    }
    PyObject *scale = item(layout, "score_scale");
    if (!scale)
        return -1;
    k->score_scale = PyFloat_AsDouble(scale);
    if (PyErr_Occurred())
        return -1;
    if (!(k->score_scale > 0)) {
        PyErr_SetString(PyExc_ValueError, KERNEL_NAME ": score_scale must be > 0");
        return -1;
    }
    /* the meld actions: meld_base + j melds the hand positions meld_positions[j] */
    PyObject *v = item(layout, "meld_positions");
    PyObject *combos = v ? PySequence_Fast(v, "meld_positions") : NULL;
    if (!combos)
        return -1;
    Py_ssize_t nc = PySequence_Fast_GET_SIZE(combos);
    int ok = nc <= MAX_MELD_COMBOS && k->meld_base + nc == k->single_base;
    for (Py_ssize_t j = 0; ok && j < nc; j++) {
        PyObject *c = PySequence_Fast(PySequence_Fast_GET_ITEM(combos, j), "meld_positions");
        ok = c && (PySequence_Fast_GET_SIZE(c) == 2 || PySequence_Fast_GET_SIZE(c) == 3);
        for (Py_ssize_t p = 0; ok && p < PySequence_Fast_GET_SIZE(c); p++) {
            long pos = PyLong_AsLong(PySequence_Fast_GET_ITEM(c, p));
            ok = pos >= 0 && pos < k->max_hand && (p == 0 || pos > k->combo[j][p - 1]);
            k->combo[j][p] = (unsigned char)pos;
        }
        if (ok)
            k->combo_size[j] = (unsigned char)PySequence_Fast_GET_SIZE(c);
        Py_XDECREF(c);
    }
    Py_DECREF(combos);
    if (!ok) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_ValueError,
                            KERNEL_NAME ": meld_positions are the meld actions' hand positions");
        return -1;
    }
    k->num_combos = (int)nc;
    PyObject *kinds = item(layout, "pair_kind");
    if (!kinds)
        return -1;
    if (!PyBytes_Check(kinds) || PyBytes_GET_SIZE(kinds) != DITCH_CARDS * DITCH_CARDS) {
        PyErr_SetString(PyExc_ValueError, KERNEL_NAME ": pair_kind is 52 x 52 bytes");
        return -1;
    }
    memcpy(k->pair_kind, PyBytes_AS_STRING(kinds), DITCH_CARDS * DITCH_CARDS);
    PyObject *empty = item(layout, "empty_mask");
    if (!empty || take_mask(k, empty, &k->empty_mask) < 0 ||
        read_masks(k, layout, "draw_masks", k->draw_masks, DITCH_MAX_DRAW + 1) < 0 ||
        read_masks(k, layout, "ditch_masks", k->ditch_masks, k->max_hand + 1) < 0)
        return -1;
    PyObject *phases = item(layout, "phases");
    if (!phases)
        return -1;
    if (!PyTuple_Check(phases) || PyTuple_GET_SIZE(phases) != 3) {
        PyErr_SetString(PyExc_ValueError, KERNEL_NAME ": phases are DRAW, PLAY, DITCH");
        return -1;
    }
    for (int i = 0; i < 3; i++) {
        PyObject *p = PyTuple_GET_ITEM(phases, i);
        if (PyLong_AsLong(p) != i) {
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_ValueError, KERNEL_NAME ": phases are DRAW, PLAY, DITCH");
            return -1;
        }
        Py_INCREF(p);
        Py_XSETREF(k->phases[i], p);
    }
    PyObject *reasons = item(layout, "end_reasons");
    if (!reasons)
        return -1;
    if (!PyTuple_Check(reasons) || PyTuple_GET_SIZE(reasons) != 3 ||
        !PyUnicode_Check(PyTuple_GET_ITEM(reasons, 0)) ||
        !PyUnicode_Check(PyTuple_GET_ITEM(reasons, 1)) ||
        !PyUnicode_Check(PyTuple_GET_ITEM(reasons, 2))) {
        PyErr_SetString(PyExc_ValueError, KERNEL_NAME ": end_reasons are three strings");
        return -1;
    }
    PyObject **slots[3] = {&k->end_pile, &k->end_stall, &k->end_run};
    for (int i = 0; i < 3; i++) {
        Py_INCREF(PyTuple_GET_ITEM(reasons, i));
        Py_XSETREF(*slots[i], PyTuple_GET_ITEM(reasons, i));
    }
    k->ready = 1;
    return 0;
}

static void DitchKernel_dealloc(DitchKernel *k) {
    gather_free(&k->gather);
    for (int i = 0; i <= DITCH_MAX_DRAW; i++)
        Py_XDECREF(k->draw_masks[i]);
    for (int i = 0; i <= DITCH_MAX_HAND; i++)
        Py_XDECREF(k->ditch_masks[i]);
    Py_XDECREF(k->empty_mask);
    for (int i = 0; i < 3; i++)
        Py_XDECREF(k->phases[i]);
    Py_XDECREF(k->end_pile);
    Py_XDECREF(k->end_stall);
    Py_XDECREF(k->end_run);
    Py_XDECREF(k->meld_class);
    slots_clear(&k->slots);
    slots_clear(&k->meld_slots);
    slots_clear(&k->match_slots);
    Py_XDECREF(k->state_class);
    Py_XDECREF(k->flat_template);
    Py_TYPE(k)->tp_free((PyObject *)k);
}

KERNEL_METHODS(DitchKernel,
               {"deal", (PyCFunction)(void (*)(void))DitchKernel_deal, METH_FASTCALL,
                "deal(dealer, deck) -> a new hand's state, the deck its draw pile."}, )

PyTypeObject DitchKernelType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "rummyzoo.envs._native.DitchKernel",
    .tp_basicsize = sizeof(DitchKernel),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "DitchKernel(layout): Ditch Rummy's compiled turn for one game config.",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)DitchKernel_init,
    .tp_dealloc = (destructor)DitchKernel_dealloc,
    .tp_methods = DitchKernel_methods,
};
