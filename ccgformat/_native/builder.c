/* The streaming cCCG builder: the C twin of ccgformat/graph/builder.py (see builder.h).
 *
 * Layout. The node pool is a growing ccg_nodes table (ccg.h). Each location keeps its
 * validator (builder_validate.c: open regions, repairs) and its construction stack
 * (4.1.3): frames of open nodes whose finalized child entries lie one after another in a
 * shared entry array, and whose per-level child counts (4.1.2) lie in a shared level
 * array; only the top frame ever grows, so both arrays work as stacks.
 *
 * Replacement search (4.2.1, 4.2.2). A hash table (builder_hash.c) maps (kind, hard
 * properties, child ids) to an S-list; every S-list holds at most L nodes (its cache
 * area), searched front to back, a hit swapping places with its predecessor, a miss
 * going to the end of the area or replacing its last entry. When compatibility means
 * equality (a zero bound) a second table maps all properties of the cached nodes to the
 * one equal node, which the scan would also find first. The tables store ids only and
 * compare by reading the pool; S-lists keep beside their nodes what a search with
 * deviation bounds reads (first soft value, total, durations).
 *
 * Bounded memory (dissertation 4.7.2). Every epoch_nodes stored nodes the index starts
 * empty (next_epoch), so later nodes are compared with the epoch's only; the caller then
 * lets the pool drop the records of written nodes of earlier epochs (ccg_builder_release),
 * which keeps of those still referenced what a parent and an import table read.
 *
 * Arithmetic. Durations and drifts are int64: every location's timestamps must span at
 * most CCG_SPAN_LIMIT ticks and abs_dev is at most CCG_ABS_LIMIT, which keeps every sum
 * far from overflow; deviation shifts and relative bounds are computed in __int128.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "builder.h"
#include "builder_array.h"
#include "builder_hash.h"
#include "builder_validate.h"

#define CCG_SPAN_LIMIT ((int64_t)1 << 61)
#define CCG_ABS_LIMIT ((int64_t)1 << 60)
#define REL_SCALE_BITS 32
/* rounding.GRID_BITS_LIMIT */
#define GRID_BITS_LIMIT 16

typedef __int128 i128;

/* ------------------------------------------------------------------ state */

typedef struct {
    int64_t node, level, start, end, total, lo, hi;  /* lo/hi: the deviation interval */
} entry;

static inline int64_t entry_drift(const entry *e) { return e->total - (e->end - e->start); }

typedef struct {
    uint8_t kind;
    int64_t region, start, start_drift, drift;
    int64_t entry_base, level_base, levels;
} frame;

typedef struct {
    ccg_validator validator;
    /* construction */
    CCG_VEC(frame) stack;
    CCG_VEC(entry) entries;
    CCG_VEC(int64_t) levels;
    ccg_i64map previous_metric;
    int64_t start, last_time;
} location_state;

/* An S-list: its nodes in cache order, and beside them each node's first soft value (its
 * first duration, or an atomic node's first soft property) and its total duration, which
 * let a search skip most candidates without reading the pool. An S-list of call or
 * artificial nodes searched with deviation bounds also keeps their durations (``width``
 * of them per node, as its nodes have the same children) row by row, in cache order. */
typedef struct {
    int64_t *data;    /* nodes, heads, totals: cap values each */
    int64_t one[3];   /* the data while cap <= 1 */
    int64_t *rows;    /* cap x width durations */
    int64_t n, cap, width;
    int64_t hits, misses;  /* finalize's searches that found a node, that stored one */
    uint8_t exact;
    uint8_t closed;   /* no longer searched nor grown (representatives, finalize) */
} slist;

/* The event count, total and metric sums of nodes whose records the pool dropped, by
 * increasing id (ccg_builder_release), and the same as an import table for the encoder. */
typedef struct {
    CCG_VEC(int64_t) id, events, total, metric_start, metric_id, metric_sum;
    ccg_imports table;
} pinned_summaries;

static void free_pinned(pinned_summaries *p)
{
    free(p->id.data), free(p->events.data), free(p->total.data);
    free(p->metric_start.data), free(p->metric_id.data), free(p->metric_sum.data);
}

struct ccg_builder {
    int64_t abs_dev, rel_time, rel_size, rel_metric, branching, search_length, leaf_window, representatives;
    int grid_bits;        /* rounding.Grid.bits */
    int64_t *grid_below;  /* rounding.Grid: per mantissa m - 2**(bits-1), the largest grid mantissa <= m */
    int64_t *grid_above;  /* ... the smallest grid mantissa >= m (one more entry: 2**bits) */
    int64_t grid_max_step;  /* rounding.Grid.max_step */
    int exact_time;
    ccg_rules rules;
    int64_t metric_count;
    uint8_t *double_metric;

    /* the pool */
    CCG_VEC(uint8_t) kind;
    CCG_VEC(int64_t) child_start, children, duration_start, durations, key_start, key, soft_start, soft;
    CCG_VEC(int64_t) events, total, metric_start, metric_id, metric_sum;
    /* per node made in this epoch (index node - epoch_first): its S-list, its position in
     * it or -1, and the pool size when it was made or last shared as a leaf call */
    CCG_VEC(int64_t) node_slist, node_position, last_use;
    ccg_nodes table;
    int64_t N, n, M, m;
    /* ccg_builder_release: the columns keep the records of nodes base .. base + kind.n - 1;
     * of the nodes below, pinned keeps what their parents read of those still referenced */
    int64_t base;
    pinned_summaries pinned;

    /* the replacement index, emptied when epoch_nodes nodes were made since epoch_first
     * (dissertation 4.7.2; clear_index) */
    CCG_VEC(slist) slists;
    ccg_idtable by_key, exact;
    int64_t epoch_nodes, epoch_first, epochs;

    /* locations and repairs */
    ccg_i64map location_index;  /* location -> index into states */
    CCG_VEC(location_state *) states;
    CCG_VEC(int64_t) free_slots;  /* indexes of finished locations' states */
    CCG_VEC(ccg_repair) repairs;

    /* scratch */
    CCG_VEC(int64_t) durations_tmp, rounded_tmp, children_tmp, sum_id_tmp, sum_value_tmp;
    CCG_VEC(uint8_t) drop;

    ccg_error error;
};

static int fail_memory(ccg_builder *b) { return ccg_memory_error(&b->error); }

/* ------------------------------------------------------------------ the pool */

/* A node of this epoch's index in the per-node index columns. */
#define LOCAL(b, node) ((node) - (b)->epoch_first)

/* A node whose record the pool keeps (id base or more) in the pool's columns. */
#define AT(b, node) ((node) - (b)->base)
#define RUN(b, column, start, node) ((b)->column.data + (b)->start.data[AT(b, node)])
#define RUN_LEN(b, start, node) ((b)->start.data[AT(b, node) + 1] - (b)->start.data[AT(b, node)])

static inline const int64_t *soft_run(const ccg_builder *b, int64_t node, int64_t *count)
{
    if (b->kind.data[AT(b, node)] <= CCG_ARTIFICIAL) {
        *count = RUN_LEN(b, duration_start, node);
        return RUN(b, durations, duration_start, node);
    }
    *count = RUN_LEN(b, soft_start, node);
    return RUN(b, soft, soft_start, node);
}

static int append_run(void *vec_data, int64_t *n, int64_t *cap, const int64_t *values, int64_t count,
                      int64_t *starts, int64_t node)
{
    int64_t **data = vec_data;
    if (ccg_reserve((void **)data, cap, *n + count, sizeof(int64_t)))
        return -1;
    if (count)
        memcpy(*data + *n, values, (size_t)count * sizeof(int64_t));
    *n += count;
    starts[node + 1] = *n;
    return 0;
}

#define APPEND_RUN(b, column, start, values, count, node) \
    append_run(&(b)->column.data, &(b)->column.n, &(b)->column.cap, values, count, (b)->start.data, node)

static int64_t pool_append(ccg_builder *b, uint8_t kind, const int64_t *key, int64_t keys,
                           const int64_t *children, int64_t child_count, const int64_t *durations,
                           int64_t duration_count, const int64_t *soft, int64_t softs, int64_t events,
                           int64_t total, const int64_t *sum_id, const int64_t *sum_value, int64_t sums)
{
    int64_t i = b->kind.n, node = b->base + i;
    if (CCG_RESERVE(b->kind, i + 1) || CCG_RESERVE(b->events, i + 1) || CCG_RESERVE(b->total, i + 1) ||
        CCG_RESERVE(b->node_slist, LOCAL(b, node) + 1) || CCG_RESERVE(b->node_position, LOCAL(b, node) + 1) ||
        CCG_RESERVE(b->last_use, LOCAL(b, node) + 1) || CCG_RESERVE(b->child_start, i + 2) ||
        CCG_RESERVE(b->duration_start, i + 2) || CCG_RESERVE(b->key_start, i + 2) || CCG_RESERVE(b->soft_start, i + 2) ||
        CCG_RESERVE(b->metric_start, i + 2))
        return -1;
    if (APPEND_RUN(b, children, child_start, children, child_count, i) ||
        APPEND_RUN(b, durations, duration_start, durations, duration_count, i) ||
        APPEND_RUN(b, key, key_start, key, keys, i) || APPEND_RUN(b, soft, soft_start, soft, softs, i) ||
        APPEND_RUN(b, metric_id, metric_start, sum_id, sums, i) ||
        APPEND_RUN(b, metric_sum, metric_start, sum_value, sums, i))
        return -1;
    b->kind.data[i] = kind;
    b->events.data[i] = events;
    b->total.data[i] = total;
    int64_t local = LOCAL(b, node);
    b->node_slist.data[local] = -1;
    b->node_position.data[local] = -1;
    b->last_use.data[local] = node;
    b->kind.n = b->events.n = b->total.n = i + 1;
    b->node_slist.n = b->node_position.n = b->last_use.n = local + 1;
    return node;
}

/* What a parent reads of a child (its event count, total and metric sums): from the
 * columns, or for a node below base from the pinned summaries. */
typedef struct {
    int64_t events, total, pairs;
    const int64_t *ids, *sums;
} summary;

static summary summary_of(const ccg_builder *b, int64_t node)
{
    if (node >= b->base) {
        int64_t i = AT(b, node), a = b->metric_start.data[i];
        return (summary){b->events.data[i], b->total.data[i], b->metric_start.data[i + 1] - a,
                         b->metric_id.data + a, b->metric_sum.data + a};
    }
    int64_t lo = 0, hi = b->pinned.id.n;  /* ccg_builder_release pins every node below base still read */
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (b->pinned.id.data[mid] < node)
            lo = mid + 1;
        else
            hi = mid;
    }
    int64_t a = b->pinned.metric_start.data[lo];
    return (summary){b->pinned.events.data[lo], b->pinned.total.data[lo], b->pinned.metric_start.data[lo + 1] - a,
                     b->pinned.metric_id.data + a, b->pinned.metric_sum.data + a};
}

/* Merge the children's sorted (metric, sum) pairs, sums modulo 2**64 (pool.add_inner). */
static int merge_sums(ccg_builder *b, const int64_t *children, int64_t count, int64_t *sums)
{
    int64_t n = 0;
    for (int64_t c = 0; c < count; c++) {
        summary child = summary_of(b, children[c]);
        const int64_t *ids = child.ids, *values = child.sums;
        int64_t pairs = child.pairs;
        for (int64_t p = 0; p < pairs; p++) {
            int64_t lo = 0, hi = n;
            while (lo < hi) {
                int64_t mid = lo + (hi - lo) / 2;
                if (b->sum_id_tmp.data[mid] < ids[p])
                    lo = mid + 1;
                else
                    hi = mid;
            }
            if (lo < n && b->sum_id_tmp.data[lo] == ids[p]) {
                b->sum_value_tmp.data[lo] = (int64_t)((uint64_t)b->sum_value_tmp.data[lo] + (uint64_t)values[p]);
                continue;
            }
            if (CCG_RESERVE(b->sum_id_tmp, n + 1) || CCG_RESERVE(b->sum_value_tmp, n + 1))
                return -1;
            memmove(b->sum_id_tmp.data + lo + 1, b->sum_id_tmp.data + lo, (size_t)(n - lo) * sizeof(int64_t));
            memmove(b->sum_value_tmp.data + lo + 1, b->sum_value_tmp.data + lo,
                    (size_t)(n - lo) * sizeof(int64_t));
            b->sum_id_tmp.data[lo] = ids[p];
            b->sum_value_tmp.data[lo] = values[p];
            n++;
        }
    }
    *sums = n;
    return 0;
}

/* pool.node_bytes */
static int64_t inner_bytes(uint8_t kind, int64_t children, const int64_t *durations, int64_t count)
{
    int64_t top = 0;
    for (int64_t i = 0; i < count; i++)
        if (durations[i] > top)
            top = durations[i];
    int64_t width = top < ((int64_t)1 << 8) ? 1 : top < ((int64_t)1 << 16) ? 2 : top < ((int64_t)1 << 32) ? 4 : 8;
    return 4 + 4 * children + width * count + (kind == CCG_CALL ? 8 : 0);
}

/* ------------------------------------------------------------------ S-lists (4.2.2) */

static inline int64_t *slist_nodes(slist *s) { return s->cap <= 1 ? s->one : s->data; }
static inline int64_t *slist_heads(slist *s) { return slist_nodes(s) + (s->cap <= 1 ? 1 : s->cap); }
static inline int64_t *slist_totals(slist *s) { return slist_nodes(s) + (s->cap <= 1 ? 2 : 2 * s->cap); }

static inline int runs_equal(const int64_t *a, const int64_t *b, int64_t n)
{
    return n == 0 || memcmp(a, b, (size_t)n * sizeof(int64_t)) == 0;
}

/* The hash of a node's hard properties: kind, key and children (unfinished). */
static inline uint64_t hard_hash(uint8_t kind, const int64_t *key, int64_t keys, const int64_t *children,
                                 int64_t child_count)
{
    return ccg_hash_run(ccg_hash_run(kind, key, keys), children, child_count);
}

/* The S-list of (kind, key, children), created when missing; -1 when out of memory.
 * ``hard`` is their hard_hash. */
static int64_t slist_of(ccg_builder *b, uint8_t kind, const int64_t *key, int64_t keys,
                        const int64_t *children, int64_t child_count, uint64_t hard, int exact,
                        int64_t width)
{
    uint64_t h = ccg_finish_hash(hard);
    if (b->by_key.cap) {
        uint64_t mask = (uint64_t)b->by_key.cap - 1;
        for (uint64_t i = h & mask; b->by_key.slots[i].id >= 0; i = (i + 1) & mask) {
            if (b->by_key.slots[i].hash != h)
                continue;
            int64_t s = b->by_key.slots[i].id;
            int64_t node = slist_nodes(&b->slists.data[s])[0];
            if (b->kind.data[AT(b, node)] == kind && RUN_LEN(b, key_start, node) == keys &&
                RUN_LEN(b, child_start, node) == child_count &&
                runs_equal(RUN(b, key, key_start, node), key, keys) &&
                runs_equal(RUN(b, children, child_start, node), children, child_count))
                return s;
        }
    }
    slist fresh = {0};
    fresh.exact = (uint8_t)exact;
    fresh.width = width;
    int64_t s = b->slists.n;
    if (CCG_PUSH(b->slists, fresh) || ccg_idtable_insert(&b->by_key, h, s))
        return -1;
    return s;
}

/* Exact S-lists are indexed by all properties at once, so that a hit needs one lookup;
 * the S-list of the node found is node_slist. */
static inline uint64_t exact_hash(uint64_t hard, const int64_t *soft, int64_t count)
{
    return ccg_finish_hash(ccg_hash_run(hard, soft, count));
}

static uint64_t exact_hash_of(const ccg_builder *b, int64_t node)
{
    int64_t count;
    const int64_t *soft = soft_run(b, node, &count);
    return exact_hash(hard_hash(b->kind.data[AT(b, node)], RUN(b, key, key_start, node), RUN_LEN(b, key_start, node),
                                RUN(b, children, child_start, node), RUN_LEN(b, child_start, node)),
                      soft, count);
}

/* The cached node of an exact S-list with all these properties, or -1. */
static int64_t exact_find(const ccg_builder *b, uint8_t kind, const int64_t *key, int64_t keys,
                          const int64_t *children, int64_t child_count, uint64_t hard, const int64_t *soft,
                          int64_t count)
{
    if (!b->exact.cap)
        return -1;
    uint64_t h = exact_hash(hard, soft, count);
    uint64_t mask = (uint64_t)b->exact.cap - 1;
    for (uint64_t i = h & mask; b->exact.slots[i].id >= 0; i = (i + 1) & mask) {
        if (b->exact.slots[i].hash != h)
            continue;
        int64_t node = b->exact.slots[i].id, n;
        const int64_t *other = soft_run(b, node, &n);
        if (b->kind.data[AT(b, node)] == kind && n == count && RUN_LEN(b, key_start, node) == keys &&
            RUN_LEN(b, child_start, node) == child_count && runs_equal(other, soft, count) &&
            runs_equal(RUN(b, key, key_start, node), key, keys) &&
            runs_equal(RUN(b, children, child_start, node), children, child_count))
            return node;
    }
    return -1;
}

/* A hit at ``position`` swaps places with its predecessor. */
static void promote(ccg_builder *b, slist *s, int64_t position)
{
    if (position <= 0)
        return;
    int64_t *nodes = slist_nodes(s), *heads = slist_heads(s), *totals = slist_totals(s);
    int64_t a = nodes[position - 1], c = nodes[position], head = heads[position - 1], total = totals[position - 1];
    nodes[position - 1] = c, nodes[position] = a;
    heads[position - 1] = heads[position], heads[position] = head;
    totals[position - 1] = totals[position], totals[position] = total;
    b->node_position.data[LOCAL(b, c)] = position - 1;
    b->node_position.data[LOCAL(b, a)] = position;
    if (s->width) {
        int64_t *upper = s->rows + (position - 1) * s->width, *lower = upper + s->width;
        for (int64_t j = 0; j < s->width; j++) {
            int64_t x = upper[j];
            upper[j] = lower[j], lower[j] = x;
        }
    }
}

/* A miss: the new node goes to the end of the cache area, or replaces its last entry. */
static int slist_insert(ccg_builder *b, int64_t s_index, int64_t node)
{
    slist *s = &b->slists.data[s_index];
    int64_t position;
    if (s->n < b->search_length) {
        if (s->n + 1 > s->cap) {
            int64_t cap = s->cap ? 2 * s->cap : 1;
            if (cap > b->search_length)
                cap = b->search_length;
            if (s->width) {  /* first: a failure later leaves it merely larger */
                if (cap > INT64_MAX / 8 / s->width)
                    return -1;
                int64_t *rows = realloc(s->rows, (size_t)(cap * s->width) * sizeof *rows);
                if (!rows)
                    return -1;
                s->rows = rows;
            }
            if (cap > 1) {
                int64_t *data = malloc((size_t)(3 * cap) * sizeof *data);
                if (!data)
                    return -1;
                memcpy(data, slist_nodes(s), (size_t)s->n * sizeof *data);
                memcpy(data + cap, slist_heads(s), (size_t)s->n * sizeof *data);
                memcpy(data + 2 * cap, slist_totals(s), (size_t)s->n * sizeof *data);
                if (s->cap > 1)
                    free(s->data);
                s->data = data;
            }
            s->cap = cap;
        }
        position = s->n++;
    } else {
        position = b->search_length - 1;
        int64_t evicted = slist_nodes(s)[position];
        b->node_position.data[LOCAL(b, evicted)] = -1;
        if (s->exact)
            ccg_idtable_delete(&b->exact, exact_hash_of(b, evicted), evicted);
    }
    int64_t count;
    const int64_t *soft = soft_run(b, node, &count);
    slist_nodes(s)[position] = node;
    slist_heads(s)[position] = count ? soft[0] : 0;
    slist_totals(s)[position] = b->total.data[AT(b, node)];
    if (s->width)
        memcpy(s->rows + position * s->width, RUN(b, durations, duration_start, node),
               (size_t)s->width * sizeof(int64_t));
    b->node_slist.data[LOCAL(b, node)] = s_index;
    b->node_position.data[LOCAL(b, node)] = position;
    if (s->exact) {
        if (ccg_idtable_insert(&b->exact, exact_hash_of(b, node), node))
            return -1;
    }
    return 0;
}

/* SList.replace: ``node``, stored instead of sharing the equal cached node ``old`` of an
 * exact S-list, takes its place; ``old`` leaves the cache area. */
static int slist_replace(ccg_builder *b, int64_t old, int64_t node)
{
    int64_t s_index = b->node_slist.data[LOCAL(b, old)], position = b->node_position.data[LOCAL(b, old)];
    slist *s = &b->slists.data[s_index];
    ccg_idtable_delete(&b->exact, exact_hash_of(b, old), old);
    b->node_position.data[LOCAL(b, old)] = -1;
    slist_nodes(s)[position] = node;  /* the same soft properties: head and total stay */
    b->node_slist.data[LOCAL(b, node)] = s_index;
    b->node_position.data[LOCAL(b, node)] = position;
    return ccg_idtable_insert(&b->exact, exact_hash_of(b, node), node);
}

/* builder._share_leaf: whether a leaf call is shared with the equal cached node ``found``
 * of ``s`` (an S-list with as many hits as misses, or ``found`` made or last shared at
 * most leaf_window nodes ago, or leaf_window 0); records a use decided by the window. */
static int share_leaf(ccg_builder *b, const slist *s, int64_t found)
{
    if (s->hits >= s->misses)
        return 1;
    int64_t now = b->base + b->kind.n;
    if (b->leaf_window && now - b->last_use.data[LOCAL(b, found)] > b->leaf_window)
        return 0;
    b->last_use.data[LOCAL(b, found)] = now;
    return 1;
}

/* params.within_rel: |new - original| << 32 <= numerator * |original|, exactly. */
static inline int within_rel(int64_t new_value, int64_t original, int64_t numerator)
{
    i128 diff = (i128)new_value - original;
    if (diff < 0)
        diff = -diff;
    i128 base = original < 0 ? -(i128)original : (i128)original;
    return (diff << REL_SCALE_BITS) <= (i128)numerator * base;
}

/* The values within_rel accepts for ``original``: [*lo, *hi] (|new - original| is an
 * integer, so |new - original| << 32 <= numerator * |original| means it is at most the
 * floor of numerator * |original| / 2**32). */
static inline void rel_range(int64_t original, int64_t numerator, i128 *lo, i128 *hi)
{
    i128 base = original < 0 ? -(i128)original : (i128)original;
    i128 tolerance = ((i128)numerator * base) >> REL_SCALE_BITS;
    *lo = (i128)original - tolerance;
    *hi = (i128)original + tolerance;
}

/* The first position from ``p`` on whose value lies in [lo, hi] (wrapping unsigned
 * arithmetic: one comparison per value), or ``n``. */
static inline int64_t next_in(const int64_t *values, int64_t p, int64_t n, uint64_t lo, uint64_t width)
{
    while (p < n && (uint64_t)values[p] - lo > width)
        p++;
    return p;
}

/* [lo, hi] clamped to int64 as the arguments of next_in; 0 when it is empty. */
static inline int range_of(i128 lo, i128 hi, uint64_t *start, uint64_t *width)
{
    if (lo < INT64_MIN)
        lo = INT64_MIN;
    if (hi > INT64_MAX)
        hi = INT64_MAX;
    if (lo > hi)
        return 0;
    *start = (uint64_t)(int64_t)lo;
    *width = (uint64_t)(int64_t)hi - *start;
    return 1;
}

/* ------------------------------------------------------------------ compression (4.2) */

/* builder._time_deviation (Lemmas 4, 5): the deviation interval if ``candidate``'s
 * durations replace ``own``, or 0 when a gap or a timestamp leaves its bound. */
static int time_deviation(const ccg_builder *b, const int64_t *candidate, const int64_t *own,
                          const entry *entries, int64_t count, int64_t end_drift, i128 bound_lo,
                          i128 bound_hi, int64_t *out_lo, int64_t *out_hi)
{
    i128 shift = 0, lo = 0, hi = 0, drift = 0;
    for (int64_t j = 0; j <= count; j++) {
        int64_t gap = 2 * j;
        if (candidate[gap] != own[gap]) {
            if (!within_rel(candidate[gap], own[gap], b->rel_time))
                return 0;
            shift += (i128)candidate[gap] - own[gap];
        }
        i128 mlo, mhi;
        if (j == count) {
            mlo = mhi = shift + end_drift;
        } else {  /* the edge interval: the child's deviation plus the drift before it */
            mlo = entries[j].lo + drift + shift;
            mhi = entries[j].hi + drift + shift;
            drift += entry_drift(&entries[j]);
        }
        if (mlo < bound_lo || mhi > bound_hi)
            return 0;
        if (mlo < lo)
            lo = mlo;
        if (mhi > hi)
            hi = mhi;
    }
    *out_lo = (int64_t)lo;
    *out_hi = (int64_t)hi;
    return 1;
}

/* rounding.round_to_grid: the grid point in [lo, hi] nearest to target, the lower on a
 * tie (every mantissa of grid_bits bits is a point where the grid's step passes
 * grid_max_step), else the multiple of the largest power of two not above hi - lo + 1 in
 * [lo, hi] nearest to target, the lower on a tie (0 <= lo <= hi). */
static int64_t round_to_grid(const ccg_builder *b, i128 target, int64_t lo, int64_t hi)
{
    if (lo == hi)
        return lo;
    int64_t value = target < lo ? lo : target > hi ? hi : (int64_t)target;
    int length = 64 - __builtin_clzll((uint64_t)value | 1);
    int exponent = length > b->grid_bits ? length - b->grid_bits : 0;
    int64_t half = (int64_t)1 << (b->grid_bits - 1), m = value >> exponent;
    i128 down = value, up = value, best = -1;
    if (m >= half) {
        down = (i128)b->grid_below[m - half] << exponent;
        up = down == value ? down : (i128)b->grid_above[m - half + ((m << exponent) != value)] << exponent;
        if (up - down > b->grid_max_step) {  /* too coarse for the absolute bound: every mantissa */
            down = (i128)m << exponent;
            up = down == value ? down : down + ((i128)1 << exponent);
        }
    }
    i128 points[2] = {down, up};
    for (int k = 0; k < 2; k++) {
        i128 d = points[k] - target, bd = best - target;
        if (points[k] >= lo && points[k] <= hi &&
            (best < 0 || (d < 0 ? -d : d) < (bd < 0 ? -bd : bd)))
            best = points[k];
    }
    if (best >= 0)
        return (int64_t)best;
    uint64_t width = (uint64_t)hi - (uint64_t)lo + 1;
    i128 step = (i128)1 << (63 - __builtin_clzll(width));
    down = (value / step) * step;
    up = down + step;
    i128 du = up - target, dd = down - target;
    if (down < lo || (up <= hi && (du < 0 ? -du : du) < (dd < 0 ? -dd : dd)))
        return (int64_t)up;
    return (int64_t)down;
}

/* rounding.grid: the mantissas of the fewest bits (at most GRID_BITS_LIMIT) that can skip
 * integers from 2**(bits-1), chosen greedily, each next one the largest t with
 * t (1 - r) <= s (1 + r) after the previous s, for r the bound rounded up to the next
 * 2**-32; 0 when out of memory. */
static int make_grid(ccg_builder *b, int64_t rel_time)
{
    b->grid_max_step = b->abs_dev / 2;
    const i128 scale = (i128)1 << REL_SCALE_BITS;
    i128 r = rel_time > 0 ? (i128)rel_time + 1 : 0;
    int bits = 1;
    if (r > 0)
        while (bits < GRID_BITS_LIMIT && ((i128)1 << (bits - 1)) * 2 * r < scale - r)
            bits++;
    int64_t half = (int64_t)1 << (bits - 1);
    b->grid_bits = bits;
    b->grid_below = malloc((size_t)half * sizeof(int64_t));
    b->grid_above = malloc((size_t)(half + 1) * sizeof(int64_t));
    if (!b->grid_below || !b->grid_above)
        return 0;
    for (int64_t point = half, m = half; point < 2 * half;) {
        i128 next = r > 0 && r < scale ? (i128)point * (scale + r) / (scale - r) : 2 * half;
        next = next <= point ? point + 1 : next > 2 * half ? 2 * half : next;
        for (; m < next; m++) {
            b->grid_below[m - half] = point;
            b->grid_above[m - half] = m == point ? point : (int64_t)next;
        }
        point = (int64_t)next;
    }
    b->grid_above[half] = 2 * half;
    return 1;
}

/* builder._round_gaps: ``own`` with every gap rounded onto the grid by error diffusion
 * inside the bounds into ``rounded``; 0 when nothing moves or a gap cannot stay inside. */
static int round_gaps(const ccg_builder *b, const int64_t *own, int64_t *rounded, const entry *entries,
                      int64_t count, int64_t start_drift, i128 bound_lo, i128 bound_hi)
{
    i128 shift = 0, drift = 0;
    int changed = 0;
    for (int64_t j = 0; j <= count; j++) {
        int64_t gap = own[2 * j];
        i128 tolerance = ((i128)b->rel_time * gap) >> REL_SCALE_BITS;
        i128 elo = drift, ehi = drift;
        if (j < count)
            elo += entries[j].lo, ehi += entries[j].hi;
        i128 lo = gap - tolerance, hi = gap + tolerance;
        if (lo < 0)
            lo = 0;
        if (lo < gap - shift + bound_lo - elo)
            lo = gap - shift + bound_lo - elo;
        if (hi > gap - shift + bound_hi - ehi)
            hi = gap - shift + bound_hi - ehi;
        if (hi > INT64_MAX)
            hi = INT64_MAX;
        if (lo > hi)
            return 0;
        int64_t value = round_to_grid(b, gap - start_drift - drift - shift, (int64_t)lo, (int64_t)hi);
        rounded[2 * j] = value;
        changed |= value != gap;
        shift += (i128)value - gap;
        if (j < count) {
            rounded[2 * j + 1] = own[2 * j + 1];
            drift += entry_drift(&entries[j]);
        }
    }
    return changed;
}

/* Builder._next_epoch (dissertation 4.7.2): once epoch_nodes nodes were made since the
 * last reset, the replacement index starts empty - every S-list, both tables and the
 * per-node index columns - so that it holds only the nodes of one epoch; nodes made
 * before stay in the pool, but no later node is compared with them. */
static void free_index(ccg_builder *b)
{
    for (int64_t s = 0; s < b->slists.n; s++) {
        if (b->slists.data[s].cap > 1)
            free(b->slists.data[s].data);
        free(b->slists.data[s].rows);
    }
    free(b->slists.data), free(b->by_key.slots), free(b->exact.slots);
}

static void next_epoch(ccg_builder *b)
{
    if (!b->epoch_nodes || b->base + b->kind.n - b->epoch_first < b->epoch_nodes)
        return;
    free_index(b);
    memset(&b->slists, 0, sizeof b->slists);
    memset(&b->by_key, 0, sizeof b->by_key);
    memset(&b->exact, 0, sizeof b->exact);
    b->node_slist.n = b->node_position.n = b->last_use.n = 0;
    b->epoch_first = b->base + b->kind.n;
    b->epochs += 1;
}

/* builder._finalize: durations (4.3), then a replacement or a new pool node. */
static int finalize(ccg_builder *b, uint8_t kind, int64_t region, int64_t start, int64_t start_drift,
                    const entry *entries, int64_t count, int64_t end, entry *out)
{
    int64_t ndur = 2 * count + 1;
    next_epoch(b);
    if (CCG_RESERVE(b->durations_tmp, ndur) || CCG_RESERVE(b->children_tmp, count))
        return fail_memory(b);
    int64_t *own = b->durations_tmp.data, *children = b->children_tmp.data;
    int64_t time = start, drift = 0, lo = 0, hi = 0;
    for (int64_t j = 0; j < count; j++) {
        const entry *e = &entries[j];
        own[2 * j] = e->start - time;
        own[2 * j + 1] = e->total;
        children[j] = e->node;
        if (!b->exact_time) {  /* the hull of the edge intervals (Lemma 5 with s = 0) */
            if (e->lo + drift < lo)
                lo = e->lo + drift;
            if (e->hi + drift > hi)
                hi = e->hi + drift;
            drift += entry_drift(e);
        }
        time = e->end;
    }
    own[2 * count] = end - time;
    int64_t keys = kind == CCG_CALL ? 1 : 0;
    int64_t size = inner_bytes(kind, count, own, ndur);
    b->N += 1;
    b->M += size;
    uint64_t hard = hard_hash(kind, &region, keys, children, count);
    out->level = 0, out->start = start, out->end = end;
    int64_t far = -1;  /* an equal leaf call not worth sharing (share_leaf), replaced in its S-list */
    if (b->exact_time) {  /* exact S-lists: one lookup by all properties */
        int64_t found = exact_find(b, kind, &region, keys, children, count, hard, own, ndur);
        if (found >= 0) {
            slist *s = &b->slists.data[b->node_slist.data[LOCAL(b, found)]];
            promote(b, s, b->node_position.data[LOCAL(b, found)]);
            s->hits += 1;
            if (count || share_leaf(b, s, found)) {
                out->node = found, out->total = b->total.data[AT(b, found)], out->lo = lo, out->hi = hi;
                return CCG_OK;
            }
            far = found;
        }
    }
    int64_t s_index = slist_of(b, kind, &region, keys, children, count, hard, b->exact_time,
                               b->exact_time ? 0 : ndur);
    if (s_index < 0)
        return fail_memory(b);
    slist *s = &b->slists.data[s_index];
    if (!s->exact && !s->closed) {
        i128 bound_lo = -(i128)b->abs_dev - start_drift, bound_hi = (i128)b->abs_dev - start_drift;
        /* the first gap decides the first step of time_deviation alone: the candidate's
         * first duration must be within the relative bound of ours, and the shift it
         * causes must keep the first edge (or the end) inside the bound */
        i128 head_lo, head_hi;
        rel_range(own[0], b->rel_time, &head_lo, &head_hi);
        i128 first_lo = count ? entries[0].lo : drift, first_hi = count ? entries[0].hi : drift;
        if (head_lo < own[0] + bound_lo - first_lo)
            head_lo = own[0] + bound_lo - first_lo;
        if (head_hi > own[0] + bound_hi - first_hi)
            head_hi = own[0] + bound_hi - first_hi;
        /* and the last step needs the candidate's total to differ by a shift that keeps
         * the end inside the bound */
        int64_t own_total = 0;
        for (int64_t j = 0; j < ndur; j++)
            own_total += own[j];
        i128 total_lo = own_total + bound_lo - drift, total_hi = own_total + bound_hi - drift;
        uint64_t head_start, head_width, total_start, total_width;
        int64_t *nodes = slist_nodes(s), *heads = slist_heads(s), *totals = slist_totals(s);
        int any = range_of(head_lo, head_hi, &head_start, &head_width) &&
                  range_of(total_lo, total_hi, &total_start, &total_width);
        for (int64_t p = any ? next_in(heads, 0, s->n, head_start, head_width) : s->n; p < s->n;
             p = next_in(heads, p + 1, s->n, head_start, head_width)) {
            if ((uint64_t)totals[p] - total_start > total_width)
                continue;
            int64_t candidate = nodes[p], dlo, dhi;
            if (time_deviation(b, s->rows + p * s->width, own, entries, count, drift,
                               bound_lo, bound_hi, &dlo, &dhi)) {
                promote(b, s, p);
                out->node = candidate, out->total = b->total.data[AT(b, candidate)], out->lo = dlo, out->hi = dhi;
                return CCG_OK;
            }
        }
        /* as many representatives as allowed and none fits: jitter, stored from now on */
        s->closed = b->representatives > 0 && s->n >= b->representatives;
    }
    if (!b->exact_time) {
        if (CCG_RESERVE(b->rounded_tmp, ndur))
            return fail_memory(b);
        i128 bound_lo = -(i128)b->abs_dev - start_drift, bound_hi = (i128)b->abs_dev - start_drift;
        int64_t *rounded = b->rounded_tmp.data;
        if (round_gaps(b, own, rounded, entries, count, start_drift, bound_lo, bound_hi) &&
            time_deviation(b, rounded, own, entries, count, drift, bound_lo, bound_hi, &lo, &hi)) {
            memcpy(own, rounded, (size_t)ndur * sizeof *own);
            size = inner_bytes(kind, count, own, ndur);
        }
    }
    int64_t sums, events = kind == CCG_CALL ? 2 : 0, total = 0;
    if (merge_sums(b, children, count, &sums))
        return fail_memory(b);
    for (int64_t j = 0; j < count; j++)
        events += summary_of(b, children[j]).events;
    for (int64_t j = 0; j < ndur; j++)
        total += own[j];
    int64_t node = pool_append(b, kind, &region, keys, children, count, own, ndur, NULL, 0, events, total,
                               b->sum_id_tmp.data, b->sum_value_tmp.data, sums);
    if (node < 0 || (far >= 0 ? slist_replace(b, far, node)
                              : !b->slists.data[s_index].closed && slist_insert(b, s_index, node)))
        return fail_memory(b);
    b->slists.data[s_index].misses += 1;
    b->n += 1;
    b->m += size;
    out->node = node, out->total = total, out->lo = lo, out->hi = hi;
    return CCG_OK;
}

/* builder._atomic: an atomic node (4.1.1), kept or replaced (4.2.1). */
static int atomic(ccg_builder *b, location_state *state, uint8_t kind, const int64_t *const *columns,
                  int64_t i, int64_t time, entry *out)
{
    int64_t key[4], soft[2], keys = 0, softs = 0;
    next_epoch(b);
    for (; ccg_hard_columns[kind][keys] >= 0; keys++)
        key[keys] = columns[ccg_hard_columns[kind][keys]][i];
    for (; ccg_soft_columns[kind][softs] >= 0; softs++)
        soft[softs] = columns[ccg_soft_columns[kind][softs]][i];
    int64_t numerator = b->rel_size;
    if (kind == CCG_METRIC) {
        int64_t metric = key[0], value = soft[0];
        int64_t *previous = ccg_map_get(&state->previous_metric, metric);
        soft[0] = (int64_t)((uint64_t)value - (uint64_t)(previous ? *previous : 0));
        if (previous)
            *previous = value;
        else if (ccg_map_put(&state->previous_metric, metric, value))
            return fail_memory(b);
        int is_double = metric >= 0 && metric < b->metric_count && b->double_metric[metric];
        numerator = is_double ? 0 : b->rel_metric;
    }
    int64_t size = 4 + 8 * (keys + softs);
    b->N += 1;
    b->M += size;
    uint64_t hard = hard_hash(kind, key, keys, NULL, 0);
    int64_t found = -1;
    if (numerator == 0) {  /* an exact S-list: one lookup by all properties */
        found = exact_find(b, kind, key, keys, NULL, 0, hard, soft, softs);
        if (found >= 0) {
            promote(b, &b->slists.data[b->node_slist.data[LOCAL(b, found)]], b->node_position.data[LOCAL(b, found)]);
            out->node = found, out->level = 0, out->start = time, out->end = time, out->total = 0;
            out->lo = out->hi = 0;
            return CCG_OK;
        }
    }
    int64_t s_index = slist_of(b, kind, key, keys, NULL, 0, hard, numerator == 0, 0);
    if (s_index < 0)
        return fail_memory(b);
    slist *s = &b->slists.data[s_index];
    if (!s->exact) {
        int64_t *nodes = slist_nodes(s), *heads = slist_heads(s);
        i128 head_lo = INT64_MIN, head_hi = INT64_MAX;
        if (softs)
            rel_range(soft[0], numerator, &head_lo, &head_hi);
        uint64_t head_start = 0, head_width = UINT64_MAX;
        range_of(head_lo, head_hi, &head_start, &head_width);  /* never empty: soft[0] is in it */
        for (int64_t p = next_in(heads, 0, s->n, head_start, head_width); p < s->n && found < 0;
             p = next_in(heads, p + 1, s->n, head_start, head_width)) {
            const int64_t *other = RUN(b, soft, soft_start, nodes[p]);
            int ok = 1;
            for (int64_t f = 0; f < softs && ok; f++)
                ok = within_rel(other[f], soft[f], numerator);
            if (ok) {
                found = nodes[p];
                promote(b, s, p);
            }
        }
    }
    if (found < 0) {
        int64_t sums = kind == CCG_METRIC ? 1 : 0, sum_id = sums ? key[0] : 0;
        found = pool_append(b, kind, key, keys, NULL, 0, NULL, 0, soft, softs, 1, 0, &sum_id, soft, sums);
        if (found < 0 || slist_insert(b, s_index, found))
            return fail_memory(b);
        b->n += 1;
        b->m += size;
    }
    out->node = found, out->level = 0, out->start = time, out->end = time, out->total = 0;
    out->lo = out->hi = 0;
    return CCG_OK;
}

/* ------------------------------------------------------------------ splitting (4.1.2) */

static int append(ccg_builder *b, location_state *state, frame *f, const entry *e)
{
    if (CCG_PUSH(state->entries, *e))
        return fail_memory(b);
    if (CCG_RESERVE(state->levels, f->level_base + e->level + 1))
        return fail_memory(b);
    while (f->levels <= e->level) {
        state->levels.data[f->level_base + f->levels++] = 0;
    }
    state->levels.n = f->level_base + f->levels;
    state->levels.data[f->level_base + e->level]++;
    f->drift += entry_drift(e);
    return CCG_OK;
}

/* builder._group: the last ``count`` entries of the top frame (all on ``level``) become
 * one artificial node on the next level. */
static int group(ccg_builder *b, location_state *state, frame *f, int64_t level, int64_t count)
{
    entry *first = &state->entries.data[state->entries.n - count];
    state->levels.data[f->level_base + level] -= count;
    for (int64_t j = 0; j < count; j++)
        f->drift -= entry_drift(&first[j]);
    entry result;
    int rc = finalize(b, CCG_ARTIFICIAL, 0, first[0].start, f->start_drift + f->drift, first, count,
                      first[count - 1].end, &result);
    if (rc)
        return rc;
    state->entries.n -= count;
    result.level = level + 1;
    return append(b, state, f, &result);
}

/* Early stage: every child level holding b entries is grouped, lowest level first. */
static int make_room(ccg_builder *b, location_state *state, frame *f)
{
    for (int64_t level = 0; level < f->levels && state->levels.data[f->level_base + level] == b->branching;
         level++) {
        int rc = group(b, state, f, level, b->branching);
        if (rc)
            return rc;
    }
    return CCG_OK;
}

/* builder._close: the late stage (every pending level below the top is grouped), then
 * finalization; pops the frame's entries and levels. */
static int close_frame(ccg_builder *b, location_state *state, frame *f, int64_t end, entry *out)
{
    if (state->entries.n - f->entry_base > b->branching) {
        int64_t top = 0;
        for (int64_t level = 0; level < f->levels; level++)
            if (state->levels.data[f->level_base + level])
                top = level;
        for (int64_t level = 0; level < top; level++) {
            int64_t count = state->levels.data[f->level_base + level];
            if (count) {
                int rc = group(b, state, f, level, count);
                if (rc)
                    return rc;
            }
        }
    }
    int rc = finalize(b, f->kind, f->region, f->start, f->start_drift, state->entries.data + f->entry_base,
                      state->entries.n - f->entry_base, end, out);
    state->entries.n = f->entry_base;
    state->levels.n = f->level_base;
    return rc;
}

static int push_frame(ccg_builder *b, location_state *state, uint8_t kind, int64_t region, int64_t start,
                      int64_t start_drift)
{
    frame f = {kind, region, start, start_drift, 0, state->entries.n, state->levels.n, 0};
    return CCG_PUSH(state->stack, f) ? fail_memory(b) : CCG_OK;
}

/* Pop the top frame, close it at ``end`` and append it to its parent. */
static int pop_into_parent(ccg_builder *b, location_state *state, int64_t end)
{
    if (state->stack.n < 2) {
        snprintf(b->error.message, sizeof b->error.message, "no open region to close (the builder is in an "
                 "inconsistent state after an earlier error)");
        b->error.flags = 0;
        return CCG_ERR_INPUT;
    }
    frame node = state->stack.data[--state->stack.n];
    entry e;
    int rc = close_frame(b, state, &node, end, &e);
    return rc ? rc : append(b, state, &state->stack.data[state->stack.n - 1], &e);
}

/* ------------------------------------------------------------------ locations */

static location_state *find_state(ccg_builder *b, int64_t location)
{
    int64_t *index = ccg_map_get(&b->location_index, location);
    return index ? b->states.data[*index] : NULL;
}

static void free_state(location_state *state)
{
    if (!state)
        return;
    ccg_validator_free(&state->validator);
    free(state->stack.data);
    free(state->entries.data), free(state->levels.data);
    ccg_map_free(&state->previous_metric);
    free(state);
}

static location_state *new_state(ccg_builder *b, int64_t location)
{
    location_state *state = calloc(1, sizeof *state);
    if (!state)
        return NULL;
    state->validator.location = location;
    int64_t index = b->free_slots.n ? b->free_slots.data[b->free_slots.n - 1] : b->states.n;
    if (index == b->states.n && CCG_PUSH(b->states, NULL)) {
        free(state);
        return NULL;
    }
    if (ccg_map_put(&b->location_index, location, index)) {
        free(state);
        return NULL;
    }
    if (b->free_slots.n && index == b->free_slots.data[b->free_slots.n - 1])
        b->free_slots.n--;
    b->states.data[index] = state;
    return state;
}

int ccg_builder_add(ccg_builder *b, int64_t location, int64_t n, const int64_t *time, const uint8_t *kind,
                    const int64_t *ref, const int64_t *comm, const int64_t *tag, const int64_t *request,
                    const int64_t *size, const int64_t *recv_size, const int64_t *value)
{
    location_state *state = find_state(b, location);
    if (!state && !(state = new_state(b, location)))
        return fail_memory(b);
    if (n <= 0)
        return CCG_OK;
    const int64_t *columns[CCG_COLUMN_COUNT] = {ref, comm, tag, request, size, recv_size, value};
    if (CCG_RESERVE(b->drop, n))
        return fail_memory(b);
    int rc = ccg_validator_check(&state->validator, &b->rules, n, time, kind, columns, b->drop.data, &b->error);
    if (rc)
        return rc;
    int64_t first = 0, last = n - 1;
    while (first < n && b->drop.data[first])
        first++;
    while (last >= 0 && b->drop.data[last])
        last--;
    if (first < n) {  /* the builder's arithmetic needs bounded time spans */
        int64_t start = state->stack.n ? state->start : time[first];
        if ((i128)time[last] - start > CCG_SPAN_LIMIT) {
            int64_t j = first;
            while ((i128)time[j] - start <= CCG_SPAN_LIMIT)
                j++;
            return ccg_trace_error(&b->error, location, state->validator.count - n + j, 1, time[j],
                                   "timestamps of a location span more than 2**61 ticks (the native "
                                   "builder's limit)");
        }
    }
    if (first == n)
        return CCG_OK;
    const uint8_t *drop = b->drop.data;
    if (!state->stack.n) {
        state->start = time[first];
        if ((rc = push_frame(b, state, CCG_ARTIFICIAL, 0, time[first], 0)))
            return rc;
    }
    for (int64_t i = first; i <= last; i++) {
        if (drop[i])
            continue;
        uint8_t k = kind[i];
        frame *top = &state->stack.data[state->stack.n - 1];
        if (k == CCG_ENTER) {
            if ((rc = make_room(b, state, top)))
                return rc;
            top = &state->stack.data[state->stack.n - 1];
            if ((rc = push_frame(b, state, CCG_CALL, ref[i], time[i], top->start_drift + top->drift)))
                return rc;
        } else if (k == CCG_LEAVE) {
            if ((rc = pop_into_parent(b, state, time[i])))
                return rc;
        } else {
            entry e;
            if ((rc = make_room(b, state, top)) || (rc = atomic(b, state, k, columns, i, time[i], &e)) ||
                (rc = append(b, state, &state->stack.data[state->stack.n - 1], &e)))
                return rc;
        }
    }
    state->last_time = time[last];
    return CCG_OK;
}

int ccg_builder_end_location(ccg_builder *b, int64_t location, int64_t *out)
{
    location_state *state = find_state(b, location);
    if (state) {  /* the location's state goes, whatever happens below */
        int64_t *index = ccg_map_get(&b->location_index, location);
        b->states.data[*index] = NULL;
        if (CCG_PUSH(b->free_slots, *index)) {
            free_state(state);
            return fail_memory(b);
        }
        ccg_map_delete(&b->location_index, location);
    } else if (!(state = calloc(1, sizeof *state))) {
        return fail_memory(b);
    } else {
        state->validator.location = location;
    }
    ccg_validator *v = &state->validator;
    int64_t closing = v->open.n;
    int rc = ccg_validator_finish(v, &b->rules, &b->error);
    if (!rc && CCG_RESERVE(b->repairs, b->repairs.n + v->repairs.n))
        rc = fail_memory(b);
    for (int64_t j = 0; j < v->repairs.n && !rc; j++)
        b->repairs.data[b->repairs.n++] = v->repairs.data[j];
    for (int64_t j = 0; j < closing && !rc; j++)  /* the repairs' LEAVEs */
        rc = pop_into_parent(b, state, v->last_time);
    if (!rc && !state->stack.n)  /* a location without events */
        rc = push_frame(b, state, CCG_ARTIFICIAL, 0, 0, 0);
    entry e;
    if (!rc) {
        frame root = state->stack.data[--state->stack.n];
        rc = close_frame(b, state, &root, state->last_time, &e);
    }
    if (!rc) {
        out[0] = e.node;
        out[1] = state->start;
        out[2] = state->start + e.total;
        out[3] = summary_of(b, e.node).events;
    }
    free_state(state);
    return rc;
}

/* ------------------------------------------------------------------ lifetime and access */

ccg_builder *ccg_builder_new(int64_t abs_dev, int64_t rel_time, int64_t rel_size, int64_t rel_metric,
                             int exact_time, int64_t branching, int64_t search_length, int64_t leaf_window,
                             int64_t representatives, int64_t epoch_nodes, int repair, int validate,
                             int64_t regions, int64_t locations, const uint8_t *double_metric, int64_t metric_count)
{
    ccg_builder *b = calloc(1, sizeof *b);
    if (!b)
        return NULL;
    b->abs_dev = abs_dev < 0 ? 0 : abs_dev > CCG_ABS_LIMIT ? CCG_ABS_LIMIT : abs_dev;
    b->rel_time = rel_time, b->rel_size = rel_size, b->rel_metric = rel_metric;
    b->exact_time = exact_time;
    b->branching = branching < 2 ? 2 : branching;
    b->search_length = search_length < 1 ? 1 : search_length;
    b->leaf_window = leaf_window < 0 ? 0 : leaf_window;
    b->representatives = representatives < 0 ? 0 : representatives;
    b->epoch_nodes = epoch_nodes < 0 ? 0 : epoch_nodes;
    b->metric_count = metric_count > 0 ? metric_count : 0;
    b->rules.repair = repair, b->rules.references = validate;
    b->rules.regions = regions, b->rules.locations = locations, b->rules.metrics = b->metric_count;
    b->double_metric = calloc((size_t)b->metric_count + 1, 1);
    if (!b->double_metric || !make_grid(b, rel_time)) {
        free(b->double_metric), free(b->grid_below), free(b->grid_above);
        free(b);
        return NULL;
    }
    if (b->metric_count && double_metric)
        memcpy(b->double_metric, double_metric, (size_t)b->metric_count);
    /* every column allocated from the start: the table never holds a NULL pointer */
    if (CCG_PUSH(b->child_start, 0) || CCG_PUSH(b->duration_start, 0) || CCG_PUSH(b->key_start, 0) ||
        CCG_PUSH(b->soft_start, 0) || CCG_PUSH(b->metric_start, 0) || CCG_RESERVE(b->kind, 1) ||
        CCG_RESERVE(b->children, 1) || CCG_RESERVE(b->durations, 1) || CCG_RESERVE(b->key, 1) || CCG_RESERVE(b->soft, 1) ||
        CCG_RESERVE(b->events, 1) || CCG_RESERVE(b->total, 1) || CCG_RESERVE(b->metric_id, 1) ||
        CCG_RESERVE(b->metric_sum, 1) || CCG_RESERVE(b->node_slist, 1) || CCG_RESERVE(b->node_position, 1) ||
        CCG_RESERVE(b->last_use, 1)) {
        ccg_builder_free(b);
        return NULL;
    }
    return b;
}

void ccg_builder_free(ccg_builder *b)
{
    if (!b)
        return;
    free(b->double_metric);
    free(b->grid_below), free(b->grid_above);
    free(b->kind.data), free(b->child_start.data), free(b->children.data);
    free(b->duration_start.data), free(b->durations.data), free(b->key_start.data), free(b->key.data);
    free(b->soft_start.data), free(b->soft.data), free(b->events.data), free(b->total.data);
    free(b->metric_start.data), free(b->metric_id.data), free(b->metric_sum.data);
    free(b->node_slist.data), free(b->node_position.data), free(b->last_use.data);
    free_pinned(&b->pinned);
    free_index(b);
    for (int64_t i = 0; i < b->states.n; i++)
        free_state(b->states.data[i]);
    free(b->states.data), free(b->free_slots.data);
    ccg_map_free(&b->location_index);
    free(b->repairs.data);
    free(b->durations_tmp.data), free(b->rounded_tmp.data), free(b->children_tmp.data), free(b->sum_id_tmp.data);
    free(b->sum_value_tmp.data), free(b->drop.data);
    free(b);
}

int ccg_builder_add_locations(ccg_builder *b, int64_t n, const int64_t *locations, const int64_t *offsets,
                              const int64_t *time, const uint8_t *kind, const int64_t *ref, const int64_t *comm,
                              const int64_t *tag, const int64_t *request, const int64_t *size,
                              const int64_t *recv_size, const int64_t *value, int64_t *out, int64_t *failed)
{
    for (int64_t i = 0; i < n; i++) {
        int64_t at = offsets[i];
        int rc = ccg_builder_add(b, locations[i], offsets[i + 1] - at, time + at, kind + at, ref + at, comm + at,
                                 tag + at, request + at, size + at, recv_size + at, value + at);
        if (!rc)
            rc = ccg_builder_end_location(b, locations[i], out + 4 * i);
        if (rc) {
            *failed = i;
            return rc;
        }
    }
    return CCG_OK;
}

const ccg_nodes *ccg_builder_nodes(ccg_builder *b)
{
    ccg_nodes *t = &b->table;
    t->first = b->base;
    t->count = b->kind.n;
    t->kind = b->kind.data;
    t->child_start = b->child_start.data, t->children = b->children.data;
    t->duration_start = b->duration_start.data, t->durations = b->durations.data;
    t->key_start = b->key_start.data, t->key = b->key.data;
    t->soft_start = b->soft_start.data, t->soft = b->soft.data;
    t->events = b->events.data, t->total = b->total.data;
    t->metric_start = b->metric_start.data, t->metric_id = b->metric_id.data, t->metric_sum = b->metric_sum.data;
    return t;
}

static int compare_ids(const void *x, const void *y)
{
    int64_t a = *(const int64_t *)x, c = *(const int64_t *)y;
    return (a > c) - (a < c);
}

/* Drop the first ``shift`` records of a run column: its starts, kept - shift + 1 of them,
 * begin at 0 again. */
static void drop_runs(int64_t *starts, int64_t *values, int64_t *n, int64_t shift, int64_t kept)
{
    int64_t offset = starts[shift];
    memmove(values, values + offset, (size_t)(*n - offset) * sizeof *values);
    *n -= offset;
    for (int64_t i = 0; i <= kept - shift; i++)
        starts[i] = starts[i + shift] - offset;
}

#define PIN_PUSH(b, v, x) CCG_PUSH((b)->pinned.v, x)

int ccg_builder_release(ccg_builder *b, int64_t below)
{
    int64_t top = b->base + b->kind.n;
    if (below > b->epoch_first)  /* the index's nodes are compared again */
        below = b->epoch_first;
    if (below > top)
        below = top;
    if (below <= b->base)
        return CCG_OK;
    /* the nodes below ``below`` still read: entries of open frames, children of kept nodes */
    CCG_VEC(int64_t) wanted = {0};
    for (int64_t k = 0; k < b->states.n; k++) {
        const location_state *state = b->states.data[k];
        for (int64_t j = 0; state && j < state->entries.n; j++)
            if (state->entries.data[j].node < below && CCG_PUSH(wanted, state->entries.data[j].node))
                goto out_of_memory;
    }
    for (int64_t j = b->child_start.data[AT(b, below)]; j < b->child_start.data[b->kind.n]; j++)
        if (b->children.data[j] < below && CCG_PUSH(wanted, b->children.data[j]))
            goto out_of_memory;
    if (wanted.n)
        qsort(wanted.data, (size_t)wanted.n, sizeof *wanted.data, compare_ids);
    /* the new pinned summaries, made beside the old ones they may come from */
    pinned_summaries old = b->pinned;
    memset(&b->pinned, 0, sizeof b->pinned);
    if (PIN_PUSH(b, metric_start, 0))
        goto restore;
    for (int64_t j = 0; j < wanted.n; j++) {
        int64_t id = wanted.data[j];
        if (j && id == wanted.data[j - 1])
            continue;
        summary child;
        if (id >= b->base) {
            child = summary_of(b, id);
        } else {  /* summary_of on the old pins */
            pinned_summaries now = b->pinned;
            b->pinned = old;
            child = summary_of(b, id);
            b->pinned = now;
        }
        if (PIN_PUSH(b, id, id) || PIN_PUSH(b, events, child.events) || PIN_PUSH(b, total, child.total))
            goto restore;
        for (int64_t q = 0; q < child.pairs; q++)
            if (PIN_PUSH(b, metric_id, child.ids[q]) || PIN_PUSH(b, metric_sum, child.sums[q]))
                goto restore;
        if (PIN_PUSH(b, metric_start, b->pinned.metric_id.n))
            goto restore;
    }
    free_pinned(&old);
    free(wanted.data);
    /* the records below ``below`` leave the columns */
    int64_t shift = below - b->base, kept = b->kind.n;
    drop_runs(b->child_start.data, b->children.data, &b->children.n, shift, kept);
    drop_runs(b->duration_start.data, b->durations.data, &b->durations.n, shift, kept);
    drop_runs(b->key_start.data, b->key.data, &b->key.n, shift, kept);
    drop_runs(b->soft_start.data, b->soft.data, &b->soft.n, shift, kept);
    int64_t sums_from = b->metric_start.data[shift];  /* two runs over one start column */
    memmove(b->metric_sum.data, b->metric_sum.data + sums_from, (size_t)(b->metric_sum.n - sums_from) * sizeof(int64_t));
    b->metric_sum.n -= sums_from;
    drop_runs(b->metric_start.data, b->metric_id.data, &b->metric_id.n, shift, kept);
    memmove(b->kind.data, b->kind.data + shift, (size_t)(kept - shift) * sizeof *b->kind.data);
    memmove(b->events.data, b->events.data + shift, (size_t)(kept - shift) * sizeof *b->events.data);
    memmove(b->total.data, b->total.data + shift, (size_t)(kept - shift) * sizeof *b->total.data);
    b->kind.n = b->events.n = b->total.n = kept - shift;
    b->base = below;
    return CCG_OK;
restore:
    free_pinned(&b->pinned);
    b->pinned = old;
out_of_memory:
    free(wanted.data);
    return fail_memory(b);
}

const ccg_imports *ccg_builder_pinned(ccg_builder *b)
{
    ccg_imports *t = &b->pinned.table;
    t->count = b->pinned.id.n;
    t->id = b->pinned.id.data, t->events = b->pinned.events.data, t->total = b->pinned.total.data;
    t->metric_start = b->pinned.metric_start.data;
    t->metric_id = b->pinned.metric_id.data, t->metric_sum = b->pinned.metric_sum.data;
    return t;
}

/* The bytes a vector's capacity takes. */
#define CAP_BYTES(v) ((v).cap * (int64_t)sizeof *(v).data)

void ccg_builder_memory(const ccg_builder *b, int64_t *out)
{
    out[0] = CAP_BYTES(b->kind) + CAP_BYTES(b->child_start) + CAP_BYTES(b->children) +
             CAP_BYTES(b->duration_start) + CAP_BYTES(b->durations) + CAP_BYTES(b->key_start) + CAP_BYTES(b->key) +
             CAP_BYTES(b->soft_start) + CAP_BYTES(b->soft) + CAP_BYTES(b->events) + CAP_BYTES(b->total) +
             CAP_BYTES(b->metric_start) + CAP_BYTES(b->metric_id) + CAP_BYTES(b->metric_sum) +
             CAP_BYTES(b->pinned.id) + CAP_BYTES(b->pinned.events) + CAP_BYTES(b->pinned.total) +
             CAP_BYTES(b->pinned.metric_start) + CAP_BYTES(b->pinned.metric_id) + CAP_BYTES(b->pinned.metric_sum);
    int64_t index = CAP_BYTES(b->node_slist) + CAP_BYTES(b->node_position) + CAP_BYTES(b->last_use) +
                    CAP_BYTES(b->slists) + (b->by_key.cap + b->exact.cap) * (int64_t)sizeof(ccg_slot);
    for (int64_t s = 0; s < b->slists.n; s++) {
        const slist *l = &b->slists.data[s];
        index += (l->cap > 1 ? 3 * l->cap * (int64_t)sizeof(int64_t) : 0) + l->cap * l->width * (int64_t)sizeof(int64_t);
    }
    out[1] = index;
    out[2] = b->epochs;
}

void ccg_builder_metrics(const ccg_builder *b, int64_t *out)
{
    out[0] = b->N, out[1] = b->n, out[2] = b->M, out[3] = b->m;
}

int64_t ccg_builder_repair_count(const ccg_builder *b) { return b->repairs.n; }

void ccg_builder_repairs(const ccg_builder *b, int64_t first, int64_t count, int64_t *out)
{
    for (int64_t i = 0; i < count && first + i < b->repairs.n; i++) {
        const ccg_repair *r = &b->repairs.data[first + i];
        out[4 * i] = r->location, out[4 * i + 1] = r->region, out[4 * i + 2] = r->time, out[4 * i + 3] = r->action;
    }
}

const char *ccg_builder_error(const ccg_builder *b) { return b->error.message; }

void ccg_builder_error_position(const ccg_builder *b, int64_t *out)
{
    out[0] = b->error.location, out[1] = b->error.index, out[2] = b->error.time, out[3] = b->error.flags;
}
