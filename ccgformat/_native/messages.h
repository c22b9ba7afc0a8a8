/* Message matching helpers (Python reference: ccgformat/query/messages_match.py and the
 * row text of ccgformat/query/messages.py).
 */
#ifndef CCG_MESSAGES_H
#define CCG_MESSAGES_H

#include <stdint.h>

/* Pair rows first in, first out per key (the FIFO per channel of dissertation 4.33):
 * ``n`` rows in order, each with ``k`` int64 key columns ``keys[0..k)`` and a side (0 or
 * 1); the k-th row of a side with a key pairs with the k-th row of the other side with
 * that key. ``partner[i]`` is the row that row i pairs with, or -1. CCG_ERR_MEMORY when
 * out of memory. */
int ccg_pair_fifo(int64_t n, int64_t k, const int64_t *const *keys, const uint8_t *side, int64_t *partner);

/* Write ``n`` rows of ``k`` int64 columns as text: per row ``prefix[0]`` value0
 * ``prefix[1]`` value1 ... ``suffix``, rows joined by ``separator`` (values in decimal, as
 * Python's ``%d``). Returns the bytes written, or -1 when ``capacity`` is too small. */
int64_t ccg_format_rows(int64_t n, int64_t k, const int64_t *const *columns, const char *const *prefix,
                        const char *suffix, const char *separator, char *out, int64_t capacity);

#endif
