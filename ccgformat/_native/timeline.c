/* The timeline by location: the C twin of `_walk` (rows by location) in
 * ccgformat/query/timeline.py. See timeline.h. Sums wrap like numpy's int64. */
#include "timeline.h"
#include "ccg.h"
#include "walk_support.h"

enum { CALL = 0, ARTIFICIAL = 1 };

typedef struct frame {
    int64_t node, time;
    int64_t enclosing;  /* the group of the innermost call around it, or -1 */
    int64_t column;     /* a column at or (a little) before its start's, where looking for it begins */
} frame;

typedef struct painter {
    const ccg_query_tables *t;
    const ccg_timeline_runs *runs;
    const ccg_timeline_canvas *c;
    int64_t start, stop;  /* the window: the first and last column bounds */
    int64_t span;         /* stop - start when the bounds are the formula's and it cannot overflow, else 0 */
    int64_t *row;         /* the image row of the location being painted */
    frame *stack;
    int64_t depth, capacity;
    char *error;
} painter;

static inline void add(int64_t *cell, int64_t ticks) { *cell = add64(*cell, ticks); }

/* The column holding `time` clipped to the window: the largest i with bounds[i] <= time,
 * which for bounds[i] = start + i*span//width is ((time - start + 1)*width - 1) // span;
 * other increasing bounds (span 0) are searched. */
static int64_t column(const painter *p, int64_t time) {
    time = time < p->start ? p->start : time >= p->stop ? p->stop - 1 : time;
    if (p->span)
        return ((time - p->start + 1) * p->c->width - 1) / p->span;
    int64_t lo = 0, hi = p->c->width - 1;
    while (lo < hi) {
        int64_t mid = hi - (hi - lo) / 2;
        if (p->c->bounds[mid] <= time)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

/* `column`, looked for first in the few columns from `from` on: the walk meets times in
 * order, mostly in the column of the time before or just after it (a division less). */
static int64_t column_from(const painter *p, int64_t time, int64_t from) {
    const int64_t *bounds = p->c->bounds;
    if (bounds[from] <= time)
        for (int64_t last = from + 8; from < last; from++)
            if (from == p->c->width - 1 || time < bounds[from + 1])
                return from;
    return column(p, time);
}

/* [a, b) of `group` clipped to the window, split across the columns (looked for from
 * column `from` on); returns the column of its end, or `from` when it is outside. */
static int64_t interval(const painter *p, int64_t group, int64_t a, int64_t b, int64_t from) {
    a = a < p->start ? p->start : a;
    b = b > p->stop ? p->stop : b;
    if (b <= a)
        return from;
    const int64_t *bounds = p->c->bounds;
    int64_t i = column_from(p, a, from), *lane = p->row + group;
    for (; i < p->c->width - 1 && bounds[i + 1] < b; i++) {  /* the columns it leaves */
        add(lane + i * p->c->groups, sub64(bounds[i + 1], a));
        a = bounds[i + 1];
    }
    add(lane + i * p->c->groups, sub64(b, a));
    return i;
}

static int push(painter *p, int64_t parent, int64_t child, int64_t time, int64_t enclosing, int64_t column) {
    if (child < 0 || child >= parent)
        return fail(p->error, CCG_ERR_INPUT, "node %lld has child %lld, not an earlier node", (long long)parent,
                    (long long)child);
    const ccg_query_tables *t = p->t;
    __builtin_prefetch(t->kind + child);
    __builtin_prefetch(t->total + child);
    __builtin_prefetch(p->c->exclusive + child * (p->c->groups + 1));
    __builtin_prefetch(t->child_start + child);
    __builtin_prefetch(t->duration_start + child);
    __builtin_prefetch(t->key0 + child);
    __builtin_prefetch(p->runs->slot + child);
    p->stack[p->depth++] = (frame){child, time, enclosing, column};
    return CCG_OK;
}

static int room(painter *p, int64_t frames) {
    if (!grow((void **)&p->stack, &p->capacity, p->depth + frames, sizeof(frame)))
        return fail(p->error, CCG_ERR_MEMORY, "out of memory for the timeline's descent");
    return CCG_OK;
}

/* A node spanning several columns, found by `visit`, to be descended. */
typedef struct spanning {
    frame f;
    int64_t group;   /* of its own time: its region's for a call, else the enclosing one */
    int64_t c0, c1;  /* the columns of its first and last tick in the window */
    int64_t slot;    /* its number among the parents with running sums when cutting by them is worth it, else -1 */
} spanning;

/* A node spanning several columns, child by child: its gaps (Lemma 1: durations 0, 2,
 * ..., 2n of a node with n children) go to its group (when >= 0), its children descend,
 * each starting after the durations before it. */
static int expand(painter *p, const spanning *x) {
    const ccg_query_tables *t = p->t;
    int64_t node = x->f.node, time = x->f.time, column = x->c0;
    int64_t first = t->child_start[node], n = t->child_start[node + 1] - first;
    const int64_t *d = t->duration_prefix + t->duration_start[node];
    int code = room(p, n);
    for (int64_t j = 0; code == CCG_OK && j <= n; j++) {
        int64_t length = sub64(d[2 * j + 1], d[2 * j]);
        if (x->group >= 0 && length > 0) {
            int64_t begin = add64(time, sub64(d[2 * j], d[0]));
            column = interval(p, x->group, begin, add64(begin, length), column);
        }
        if (j < n)
            code = push(p, node, t->children[first + j], add64(time, sub64(d[2 * j + 1], d[0])), x->group, column);
    }
    return code;
}

/* One cut of a node with running sums over its children (`_cut_by_runs`): the children
 * starting before it end at `before` - 1, whether the last of them `crossed` it, and the
 * node's gaps before it. */
typedef struct cut {
    int64_t before, crossed, gaps;
} cut;

static cut cut_at(const ccg_timeline_runs *r, int64_t s, int64_t time, int64_t end, int64_t shift, int64_t point) {
    int64_t base = r->base[s], top = r->base[s + 1];
    if (point <= time)  /* the node's start: no children, no gaps */
        return (cut){base, 0, 0};
    if (point >= end)  /* its end: all of them */
        return (cut){top, 0, r->gap[s]};
    /* the first child starting at or after the cut */
    int64_t lo = lower_bound(r->starts, base, top, add64(point, shift));
    if (lo == base)
        return (cut){base, 0, sub64(point, time)};
    int64_t last_end = sub64(r->ends[lo - 1], shift), uncovered = sub64(point, last_end);
    return (cut){lo, last_end > point, add64(r->gaps[lo - 1], uncovered > 0 ? uncovered : 0)};
}

/* A node spanning several columns by its running sums (4.5.4 with the shared partial
 * results of 4.5.3): the column bounds inside it (and the window's ends) cut it into
 * pieces; a piece gets the memoized times of the children wholly inside it and its own
 * gaps from two rows of running sums each. Only the children crossing a cut descend. */
static int by_runs(painter *p, const spanning *x) {
    const ccg_timeline_runs *r = p->runs;
    const ccg_timeline_canvas *c = p->c;
    int64_t s = x->slot, time = x->f.time, c0 = x->c0, group = x->group;
    int64_t end = add64(time, r->total[s]), shift = sub64(r->origin[s], time);
    int64_t lo = time > p->start ? time : p->start, hi = end < p->stop ? end : p->stop;
    int64_t cuts = x->c1 - c0 + 2;  /* lo, the column bounds between, hi */
    int code = room(p, cuts);
    cut previous = {0, 0, 0};
    for (int64_t k = 0; code == CCG_OK && k < cuts; k++) {
        int64_t point = k == 0 ? lo : k == cuts - 1 ? hi : c->bounds[c0 + k];
        cut now = cut_at(r, s, time, end, shift, point);
        if (k > 0) {  /* the piece from the previous cut to this one */
            int64_t after = now.before - now.crossed;
            after = after > previous.before ? after : previous.before;
            const int64_t *from = r->prefix + previous.before * (c->groups + 1);
            const int64_t *to = r->prefix + after * (c->groups + 1);
            int64_t *cell = p->row + (c0 + k - 1) * c->groups;
            for (int64_t g = 0; g < c->groups; g++)
                add(cell + g, sub64(to[g], from[g]));
            if (group >= 0)
                add(cell + group, add64(sub64(now.gaps, previous.gaps), sub64(to[c->groups], from[c->groups])));
        }
        if (now.crossed && !(k > 0 && now.before == previous.before))  /* a child crossing several cuts: once */
            code = push(p, x->f.node, r->kids[now.before - 1], sub64(r->starts[now.before - 1], shift), group,
                        k > 0 ? c0 + k - 1 : c0);
        previous = now;
    }
    return code;
}

/* One node: skipped when it paints nothing in the window; inside one column, its
 * memoized group times plus its uncovered time in the enclosing group; else it spans
 * several columns and is added to `out` (its children and durations on their way to
 * the cache). */
static int visit(painter *p, frame f, spanning *out, int64_t *spans) {
    const ccg_query_tables *t = p->t;
    const ccg_timeline_canvas *c = p->c;
    int64_t kind = t->kind[f.node];
    int64_t total = kind <= ARTIFICIAL ? t->total[f.node] : 0, end = add64(f.time, total);
    if (total <= 0 || end <= p->start || f.time >= p->stop)
        return CCG_OK;
    int64_t c0 = column_from(p, f.time, f.column);
    if (f.time >= p->start && end <= c->bounds[c0 + 1]) {  /* inside column c0 */
        const int64_t *times = c->exclusive + f.node * (c->groups + 1);
        int64_t *cell = p->row + c0 * c->groups;
        for (int64_t g = 0; g < c->groups; g++)
            add(cell + g, times[g]);
        if (f.enclosing >= 0 && times[c->groups] > 0)
            add(cell + f.enclosing, times[c->groups]);
        return CCG_OK;
    }
    int64_t group = f.enclosing;
    if (kind == CALL) {
        int64_t region = t->key0[f.node];
        if (region < 0 || region >= c->regions)
            return fail(p->error, CCG_ERR_INPUT, "call node %lld names region %lld, not one of %lld",
                        (long long)f.node, (long long)region, (long long)c->regions);
        group = c->group_of[region];
    }
    int64_t first, n, durations;
    if (!ccg_node_extent(t, f.node, &first, &n, &durations))
        return fail(p->error, CCG_ERR_INPUT, "node %lld has %lld children at %lld and durations at %lld, out of "
                    "the tables", (long long)f.node, (long long)n, (long long)first, (long long)durations);
    __builtin_prefetch(t->children + first);
    __builtin_prefetch(t->duration_prefix + durations);
    int64_t c1 = column_from(p, (end < p->stop ? end : p->stop) - 1, c0), s = p->runs->slot[f.node];
    int worth = s >= 0 && s < p->runs->parents && c1 - c0 < p->runs->base[s + 1] - p->runs->base[s];
    out[(*spans)++] = (spanning){f, group, c0, c1, worth ? s : -1};
    return CCG_OK;
}

/* Frames taken off the stack at a time: their nodes are looked at before any is
 * descended, so that their memory is fetched in parallel rather than one after another. */
enum { BATCH = 16 };

int ccg_timeline_paint(const ccg_query_tables *t, const ccg_timeline_runs *runs, const ccg_timeline_canvas *c,
                       int64_t roots, const int64_t *root, const int64_t *begin, const int64_t *row, char *error) {
    if (c->width < 1 || c->bounds[0] >= c->bounds[c->width])
        return fail(error, CCG_ERR_INPUT, "a timeline needs width >= 1 and start < stop");
    for (int64_t region = 0; region < c->regions; region++)
        if (c->group_of[region] < 0 || c->group_of[region] >= c->groups)
            return fail(error, CCG_ERR_INPUT, "region %lld is in group %lld, not one of %lld", (long long)region,
                        (long long)c->group_of[region], (long long)c->groups);
    painter p = {t, runs, c, c->bounds[0], c->bounds[c->width], 0, NULL, NULL, 0, 0, error};
    uint64_t span = (uint64_t)p.stop - (uint64_t)p.start;
    if (span < ((uint64_t)1 << 62) / (uint64_t)(c->width + 1))
        p.span = (int64_t)span;
    for (int64_t i = 1; p.span && i < c->width; i++)  /* other bounds than the formula's: searched */
        if (c->bounds[i] != p.start + i * p.span / c->width)
            p.span = 0;
    int code = CCG_OK;
    for (int64_t i = 0; code == CCG_OK && i < roots; i++) {
        if (root[i] < 0 || root[i] >= t->count) {
            code = fail(error, CCG_ERR_INPUT, "root node %lld is not in the tables", (long long)root[i]);
            break;
        }
        if (row[i] < 0 || row[i] >= c->rows) {
            code = fail(error, CCG_ERR_INPUT, "image row %lld is not one of %lld", (long long)row[i], (long long)c->rows);
            break;
        }
        p.row = c->image + row[i] * c->width * c->groups;
        code = room(&p, 1);
        if (code == CCG_OK)
            p.stack[p.depth++] = (frame){root[i], begin[i], -1, 0};
        while (code == CCG_OK && p.depth) {
            spanning batch[BATCH];
            int64_t spans = 0;
            for (int64_t taken = 0; code == CCG_OK && taken < BATCH && p.depth; taken++)
                code = visit(&p, p.stack[--p.depth], batch, &spans);
            for (int64_t j = 0; code == CCG_OK && j < spans; j++)
                code = batch[j].slot >= 0 ? by_runs(&p, &batch[j]) : expand(&p, &batch[j]);
        }
    }
    free(p.stack);
    return code;
}

int ccg_group_exclusive(const ccg_query_tables *t, const int64_t *inner, int64_t regions, const int64_t *group_of,
                        int64_t groups, int64_t *out, char *error) {
    int64_t width = groups + 1;
    for (int64_t v = 0; v < t->count; v++) {
        int64_t *row = out + v * width;
        for (int64_t g = 0; g < width; g++)
            row[g] = 0;
        if (t->kind[v] == CALL) {
            int64_t region = t->key0[v];
            if (region < 0 || region >= regions || group_of[region] < 0 || group_of[region] >= groups)
                return fail(error, CCG_ERR_INPUT, "node %lld: region %lld has no group of the %lld", (long long)v,
                            (long long)region, (long long)groups);
            add(&row[group_of[region]], (int64_t)((uint64_t)t->total[v] - (uint64_t)inner[v]));
        }
        for (int64_t e = t->child_start[v]; e < t->child_start[v + 1]; e++) {
            int64_t c = t->children[e];
            if (c < 0 || c >= v)
                return fail(error, CCG_ERR_INPUT, "node %lld has child %lld, not an earlier node", (long long)v,
                            (long long)c);
            const int64_t *below = out + c * width;
            for (int64_t g = 0; g < groups; g++)
                row[g] = add64(row[g], below[g]);
        }
    }
    return CCG_OK;
}
