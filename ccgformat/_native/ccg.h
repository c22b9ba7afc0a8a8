/* The native core's shared declarations: the node table every C component reads.
 *
 * A `ccg_nodes` holds nodes `first .. first + count - 1` column-wise, in the layout of
 * the Python `NodePool` (ccgformat/graph/pool.py) flattened into offset arrays: node i
 * (local index, id first + i) has children children[child_start[i] .. child_start[i+1]),
 * durations durations[duration_start[i] .. duration_start[i+1]) (2n+1 for a call or
 * artificial node, none for an atomic one), hard properties key[key_start[i] ..] and soft
 * properties soft[soft_start[i] ..] (an atomic METRIC holds the difference to the
 * previous sample), its sub-tree's event count events[i] and duration total[i], and the
 * per-metric sums of its sub-tree's sample differences as sorted (metric, sum) pairs
 * metric_id/metric_sum[metric_start[i] .. metric_start[i+1]).
 *
 * The builder's pool is one table with first = 0 that grows (its arrays move when they
 * grow: never keep a pointer across a builder call). A decoded archive block is a table
 * of its own ids; its children may lie in earlier blocks, whose event counts, totals and
 * metric sums the block's import table carries (ccg_imports).
 *
 * Node kinds share the numbers of the event kinds: CALL = 0, ARTIFICIAL = 1, and every
 * other number is an atomic node of that event kind.
 */
#ifndef CCG_H
#define CCG_H

#include <stdint.h>
#include <stddef.h>

enum {
    CCG_CALL = 0, CCG_ARTIFICIAL = 1,
    CCG_ENTER = 0, CCG_LEAVE = 1, CCG_SEND = 2, CCG_RECV = 3, CCG_ISEND = 4, CCG_IRECV = 5,
    CCG_IRECV_REQUEST = 6, CCG_REQUEST_COMPLETE = 7, CCG_COLL_BEGIN = 8, CCG_COLL_END = 9,
    CCG_METRIC = 10, CCG_MARKER = 11, CCG_GENERIC = 12, CCG_KIND_COUNT = 13
};

/* Result codes of every native function that can fail. */
enum {
    CCG_OK = 0,
    CCG_ERR_MEMORY = 1,   /* an allocation failed */
    CCG_ERR_INPUT = 2,    /* bad input (trace or file); the message says what and where */
    CCG_ERR_CALLBACK = 3  /* a Python callback raised; the caller re-raises its exception */
};

typedef struct ccg_nodes {
    int64_t first;
    int64_t count;
    uint8_t *kind;
    int64_t *child_start;     /* count + 1 */
    int64_t *children;        /* absolute ids */
    int64_t *duration_start;  /* count + 1 */
    int64_t *durations;
    int64_t *key_start;       /* count + 1 */
    int64_t *key;
    int64_t *soft_start;      /* count + 1 */
    int64_t *soft;
    int64_t *events;          /* count */
    int64_t *total;           /* count */
    int64_t *metric_start;    /* count + 1 */
    int64_t *metric_id;
    int64_t *metric_sum;
} ccg_nodes;

/* What a block knows about the earlier-block children it references, sorted by id. */
typedef struct ccg_imports {
    int64_t count;
    int64_t *id;
    int64_t *events;
    int64_t *total;
    int64_t *metric_start;    /* count + 1 */
    int64_t *metric_id;
    int64_t *metric_sum;
} ccg_imports;

/* A decoded archive node block: its nodes and its import table. */
typedef struct ccg_block {
    ccg_nodes nodes;
    ccg_imports imports;
} ccg_block;

/* Where a walk finds nodes: the blocks covering ids 0 .. block_first[block_count] - 1.
 * blocks[k] holds ids block_first[k] .. block_first[k+1] - 1 and is NULL while not
 * decoded; the walker then calls load(context, k), which fills blocks[k] (or returns an
 * error code). Blocks loaded during one native call stay valid until it returns: the
 * owner frees (evicts) blocks only between calls, so a walk keeps node ids, never
 * pointers, from one call to the next. A builder's pool is a source of one block
 * (with an empty import table) and no load function. */
typedef struct ccg_source {
    int64_t block_count;
    const int64_t *block_first;   /* block_count + 1 */
    ccg_block **blocks;           /* block_count */
    int (*load)(void *context, int64_t block);
    void *context;
} ccg_source;

/* Event columns (model.EventBatch), owned by the caller, each with room for the events
 * a function is asked to write. */
typedef struct ccg_columns {
    int64_t *time;
    uint8_t *kind;
    int64_t *ref;
    int64_t *comm;
    int64_t *tag;
    int64_t *request;
    int64_t *size;
    int64_t *recv_size;
    int64_t *value;
} ccg_columns;

/* The per-kind number of hard and soft properties of atomic nodes (model.KIND_FIELDS);
 * a CALL has one hard property (its region), an ARTIFICIAL node none. */
extern const int ccg_hard_count[CCG_KIND_COUNT];
extern const int ccg_soft_count[CCG_KIND_COUNT];

#endif
