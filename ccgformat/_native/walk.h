/* Walking one location's graph (dissertation 4.5): random access, iteration both ways,
 * time search and call stacks over a ccg_source.
 *
 * A `ccg_walk` is the cursor of 4.5.1: a stack of (node, slot, time) frames from the
 * root to the current event and the running value of every metric. It keeps node ids,
 * never pointers, from one call to the next, so the source may evict blocks between
 * calls; every call starts by resolving its frames again. Functions return CCG_OK or an
 * error code; `ccg_walk_error` then says what went wrong.
 */
#ifndef CCG_WALK_H
#define CCG_WALK_H

#include "ccg.h"

typedef struct ccg_walk ccg_walk;

/* A walker over the location whose root node is `root` and whose first event is at
 * `start`; the source must outlive it. NULL when out of memory. */
ccg_walk *ccg_walk_new(const ccg_source *source, int64_t root, int64_t start);
void ccg_walk_free(ccg_walk *walk);
/* What the last failing call reported. */
const char *ccg_walk_error(const ccg_walk *walk);

/* The location's event count (the root's). */
int ccg_walk_count(ccg_walk *walk, int64_t *count);
/* The cursor's event index (-1 before the first event, count after the last). */
int64_t ccg_walk_index(const ccg_walk *walk);
/* Put the cursor on event `index`, 0 <= index <= count (count: past the end). */
int ccg_walk_seek(ccg_walk *walk, int64_t index);
/* Write event `index` (0 <= index < count) to row 0 of `out`; the cursor is left
 * unusable for iteration until the next seek (the fast path of a lone event(i)). */
int ccg_walk_event(ccg_walk *walk, int64_t index, const ccg_columns *out);
/* Write up to `capacity` events from the cursor on, moving forward (or, for backward,
 * the cursor's event and those before it, newest first); `written` says how many. */
int ccg_walk_forward(ccg_walk *walk, const ccg_columns *out, int64_t capacity, int64_t *written);
int ccg_walk_backward(ccg_walk *walk, const ccg_columns *out, int64_t capacity, int64_t *written);
/* The index of the first event at or after `time` (count if none); the cursor stays. */
int ccg_walk_find(ccg_walk *walk, int64_t time, int64_t *index);
/* The regions open at `time`, outermost first: `depth` of them at `ccg_walk_stack`. */
int ccg_walk_call_stack(ccg_walk *walk, int64_t time, int64_t *depth);
const int64_t *ccg_walk_stack(const ccg_walk *walk);

#endif
