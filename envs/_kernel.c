/* What the variants' compiled turns share (envs/_knock.c, envs/_ditch.c): reading and writing a
 * state object's attributes, checking the arrays they are given, the layout dict they are built
 * from, and the vector engine's step and rows loops over many games, each game's move and rows
 * given by the variant as callbacks. */
#include "_native.h"
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
