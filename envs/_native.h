/* Shared declarations of the compiled kernels' files: _native.c (the module, the deadwood
 * search, the array builders) and _knock.c (Knock Rummy's compiled turn). */
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

int solve_core(Solver *s, uint64_t hand, uint64_t *chosen, int *count);
int candidate_melds(const Solver *s, uint64_t hand, uint64_t *cands);
int deadwood_after(Solver *s, uint64_t hand, int *after, int *order, int *count);
int check_planes(PyObject *obj, int ndim);
int knock_intern_names(void);

#endif
