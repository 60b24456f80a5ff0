/* Compiled kernels of rummyzoo.envs: the optimal-deadwood search of MeldSolver (and the
 * deadwood each discard leaves), two array builders of Knock Rummy (the deal, card names), and
 * the uniform pick among legal actions of the random agent (one mask, or every row of many).
 * The variants' compiled turns are in _knock.c, _ditch.c and _rummy500.c, what they share in
 * _kernel.c.
 *
 * Deadwood search (Solver):
 * The same search as MeldSolver.solve_mask in melds.py, step for step, so the two return
 * identical results, ties included (the test suite compares them on random hands):
 *   - at most one rank can form a set: every suit is solved on its own by runs (a table over
 *     the 8192 suit patterns), then each set of that rank is tried in turn;
 *   - otherwise the candidate melds (runs suit by suit, then sets rank by rank) are searched
 *     exactly, branching on the lowest coverable card (left loose first, then each meld that
 *     holds it in candidate order), memoised on the cards still available.
 * A strictly better value replaces the best so far, as in the Python code.
 *
 * Hands are 52-bit masks (bit c = card id c = suit * 13 + rank). Supported: runs of 3+, sets
 * of 3 or 4; the ace's run positions and the rank values come from the Python solver.
 */
#define RUMMYZOO_NATIVE_MAIN
#include "_native.h"
#ifdef __SSE2__
#include <emmintrin.h>
#endif

/* ------------------------------------------------------------------ tables */

static int runs_in_pattern(const int *positions, int npos, unsigned pattern, uint16_t *out) {
    int count = 0;
    for (int start = 0; start < npos; start++) {
        unsigned mask = 0;
        for (int end = start; end < npos; end++) {
            unsigned bit = 1u << positions[end];
            if (!(pattern & bit) || (mask & bit))
                break;
            mask |= bit;
            if (end - start + 1 >= 3) {
                if (out)
                    out[count] = (uint16_t)mask;
                count++;
            }
        }
    }
    return count;
}

static void fill_suit_best(Solver *s, unsigned pattern, char *done) {
    if (done[pattern])
        return;
    SuitBest best = {0, 0, {0}};
    uint32_t lo = s->run_offset[pattern], hi = s->run_offset[pattern + 1];
    if (hi > lo) {
        unsigned uni = 0;
        for (uint32_t i = lo; i < hi; i++)
            uni |= s->run_pool[i];
        unsigned card = uni & (~uni + 1);
        fill_suit_best(s, pattern & ~card, done);
        best = s->suit_best[pattern & ~card];
        for (uint32_t i = lo; i < hi; i++) {
            unsigned r = s->run_pool[i];
            if (!(r & card))
                continue;
            fill_suit_best(s, pattern & ~r, done);
            const SuitBest *rest = &s->suit_best[pattern & ~r];
            int val = rest->value + s->pattern_value[r];
            if (val > best.value) {
                best.value = val;
                best.count = rest->count + 1;
                best.runs[0] = (uint16_t)r;
                memcpy(best.runs + 1, rest->runs, sizeof(uint16_t) * (size_t)rest->count);
            }
        }
    }
    s->suit_best[pattern] = best;
    done[pattern] = 1;
}

static int build_tables(Solver *s, const int *positions, int npos) {
    for (unsigned p = 0; p < NUM_PATTERNS; p++) {
        int v = 0;
        for (int r = 0; r < NUM_RANKS; r++)
            if (p >> r & 1)
                v += s->rank_values[r];
        s->pattern_value[p] = v;
    }
    uint32_t total = 0, most = 0;
    for (unsigned p = 0; p < NUM_PATTERNS; p++) {
        s->run_offset[p] = total;
        uint32_t count = (uint32_t)runs_in_pattern(positions, npos, p, NULL);
        total += count;
        most = count > most ? count : most;
    }
    if (4 * most + NUM_RANKS * 5 > MAX_CANDIDATES) {
        PyErr_SetString(PyExc_ValueError, "these run positions allow too many runs per suit");
        return -1;
    }
    s->run_offset[NUM_PATTERNS] = total;
    s->run_pool = PyMem_Malloc(sizeof(uint16_t) * (total ? total : 1));
    if (!s->run_pool)
        return -1;
    for (unsigned p = 0; p < NUM_PATTERNS; p++)
        runs_in_pattern(positions, npos, p, s->run_pool + s->run_offset[p]);
    char *done = PyMem_Calloc(NUM_PATTERNS, 1);
    if (!done)
        return -1;
    for (unsigned p = 0; p < NUM_PATTERNS; p++)
        fill_suit_best(s, p, done);
    PyMem_Free(done);
    /* Sets of each rank per 4-bit suit pattern: every 3 suits (in combinations order), then 4. */
    for (int rank = 0; rank < NUM_RANKS; rank++) {
        for (int pattern = 0; pattern < 16; pattern++) {
            int suits[4], k = 0, n = 0;
            for (int su = 0; su < 4; su++)
                if (pattern >> su & 1)
                    suits[k++] = su;
            for (int i = 0; i < k; i++)
                for (int j = i + 1; j < k; j++)
                    for (int m = j + 1; m < k; m++)
                        s->sets[rank][pattern][n++] = (1ULL << (suits[i] * 13 + rank)) |
                                                      (1ULL << (suits[j] * 13 + rank)) |
                                                      (1ULL << (suits[m] * 13 + rank));
            if (k == 4)
                s->sets[rank][pattern][n++] = (1ULL << rank) | (1ULL << (13 + rank)) |
                                              (1ULL << (26 + rank)) | (1ULL << (39 + rank));
            s->set_count[rank][pattern] = n;
        }
    }
    return 0;
}

/* ------------------------------------------------------------------ search */

static inline int hand_value(const Solver *s, uint64_t hand) {
    return s->pattern_value[hand & SUIT_BITS] + s->pattern_value[(hand >> 13) & SUIT_BITS] +
           s->pattern_value[(hand >> 26) & SUIT_BITS] + s->pattern_value[(hand >> 39) & SUIT_BITS];
}

static inline unsigned rank_pattern(uint64_t hand, int rank) {
    return (unsigned)((hand >> rank & 1) | (hand >> (13 + rank) & 1) << 1 |
                      (hand >> (26 + rank) & 1) << 2 | (hand >> (39 + rank) & 1) << 3);
}

/* Best covered value by runs alone, each suit on its own; appends the runs to chosen. */
static int runs_only(const Solver *s, uint64_t hand, uint64_t *chosen, int *count) {
    int covered = 0;
    for (int shift = 0; shift < 52; shift += 13) {
        const SuitBest *b = &s->suit_best[(hand >> shift) & SUIT_BITS];
        if (b->value) {
            covered += b->value;
            for (int i = 0; i < b->count; i++)
                chosen[(*count)++] = (uint64_t)b->runs[i] << shift;
        }
    }
    return covered;
}

static inline size_t memo_slot(uint64_t key, size_t size) {
    return (size_t)((key * 0x9E3779B97F4A7C15ULL) >> 20) & (size - 1);
}

static int memo_grow(Solver *s) {
    size_t size = s->memo_size ? s->memo_size * 2 : 1024;
    MemoEntry *table = PyMem_Calloc(size, sizeof(MemoEntry));
    if (!table)
        return -1;
    for (size_t i = 0; i < s->memo_size; i++) {
        MemoEntry *e = &s->memo[i];
        if (e->stamp != s->stamp)
            continue;
        size_t j = memo_slot(e->key, size);
        while (table[j].stamp == s->stamp)
            j = (j + 1) & (size - 1);
        table[j] = *e;
    }
    PyMem_Free(s->memo);
    s->memo = table;
    s->memo_size = size;
    return 0;
}

static MemoEntry *memo_find(Solver *s, uint64_t avail, int *found) {
    size_t j = memo_slot(avail, s->memo_size);
    while (s->memo[j].stamp == s->stamp) {
        if (s->memo[j].key == avail) {
            *found = 1;
            return &s->memo[j];
        }
        j = (j + 1) & (s->memo_size - 1);
    }
    *found = 0;
    return &s->memo[j];
}

/* Best covered value with melds from cands (all within avail); -1 on memory error. */
static int search(Solver *s, const uint64_t *cands, int ncands, uint64_t avail) {
    if (ncands == 0)
        return 0;
    int found;
    MemoEntry *e = memo_find(s, avail, &found);
    if (found)
        return e->value;
    uint64_t uni = 0;
    for (int i = 0; i < ncands; i++)
        uni |= cands[i];
    uint64_t card = uni & (~uni + 1);
    uint64_t *sub = PyMem_Malloc(sizeof(uint64_t) * (size_t)ncands);
    if (!sub)
        return -1;
    int n = 0;
    for (int i = 0; i < ncands; i++)
        if (!(cands[i] & card))
            sub[n++] = cands[i];
    int best = search(s, sub, n, avail & ~card);
    uint64_t best_meld = 0, best_next = avail & ~card;
    for (int i = 0; i < ncands && best >= 0; i++) {
        uint64_t m = cands[i];
        if (!(m & card))
            continue;
        n = 0;
        for (int j = 0; j < ncands; j++)
            if (!(cands[j] & m))
                sub[n++] = cands[j];
        int val = search(s, sub, n, avail & ~m);
        if (val < 0) {
            best = -1;
            break;
        }
        val += hand_value(s, m);
        if (val > best) {
            best = val;
            best_meld = m;
            best_next = avail & ~m;
        }
    }
    PyMem_Free(sub);
    if (best < 0)
        return -1;
    if (2 * (s->memo_used + 1) > s->memo_size && memo_grow(s) < 0)
        return -1;
    e = memo_find(s, avail, &found);
    e->key = avail;
    e->stamp = s->stamp;
    e->value = best;
    e->meld = best_meld;
    e->next = best_next;
    s->memo_used++;
    return best;
}

static PyObject *result(int deadwood, const uint64_t *chosen, int count) {
    PyObject *melds = PyTuple_New(count);
    if (!melds)
        return NULL;
    for (int i = 0; i < count; i++) {
        PyObject *m = PyLong_FromUnsignedLongLong(chosen[i]);
        if (!m) {
            Py_DECREF(melds);
            return NULL;
        }
        PyTuple_SET_ITEM(melds, i, m);
    }
    PyObject *out = Py_BuildValue("(iN)", deadwood, melds);
    return out;
}

/* Optimal deadwood of a 52-bit hand, its melds into chosen (count of them in *count); -1 with
 * MemoryError set when the memo cannot grow. */
int solve_core(Solver *s, uint64_t hand, uint64_t *chosen, int *count) {
    *count = 0;
    unsigned a = hand & SUIT_BITS, b = (hand >> 13) & SUIT_BITS, c = (hand >> 26) & SUIT_BITS,
             d = (hand >> 39) & SUIT_BITS;
    unsigned ranks = (a & b & (c | d)) | (c & d & (a | b));
    int total = hand_value(s, hand);
    if (!(ranks & (ranks - 1))) {
        int covered = runs_only(s, hand, chosen, count);
        if (ranks) {
            int rank = 0;
            while (!(ranks >> rank & 1))
                rank++;
            unsigned pattern = rank_pattern(hand, rank);
            for (int i = 0; i < s->set_count[rank][pattern]; i++) {
                uint64_t meld = s->sets[rank][pattern][i];
                uint64_t runs[MAX_CHOSEN];
                int nruns = 0;
                int rest = runs_only(s, hand & ~meld, runs, &nruns);
                rest += s->rank_values[rank] * popcount64(meld);
                if (rest > covered) {
                    covered = rest;
                    chosen[0] = meld;
                    memcpy(chosen + 1, runs, sizeof(uint64_t) * (size_t)nruns);
                    *count = nruns + 1;
                }
            }
        }
        return total - covered;
    }
    uint64_t cands[MAX_CANDIDATES];
    int ncands = candidate_melds(s, hand, cands);
    uint64_t uni = 0;
    int size = 0;
    for (int i = 0; i < ncands; i++) {
        uni |= cands[i];
        size += popcount64(cands[i]);
    }
    if (size == popcount64(uni)) {
        memcpy(chosen, cands, sizeof(uint64_t) * (size_t)ncands);
        *count = ncands;
        return total - hand_value(s, uni);
    }
    if (!s->memo && memo_grow(s) < 0) {
        PyErr_NoMemory();
        return -1;
    }
    if (++s->stamp == 0) { /* wrapped: clear the stamps once */
        memset(s->memo, 0, sizeof(MemoEntry) * s->memo_size);
        s->stamp = 1;
    }
    s->memo_used = 0;
    int covered = search(s, cands, ncands, uni);
    if (covered < 0) {
        PyErr_NoMemory();
        return -1;
    }
    uint64_t avail = uni;
    for (;;) {
        int found;
        MemoEntry *e = memo_find(s, avail, &found);
        if (!found)
            break;
        if (e->meld)
            chosen[(*count)++] = e->meld;
        avail = e->next;
    }
    return total - covered;
}

/* Candidate melds of a hand: runs suit by suit, then sets rank by rank (the order of
 * MeldSolver.candidate_melds); returns how many were written to cands. */
int candidate_melds(const Solver *s, uint64_t hand, uint64_t *cands) {
    unsigned a = hand & SUIT_BITS, b = (hand >> 13) & SUIT_BITS, c = (hand >> 26) & SUIT_BITS,
             d = (hand >> 39) & SUIT_BITS;
    unsigned ranks = (a & b & (c | d)) | (c & d & (a | b));
    int ncands = 0;
    for (int suit = 0; suit < 4; suit++) {
        unsigned pattern = (hand >> (13 * suit)) & SUIT_BITS;
        for (uint32_t i = s->run_offset[pattern]; i < s->run_offset[pattern + 1]; i++)
            cands[ncands++] = (uint64_t)s->run_pool[i] << (13 * suit);
    }
    for (int rank = 0; rank < NUM_RANKS; rank++) {
        if (!(ranks >> rank & 1))
            continue;
        unsigned pattern = rank_pattern(hand, rank);
        for (int i = 0; i < s->set_count[rank][pattern]; i++)
            cands[ncands++] = s->sets[rank][pattern][i];
    }
    return ncands;
}

/* Optimal deadwood of the hand without each of its cards, into after[card] (the cards of the
 * hand only); the cards in the order MeldSolver.deadwood_after_discards lists them (those in
 * no candidate meld, then the others, each lowest first) into order, *count of them. A card
 * in no candidate meld leaves the optimum but for its own value, so only the others need a
 * search of their own. -1 with MemoryError set on failure. */
int deadwood_after(Solver *s, uint64_t hand, int *after, int *order, int *count) {
    uint64_t cands[MAX_CANDIDATES], chosen[MAX_CHOSEN + 5];
    int ncands = candidate_melds(s, hand, cands), nchosen;
    uint64_t uni = 0;
    for (int i = 0; i < ncands; i++)
        uni |= cands[i];
    int full = ncands ? solve_core(s, hand, chosen, &nchosen) : hand_value(s, hand);
    if (full < 0)
        return -1;
    *count = 0;
    for (uint64_t rest = hand & ~uni; rest; rest &= rest - 1) {
        int card = __builtin_ctzll(rest);
        after[card] = full - s->rank_values[card % NUM_RANKS];
        order[(*count)++] = card;
    }
    for (uint64_t melded = hand & uni; melded; melded &= melded - 1) {
        int card = __builtin_ctzll(melded);
        int value = solve_core(s, hand & ~(1ULL << card), chosen, &nchosen);
        if (value < 0)
            return -1;
        after[card] = value;
        order[(*count)++] = card;
    }
    return 0;
}

static int read_hand(PyObject *arg, uint64_t *hand) {
    *hand = PyLong_AsUnsignedLongLong(arg);
    if (*hand == (uint64_t)-1 && PyErr_Occurred())
        return -1;
    if (*hand >> 52) {
        PyErr_SetString(PyExc_ValueError, "a hand is a 52-bit card mask");
        return -1;
    }
    return 0;
}

static PyObject *Solver_solve(Solver *s, PyObject *arg) {
    uint64_t hand;
    if (read_hand(arg, &hand) < 0)
        return NULL;
    uint64_t chosen[MAX_CHOSEN + 5];
    int count;
    int deadwood = solve_core(s, hand, chosen, &count);
    return deadwood < 0 ? NULL : result(deadwood, chosen, count);
}

static PyObject *Solver_deadwood_after_discards(Solver *s, PyObject *arg) {
    uint64_t hand;
    if (read_hand(arg, &hand) < 0)
        return NULL;
    int after[64], order[64], count;
    if (deadwood_after(s, hand, after, order, &count) < 0)
        return NULL;
    PyObject *out = PyDict_New();
    for (int i = 0; out && i < count; i++) {
        PyObject *key = PyLong_FromLong(order[i]), *value = PyLong_FromLong(after[order[i]]);
        if (!key || !value || PyDict_SetItem(out, key, value) < 0)
            Py_CLEAR(out);
        Py_XDECREF(key);
        Py_XDECREF(value);
    }
    return out;
}

/* ------------------------------------------------------------------ type */

static int Solver_init(Solver *s, PyObject *args, PyObject *kwds) {
    static char *kwlist[] = {"positions", "rank_values", NULL};
    PyObject *positions_obj, *values_obj;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OO", kwlist, &positions_obj, &values_obj))
        return -1;
    PyObject *pos_seq = PySequence_Fast(positions_obj, "positions must be a sequence");
    if (!pos_seq)
        return -1;
    PyObject *val_seq = PySequence_Fast(values_obj, "rank_values must be a sequence");
    if (!val_seq) {
        Py_DECREF(pos_seq);
        return -1;
    }
    int positions[14];
    Py_ssize_t npos = PySequence_Fast_GET_SIZE(pos_seq);
    int ok = npos >= 1 && npos <= 14 && PySequence_Fast_GET_SIZE(val_seq) == NUM_RANKS;
    for (Py_ssize_t i = 0; ok && i < npos; i++) {
        long p = PyLong_AsLong(PySequence_Fast_GET_ITEM(pos_seq, i));
        ok = p >= 0 && p < NUM_RANKS;
        positions[i] = (int)p;
    }
    for (int r = 0; ok && r < NUM_RANKS; r++) {
        long v = PyLong_AsLong(PySequence_Fast_GET_ITEM(val_seq, r));
        ok = v >= 0 && v <= 1000;
        s->rank_values[r] = (int)v;
    }
    Py_DECREF(pos_seq);
    Py_DECREF(val_seq);
    if (!ok) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_ValueError,
                            "positions: 1-14 rank indices 0..12; rank_values: 13 ints 0..1000");
        return -1;
    }
    PyMem_Free(s->run_pool);
    s->run_pool = NULL;
    if (build_tables(s, positions, (int)npos) < 0) {
        if (!PyErr_Occurred())
            PyErr_NoMemory();
        return -1;
    }
    return 0;
}

static void Solver_dealloc(Solver *s) {
    PyMem_Free(s->run_pool);
    PyMem_Free(s->memo);
    Py_TYPE(s)->tp_free((PyObject *)s);
}

static PyMethodDef Solver_methods[] = {
    {"solve", (PyCFunction)Solver_solve, METH_O,
     "solve(hand) -> (deadwood, melds): optimal deadwood of a 52-bit hand mask."},
    {"deadwood_after_discards", (PyCFunction)Solver_deadwood_after_discards, METH_O,
     "deadwood_after_discards(hand) -> {card: optimal deadwood of the hand without it}."},
    {NULL, NULL, 0, NULL},
};

PyTypeObject SolverType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "rummyzoo.envs._native.Solver",
    .tp_basicsize = sizeof(Solver),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Solver(positions, rank_values): compiled optimal-deadwood search.",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)Solver_init,
    .tp_dealloc = (destructor)Solver_dealloc,
    .tp_methods = Solver_methods,
};

/* ------------------------------------------------------------------ array builders
 *
 * Mechanics only: who gets which card stays in the Python rules (envs/knock_rummy/rules.py),
 * which also carry the numpy version of each builder for installs without this module.
 */

int check_planes(PyObject *obj, int ndim) {
    if (!PyArray_Check(obj) || PyArray_TYPE((PyArrayObject *)obj) != NPY_FLOAT32 ||
        PyArray_NDIM((PyArrayObject *)obj) != ndim ||
        !PyArray_IS_C_CONTIGUOUS((PyArrayObject *)obj)) {
        PyErr_Format(PyExc_TypeError, "expected a C-contiguous %d-d float32 array", ndim);
        return -1;
    }
    return 0;
}

/* deal(planes, deck, count, players, first_row) -> (hand masks, deck as a list)
 * Deals the first ``count`` cards of the 1-d int64 deck one at a time round the table: card k
 * goes to seat (first_row + k) % players, which gets a 1 in its plane row (rows 0..players-1 of
 * the 2-d float32 planes) and the card's bit in its 52-bit hand mask. */
static PyObject *deal(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    if (nargs != 5) {
        PyErr_SetString(PyExc_TypeError,
                        "deal(planes, deck, count, players, first_row) takes 5 arguments");
        return NULL;
    }
    if (check_planes(args[0], 2) < 0)
        return NULL;
    PyArrayObject *planes = (PyArrayObject *)args[0];
    PyArrayObject *deck = (PyArrayObject *)args[1];
    if (!PyArray_Check(args[1]) || PyArray_TYPE(deck) != NPY_INT64 || PyArray_NDIM(deck) != 1 ||
        !PyArray_IS_C_CONTIGUOUS(deck)) {
        PyErr_SetString(PyExc_TypeError, "deck must be a contiguous 1-d int64 array");
        return NULL;
    }
    Py_ssize_t count = PyLong_AsSsize_t(args[2]);
    Py_ssize_t players = PyLong_AsSsize_t(args[3]);
    Py_ssize_t first = PyLong_AsSsize_t(args[4]);
    if (PyErr_Occurred())
        return NULL;
    npy_intp size = PyArray_DIM(deck, 0), width = PyArray_DIM(planes, 1);
    if (players < 1 || players > PyArray_DIM(planes, 0) || players > 64 || count < 0 ||
        count > size || first < 0 || width > 64) {
        PyErr_SetString(PyExc_ValueError, "deal: count, players or first_row out of range");
        return NULL;
    }
    const npy_int64 *cards = (const npy_int64 *)PyArray_DATA(deck);
    for (npy_intp k = 0; k < size; k++) {
        if (cards[k] < 0 || cards[k] >= width) {
            PyErr_SetString(PyExc_ValueError, "deal: a card id is outside the planes");
            return NULL;
        }
    }
    uint64_t hands[64] = {0};
    float *rows = (float *)PyArray_DATA(planes);
    for (Py_ssize_t k = 0; k < count; k++) {
        Py_ssize_t seat = (first + k) % players;
        rows[seat * width + cards[k]] = 1.0f;
        hands[seat] |= 1ULL << cards[k];
    }
    PyObject *masks = PyList_New(players);
    PyObject *listed = PyList_New(size);
    if (!masks || !listed)
        goto fail;
    for (Py_ssize_t i = 0; i < players; i++) {
        PyObject *m = PyLong_FromUnsignedLongLong(hands[i]);
        if (!m)
            goto fail;
        PyList_SET_ITEM(masks, i, m);
    }
    for (npy_intp k = 0; k < size; k++) {
        PyObject *c = PyLong_FromLongLong(cards[k]);
        if (!c)
            goto fail;
        PyList_SET_ITEM(listed, k, c);
    }
    return Py_BuildValue("(NN)", masks, listed);
fail:
    Py_XDECREF(masks);
    Py_XDECREF(listed);
    return NULL;
}

/* The nonzero bytes of ``size`` 1-byte items: their count, and the index of the k-th (0-based;
 * -1 where there is none). Eight items at a time: a word's nonzero bytes are the high bits of
 * ((w & 0x7f..) + 0x7f..) | w, then kept to 0x80 each. */
#define NONZERO_LOW7 0x7f7f7f7f7f7f7f7fULL
#define NONZERO_HIGH 0x8080808080808080ULL

/* Eight items as a word whose low byte is the first item (any byte order). */
static inline uint64_t load_items(const char *items) {
    uint64_t w;
    memcpy(&w, items, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    w = __builtin_bswap64(w);
#endif
    return w;
}

static inline uint64_t nonzero_bytes(uint64_t w) {
    return (((w & NONZERO_LOW7) + NONZERO_LOW7) | w) & NONZERO_HIGH;
}

/* How many bytes of nonzero_bytes(w) are set (a multiply adds the eight 0/1 bytes: no popcount
 * instruction needed where the build does not target one). */
static inline npy_intp count_flags(uint64_t flags) {
    return (npy_intp)(((flags >> 7) * 0x0101010101010101ULL) >> 56);
}

static npy_intp count_nonzero_bytes(const char *items, npy_intp size) {
    npy_intp count = 0, i = 0;
#ifdef __SSE2__
    /* sixteen items at a time: each lane of acc counts its zero items (a compare gives -1
     * there), at most 255 blocks before the lanes are summed */
    const __m128i zero = _mm_setzero_si128();
    while (i + 16 <= size) {
        npy_intp blocks = (size - i) / 16;
        if (blocks > 255)
            blocks = 255;
        __m128i acc = zero;
        for (npy_intp b = 0; b < blocks; b++, i += 16)
            acc = _mm_sub_epi8(acc,
                               _mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(items + i)), zero));
        __m128i sums = _mm_sad_epu8(acc, zero);
        count += 16 * blocks - (_mm_cvtsi128_si32(sums) + _mm_extract_epi16(sums, 4));
    }
#endif
    for (; i + 8 <= size; i += 8) {
        count += count_flags(nonzero_bytes(load_items(items + i)));
    }
    for (; i < size; i++)
        count += items[i] != 0;
    return count;
}

/* The position of the k-th (0-based) set bit of bits (k below their count). */
static inline int kth_set_bit(uint64_t bits, npy_intp k) {
    for (; k; k--)
        bits &= bits - 1;
    return __builtin_ctzll(bits);
}

static npy_intp kth_nonzero_byte(const char *items, npy_intp size, npy_intp k) {
    npy_intp i = 0;
#ifdef __SSE2__
    const __m128i zero = _mm_setzero_si128();
    for (; i + 16 <= size; i += 16) {
        uint64_t bits = (uint64_t)(~_mm_movemask_epi8(_mm_cmpeq_epi8(
                                       _mm_loadu_si128((const __m128i *)(items + i)), zero)) &
                                   0xFFFF); /* bit j: item i + j is nonzero */
        npy_intp here = popcount64(bits);
        if (k < here)
            return i + kth_set_bit(bits, k);
        k -= here;
    }
#endif
    for (; i + 8 <= size; i += 8) {
        uint64_t bits = nonzero_bytes(load_items(items + i));
        npy_intp here = count_flags(bits);
        if (k < here)
            return i + (kth_set_bit(bits, k) >> 3); /* a flag is a byte's high bit */
        k -= here;
    }
    for (; i < size; i++)
        if (items[i] != 0 && k-- == 0)
            return i;
    return -1;
}

/* uniform_nonzero(mask, bitgen_capsule) -> int or None
 * A uniformly random index among the nonzero entries of a 1-d array of 1-byte items (int8,
 * uint8 or bool), drawn as numpy's Generator.random() would draw it from the same bit generator
 * (one next_double, then entry int(u * count) of the nonzero indices): the same pick as
 * ``legal = mask.nonzero()[0]; legal[int(rng.random() * legal.size)]``. -1 when every entry is
 * 0; None for an array of another kind (the caller then takes the numpy route). The capsule is
 * ``rng.bit_generator.capsule``; the draw holds the GIL, as the caller's thread does. */
static PyObject *uniform_nonzero(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "uniform_nonzero(mask, bitgen_capsule) takes 2 arguments");
        return NULL;
    }
    bitgen_t *bitgen = (bitgen_t *)PyCapsule_GetPointer(args[1], "BitGenerator");
    if (!bitgen)
        return NULL;
    if (!PyArray_Check(args[0]))
        Py_RETURN_NONE;
    PyArrayObject *mask = (PyArrayObject *)args[0];
    if (PyArray_NDIM(mask) != 1 || PyArray_ITEMSIZE(mask) != 1 ||
        !PyArray_IS_C_CONTIGUOUS(mask) ||
        !(PyArray_TYPE(mask) == NPY_INT8 || PyArray_TYPE(mask) == NPY_UINT8 ||
          PyArray_TYPE(mask) == NPY_BOOL))
        Py_RETURN_NONE;
    const char *items = (const char *)PyArray_DATA(mask);
    npy_intp size = PyArray_DIM(mask, 0), count = count_nonzero_bytes(items, size);
    if (count == 0)
        return PyLong_FromLong(-1);
    npy_intp k = (npy_intp)(bitgen->next_double(bitgen->state) * (double)count);
    npy_intp pick = kth_nonzero_byte(items, size, k < count ? k : count - 1);
    return PyLong_FromSsize_t(pick);
}

/* uniform_nonzero_rows(masks, bitgen_capsule, out) -> None
 * uniform_nonzero for every row of a 2-d C-contiguous int8/uint8/bool array, in row order (one
 * next_double per row), into ``out`` (int64, one entry per row): -1 for a row of zeros. The
 * same picks as ``u = rng.random(rows)`` and entry int(u[r] * count) of row r's nonzero
 * indices. */
static PyObject *uniform_nonzero_rows(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError,
                        "uniform_nonzero_rows(masks, bitgen_capsule, out) takes 3 arguments");
        return NULL;
    }
    bitgen_t *bitgen = (bitgen_t *)PyCapsule_GetPointer(args[1], "BitGenerator");
    if (!bitgen)
        return NULL;
    if (!PyArray_Check(args[0]) || !PyArray_Check(args[2])) {
        PyErr_SetString(PyExc_TypeError, "masks and out must be numpy arrays");
        return NULL;
    }
    PyArrayObject *masks = (PyArrayObject *)args[0], *out = (PyArrayObject *)args[2];
    if (PyArray_NDIM(masks) != 2 || PyArray_ITEMSIZE(masks) != 1 ||
        !PyArray_IS_C_CONTIGUOUS(masks) ||
        !(PyArray_TYPE(masks) == NPY_INT8 || PyArray_TYPE(masks) == NPY_UINT8 ||
          PyArray_TYPE(masks) == NPY_BOOL)) {
        PyErr_SetString(PyExc_TypeError, "masks must be a 2-d C-contiguous int8 array");
        return NULL;
    }
    npy_intp rows = PyArray_DIM(masks, 0), size = PyArray_DIM(masks, 1);
    if (PyArray_NDIM(out) != 1 || PyArray_TYPE(out) != NPY_INT64 ||
        !PyArray_IS_C_CONTIGUOUS(out) || PyArray_DIM(out, 0) != rows ||
        !PyArray_ISWRITEABLE(out)) {
        PyErr_SetString(PyExc_TypeError, "out must be a writeable int64 vector, one per row");
        return NULL;
    }
    const char *items = (const char *)PyArray_DATA(masks);
    int64_t *picks = (int64_t *)PyArray_DATA(out);
    for (npy_intp r = 0; r < rows; r++, items += size) {
        npy_intp count = count_nonzero_bytes(items, size);
        double u = bitgen->next_double(bitgen->state);
        if (count == 0) {
            picks[r] = -1;
            continue;
        }
        npy_intp k = (npy_intp)(u * (double)count);
        picks[r] = kth_nonzero_byte(items, size, k < count ? k : count - 1);
    }
    Py_RETURN_NONE;
}

/* legal_shifted(logits, masks) -> float64 vector
 * Every legal entry of each row of ``logits`` (2-d C-contiguous float32; ``masks``: bool of the
 * same shape), in row and then action order, less its row's largest legal entry, in float64:
 * what ``rummyzoo.agents.checkpoints.sample_legal`` takes the exponentials of. The maximum is
 * numpy's (a NaN among the entries makes it NaN). ValueError for a row without a legal entry. */
static PyObject *legal_shifted(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "legal_shifted(logits, masks) takes 2 arguments");
        return NULL;
    }
    if (check_array(args[0], NPY_FLOAT32, 2, -1, -1, 0, "logits") < 0)
        return NULL;
    PyArrayObject *logits = (PyArrayObject *)args[0];
    npy_intp rows = PyArray_DIM(logits, 0), cols = PyArray_DIM(logits, 1);
    if (check_array(args[1], NPY_BOOL, 2, rows, cols, 0, "masks") < 0)
        return NULL;
    const char *legal = (const char *)PyArray_DATA((PyArrayObject *)args[1]);
    const float *x = (const float *)PyArray_DATA(logits);
    npy_intp total = count_nonzero_bytes(legal, rows * cols);
    PyArrayObject *out = (PyArrayObject *)PyArray_SimpleNew(1, &total, NPY_FLOAT64);
    if (!out)
        return NULL;
    double *values = (double *)PyArray_DATA(out);
    for (npy_intp r = 0; r < rows; r++, x += cols, legal += cols) {
        double top = 0.0;
        int seen = 0;
        for (npy_intp j = 0; j < cols; j++) {
            if (!legal[j])
                continue;
            double v = (double)x[j];
            /* numpy's maximum: the first argument if it is at least the second or NaN */
            if (!seen || !(top >= v || top != top))
                top = v;
            seen = 1;
        }
        if (!seen) {
            Py_DECREF(out);
            PyErr_Format(PyExc_ValueError, "row %zd has no legal entry", (Py_ssize_t)r);
            return NULL;
        }
        for (npy_intp j = 0; j < cols; j++)
            if (legal[j])
                *values++ = (double)x[j] - top;
    }
    return (PyObject *)out;
}

/* draw_legal(weights, masks, bitgen_capsule, out) -> None
 * One action per row of ``masks`` (2-d C-contiguous bool, every row with a legal entry), drawn
 * with ``weights`` (float64, one per legal entry in row and action order, as legal_shifted
 * lists them): per row in order, one next_double u (numpy's Generator.random), the running
 * sums of the row's weights added one after the other in action order, and the legal action
 * at position min(k, count - 1), k being how many running sums are at most u times the last
 * one; into ``out`` (int64, one per row). */
static PyObject *draw_legal(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    if (nargs != 4) {
        PyErr_SetString(PyExc_TypeError,
                        "draw_legal(weights, masks, bitgen_capsule, out) takes 4 arguments");
        return NULL;
    }
    if (check_array(args[1], NPY_BOOL, 2, -1, -1, 0, "masks") < 0)
        return NULL;
    PyArrayObject *masks = (PyArrayObject *)args[1];
    npy_intp rows = PyArray_DIM(masks, 0), cols = PyArray_DIM(masks, 1);
    const char *legal = (const char *)PyArray_DATA(masks);
    if (check_array(args[0], NPY_FLOAT64, 1, count_nonzero_bytes(legal, rows * cols), 0, 0,
                    "weights") < 0 ||
        check_array(args[3], NPY_INT64, 1, rows, 0, 1, "out") < 0)
        return NULL;
    bitgen_t *bitgen = (bitgen_t *)PyCapsule_GetPointer(args[2], "BitGenerator");
    if (!bitgen)
        return NULL;
    for (npy_intp r = 0; r < rows; r++) /* refused before anything is drawn or written */
        if (count_nonzero_bytes(legal + r * cols, cols) == 0) {
            PyErr_Format(PyExc_ValueError, "row %zd has no legal entry", (Py_ssize_t)r);
            return NULL;
        }
    const double *w = (const double *)PyArray_DATA((PyArrayObject *)args[0]);
    int64_t *picks = (int64_t *)PyArray_DATA((PyArrayObject *)args[3]);
    for (npy_intp r = 0; r < rows; r++, legal += cols) {
        npy_intp count = count_nonzero_bytes(legal, cols);
        double sum = 0.0;
        for (npy_intp i = 0; i < count; i++)
            sum += w[i];
        double u = bitgen->next_double(bitgen->state) * sum;
        double running = 0.0;
        npy_intp passed = 0;
        for (npy_intp i = 0; i < count; i++) {
            running += w[i];
            passed += running <= u;
        }
        passed = passed < count ? passed : count - 1;
        picks[r] = kth_nonzero_byte(legal, cols, passed);
        w += count;
    }
    Py_RETURN_NONE;
}

/* first_illegal(masks, games, actions) -> int
 * The first position j whose action is not legal in its game: actions[j] outside
 * 0..columns-1, or masks[games[j], actions[j]] zero; -1 where every one is legal. masks: a 2-d
 * C-contiguous int8 array; games and actions: int64 vectors of one length, games within the
 * rows (IndexError naming the first that is not). Nothing is written. */
static PyObject *first_illegal(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "first_illegal(masks, games, actions) takes 3 arguments");
        return NULL;
    }
    if (check_array(args[0], NPY_INT8, 2, -1, -1, 0, "masks") < 0 ||
        check_array(args[1], NPY_INT64, 1, -1, 0, 0, "games") < 0 ||
        check_array(args[2], NPY_INT64, 1, PyArray_DIM((PyArrayObject *)args[1], 0), 0, 0,
                    "actions") < 0)
        return NULL;
    PyArrayObject *masks = (PyArrayObject *)args[0];
    npy_intp rows = PyArray_DIM(masks, 0), cols = PyArray_DIM(masks, 1);
    npy_intp count = PyArray_DIM((PyArrayObject *)args[1], 0);
    const npy_int8 *m = (const npy_int8 *)PyArray_DATA(masks);
    const int64_t *games = (const int64_t *)PyArray_DATA((PyArrayObject *)args[1]);
    const int64_t *actions = (const int64_t *)PyArray_DATA((PyArrayObject *)args[2]);
    for (npy_intp j = 0; j < count; j++) {
        int64_t g = games[j], a = actions[j];
        if (g < 0 || g >= rows) {
            PyErr_Format(PyExc_IndexError, "game %lld out of range", (long long)g);
            return NULL;
        }
        if (a < 0 || a >= cols || !m[g * cols + a])
            return PyLong_FromSsize_t(j);
    }
    return PyLong_FromLong(-1);
}

/* mask_names(mask, names) -> list of str
 * names[c] for every set bit c of a 52-bit card mask, lowest card id first (names: a tuple of
 * 52 strings); the same as ``[names[c] for c in mask_cards(mask)]``. */
static PyObject *mask_names(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "mask_names(mask, names) takes 2 arguments");
        return NULL;
    }
    uint64_t mask = PyLong_AsUnsignedLongLong(args[0]);
    if (mask == (uint64_t)-1 && PyErr_Occurred())
        return NULL;
    if (!PyTuple_Check(args[1]) || PyTuple_GET_SIZE(args[1]) != 52) {
        PyErr_SetString(PyExc_TypeError, "names must be a tuple of 52 names");
        return NULL;
    }
    if (mask >> 52) {
        PyErr_SetString(PyExc_ValueError, "a card mask has 52 bits");
        return NULL;
    }
    PyObject *out = PyList_New(popcount64(mask));
    if (!out)
        return NULL;
    for (Py_ssize_t i = 0; mask; i++) {
        PyObject *name = PyTuple_GET_ITEM(args[1], __builtin_ctzll(mask));
        Py_INCREF(name);
        PyList_SET_ITEM(out, i, name);
        mask &= mask - 1;
    }
    return out;
}

static PyMethodDef module_methods[] = {
    {"uniform_nonzero", (PyCFunction)(void (*)(void))uniform_nonzero, METH_FASTCALL,
     "uniform_nonzero(mask, bitgen_capsule) -> a uniformly drawn nonzero index."},
    {"uniform_nonzero_rows", (PyCFunction)(void (*)(void))uniform_nonzero_rows, METH_FASTCALL,
     "uniform_nonzero_rows(masks, bitgen_capsule, out): uniform_nonzero of every row."},
    {"first_illegal", (PyCFunction)(void (*)(void))first_illegal, METH_FASTCALL,
     "first_illegal(masks, games, actions) -> the first position of an illegal action, or -1."},
    {"finish_hands", (PyCFunction)(void (*)(void))finish_hands, METH_FASTCALL,
     "finish_hands(matches, games, ..., settings) -> (left, deal, restart)."},
    {"legal_shifted", (PyCFunction)(void (*)(void))legal_shifted, METH_FASTCALL,
     "legal_shifted(logits, masks) -> each legal logit less its row's largest, float64."},
    {"draw_legal", (PyCFunction)(void (*)(void))draw_legal, METH_FASTCALL,
     "draw_legal(weights, masks, bitgen_capsule, out): one legal action per row, by weight."},
    {"mask_names", (PyCFunction)(void (*)(void))mask_names, METH_FASTCALL,
     "mask_names(mask, names) -> names of the cards in a 52-bit mask, lowest first."},
    {"deal", (PyCFunction)(void (*)(void))deal, METH_FASTCALL,
     "deal(planes, deck, count, players, first_row) -> (hand masks, deck as a list)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "_native",
    .m_doc = "Compiled kernels: optimal-deadwood search, Knock Rummy's turn, random picks.",
    .m_size = -1,
    .m_methods = module_methods,
};

PyMODINIT_FUNC PyInit__native(void) {
    import_array();
    if (PyType_Ready(&SolverType) < 0 || PyType_Ready(&KnockKernelType) < 0 ||
        PyType_Ready(&DitchKernelType) < 0 || PyType_Ready(&Rummy500KernelType) < 0 ||
        kernel_intern_names() < 0 || knock_intern_names() < 0 || ditch_intern_names() < 0 ||
        rummy500_intern_names() < 0)
        return NULL;
    PyObject *m = PyModule_Create(&module);
    if (!m)
        return NULL;
    /* Raised whenever a kernel is added or changed; rummyzoo.envs.native checks it, so a build
     * older than the Python code is set aside (with a warning) instead of half used. */
    if (PyModule_AddIntConstant(m, "API_VERSION", 9) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    if (PyModule_AddObjectRef(m, "Solver", (PyObject *)&SolverType) < 0 ||
        PyModule_AddObjectRef(m, "KnockKernel", (PyObject *)&KnockKernelType) < 0 ||
        PyModule_AddObjectRef(m, "DitchKernel", (PyObject *)&DitchKernelType) < 0 ||
        PyModule_AddObjectRef(m, "Rummy500Kernel", (PyObject *)&Rummy500KernelType) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
