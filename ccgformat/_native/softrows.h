/* The rows of a coded `soft` stream (spec/format.md 5.9; Python reference
 * ccgformat/archive/codec.py soft_rows): the soft values of a node block grouped by
 * context - node kind, `ref` (the first key value) and soft column - in order of first
 * appearance. */
#ifndef CCG_SOFTROWS_H
#define CCG_SOFTROWS_H

#include "ccg.h"

/* For the ``count`` nodes at ``kind``, whose key values start at ``key[key_start[i]]``
 * (every kind with soft values has one, its `ref`) and whose soft values are stream
 * positions ``soft_start[i] - soft_start[0] ...``: ``order`` (as many as soft values)
 * gets the stream position of each value in row order, ``rows`` (as many) the row lengths
 * and *row_count their number. CCG_ERR_MEMORY when out of memory. */
int ccg_soft_rows(const uint8_t *kind, const int64_t *key_start, const int64_t *key, const int64_t *soft_start,
                  int64_t count, int64_t *order, int64_t *rows, int64_t *row_count);

#endif
