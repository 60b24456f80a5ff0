/* Shared declarations of the compiled kernels' files: _native.c (the module, the deadwood
 * search, the array builders), _kernel.c (what the compiled turns share), _knock.c, _ditch.c and
 * _rummy500.c (the variants' compiled turns). */
#ifndef RUMMYZOO_NATIVE_H
#define RUMMYZOO_NATIVE_H
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
/* One numpy C-API table for the module's files (_native.c imports it). */
#define PY_ARRAY_UNIQUE_SYMBOL rummyzoo_native_ARRAY_API
#ifndef RUMMYZOO_NATIVE_MAIN
#define NO_IMPORT_ARRAY
#endif
#include <numpy/arrayobject.h>
#include <numpy/random/bitgen.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* The set bits of a word: the instruction where the build targets it, else a few shifts and a
 * multiply (cheaper than the library call that __builtin_popcountll becomes there). */
static inline int popcount64(uint64_t x) {
#ifdef __POPCNT__
    return __builtin_popcountll(x);
#else
    x -= (x >> 1) & 0x5555555555555555ULL;
    x = (x & 0x3333333333333333ULL) + ((x >> 2) & 0x3333333333333333ULL);
    x = (x + (x >> 4)) & 0x0F0F0F0F0F0F0F0FULL;
    return (int)((x * 0x0101010101010101ULL) >> 56);
#endif
}

#define NUM_RANKS 13
#define NUM_PATTERNS 8192
#define SUIT_BITS 0x1FFFu
#define MAX_CHOSEN 18 /* 52 cards / 3 per meld, rounded up */
#define MAX_CANDIDATES 512 /* runs of four suits + sets of 13 ranks, checked at construction */

typedef struct {
    int value;
    int count;
    uint16_t runs[5];
} SuitBest;

typedef struct {
    uint64_t key;   /* the available cards */
    uint32_t stamp; /* the solve that wrote this slot; older slots count as empty */
    int value;
    uint64_t meld; /* meld taken at this node, 0 when its lowest card stays loose */
    uint64_t next; /* available cards of the next node on the best path */
} MemoEntry;

typedef struct {
    PyObject_HEAD
    int rank_values[NUM_RANKS];
    int pattern_value[NUM_PATTERNS];
    uint32_t run_offset[NUM_PATTERNS + 1];
    uint16_t *run_pool;
    SuitBest suit_best[NUM_PATTERNS];
    uint64_t sets[NUM_RANKS][16][5];
    int set_count[NUM_RANKS][16];
    MemoEntry *memo;
    size_t memo_size; /* a power of two */
    size_t memo_used;
    uint32_t stamp; /* current solve, so the memo needs no clearing between solves */
} Solver;

extern PyTypeObject SolverType;
extern PyTypeObject KnockKernelType;
extern PyTypeObject DitchKernelType;
extern PyTypeObject Rummy500KernelType;

int solve_core(Solver *s, uint64_t hand, uint64_t *chosen, int *count);
int candidate_melds(const Solver *s, uint64_t hand, uint64_t *cands);
int deadwood_after(Solver *s, uint64_t hand, int *after, int *order, int *count);
int check_planes(PyObject *obj, int ndim);
/* Interns ``text`` into ``var`` in a names function that answers -1 on failure. */
#define INTERN(var, text)                                                                          \
    if (!(var = PyUnicode_InternFromString(text)))                                                 \
        return -1;
int knock_intern_names(void);
int ditch_intern_names(void);
int rummy500_intern_names(void);

/* _kernel.c: attribute names every compiled turn reads (interned by kernel_intern_names). */
extern PyObject *n_state, *n_mask, *n_decisions, *n_seat_totals, *n_over;
int kernel_intern_names(void);
int get_long(PyObject *obj, PyObject *name, long *out);
int set_long(PyObject *obj, PyObject *name, long value);
/* A new reference to the list attribute ``name``; TypeError naming the variant where it is not a
 * list. */
PyObject *get_list(PyObject *obj, PyObject *name, const char *variant);
/* Whether the state's hand is over: 1 or 0, -1 on error. */
int hand_over(PyObject *state);
/* RuntimeError naming the kernel type unless ``ready`` (its __init__ succeeded). */
int check_ready(int ready, const char *kernel);
/* The check that opens a kernel's __init__: a kernel initialised once is not initialised again
 * (a call in progress, which may run Python code, holds its tables). */
int init_once(int ready, const char *kernel);
/* The checks that open apply() and observe(): a ready kernel, ``want`` arguments (else a
 * TypeError showing ``usage``), and args[1] read as a C long into *value. */
int method_args(int ready, const char *kernel, Py_ssize_t nargs, Py_ssize_t want,
                const char *usage, PyObject *const *args, long *value);
/* Direct access to a state class's slots: where a state object is exactly of the class seen
 * at construction (its __slots__ members, generic attribute access, the class unchanged since:
 * the same version tag), a field is read and written at its offset, as the member descriptor
 * itself does; any other object goes through getattr / setattr, with their errors. */
#define KERNEL_MAX_SLOTS 64
typedef struct {
    PyTypeObject *type; /* owned; NULL: every access through getattr / setattr */
    unsigned int version;
    int count;
    PyObject **names[KERNEL_MAX_SLOTS]; /* the interned names */
    Py_ssize_t offset[KERNEL_MAX_SLOTS];
} Slots;

/* The offsets of ``names`` in ``cls`` (which may be any object: the fast path is off where it
 * is not such a class). -1 only on memory or interpreter errors. */
int slots_init(Slots *s, PyObject *cls, PyObject **const *names, int count);
void slots_clear(Slots *s);

static inline PyObject **slot_at(const Slots *s, PyObject *obj, int i) {
    PyTypeObject *type = s->type;
    if (type && Py_TYPE(obj) == type && type->tp_version_tag == s->version
#ifdef Py_TPFLAGS_VALID_VERSION_TAG
        && (type->tp_flags & Py_TPFLAGS_VALID_VERSION_TAG)
#endif
    )
        return (PyObject **)((char *)obj + s->offset[i]);
    return NULL;
}

/* A new reference to field i of obj. */
static inline PyObject *slot_get(const Slots *s, PyObject *obj, int i) {
    PyObject **at = slot_at(s, obj, i);
    if (at && *at) {
        Py_INCREF(*at);
        return *at;
    }
    return PyObject_GetAttr(obj, *s->names[i]); /* unset slots raise AttributeError there */
}

static inline int slot_set(const Slots *s, PyObject *obj, int i, PyObject *value) {
    PyObject **at = slot_at(s, obj, i);
    if (!at)
        return PyObject_SetAttr(obj, *s->names[i], value);
    PyObject *old = *at;
    Py_INCREF(value);
    *at = value;
    Py_XDECREF(old);
    return 0;
}

/* The fields of a Match that the vector engine's step reads and writes. */
enum { MATCH_STATE, MATCH_MASK, MATCH_DECISIONS, MATCH_SEAT_TOTALS, NUM_MATCH_SLOTS };
int match_slots_init(Slots *s, PyObject *match_class);

/* The value of an int (or int subclass) of a state: no other object is converted, so reading a
 * number never runs Python code (which could change the lists the kernels are reading). */
static inline int int_value(PyObject *v, long *out) {
    if (!PyLong_Check(v)) {
        PyErr_Format(PyExc_TypeError, "a state's numbers are ints, not %.100s",
                     Py_TYPE(v)->tp_name);
        return -1;
    }
    *out = PyLong_AsLong(v);
    return (*out == -1 && PyErr_Occurred()) ? -1 : 0;
}

static inline int slot_long(const Slots *s, PyObject *obj, int i, long *out) {
    PyObject *value = slot_get(s, obj, i);
    if (!value)
        return -1;
    int r = int_value(value, out);
    Py_DECREF(value);
    return r;
}

static inline int slot_set_long(const Slots *s, PyObject *obj, int i, long value) {
    PyObject *v = PyLong_FromLong(value);
    if (!v)
        return -1;
    int r = slot_set(s, obj, i, v);
    Py_DECREF(v);
    return r;
}

/* The truth of field i (a hand's ``over``): 1 or 0, -1 on error. */
int slot_true(const Slots *s, PyObject *obj, int i);

/* TypeError: field i of a ``variant`` state is not a list. */
int slot_not_list(const Slots *s, int i, const char *variant);

/* A new reference to list field i; TypeError naming the variant where it is not a list. */
static inline PyObject *slot_list(const Slots *s, PyObject *obj, int i, const char *variant) {
    PyObject *value = slot_get(s, obj, i);
    if (value && !PyList_CheckExact(value)) {
        Py_DECREF(value);
        slot_not_list(s, i, variant);
        return NULL;
    }
    return value;
}

/* The checks that open observe(state, seat, totals): method_args, the seat in 0..players-1
 * (ValueError), and whether the state's hand is over into *over. */
int observe_args(int ready, const char *kernel, Py_ssize_t nargs, PyObject *const *args,
                 int players, long *seat, int *over);
/* The checks that open deal(dealer, deck): a ready kernel, 2 arguments, the dealer a seat. */
int deal_args(int ready, const char *kernel, Py_ssize_t nargs, PyObject *const *args,
              int players, long *dealer);
/* An array of the given type, shape (rows, cols < 0: any length), C-contiguous, aligned and in the
 * machine's byte order; writeable where ``out``. */
int check_array(PyObject *obj, int type, int ndim, npy_intp rows, npy_intp cols, int out,
                const char *what);
/* The match totals (a float64 vector of ``players``) as a C array. */
int read_scores(PyObject *totals, int players, const double **by_seat);
/* An int of the layout dict within low..high (KeyError / ValueError naming the kernel). */
int read_int(PyObject *dict, const char *kernel, const char *key, int *out, long low, long high);

/* An observation gathered per seat from a state's float32 buffer and, where it has one, its
 * uint8 buffer (card planes): runs of consecutive floats (one memcpy each), of consecutive bytes
 * (converted, or converted and scaled) and of zeros (one memset each). */
typedef struct {
    int players, obs_size;
    double scale; /* the factor of scaled bytes */
    int *runs;  /* per seat, up to obs_size runs of (to, from, length, kind) */
    int *count; /* how many runs each seat has */
} Gather;

/* layout[key]: per seat, obs_size indices: below buf_size into the floats, from buf_size up to
 * buf_size + byte_size into the bytes, and where ``scale`` is not 0 from there up to
 * buf_size + 2 * byte_size into the bytes again, each times ``scale`` (as the double product,
 * rounded to float32); an index equal to zero_at (-1: none) reads as 0.0. ValueError naming the
 * kernel where they are not. */
int gather_read(Gather *g, PyObject *layout, const char *kernel, const char *key, int players,
                int obs_size, int buf_size, int byte_size, int zero_at, double scale);
/* Seat ``seat``'s observation from ``buf`` and ``bytes`` into ``out`` (obs_size floats). */
void gather_apply(const Gather *g, int seat, const float *buf, const uint8_t *bytes, float *out);
void gather_free(Gather *g);

/* The arrays of a kernel's step() and rows(): matches (a list), games (int64 indices into it,
 * checked), actions (step only), observations, action_masks and current (one row per match). */
typedef struct {
    PyObject *matches;
    const int64_t *games, *actions;
    npy_intp count, obs_size, num_actions, rows; /* rows: of every output array */
    float *obs;
    npy_int8 *masks;
    int64_t *current;
} Batch;

int batch_read(PyObject *const *args, Py_ssize_t nargs, int with_actions, npy_intp obs_size,
               npy_intp num_actions, Batch *b);
/* A variant's move in game i of a batch (its match given): 1 played and the hand goes on (the
 * game's rows written), 2 played and the hand is over or at the turn cap (the caller finishes it
 * with Match.played), 0 left to the Python code (nothing changed), -1 on error. */
typedef int (*batch_play_fn)(PyObject *kernel, Batch *b, int64_t i, PyObject *match, long action);
/* A variant's rows of game i (the seat to act, its observation and mask) from its match now. */
typedef int (*batch_rows_fn)(PyObject *kernel, Batch *b, int64_t i, PyObject *match);
/* step(): plays b->actions[j] in matches[games[j]] for every j in order; a move played that
 * leaves the hand going on gets Match.play's bookkeeping (the match's mask cleared, one more
 * decision). Answers (unplayed, ended): the positions j left to the Python code, and those whose
 * hand the caller finishes. */
PyObject *batch_step(PyObject *kernel, Batch *b, batch_play_fn play, const Slots *match_slots);
/* finish_hands(matches, games, rewards, hand_points, winners, hand_done, terminated,
 * matches_done, clear, settings) -> (left, deal, restart): the common case of the hands that the
 * games ended in a step (Match.played and VectorEnv._hands_ended, without infos): the match
 * totals, the rewards and the engine's rows of each, a decided match marked over. settings:
 * (the side of each seat, target score or None, reward mode 0-3: points, scaled, margin,
 * win_loss, reward scale, max_hands or -1, hand_winners). The games it leaves (a hand cut by the
 * turn cap or by max_hands, points or totals of another form) are unchanged, for the Python
 * code; the caller deals the next hand of ``deal`` and keeps the last state of each match of
 * ``restart`` before starting the next. */
PyObject *finish_hands(PyObject *self, PyObject *const *args, Py_ssize_t nargs);
/* rows(): each game's rows from its match now. */
PyObject *batch_rows(PyObject *kernel, Batch *b, batch_rows_fn rows);
/* A kernel's step(...) and rows(...) methods: the checks, then batch_step / batch_rows. */
PyObject *kernel_step(PyObject *kernel, int ready, const char *name, PyObject *const *args,
                      Py_ssize_t nargs, npy_intp obs_size, npy_intp num_actions,
                      batch_play_fn play, const Slots *match_slots);
PyObject *kernel_rows(PyObject *kernel, int ready, const char *name, PyObject *const *args,
                      Py_ssize_t nargs, npy_intp obs_size, npy_intp num_actions,
                      batch_rows_fn rows);

/* The vector engine's side of a compiled turn whose file defines a ``Kernel`` type with ``slots``
 * and ``match_slots``, a ``Hand`` with hand_read / hand_release, play_move and write_rows(k, b,
 * i, match, state, &h, over), and S_OVER: the callbacks of batch_step and batch_rows (a move
 * played, then its game's rows; a game's rows), and the Kernel_step and Kernel_rows methods. */
#define KERNEL_BATCH(Kernel, NUM_ACTIONS)                                                          \
    static int batch_play(PyObject *kernel, Batch *b, int64_t i, PyObject *match, long action) {  \
        Kernel *k = (Kernel *)kernel;                                                              \
        PyObject *state = slot_get(&k->match_slots, match, MATCH_STATE);                           \
        if (!state)                                                                                \
            return -1;                                                                             \
        Hand h;                                                                                    \
        if (hand_read(k, state, &h) < 0) {                                                         \
            Py_DECREF(state);                                                                      \
            return -1;                                                                             \
        }                                                                                          \
        int played = play_move(k, state, &h, action);                                              \
        if (played == 1 && write_rows(k, b, i, match, state, &h, 0) < 0)                           \
            played = -1;                                                                           \
        hand_release(&h);                                                                          \
        Py_DECREF(state);                                                                          \
        return played;                                                                             \
    }                                                                                              \
    static int batch_write_rows(PyObject *kernel, Batch *b, int64_t i, PyObject *match) {          \
        Kernel *k = (Kernel *)kernel;                                                              \
        PyObject *state = slot_get(&k->match_slots, match, MATCH_STATE);                           \
        if (!state)                                                                                \
            return -1;                                                                             \
        Hand h;                                                                                    \
        int over = slot_true(&k->slots, state, S_OVER);                                            \
        int bad = over < 0 || hand_read(k, state, &h) < 0;                                         \
        if (!bad) {                                                                                \
            bad = write_rows(k, b, i, match, state, &h, over) < 0;                                 \
            hand_release(&h);                                                                      \
        }                                                                                          \
        Py_DECREF(state);                                                                          \
        return bad ? -1 : 0;                                                                       \
    }                                                                                              \
    static PyObject *Kernel##_step(Kernel *k, PyObject *const *args, Py_ssize_t nargs) {           \
        return kernel_step((PyObject *)k, k->ready, KERNEL_NAME, args, nargs, k->obs_size,         \
                           NUM_ACTIONS, batch_play, &k->match_slots);                              \
    }                                                                                              \
    static PyObject *Kernel##_rows(Kernel *k, PyObject *const *args, Py_ssize_t nargs) {           \
        return kernel_rows((PyObject *)k, k->ready, KERNEL_NAME, args, nargs, k->obs_size,         \
                           NUM_ACTIONS, batch_write_rows);                                         \
    }

/* The method table of a compiled turn type ``Prefix`` (Prefix_apply, _mask, _observe, _step,
 * _rows), the same calls in every variant, and the variant's own (``...``: entries, or empty). */
#define KERNEL_METHODS(Prefix, ...)                                                                \
    static PyMethodDef Prefix##_methods[] = {                                                      \
        {"apply", (PyCFunction)(void (*)(void))Prefix##_apply, METH_FASTCALL,                      \
         "apply(state, action) -> True where the move is played here, else False (untouched)."},  \
        {"mask", (PyCFunction)Prefix##_mask, METH_O,                                               \
         "mask(state) -> the legal actions (int8) of the seat to act."},                          \
        {"observe", (PyCFunction)(void (*)(void))Prefix##_observe, METH_FASTCALL,                  \
         "observe(state, seat, totals) -> the observation (float32) of seat."},                   \
        {"step", (PyCFunction)(void (*)(void))Prefix##_step, METH_FASTCALL,                        \
         "step(matches, games, actions, observations, action_masks, current) -> (unplayed, "      \
         "ended)."},                                                                               \
        {"rows", (PyCFunction)(void (*)(void))Prefix##_rows, METH_FASTCALL,                        \
         "rows(matches, games, observations, action_masks, current): each game's rows now."},     \
        __VA_ARGS__ {NULL, NULL, 0, NULL},                                                         \
    };

#endif
