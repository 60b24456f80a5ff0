/* What the variants' compiled turns share (envs/_knock.c, envs/_ditch.c): reading and writing a
 * state object's attributes, checking the arrays they are given, the layout dict they are built
 * from, and the vector engine's step and rows loops over many games, each game's move and rows
 * given by the variant as callbacks. */
#include "_native.h"
#include <math.h>
#include <structmember.h>

PyObject *n_state, *n_mask, *n_decisions, *n_seat_totals, *n_over;

int kernel_intern_names(void) {
    if (n_state)
        return 0;
    return (n_state = PyUnicode_InternFromString("state")) &&
                   (n_mask = PyUnicode_InternFromString("mask")) &&
                   (n_decisions = PyUnicode_InternFromString("decisions")) &&
                   (n_seat_totals = PyUnicode_InternFromString("seat_totals")) &&
                   (n_over = PyUnicode_InternFromString("over"))
               ? 0
               : -1;
}

/* ------------------------------------------------------------------ state access */

int get_long(PyObject *obj, PyObject *name, long *out) {
    PyObject *value = PyObject_GetAttr(obj, name);
    if (!value)
        return -1;
    int r = int_value(value, out);
    Py_DECREF(value);
    return r;
}

int set_long(PyObject *obj, PyObject *name, long value) {
    PyObject *v = PyLong_FromLong(value);
    if (!v)
        return -1;
    int r = PyObject_SetAttr(obj, name, v);
    Py_DECREF(v);
    return r;
}

PyObject *get_list(PyObject *obj, PyObject *name, const char *variant) {
    PyObject *value = PyObject_GetAttr(obj, name);
    if (value && !PyList_CheckExact(value)) {
        PyErr_Format(PyExc_TypeError, "a %s state's %U must be a list", variant, name);
        Py_CLEAR(value);
    }
    return value;
}

int hand_over(PyObject *state) {
    PyObject *over = PyObject_GetAttr(state, n_over);
    if (!over)
        return -1;
    int answer = PyObject_IsTrue(over);
    Py_DECREF(over);
    return answer;
}

int check_ready(int ready, const char *kernel) {
    if (!ready)
        PyErr_Format(PyExc_RuntimeError, "this %s was not initialised", kernel);
    return ready ? 0 : -1;
}

int init_once(int ready, const char *kernel) {
    if (ready)
        PyErr_Format(PyExc_RuntimeError, "this %s is initialised already: build a new one", kernel);
    return ready ? -1 : 0;
}

int method_args(int ready, const char *kernel, Py_ssize_t nargs, Py_ssize_t want,
                const char *usage, PyObject *const *args, long *value) {
    if (check_ready(ready, kernel) < 0)
        return -1;
    if (nargs != want) {
        PyErr_Format(PyExc_TypeError, "%s takes %zd arguments", usage, want);
        return -1;
    }
    *value = PyLong_AsLong(args[1]);
    return (*value == -1 && PyErr_Occurred()) ? -1 : 0;
}

int observe_args(int ready, const char *kernel, Py_ssize_t nargs, PyObject *const *args,
                 int players, long *seat, int *over) {
    if (method_args(ready, kernel, nargs, 3, "observe(state, seat, totals)", args, seat) < 0)
        return -1;
    if (*seat < 0 || *seat >= players) {
        PyErr_Format(PyExc_ValueError, "seat must be in 0..%d, got %ld", players - 1, *seat);
        return -1;
    }
    *over = hand_over(args[0]);
    return *over < 0 ? -1 : 0;
}

int deal_args(int ready, const char *kernel, Py_ssize_t nargs, PyObject *const *args,
              int players, long *dealer) {
    if (check_ready(ready, kernel) < 0)
        return -1;
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "deal(dealer, deck) takes 2 arguments");
        return -1;
    }
    *dealer = PyLong_AsLong(args[0]);
    if (*dealer == -1 && PyErr_Occurred())
        return -1;
    if (*dealer < 0 || *dealer >= players) {
        PyErr_Format(PyExc_ValueError, "dealer must be in 0..%d, got %ld", players - 1, *dealer);
        return -1;
    }
    return 0;
}

int check_array(PyObject *obj, int type, int ndim, npy_intp rows, npy_intp cols, int out,
                const char *what) {
    PyArrayObject *a = (PyArrayObject *)obj;
    if (!PyArray_Check(obj) || PyArray_TYPE(a) != type || PyArray_NDIM(a) != ndim ||
        !PyArray_IS_C_CONTIGUOUS(a) || !PyArray_ISBEHAVED_RO(a) ||
        (out && !PyArray_ISWRITEABLE(a)) || (rows >= 0 && PyArray_DIM(a, 0) != rows) ||
        (ndim == 2 && cols >= 0 && PyArray_DIM(a, 1) != cols)) {
        PyErr_Format(PyExc_TypeError, "%s has the wrong type or shape%s", what,
                     out ? " (or is not writeable)" : "");
        return -1;
    }
    return 0;
}

int read_scores(PyObject *totals, int players, const double **by_seat) {
    if (!PyArray_Check(totals) || PyArray_TYPE((PyArrayObject *)totals) != NPY_FLOAT64 ||
        PyArray_NDIM((PyArrayObject *)totals) != 1 ||
        !PyArray_ISBEHAVED_RO((PyArrayObject *)totals) ||
        PyArray_DIM((PyArrayObject *)totals, 0) != players ||
        !PyArray_IS_C_CONTIGUOUS((PyArrayObject *)totals)) {
        PyErr_SetString(PyExc_TypeError, "the match totals must be a float64 vector, one per seat");
        return -1;
    }
    *by_seat = (const double *)PyArray_DATA((PyArrayObject *)totals);
    return 0;
}

int read_int(PyObject *dict, const char *kernel, const char *key, int *out, long low, long high) {
    PyObject *v = PyDict_GetItemString(dict, key); /* borrowed */
    if (!v) {
        PyErr_Format(PyExc_KeyError, "%s: missing %s", kernel, key);
        return -1;
    }
    long x = PyLong_AsLong(v);
    if (x == -1 && PyErr_Occurred())
        return -1;
    if (x < low || x > high) {
        PyErr_Format(PyExc_ValueError, "%s: %s=%ld is outside %ld..%ld", kernel, key, x, low,
                     high);
        return -1;
    }
    *out = (int)x;
    return 0;
}

/* ------------------------------------------------------------------ slots */

int slots_init(Slots *s, PyObject *cls, PyObject **const *names, int count) {
    slots_clear(s);
    if (count > KERNEL_MAX_SLOTS) {
        PyErr_SetString(PyExc_ValueError, "too many slots");
        return -1;
    }
    s->count = count;
    for (int i = 0; i < count; i++)
        s->names[i] = names[i];
    if (!PyType_Check(cls))
        return 0;
    PyTypeObject *type = (PyTypeObject *)cls;
    if (type->tp_getattro != PyObject_GenericGetAttr ||
        type->tp_setattro != PyObject_GenericSetAttr)
        return 0;
    for (int i = 0; i < count; i++) {
        PyObject *d = PyObject_GetAttr(cls, *names[i]);
        if (!d) {
            if (!PyErr_ExceptionMatches(PyExc_AttributeError))
                return -1;
            PyErr_Clear();
            return 0;
        }
        int member = Py_IS_TYPE(d, &PyMemberDescr_Type);
        PyMemberDef *m = member ? ((PyMemberDescrObject *)d)->d_member : NULL;
        int usable = m && m->type == T_OBJECT_EX && !(m->flags & READONLY) &&
                     PyType_IsSubtype(type, PyDescr_TYPE(d));
        if (usable)
            s->offset[i] = m->offset;
        Py_DECREF(d);
        if (!usable)
            return 0;
    }
    s->version = type->tp_version_tag;
    if (!s->version)
        return 0;
    Py_INCREF(cls);
    s->type = type;
    return 0;
}

int match_slots_init(Slots *s, PyObject *match_class) {
    PyObject **const names[NUM_MATCH_SLOTS] = {&n_state, &n_mask, &n_decisions, &n_seat_totals};
    return slots_init(s, match_class, names, NUM_MATCH_SLOTS);
}

void slots_clear(Slots *s) {
    Py_CLEAR(s->type);
    s->version = 0;
}

int slot_true(const Slots *s, PyObject *obj, int i) {
    PyObject *value = slot_get(s, obj, i);
    if (!value)
        return -1;
    int answer = PyObject_IsTrue(value);
    Py_DECREF(value);
    return answer;
}

int slot_not_list(const Slots *s, int i, const char *variant) {
    PyErr_Format(PyExc_TypeError, "a %s state's %U must be a list", variant, *s->names[i]);
    return -1;
}

/* ------------------------------------------------------------------ many games */

int batch_read(PyObject *const *args, Py_ssize_t nargs, int with_actions, npy_intp obs_size,
               npy_intp num_actions, Batch *b) {
    const char *what = with_actions ? "step" : "rows";
    if (nargs != 5 + with_actions) {
        PyErr_Format(PyExc_TypeError,
                     "%s(matches, games, %sobservations, action_masks, current) takes %d "
                     "arguments",
                     what, with_actions ? "actions, " : "", 5 + with_actions);
        return -1;
    }
    PyObject *const *arrays = args + 2 + with_actions;
    b->matches = args[0];
    if (!PyList_CheckExact(b->matches)) {
        PyErr_Format(PyExc_TypeError, "%s: matches must be a list", what);
        return -1;
    }
    Py_ssize_t num = PyList_GET_SIZE(b->matches);
    if (check_array(args[1], NPY_INT64, 1, -1, 0, 0, "games") < 0)
        return -1;
    b->count = PyArray_DIM((PyArrayObject *)args[1], 0);
    if ((with_actions && check_array(args[2], NPY_INT64, 1, b->count, 0, 0, "actions") < 0) ||
        check_array(arrays[0], NPY_FLOAT32, 2, num, obs_size, 1, "observations") < 0 ||
        check_array(arrays[1], NPY_INT8, 2, num, num_actions, 1, "action_masks") < 0 ||
        check_array(arrays[2], NPY_INT64, 1, num, 0, 1, "current") < 0)
        return -1;
    b->games = (const int64_t *)PyArray_DATA((PyArrayObject *)args[1]);
    b->actions = with_actions ? (const int64_t *)PyArray_DATA((PyArrayObject *)args[2]) : NULL;
    b->obs = (float *)PyArray_DATA((PyArrayObject *)arrays[0]);
    b->masks = (npy_int8 *)PyArray_DATA((PyArrayObject *)arrays[1]);
    b->current = (int64_t *)PyArray_DATA((PyArrayObject *)arrays[2]);
    b->obs_size = obs_size;
    b->num_actions = num_actions;
    b->rows = num;
    for (npy_intp j = 0; j < b->count; j++) {
        if (b->games[j] < 0 || b->games[j] >= num) {
            PyErr_Format(PyExc_IndexError, "%s: game %lld out of range", what,
                         (long long)b->games[j]);
            return -1;
        }
    }
    return 0;
}

/* A new reference to match i of the batch; IndexError where i is out of range (checked at each
 * use: the arrays may share memory, and the list may change while Python code runs). */
static PyObject *batch_match(Batch *b, int64_t i) {
    if (i < 0 || i >= b->rows || i >= PyList_GET_SIZE(b->matches)) {
        PyErr_Format(PyExc_IndexError, "game %lld out of range", (long long)i);
        return NULL;
    }
    PyObject *match = PyList_GET_ITEM(b->matches, i);
    Py_INCREF(match);
    return match;
}

static PyObject *positions(const int64_t *items, npy_intp count) {
    PyObject *out = PyArray_SimpleNew(1, &count, NPY_INT64);
    if (out)
        memcpy(PyArray_DATA((PyArrayObject *)out), items, sizeof(int64_t) * (size_t)count);
    return out;
}

PyObject *batch_step(PyObject *kernel, Batch *b, batch_play_fn play, const Slots *match_slots) {
    npy_intp nleft = 0, nended = 0;
    int64_t *left = PyMem_Malloc(sizeof(int64_t) * (size_t)(2 * b->count + 1));
    if (!left)
        return PyErr_NoMemory();
    int64_t *ended = left + b->count;
    for (npy_intp j = 0; j < b->count; j++) {
        int64_t i = b->games[j]; /* read again: an output array may share games' memory */
        PyObject *match = batch_match(b, i);
        if (!match)
            goto fail;
        int played = play(kernel, b, i, match, (long)b->actions[j]);
        int bad = played < 0;
        if (played == 1) {
            long decisions;
            bad = slot_set(match_slots, match, MATCH_MASK, Py_None) < 0 ||
                  slot_long(match_slots, match, MATCH_DECISIONS, &decisions) < 0 ||
                  slot_set_long(match_slots, match, MATCH_DECISIONS, decisions + 1) < 0;
        } else if (played == 2) {
            ended[nended++] = j;
        } else if (played == 0) {
            left[nleft++] = j;
        }
        Py_DECREF(match);
        if (bad)
            goto fail;
    }
    PyObject *unplayed = positions(left, nleft);
    PyObject *finished = unplayed ? positions(ended, nended) : NULL;
    PyMem_Free(left);
    if (!finished) {
        Py_XDECREF(unplayed);
        return NULL;
    }
    return Py_BuildValue("(NN)", unplayed, finished);
fail:
    PyMem_Free(left);
    return NULL;
}

PyObject *batch_rows(PyObject *kernel, Batch *b, batch_rows_fn rows) {
    for (npy_intp j = 0; j < b->count; j++) {
        int64_t i = b->games[j]; /* read again: an output array may share games' memory */
        PyObject *match = batch_match(b, i);
        if (!match)
            return NULL;
        int bad = rows(kernel, b, i, match) < 0;
        Py_DECREF(match);
        if (bad)
            return NULL;
    }
    Py_RETURN_NONE;
}

PyObject *kernel_step(PyObject *kernel, int ready, const char *name, PyObject *const *args,
                      Py_ssize_t nargs, npy_intp obs_size, npy_intp num_actions,
                      batch_play_fn play, const Slots *match_slots) {
    Batch b;
    if (check_ready(ready, name) < 0 || batch_read(args, nargs, 1, obs_size, num_actions, &b) < 0)
        return NULL;
    return batch_step(kernel, &b, play, match_slots);
}

PyObject *kernel_rows(PyObject *kernel, int ready, const char *name, PyObject *const *args,
                      Py_ssize_t nargs, npy_intp obs_size, npy_intp num_actions,
                      batch_rows_fn rows) {
    Batch b;
    if (check_ready(ready, name) < 0 || batch_read(args, nargs, 0, obs_size, num_actions, &b) < 0)
        return NULL;
    return batch_rows(kernel, &b, rows);
}

/* ------------------------------------------------------------------ hands' ends */

/* The Match fields that finish_hands reads and writes (their slots, where a match is exactly the
 * class seen first and that class is unchanged; getattr / setattr otherwise). */
enum {
    END_STATE,
    END_MASK,
    END_DECISIONS,
    END_SEAT_TOTALS,
    END_TOTALS,
    END_HAND_INDEX,
    END_OVER,
    END_DEALER,
    END_PLAYERS,
    NUM_END_SLOTS
};
static Slots end_slots;
static PyObject *n_totals, *n_hand_index, *n_dealer, *n_num_players, *n_points, *n_round,
    *n_nine;

static int end_slots_for(PyObject *match) {
    if (!n_totals && !((n_totals = PyUnicode_InternFromString("totals")) &&
                       (n_hand_index = PyUnicode_InternFromString("hand_index")) &&
                       (n_dealer = PyUnicode_InternFromString("dealer")) &&
                       (n_num_players = PyUnicode_InternFromString("num_players")) &&
                       (n_points = PyUnicode_InternFromString("points")) &&
                       (n_round = PyUnicode_InternFromString("__round__")) &&
                       (n_nine = PyLong_FromLong(9))))
        return -1;
    if (end_slots.type == Py_TYPE(match) && end_slots.version == Py_TYPE(match)->tp_version_tag)
        return 0;
    PyObject **const names[NUM_END_SLOTS] = {&n_state,  &n_mask,       &n_decisions,
                                             &n_seat_totals, &n_totals, &n_hand_index,
                                             &n_over,   &n_dealer,     &n_num_players};
    return slots_init(&end_slots, (PyObject *)Py_TYPE(match), names, NUM_END_SLOTS);
}

/* sum() of Python floats, as the interpreter adds them (compensated from 3.12 on). */
static double python_sum(const double *x, int n) {
    double s = 0.0;
#if PY_VERSION_HEX >= 0x030C0000
    double c = 0.0;
    for (int k = 0; k < n; k++) {
        if (k == 0) {
            s = x[0];
            continue;
        }
        double t = s + x[k];
        c += fabs(s) >= fabs(x[k]) ? (s - t) + x[k] : (x[k] - t) + s;
        s = t;
    }
    if (c != 0.0 && isfinite(c))
        s += c;
#else
    for (int k = 0; k < n; k++)
        s += x[k];
#endif
    return s;
}

/* A hand's points into p (n of them): a list or tuple of floats, or a float64 vector. 1 read, 0
 * another form (left to the Python code), -1 on error. */
static int read_points(PyObject *points, int n, double *p) {
    if (PyList_CheckExact(points) || PyTuple_CheckExact(points)) {
        if (PySequence_Fast_GET_SIZE(points) != n)
            return 0;
        PyObject **items = PySequence_Fast_ITEMS(points);
        for (int s = 0; s < n; s++) {
            if (!PyFloat_CheckExact(items[s]))
                return 0;
            p[s] = PyFloat_AS_DOUBLE(items[s]);
        }
        return 1;
    }
    if (PyArray_CheckExact(points)) {
        PyArrayObject *a = (PyArrayObject *)points;
        if (PyArray_TYPE(a) != NPY_FLOAT64 || PyArray_NDIM(a) != 1 || PyArray_DIM(a, 0) != n ||
            !PyArray_ISBEHAVED_RO(a) || !PyArray_IS_C_CONTIGUOUS(a))
            return 0;
        memcpy(p, PyArray_DATA(a), sizeof(double) * (size_t)n);
        return 1;
    }
    return 0;
}

#define END_MAX_SEATS 16
enum { REWARD_POINTS, REWARD_SCALED, REWARD_MARGIN, REWARD_WIN_LOSS };

/* One game's hand end (see finish_hands): 1 finished, 0 left to the Python code (nothing
 * changed), -1 on error. *next: 1 deal the next hand, 2 restart the match. */
static int finish_one(PyObject *match, int64_t i, int n, const int *groups, int num_groups,
                      int teams, int has_target, double target, int mode, double scale,
                      long max_hands, PyObject *hand_winners, double *rewards, double *hand_points,
                      npy_bool *winners, npy_bool *hand_done, npy_bool *terminated,
                      int64_t *matches_done, npy_bool *clear, int *next) {
    const Slots *S = &end_slots;
    double p[END_MAX_SEATS], gp[END_MAX_SEATS], totals_now[END_MAX_SEATS];
    int won[END_MAX_SEATS];
    long players, hand_index, decisions, dealer;
    int result = -1, read, over;
    PyObject *state = slot_get(S, match, END_STATE), *points = NULL, *totals = NULL;
    PyObject *seat_totals = NULL, *who = NULL;
    if (!state)
        return -1;
    if (slot_long(S, match, END_PLAYERS, &players) < 0)
        goto done;
    result = 0;
    if (players != n)
        goto done;
    read = hand_over(state);
    if (read <= 0) { /* the turn cap: Match.played cuts the match */
        result = read;
        goto done;
    }
    if (slot_long(S, match, END_HAND_INDEX, &hand_index) < 0 ||
        slot_long(S, match, END_DECISIONS, &decisions) < 0 ||
        slot_long(S, match, END_DEALER, &dealer) < 0) {
        result = -1;
        goto done;
    }
    if (max_hands >= 0 && hand_index + 1 >= max_hands)
        goto done;
    if (!(points = PyObject_GetAttr(state, n_points)) || !(totals = slot_get(S, match, END_TOTALS))) {
        result = -1;
        goto done;
    }
    if (!PyList_CheckExact(totals) || PyList_GET_SIZE(totals) != num_groups)
        goto done;
    for (int g = 0; g < num_groups; g++) {
        PyObject *t = PyList_GET_ITEM(totals, g);
        if (!PyFloat_CheckExact(t))
            goto done;
        totals_now[g] = PyFloat_AS_DOUBLE(t);
    }
    read = read_points(points, n, p);
    if (read <= 0) {
        result = read;
        goto done;
    }
    /* The hand is this code's from here: Match._finish_hand's arithmetic, in its order. */
    result = -1;
    if (teams) {
        for (int g = 0; g < num_groups; g++)
            gp[g] = 0.0;
        for (int s = 0; s < n; s++)
            gp[groups[s]] += p[s];
    } else {
        for (int s = 0; s < n; s++)
            gp[s] = p[s];
    }
    for (int g = 0; g < num_groups; g++) {
        totals_now[g] += gp[g];
        PyObject *t = PyFloat_FromDouble(totals_now[g]);
        if (!t)
            goto done;
        PyList_SetItem(totals, g, t); /* steals t */
    }
    if (slot_set_long(S, match, END_HAND_INDEX, hand_index + 1) < 0 ||
        slot_set(S, match, END_MASK, Py_None) < 0 ||
        slot_set_long(S, match, END_DECISIONS, decisions + 1) < 0)
        goto done;
    if (!has_target) {
        over = 1;
        who = PyObject_CallOneArg(hand_winners, state);
        if (!who)
            goto done;
        if (who == Py_None) {
            double best = gp[0];
            for (int g = 1; g < num_groups; g++)
                best = gp[g] > best ? gp[g] : best;
            for (int s = 0; s < n; s++)
                won[s] = gp[groups[s]] == best;
        } else {
            if (!PyList_CheckExact(who) && !PyTuple_CheckExact(who)) {
                PyErr_SetString(PyExc_TypeError, "hand_winners must give a list of seats");
                goto done;
            }
            int won_group[END_MAX_SEATS] = {0};
            for (Py_ssize_t k = 0; k < PySequence_Fast_GET_SIZE(who); k++) {
                long w = PyLong_AsLong(PySequence_Fast_GET_ITEM(who, k));
                if (w == -1 && PyErr_Occurred())
                    goto done;
                if (w < 0 || w >= n) {
                    PyErr_Format(PyExc_ValueError, "hand winner %ld is not a seat", w);
                    goto done;
                }
                won_group[groups[w]] = 1;
            }
            for (int s = 0; s < n; s++)
                won[s] = won_group[groups[s]];
        }
    } else {
        npy_intp dims[1] = {n};
        seat_totals = PyArray_SimpleNew(1, dims, NPY_FLOAT64);
        if (!seat_totals)
            goto done;
        /* read-only, as Match.played makes it: the observations keep it by identity */
        PyArray_CLEARFLAGS((PyArrayObject *)seat_totals, NPY_ARRAY_WRITEABLE);
        double *by_seat = (double *)PyArray_DATA((PyArrayObject *)seat_totals);
        for (int s = 0; s < n; s++)
            by_seat[s] = totals_now[groups[s]];
        if (slot_set(S, match, END_SEAT_TOTALS, seat_totals) < 0)
            goto done;
        double settled[END_MAX_SEATS], lead = 0.0;
        for (int g = 0; g < num_groups; g++) {
            /* round(total, 9), as Match._settled does */
            PyObject *r = PyObject_CallMethodOneArg(PyList_GET_ITEM(totals, g), n_round, n_nine);
            if (!r)
                goto done;
            settled[g] = PyFloat_AsDouble(r);
            Py_DECREF(r);
            if (settled[g] == -1.0 && PyErr_Occurred())
                goto done;
            lead = g == 0 || settled[g] > lead ? settled[g] : lead;
        }
        int leaders = 0;
        for (int g = 0; g < num_groups; g++)
            leaders += settled[g] == lead;
        over = lead >= target && leaders == 1;
        for (int s = 0; s < n; s++)
            won[s] = settled[groups[s]] == lead;
    }
    double *paid = NULL, r[END_MAX_SEATS];
    if (mode == REWARD_POINTS || mode == REWARD_SCALED) {
        for (int s = 0; s < n; s++)
            r[s] = mode == REWARD_POINTS ? gp[groups[s]] : gp[groups[s]] / scale;
        paid = r;
    } else if (mode == REWARD_MARGIN) {
        double total = python_sum(gp, num_groups);
        for (int s = 0; s < n; s++) {
            double mine = gp[groups[s]];
            r[s] = (mine - (total - mine) / (num_groups - 1)) / scale;
        }
        paid = r;
    } else if (over) { /* win_loss */
        int all = 1, any = 0;
        for (int s = 0; s < n; s++) {
            all &= won[s];
            any |= won[s];
        }
        for (int s = 0; s < n; s++)
            r[s] = (all || !any) ? 0.0 : (won[s] ? 1.0 : -1.0);
        paid = r;
    }
    /* the engine's rows of the hand (VectorEnv._hands_ended) */
    hand_done[i] = 1;
    for (int s = 0; s < n; s++) {
        hand_points[i * n + s] = p[s];
        if (over)
            winners[i * n + s] = (npy_bool)won[s];
        if (paid)
            rewards[i * n + s] += paid[s];
    }
    if (over) {
        if (slot_set(S, match, END_OVER, Py_True) < 0)
            goto done;
        terminated[i] = 1;
        matches_done[i] += 1;
        clear[i] = 1;
        *next = 2;
    } else {
        if (slot_set_long(S, match, END_DEALER, (dealer + 1) % n) < 0)
            goto done;
        *next = 1;
    }
    result = 1;
done:
    Py_DECREF(state);
    Py_XDECREF(points);
    Py_XDECREF(totals);
    Py_XDECREF(seat_totals);
    Py_XDECREF(who);
    return result;
}

PyObject *finish_hands(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    if (nargs != 10) {
        PyErr_SetString(PyExc_TypeError,
                        "finish_hands(matches, games, rewards, hand_points, winners, hand_done, "
                        "terminated, matches_done, clear, settings) takes 10 arguments");
        return NULL;
    }
    PyObject *matches = args[0], *settings = args[9];
    if (!PyList_CheckExact(matches)) {
        PyErr_SetString(PyExc_TypeError, "finish_hands: matches must be a list");
        return NULL;
    }
    npy_intp num = PyList_GET_SIZE(matches);
    PyObject *groups_obj, *target_obj, *hand_winners;
    int mode;
    double scale;
    long max_hands;
    if (!PyTuple_Check(settings) ||
        !PyArg_ParseTuple(settings, "O!OidlO", &PyTuple_Type, &groups_obj, &target_obj,
                          &mode, &scale, &max_hands, &hand_winners))
        return NULL;
    int n = (int)PyTuple_GET_SIZE(groups_obj), groups[END_MAX_SEATS], num_groups = 0;
    if (n < 2 || n > END_MAX_SEATS || mode < REWARD_POINTS || mode > REWARD_WIN_LOSS) {
        PyErr_SetString(PyExc_ValueError, "finish_hands: 2 to 16 seats and a reward mode 0-3");
        return NULL;
    }
    for (int s = 0; s < n; s++) {
        long g = PyLong_AsLong(PyTuple_GET_ITEM(groups_obj, s));
        if (g == -1 && PyErr_Occurred())
            return NULL;
        if (g < 0 || g >= n) {
            PyErr_SetString(PyExc_ValueError, "finish_hands: a seat's group is out of range");
            return NULL;
        }
        groups[s] = (int)g;
        num_groups = g + 1 > num_groups ? (int)g + 1 : num_groups;
    }
    int teams = num_groups < n; /* seats sharing a side's score */
    int has_target = target_obj != Py_None;
    double target = has_target ? PyFloat_AsDouble(target_obj) : 0.0;
    if (has_target && target == -1.0 && PyErr_Occurred())
        return NULL;
    if (check_array(args[1], NPY_INT64, 1, -1, 0, 0, "games") < 0 ||
        check_array(args[2], NPY_FLOAT64, 2, num, n, 1, "rewards") < 0 ||
        check_array(args[3], NPY_FLOAT64, 2, num, n, 1, "hand_points") < 0 ||
        check_array(args[4], NPY_BOOL, 2, num, n, 1, "winners") < 0 ||
        check_array(args[5], NPY_BOOL, 1, num, 0, 1, "hand_done") < 0 ||
        check_array(args[6], NPY_BOOL, 1, num, 0, 1, "terminated") < 0 ||
        check_array(args[7], NPY_INT64, 1, num, 0, 1, "matches_done") < 0 ||
        check_array(args[8], NPY_BOOL, 1, num, 0, 1, "clear") < 0)
        return NULL;
    npy_intp count = PyArray_DIM((PyArrayObject *)args[1], 0);
    const int64_t *games = (const int64_t *)PyArray_DATA((PyArrayObject *)args[1]);
    double *rewards = (double *)PyArray_DATA((PyArrayObject *)args[2]);
    double *hand_points = (double *)PyArray_DATA((PyArrayObject *)args[3]);
    npy_bool *winners = (npy_bool *)PyArray_DATA((PyArrayObject *)args[4]);
    npy_bool *hand_done = (npy_bool *)PyArray_DATA((PyArrayObject *)args[5]);
    npy_bool *terminated = (npy_bool *)PyArray_DATA((PyArrayObject *)args[6]);
    int64_t *matches_done = (int64_t *)PyArray_DATA((PyArrayObject *)args[7]);
    npy_bool *clear = (npy_bool *)PyArray_DATA((PyArrayObject *)args[8]);
    npy_intp sizes[3] = {0, 0, 0};
    int64_t *lists = PyMem_Malloc(sizeof(int64_t) * (size_t)(3 * count + 1));
    if (!lists)
        return PyErr_NoMemory();
    PyObject *out = NULL;
    for (npy_intp j = 0; j < count; j++) {
        int64_t i = games[j];
        if (i < 0 || i >= num || i >= PyList_GET_SIZE(matches)) {
            PyErr_Format(PyExc_IndexError, "finish_hands: game %lld out of range", (long long)i);
            goto fail;
        }
        PyObject *match = PyList_GET_ITEM(matches, i);
        Py_INCREF(match);
        int next = 0, r = end_slots_for(match);
        if (r == 0)
            r = finish_one(match, i, n, groups, num_groups, teams, has_target, target, mode,
                           scale, max_hands, hand_winners, rewards, hand_points, winners,
                           hand_done, terminated, matches_done, clear, &next);
        Py_DECREF(match);
        if (r < 0)
            goto fail;
        int which = r == 0 ? 0 : next; /* 0 left, 1 deal, 2 restart */
        lists[which * count + sizes[which]++] = i;
    }
    out = PyTuple_New(3);
    for (int k = 0; out && k < 3; k++) {
        PyObject *a = positions(lists + k * count, sizes[k]);
        if (!a) {
            Py_CLEAR(out);
            break;
        }
        PyTuple_SET_ITEM(out, k, a);
    }
fail:
    PyMem_Free(lists);
    return out;
}

/* ------------------------------------------------------------------ gathered observations */

void gather_free(Gather *g) {
    PyMem_Free(g->runs);
    PyMem_Free(g->count);
    g->runs = g->count = NULL;
}

enum { RUN_ZEROS, RUN_FLOATS, RUN_BYTES, RUN_SCALED };

int gather_read(Gather *g, PyObject *layout, const char *kernel, const char *key, int players,
                int obs_size, int buf_size, int byte_size, int zero_at, double scale) {
    gather_free(g);
    g->players = players;
    g->obs_size = obs_size;
    g->scale = scale;
    const int64_t end = (int64_t)buf_size + (int64_t)byte_size * (scale != 0.0 ? 2 : 1);
    PyObject *v = PyDict_GetItemString(layout, key); /* borrowed */
    if (!v) {
        PyErr_Format(PyExc_KeyError, "%s: missing %s", kernel, key);
        return -1;
    }
    PyObject *seats = PySequence_Fast(v, key);
    if (!seats)
        return -1;
    g->runs = PyMem_Malloc(sizeof(int) * 4 * (size_t)players * (size_t)obs_size);
    g->count = PyMem_Malloc(sizeof(int) * (size_t)players);
    int ok = g->runs && g->count && PySequence_Fast_GET_SIZE(seats) == players;
    if (!g->runs || !g->count)
        PyErr_NoMemory();
    for (int s = 0; ok && s < players; s++) {
        PyArrayObject *index = (PyArrayObject *)PyArray_FROMANY(
            PySequence_Fast_GET_ITEM(seats, s), NPY_INT64, 1, 1, NPY_ARRAY_CARRAY_RO);
        ok = index && PyArray_DIM(index, 0) == obs_size;
        const int64_t *at = ok ? (const int64_t *)PyArray_DATA(index) : NULL;
        int *run = g->runs + (size_t)s * 4 * obs_size, count = 0;
        for (int i = 0; ok && i < obs_size; i++) {
            ok = at[i] >= 0 && at[i] < end;
            int kind = at[i] == zero_at                              ? RUN_ZEROS
                       : at[i] < buf_size                            ? RUN_FLOATS
                       : at[i] < (int64_t)buf_size + byte_size       ? RUN_BYTES
                                                                     : RUN_SCALED;
            int from = kind == RUN_ZEROS    ? 0
                       : kind == RUN_FLOATS ? (int)at[i]
                       : kind == RUN_BYTES  ? (int)at[i] - buf_size
                                            : (int)(at[i] - buf_size - byte_size);
            int *last = count ? run + 4 * (count - 1) : NULL; /* each run ends where i starts */
            if (last && last[3] == kind && (kind == RUN_ZEROS || from == last[1] + last[2]))
                last[2]++;
            else {
                int *next = run + 4 * count++;
                next[0] = i;
                next[1] = from;
                next[2] = 1;
                next[3] = kind;
            }
        }
        if (ok)
            g->count[s] = count;
        Py_XDECREF(index);
    }
    Py_DECREF(seats);
    if (!ok && !PyErr_Occurred())
        PyErr_Format(PyExc_ValueError, "%s: %s indexes the buffer, per seat", kernel, key);
    if (!ok)
        gather_free(g);
    return ok ? 0 : -1;
}

/* Bytes as floats, vectorized (GCC's -O2 leaves this loop scalar; clang's does not). */
#if defined(__GNUC__) && !defined(__clang__)
__attribute__((optimize("tree-vectorize")))
#endif
static void bytes_to_floats(float *restrict to, const uint8_t *restrict from, int count) {
    for (int i = 0; i < count; i++)
        to[i] = (float)from[i];
}

/* Bytes times ``scale``, each the double product rounded to float32. */
#if defined(__GNUC__) && !defined(__clang__)
__attribute__((optimize("tree-vectorize")))
#endif
static void scaled_bytes(float *restrict to, const uint8_t *restrict from, int count,
                         double scale) {
    for (int i = 0; i < count; i++)
        to[i] = (float)((double)from[i] * scale);
}

void gather_apply(const Gather *g, int seat, const float *buf, const uint8_t *bytes, float *out) {
    const int *run = g->runs + (size_t)seat * 4 * g->obs_size;
    for (int j = 0; j < g->count[seat]; j++, run += 4) {
        float *to = out + run[0];
        if (run[3] == RUN_FLOATS)
            memcpy(to, buf + run[1], sizeof(float) * (size_t)run[2]);
        else if (run[3] == RUN_BYTES)
            bytes_to_floats(to, bytes + run[1], run[2]);
        else if (run[3] == RUN_SCALED)
            scaled_bytes(to, bytes + run[1], run[2], g->scale);
        else
            memset(to, 0, sizeof(float) * (size_t)run[2]);
    }
}
