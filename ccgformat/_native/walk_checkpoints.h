/* The checkpoint accumulator of the snapshot and summary indexes
 * (ccgformat/archive/indexes.py): call stack, per-region calls and inclusive/exclusive
 * time, metric values, message and collective totals over a location's events. */
#ifndef CCG_WALK_CHECKPOINTS_H
#define CCG_WALK_CHECKPOINTS_H

#include "walk.h"

/* A checkpoint (indexes.Checkpoint) as flat arrays, valid until the next call. */
typedef struct ccg_checkpoint {
    int64_t stack_count;        /* (region, enter time) pairs, outermost first */
    const int64_t *stack;
    int64_t metric_count;       /* (metric, value) pairs, by metric */
    const int64_t *metrics;
    int64_t region_count;       /* (region, calls, inclusive, exclusive), by region */
    const int64_t *regions;
    int64_t messages[4];        /* sent, sent bytes, received, received bytes */
    int64_t collectives[3];     /* count, bytes sent, bytes received */
} ccg_checkpoint;

typedef struct ccg_checkpointer ccg_checkpointer;

ccg_checkpointer *ccg_checkpointer_new(void);
void ccg_checkpointer_free(ccg_checkpointer *acc);
const char *ccg_checkpointer_error(const ccg_checkpointer *acc);
/* Account for `count` events (columns time, kind, ref, size, recv_size and value). */
int ccg_checkpointer_add(ccg_checkpointer *acc, const ccg_columns *events, int64_t count);
/* The state so far, with open calls counted up to `time`. */
int ccg_checkpointer_snapshot(ccg_checkpointer *acc, int64_t time, ccg_checkpoint *out);

#endif
