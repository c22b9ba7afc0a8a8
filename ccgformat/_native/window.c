/* The descent of a profile window and the sums of what it found: the C twins of
 * `descend` and `window_sums` in ccgformat/query/profile.py. See window.h. */
#include "window.h"
#include "ccg.h"
#include "walk_support.h"

enum { CALL = 0, ARTIFICIAL = 1 };

typedef struct frame {
    int64_t node, time, depth, enclosing;
} frame;

struct ccg_window {
    frame *stack;
    int64_t stack_capacity;
    int64_t *cuts, *seeds;
    int64_t cut_count, cut_capacity, seed_count, seed_capacity;
    int64_t *uses, *used;  /* per memo row, the seeds that use it (0 between calls); the rows used */
    int64_t uses_capacity, used_capacity;
    char error[ERROR_SIZE];
};

ccg_window *ccg_window_new(void) { return calloc(1, sizeof(ccg_window)); }

void ccg_window_free(ccg_window *w) {
    if (!w)
        return;
    free(w->stack);
    free(w->cuts);
    free(w->seeds);
    free(w->uses);
    free(w->used);
    free(w);
}

const char *ccg_window_error(const ccg_window *w) { return w->error; }

static int row(int64_t **rows, int64_t *count, int64_t *capacity, int64_t a, int64_t b, int64_t c, int64_t d,
               int64_t e, int width) {
    if (!grow((void **)rows, capacity, width * (*count + 1), sizeof(int64_t)))
        return 0;
    int64_t *out = *rows + width * (*count)++;
    out[0] = a, out[1] = b, out[2] = c, out[3] = d;
    if (width > 4)
        out[4] = e;
    return 1;
}

/* One tag: depth first from its root. A node is live when it ends at or after the
 * start and begins before the stop; a live node inside [start, stop) is a seed, any
 * other live one is cut (a call is reported) and its children are visited, each
 * starting after the durations before it (Lemma 1). */
static int descend(ccg_window *w, const ccg_query_tables *t, int64_t tag, int64_t root, int64_t begin,
                   int64_t lo, int64_t hi) {
    int64_t depth = 0;
    if (root < 0 || root >= t->count)
        return fail(w->error, CCG_ERR_INPUT, "root node %lld is not in the tables", (long long)root);
    w->stack[depth++] = (frame){root, begin, 0, -1};
    while (depth) {
        frame f = w->stack[--depth];
        int64_t end = add64(f.time, t->total[f.node]);
        if (end < lo || f.time >= hi)
            continue;
        if (f.time >= lo && end < hi) {
            if (!row(&w->seeds, &w->seed_count, &w->seed_capacity, f.node, tag, f.depth, f.enclosing, 0, 4))
                return fail(w->error, CCG_ERR_MEMORY, "out of memory for the window's sub-trees");
            continue;
        }
        int64_t enclosing = f.enclosing;
        if (t->kind[f.node] == CALL) {
            if (!row(&w->cuts, &w->cut_count, &w->cut_capacity, tag, t->key0[f.node], f.enclosing, f.time, end, 5))
                return fail(w->error, CCG_ERR_MEMORY, "out of memory for the window's cut calls");
            enclosing = t->key0[f.node];
        }
        int64_t first, n, durations;
        if (!ccg_node_extent(t, f.node, &first, &n, &durations))
            return fail(w->error, CCG_ERR_INPUT, "node %lld has %lld children at %lld and durations at %lld, out "
                        "of the tables", (long long)f.node, (long long)n, (long long)first, (long long)durations);
        if (!grow((void **)&w->stack, &w->stack_capacity, depth + n + 1, sizeof(frame)))
            return fail(w->error, CCG_ERR_MEMORY, "out of memory for the window's descent");
        const int64_t *prefix = t->duration_prefix + durations;
        for (int64_t j = n - 1; j >= 0; j--) {  /* pushed in reverse: visited in order */
            int64_t child = t->children[first + j];
            if (child < 0 || child >= f.node)
                return fail(w->error, CCG_ERR_INPUT, "node %lld has child %lld, not an earlier node",
                            (long long)f.node, (long long)child);
            w->stack[depth++] = (frame){child, add64(f.time, prefix[2 * j + 1] - prefix[0]), f.depth + 1, enclosing};
        }
    }
    return CCG_OK;
}

int ccg_window_walk(ccg_window *w, const ccg_query_tables *t, int64_t tags, const int64_t *root,
                    const int64_t *begin, const int64_t *start, const int64_t *stop,
                    const int64_t **cuts, int64_t *cut_count, const int64_t **seeds, int64_t *seed_count) {
    w->cut_count = w->seed_count = 0;
    if (!grow((void **)&w->stack, &w->stack_capacity, 1, sizeof(frame)))
        return fail(w->error, CCG_ERR_MEMORY, "out of memory for the window's descent");
    for (int64_t i = 0; i < tags; i++) {
        int code = descend(w, t, i, root[i], begin[i], start[i], stop[i]);
        if (code != CCG_OK)
            return code;
    }
    *cuts = w->cuts;
    *cut_count = w->cut_count;
    *seeds = w->seeds;
    *seed_count = w->seed_count;
    return CCG_OK;
}

/* vec += times * sums, wrapping; min and max of the extremes (vectorised: no aliasing) */
static void add_row(int64_t *restrict vec, const int64_t *restrict sums, int64_t n, uint64_t times) {
    for (int64_t j = 0; j < n; j++)
        vec[j] = (int64_t)((uint64_t)vec[j] + times * (uint64_t)sums[j]);
}

static void extremes(int64_t *restrict low, int64_t *restrict high, const int64_t *restrict lo,
                     const int64_t *restrict hi, int64_t n) {
    for (int64_t r = 0; r < n; r++) {
        low[r] = lo[r] < low[r] ? lo[r] : low[r];
        high[r] = hi[r] > high[r] ? hi[r] : high[r];
    }
}

static int add_cuts(ccg_window *w, const ccg_window_layout *l, const int64_t *cuts, int64_t cut_count, int64_t tags,
                    const int64_t *start, const int64_t *stop, const uint8_t *keep_before, int64_t reach,
                    int64_t *vec, int64_t *low, int64_t *high, int64_t *early) {
    const int64_t R = l->regions;
    for (int64_t i = 0; i < cut_count; i++) {
        const int64_t *c = cuts + 5 * i;
        int64_t tag = c[0], region = c[1], outer = c[2], enter = c[3], leave = c[4];
        if (tag < 0 || tag >= tags || region < 0 || region >= R || outer < -1 || outer >= R)
            return fail(w->error, CCG_ERR_INPUT, "cut call %lld names tag %lld, region %lld in region %lld",
                        (long long)i, (long long)tag, (long long)region, (long long)outer);
        int64_t part = sub64(leave < stop[tag] ? leave : stop[tag], enter > start[tag] ? enter : start[tag]);
        if (part < 0)
            part = 0;
        vec[l->incl + region] = add64(vec[l->incl + region], part);
        vec[l->excl + region] = add64(vec[l->excl + region], part);
        if (outer >= 0)
            vec[l->excl + outer] = sub64(vec[l->excl + outer], part);
        if (enter >= start[tag]) {  /* counted: entered inside, measured up to the window's stop */
            vec[l->calls + region] = add64(vec[l->calls + region], 1);
            int64_t extent = sub64(leave < reach ? leave : reach, enter);
            low[region] = extent < low[region] ? extent : low[region];
            high[region] = extent > high[region] ? extent : high[region];
        } else if (keep_before[tag]) {
            early[region] = add64(early[region], part);
        }
    }
    return CCG_OK;
}

/* Each memo row once, times the seeds that use it (uses[] is left all 0 again). */
static int add_seeds(ccg_window *w, const ccg_window_memo *m, const ccg_window_layout *l, const int64_t *seeds,
                     int64_t seed_count, int64_t tags, int64_t *vec, int64_t *low, int64_t *high) {
    const int64_t R = l->regions, zeroed = w->uses_capacity;
    if (!grow((void **)&w->uses, &w->uses_capacity, m->rows, sizeof(int64_t)) ||
        !grow((void **)&w->used, &w->used_capacity, seed_count, sizeof(int64_t)))
        return fail(w->error, CCG_ERR_MEMORY, "out of memory for the window's sums");
    if (w->uses_capacity > zeroed)
        memset(w->uses + zeroed, 0, (size_t)(w->uses_capacity - zeroed) * sizeof(int64_t));
    int64_t used = 0;
    for (int64_t i = 0; i < seed_count; i++) {
        const int64_t *s = seeds + 4 * i;
        int64_t node = s[0], tag = s[1], outer = s[3];
        int64_t row = node >= 0 && node < m->nodes ? m->slot[node] : -1;
        if (row < 0 || row >= m->rows || tag < 0 || tag >= tags || outer < -1 || outer >= R) {
            for (int64_t k = 0; k < used; k++)
                w->uses[w->used[k]] = 0;
            return fail(w->error, CCG_ERR_INPUT, "sub-tree %lld (node %lld, tag %lld, in region %lld) has no memo row",
                        (long long)i, (long long)node, (long long)tag, (long long)outer);
        }
        if (outer >= 0)
            vec[l->excl + outer] = sub64(vec[l->excl + outer], m->calltime[node]);
        if (!w->uses[row]++)
            w->used[used++] = row;
    }
    for (int64_t k = 0; k < used; k++) {
        int64_t row = w->used[k];
        add_row(vec, m->vec + row * l->size, l->size, (uint64_t)w->uses[row]);
        extremes(low, high, m->lo + row * R, m->hi + row * R, R);
        w->uses[row] = 0;
    }
    return CCG_OK;
}

int ccg_window_sums(ccg_window *w, const ccg_window_memo *m, const ccg_window_layout *l, const int64_t *cuts,
                    int64_t cut_count, const int64_t *seeds, int64_t seed_count, int64_t tags, const int64_t *start,
                    const int64_t *stop, const uint8_t *keep_before, int64_t reach, int64_t *vec, int64_t *low,
                    int64_t *high, int64_t *early) {
    int code = add_cuts(w, l, cuts, cut_count, tags, start, stop, keep_before, reach, vec, low, high, early);
    return code != CCG_OK ? code : add_seeds(w, m, l, seeds, seed_count, tags, vec, low, high);
}
