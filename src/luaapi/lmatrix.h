/*
** lmatrix.h -- lab.matrix: a float32 matrix for scripts, its products and
** decompositions done by OpenBLAS and LAPACKE.
**
** A matrix owns its numbers (inside its Lua userdata, so that they count
** against the script's memory limit), or is a view of numbers owned by the
** lab: a gradient or a hidden state lent to a hook for the length of one
** call. A view that has expired raises an error when touched, never reads
** freed memory.
*/
#ifndef TIELAB_LMATRIX_H
#define TIELAB_LMATRIX_H

#include <lua.h>

typedef struct LMatrix {
  int rows, cols;
  float *data;     /* row-major, rows*cols; NULL once a view has expired */
  int writable;    /* 0: a read-only view */
  int expired;     /* a view whose call has ended */
  const char *what;/* a view's name in errors ("g.E_in"); NULL for an owned matrix */
} LMatrix;

/* Push a new rows x cols matrix of zeros; raises a Lua error (naming the
** shape) when it is too large for the machine's memory or the script's
** limit, before allocating. */
LMatrix *lmatrix_new(lua_State *L, int rows, int cols);

/* Push a view of 'data' (rows x cols, row-major, both at least 1),
** writable or not, named 'what' in errors (a static string). The caller
** keeps the view reachable (on the stack, in the registry) until it calls
** lmatrix_expire, and keeps 'data' alive until then. */
LMatrix *lmatrix_view(lua_State *L, float *data, int rows, int cols, int writable, const char *what);

/* End a view: from now on touching it raises an error. An owned matrix is
** left as it is. */
void lmatrix_expire(LMatrix *m);

/* The matrix at 'idx', raising a Lua error when it is not one or is an
** expired view. */
LMatrix *lmatrix_check(lua_State *L, int idx);

/* The matrix at 'idx' or NULL (not a matrix). */
LMatrix *lmatrix_test(lua_State *L, int idx);

/* Put the constructor 'matrix' into the table at the top of the stack
** (the module 'lab'), and make the matrices' metatable. */
void lmatrix_register(lua_State *L);

#endif
