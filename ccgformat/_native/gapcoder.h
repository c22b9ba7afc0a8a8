/* The coded gaps stream (spec/format.md 5.8; Python reference ccgformat/archive/gapcoder.py):
 * the gaps of a node block, row by row of the shape matrices (spec 5.4), each value
 * binarised as its bit length and mantissa and range-coded with adaptive binary
 * probabilities that start afresh at every row.
 */
#ifndef CCG_GAPCODER_H
#define CCG_GAPCODER_H

#include "ccg.h"

/* Code ``count`` values (each below 2**62) split into rows of ``row_length`` values (the
 * lengths sum to ``count``) into a new buffer (*out, *out_length; release it with
 * ccg_bytes_free). CCG_ERR_MEMORY when out of memory. */
int ccg_code_gaps(const uint64_t *values, int64_t count, const int64_t *row_length, int64_t rows,
                  uint8_t **out, size_t *out_length);

/* Decode ``count`` values in rows of ``row_length`` from the ``length`` coded bytes into
 * ``values``. CCG_ERR_INPUT when the bytes do not decode to exactly that many values
 * below 2**62 using every byte. */
int ccg_decode_gaps(const uint8_t *coded, size_t length, const int64_t *row_length, int64_t rows,
                    uint64_t *values, int64_t count);

#endif
