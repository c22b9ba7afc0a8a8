/* The descent of a profile window (ccgformat/query/profile.py, dissertation 4.5.3): from
 * each location's root down the nodes cut by the window's bounds, reporting the calls
 * cut by a bound and the sub-trees wholly inside. The node tables are the flat columns
 * of ccgformat/query/tables.py. */
#ifndef CCG_WINDOW_H
#define CCG_WINDOW_H

#include <stdint.h>

typedef struct ccg_query_tables {
    int64_t count;                  /* nodes */
    const int64_t *kind, *key0, *total;
    const int64_t *child_start;     /* count + 1 offsets into children */
    const int64_t *children;
    const int64_t *duration_start;  /* per node, its first duration in duration_prefix terms */
    const int64_t *duration_prefix; /* running sums of all durations, starting with 0 */
} ccg_query_tables;

/* Where a node's children (*first, *n of them) and durations (2n + 1 from *durations)
 * are; 0 when the offsets lie outside the tables (a damaged table), else 1. */
static inline int ccg_node_extent(const ccg_query_tables *t, int64_t node, int64_t *first, int64_t *n,
                                  int64_t *durations) {
    *first = t->child_start[node];
    *n = t->child_start[node + 1] - *first;
    *durations = t->duration_start[node];
    return *first >= 0 && *n >= 0 && *n <= t->child_start[t->count] - *first && *durations >= 0 &&
           *durations <= t->duration_start[t->count] - 2 * *n - 1;
}

typedef struct ccg_window_memo {
    int64_t nodes;                /* entries of slot and calltime */
    const int64_t *slot;          /* per node, its memo row or -1 */
    const int64_t *calltime;      /* per node, the time its top-level calls cover */
    int64_t rows;                 /* memo rows */
    const int64_t *vec, *lo, *hi; /* per row: `size` sums, and per region min and max */
} ccg_window_memo;

typedef struct ccg_window_layout {
    int64_t size, regions;        /* a row's sums; regions */
    int64_t calls, incl, excl;    /* where a region's sums start in a row */
} ccg_window_layout;

typedef struct ccg_window ccg_window;

ccg_window *ccg_window_new(void);
void ccg_window_free(ccg_window *w);
const char *ccg_window_error(const ccg_window *w);
/* Descend `tags` windows [start[i], stop[i]) from root[i] (starting at begin[i]). After
 * it, *cuts points to cut_count rows (tag, region, enclosing region or -1, enter, leave)
 * and *seeds to seed_count rows (node, tag, depth, enclosing region or -1), valid until
 * the next call. */
int ccg_window_walk(ccg_window *w, const ccg_query_tables *t, int64_t tags, const int64_t *root,
                    const int64_t *begin, const int64_t *start, const int64_t *stop,
                    const int64_t **cuts, int64_t *cut_count, const int64_t **seeds, int64_t *seed_count);
/* Sum the rows of a walk (as `window_sums` in profile.py): into vec (a row's layout,
 * summed over the tags), low/high (extremes of the counted calls, measured up to
 * `reach`) and early (time of the calls entered before a piece that keeps it); all set
 * by the caller. Every sub-tree must have a memo row. */
int ccg_window_sums(ccg_window *w, const ccg_window_memo *m, const ccg_window_layout *l, const int64_t *cuts,
                    int64_t cut_count, const int64_t *seeds, int64_t seed_count, int64_t tags, const int64_t *start,
                    const int64_t *stop, const uint8_t *keep_before, int64_t reach, int64_t *vec, int64_t *low,
                    int64_t *high, int64_t *early);

#endif
