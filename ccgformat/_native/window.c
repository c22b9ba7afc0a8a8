/* The descent of a profile window: the C twin of `_descend` in
 * ccgformat/query/profile.py. See window.h. */
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
    char error[ERROR_SIZE];
};

ccg_window *ccg_window_new(void) { return calloc(1, sizeof(ccg_window)); }

void ccg_window_free(ccg_window *w) {
    if (!w)
        return;
    free(w->stack);
    free(w->cuts);
    free(w->seeds);
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
static int descend(ccg_window *w, const ccg_window_tables *t, int64_t tag, int64_t root, int64_t begin,
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
        int64_t first = t->child_start[f.node], n = t->child_start[f.node + 1] - first;
        if (!grow((void **)&w->stack, &w->stack_capacity, depth + n + 1, sizeof(frame)))
            return fail(w->error, CCG_ERR_MEMORY, "out of memory for the window's descent");
        const int64_t *prefix = t->duration_prefix + t->duration_start[f.node];
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

int ccg_window_walk(ccg_window *w, const ccg_window_tables *t, int64_t tags, const int64_t *root,
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
