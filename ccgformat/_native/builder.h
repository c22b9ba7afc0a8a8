/* The streaming cCCG builder in C: the native twin of ccgformat/graph/builder.py.
 *
 * It validates each location's event batches (model.LocationValidator), builds the call
 * trees with wide-node splitting (dissertation 4.1.2, 4.1.3) and compresses them while
 * they close with the replacement search of 4.2.1/4.2.2 (hash -> S-lists managed as
 * priority caches) and the interval arithmetic of 4.2.4. Node ids, node contents, the
 * metrics N/n/M/m, repairs and errors are those of the Python reference.
 *
 * Every function that can fail returns a CCG_* code; on CCG_ERR_INPUT the message is in
 * ccg_builder_error and where it happened in ccg_builder_error_position.
 */
#ifndef CCG_BUILDER_H
#define CCG_BUILDER_H

#include "ccg.h"

typedef struct ccg_builder ccg_builder;

/* Relative bounds are numerators over 2**32 (params.rel_numerator). ``validate`` checks
 * references against ``regions``/``locations`` region and location counts and
 * ``metric_count`` metrics; ``double_metric[i]`` marks floating-point metrics (exact).
 * ``epoch_nodes``: the index starts empty every that many stored nodes (0: never). */
ccg_builder *ccg_builder_new(int64_t abs_dev, int64_t rel_time, int64_t rel_size, int64_t rel_metric,
                             int exact_time, int64_t branching, int64_t search_length, int64_t leaf_window,
                             int64_t representatives, int64_t epoch_nodes, int repair, int validate,
                             int64_t regions, int64_t locations, const uint8_t *double_metric, int64_t metric_count);
void ccg_builder_free(ccg_builder *b);

/* The next ``n`` events of ``location``, column by column (model.EventBatch). */
int ccg_builder_add(ccg_builder *b, int64_t location, int64_t n, const int64_t *time, const uint8_t *kind,
                    const int64_t *ref, const int64_t *comm, const int64_t *tag, const int64_t *request,
                    const int64_t *size, const int64_t *recv_size, const int64_t *value);

/* Finish a location: out[0..3] = root node, first timestamp, end, event count. */
int ccg_builder_end_location(ccg_builder *b, int64_t location, int64_t *out);

/* Add and finish whole locations: location locations[i] holds the events offsets[i] ..
 * offsets[i+1] - 1 of the columns; out[4i .. 4i+3] is its root as end_location gives it.
 * On an error, `failed` is the failing i (the locations before it are finished). */
int ccg_builder_add_locations(ccg_builder *b, int64_t n, const int64_t *locations, const int64_t *offsets,
                              const int64_t *time, const uint8_t *kind, const int64_t *ref, const int64_t *comm,
                              const int64_t *tag, const int64_t *request, const int64_t *size,
                              const int64_t *recv_size, const int64_t *value, int64_t *out, int64_t *failed);

/* The node pool as a table (valid until the next builder call): first = 0 until
 * ccg_builder_release drops records. */
const ccg_nodes *ccg_builder_nodes(ccg_builder *b);

/* out[0..3] = N, n, M, m (dissertation 4.2.5, pool.node_bytes). */
/* out[0..2] = bytes the pool's columns take (their capacity), bytes the replacement
 * index takes (S-lists, tables, per-node index columns of the epoch), epochs begun
 * after the first (next_epoch). */
void ccg_builder_memory(const ccg_builder *b, int64_t *out);

/* Drop the records of the nodes below ``below`` (those written: the caller encoded them)
 * that the replacement index no longer holds (below the epoch's first node): the pool
 * keeps, as ccg_builder_pinned, the event count, total and metric sums of those that an
 * open frame or a kept node still references; nothing else reads them again. */
int ccg_builder_release(ccg_builder *b, int64_t below);
/* Those pinned summaries, as the import table of the pool's next blocks (valid until the
 * next builder call). */
const ccg_imports *ccg_builder_pinned(ccg_builder *b);
void ccg_builder_metrics(const ccg_builder *b, int64_t *out);

/* Repairs reported so far; out holds 4 values per repair: location, region, time,
 * action (0 = closed, 1 = dropped). */
int64_t ccg_builder_repair_count(const ccg_builder *b);
void ccg_builder_repairs(const ccg_builder *b, int64_t first, int64_t count, int64_t *out);

/* The last error: its message, and out[0..3] = location, event index, time, flags
 * (bit 0: the time is known, bit 1: a trace error rather than a misuse). */
const char *ccg_builder_error(const ccg_builder *b);
void ccg_builder_error_position(const ccg_builder *b, int64_t *out);

#endif
