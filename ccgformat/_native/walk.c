/* Walking one location's graph: the C port of ccgformat/graph/walk.py (dissertation
 * 4.5.1 random access, 4.5.2 time search) and of its bulk reader graph/spans.py. See
 * walk.h for the interface.
 *
 * Timestamps are rebuilt from durations on the way down (Lemma 1). Slots of a call node
 * with n children: 0 is its enter, 1..n its children, n+1 its leave; an artificial
 * node's slots are its children; an atomic node has the one slot 0. A frame's time is
 * when its current slot starts. Sequential reading is a tight descent: every step moves
 * the top frame on by one slot and descends to the first (or last) event below it;
 * sub-trees that repeat are expanded once and then copied whole (the spans below).
 *
 * Every value read from a node table is checked before it is used as an index or
 * length; children must have smaller ids than their parent (the bottom-up order of
 * 4.1.1), which bounds every descent. Time and metric arithmetic wraps around in 64
 * bits, never overflows.
 */
#include "walk.h"
#include "walk_support.h"

#include <stdlib.h>
#include <string.h>

#if defined(__GNUC__)
#define HOT_INLINE static inline __attribute__((always_inline))
#else
#define HOT_INLINE static inline
#endif
#define ATOMIC (CCG_ARTIFICIAL + 1)

/* Columns of an event besides time and kind, in model.COLUMNS order. */
enum { COL_REF, COL_COMM, COL_TAG, COL_REQUEST, COL_SIZE, COL_RECV_SIZE, COL_VALUE, COLUMN_COUNT };

/* Per atomic kind, the columns of its hard and of its soft properties (model.KIND_FIELDS);
 * ccg_hard_count and ccg_soft_count say how many of each. */
static const signed char hard_columns[CCG_KIND_COUNT][4] = {
    [CCG_SEND] = {COL_REF, COL_COMM, COL_TAG},
    [CCG_RECV] = {COL_REF, COL_COMM, COL_TAG},
    [CCG_ISEND] = {COL_REF, COL_COMM, COL_TAG, COL_REQUEST},
    [CCG_IRECV] = {COL_REF, COL_COMM, COL_TAG, COL_REQUEST},
    [CCG_IRECV_REQUEST] = {COL_REQUEST},
    [CCG_REQUEST_COMPLETE] = {COL_REQUEST},
    [CCG_COLL_END] = {COL_REF, COL_COMM, COL_TAG},
    [CCG_METRIC] = {COL_REF},
    [CCG_MARKER] = {COL_REF, COL_VALUE},
    [CCG_GENERIC] = {COL_REF, COL_VALUE},
};
static const signed char soft_columns[CCG_KIND_COUNT][2] = {
    [CCG_SEND] = {COL_SIZE}, [CCG_RECV] = {COL_SIZE}, [CCG_ISEND] = {COL_SIZE}, [CCG_IRECV] = {COL_SIZE},
    [CCG_COLL_END] = {COL_SIZE, COL_RECV_SIZE}, [CCG_METRIC] = {COL_VALUE},
};

/* ------------------------------------------------------------------ nodes */

/* A node resolved within one call: where it lives and its checked columns. */
typedef struct node_ref {
    const ccg_block *block;
    int64_t block_index;
    int64_t local;
    int kind;
    int64_t n;                   /* children */
    const int64_t *children;
    const int64_t *d;            /* 2n+1 durations of a call or artificial node */
    const int64_t *key;
    const int64_t *soft;
} node_ref;

typedef struct frame {
    int64_t node, slot, time;
    node_ref ref;
} frame;

/* A stack of frames from a sub-tree's root down to one event. */
typedef struct cursor {
    frame *frames;
    int64_t depth, capacity;
} cursor;

/* Expanded sub-trees (spans.py): the events of a sub-tree, times relative to its start
 * and METRIC values still as differences, stored column-wise in one arena. */
typedef struct span {
    int64_t offset, events, samples;
} span;

typedef struct span_cache {
    i64map of;             /* node -> span index */
    int64_t *seen;         /* SPAN_SEEN_SLOTS nodes seen once, by hash (-1: none) */
    span *spans;
    int64_t count, capacity;
    ccg_columns arena;     /* SPAN_CACHE_EVENTS rows once allocated */
    int64_t used;
    int64_t tries, hits;   /* look-ups and how many found a node seen before */
    int64_t pause;         /* sub-trees to enter without a look-up */
} span_cache;

struct ccg_walk {
    const ccg_source *source;
    int64_t root, start;
    int64_t count;
    int counted;
    int64_t index;      /* -1 before the first event, count past the last */
    int valid;          /* 0 after a failed move or a lone event(): only a seek repairs the cursor */
    cursor at;          /* the current event */
    cursor scratch;     /* expands a span */
    i64map metrics;     /* metric -> value after the samples before the current event */
    span_cache spans;
    int64_t last_block;
    int64_t *stack;     /* call_stack's result */
    int64_t stack_capacity;
    char error[ERROR_SIZE];
};

/* Load block k if it is not decoded and check that it holds the ids it should. */
static int block_ready(ccg_walk *w, int64_t k) {
    const ccg_source *s = w->source;
    if (!s->blocks[k]) {
        int code = s->load ? s->load(s->context, k) : CCG_ERR_INPUT;
        if (code != CCG_OK)
            return fail(w->error, code, "loading node block %lld failed", (long long)k);
        if (!s->blocks[k])
            return fail(w->error, CCG_ERR_INPUT, "node block %lld did not load", (long long)k);
    }
    const ccg_nodes *t = &s->blocks[k]->nodes;
    const int64_t *first = s->block_first;
    if (t->first != first[k] || t->count != first[k + 1] - first[k])
        return fail(w->error, CCG_ERR_INPUT, "node block %lld holds nodes %lld..%lld, expected %lld..%lld",
                    (long long)k, (long long)t->first, (long long)(t->first + t->count - 1),
                    (long long)first[k], (long long)(first[k + 1] - 1));
    w->last_block = k;
    return CCG_OK;
}

/* The index of the block holding node `id`, made ready; `hint` is a block to try first
 * (-1 for none). The block checked last in this call needs no second look. */
static int block_of(ccg_walk *w, int64_t id, int64_t hint, int64_t *index) {
    const ccg_source *s = w->source;
    const int64_t *first = s->block_first;
    int64_t count = s->block_count;
    int64_t k = w->last_block;
    if (k >= 0 && first[k] <= id && id < first[k + 1]) {
        *index = k;
        return CCG_OK;
    }
    k = hint;
    if (!(k >= 0 && k < count && first[k] <= id && id < first[k + 1])) {
        if (count <= 0 || id < first[0] || id >= first[count])
            return fail(w->error, CCG_ERR_INPUT, "reference to node %lld, outside the graph's nodes", (long long)id);
        k = last_at_or_before(first, 0, count - 1, id);   /* the last block starting at or before id */
        if (!(first[k] <= id && id < first[k + 1]))
            return fail(w->error, CCG_ERR_INPUT, "node blocks are not in id order near node %lld", (long long)id);
    }
    *index = k;
    return block_ready(w, k);
}

/* 0 <= start[i] <= start[i + 1] <= start[count]: the run of node i lies in its array. */
static inline int run_ok(const int64_t *start, int64_t i, int64_t count) {
    return start[i] >= 0 && start[i] <= start[i + 1] && start[i + 1] <= start[count];
}

static int node_get(ccg_walk *w, int64_t id, int64_t hint, node_ref *r) {
    int64_t k = -1;
    int code = block_of(w, id, hint, &k);
    if (code != CCG_OK)
        return code;
    const ccg_block *b = w->source->blocks[k];
    const ccg_nodes *t = &b->nodes;
    int64_t i = id - t->first;
    int kind = t->kind[i];
    r->block = b;
    r->block_index = k;
    r->local = i;
    r->kind = kind;
    if (kind >= ATOMIC) {
        if (kind >= CCG_KIND_COUNT)
            return fail(w->error, CCG_ERR_INPUT, "node %lld has unknown kind %d", (long long)id, kind);
        if (!run_ok(t->key_start, i, t->count) || !run_ok(t->soft_start, i, t->count) ||
            t->key_start[i + 1] - t->key_start[i] < ccg_hard_count[kind] ||
            t->soft_start[i + 1] - t->soft_start[i] < ccg_soft_count[kind])
            return fail(w->error, CCG_ERR_INPUT, "atomic node %lld lacks properties of its kind %d",
                        (long long)id, kind);
        r->key = t->key + t->key_start[i];
        r->soft = t->soft + t->soft_start[i];
        r->n = 0;
        r->children = r->d = NULL;
        return CCG_OK;
    }
    if (!run_ok(t->child_start, i, t->count) || !run_ok(t->duration_start, i, t->count))
        return fail(w->error, CCG_ERR_INPUT, "node %lld: bad child or duration offsets", (long long)id);
    r->n = t->child_start[i + 1] - t->child_start[i];
    if (t->duration_start[i + 1] - t->duration_start[i] != 2 * r->n + 1)
        return fail(w->error, CCG_ERR_INPUT, "node %lld has %lld children but not 2n+1 durations",
                    (long long)id, (long long)r->n);
    if (kind == CCG_CALL && (!run_ok(t->key_start, i, t->count) || t->key_start[i + 1] == t->key_start[i]))
        return fail(w->error, CCG_ERR_INPUT, "call node %lld has no region", (long long)id);
    r->key = kind == CCG_CALL ? t->key + t->key_start[i] : NULL;
    r->soft = NULL;
    r->children = t->children + t->child_start[i];
    r->d = t->durations + t->duration_start[i];
    return CCG_OK;
}

static inline int64_t node_total(const node_ref *r) { return r->block->nodes.total[r->local]; }

static inline int child_ok(ccg_walk *w, int64_t parent, int64_t child) {
    if (child >= 0 && child < parent)
        return CCG_OK;
    return fail(w->error, CCG_ERR_INPUT, "node %lld has child %lld, which is not an earlier node",
                (long long)parent, (long long)child);
}

/* A child's event count and (if asked) metric sums, from the parent's block: its own columns when
 * the child is in that block, else the block's import table. */
typedef struct child_info {
    int64_t events;
    int64_t metrics;
    const int64_t *metric_id;
    const int64_t *metric_sum;
} child_info;

static int child_get(ccg_walk *w, const node_ref *parent, int64_t child, int with_metrics, child_info *out) {
    const ccg_nodes *t = &parent->block->nodes;
    const int64_t *events, *start, *ids, *sums;
    int64_t i, count;
    if (child >= t->first) {
        i = child - t->first;
        count = t->count;
        events = t->events;
        start = t->metric_start;
        ids = t->metric_id;
        sums = t->metric_sum;
    } else {
        const ccg_imports *m = &parent->block->imports;
        int64_t lo = lower_bound(m->id, 0, m->count, child);
        if (lo >= m->count || m->id[lo] != child)
            return fail(w->error, CCG_ERR_INPUT, "node %lld of block %lld is not in the block's import table",
                        (long long)child, (long long)parent->block_index);
        i = lo;
        count = m->count;
        events = m->events;
        start = m->metric_start;
        ids = m->metric_id;
        sums = m->metric_sum;
    }
    if (events[i] < 0 || (with_metrics && !run_ok(start, i, count)))
        return fail(w->error, CCG_ERR_INPUT, "node %lld: bad event count or metric offsets", (long long)child);
    out->events = events[i];
    out->metrics = 0;
    out->metric_id = out->metric_sum = NULL;
    if (!with_metrics)
        return CCG_OK;
    out->metrics = start[i + 1] - start[i];
    out->metric_id = ids + start[i];
    out->metric_sum = sums + start[i];
    return CCG_OK;
}

/* ------------------------------------------------------------------ the cursor */

/* Sub-trees of SPAN_MIN .. SPAN_EVENTS events seen a second time are expanded once and
 * copied wherever they occur again; the cache starts over when its arena of
 * SPAN_CACHE_EVENTS rows is full. Which nodes were seen once is kept in a table of
 * SPAN_SEEN_SLOTS by hash, without probing: a node whose slot another took is seen anew,
 * so an unshared sub-tree costs one look-up. */
#define SPAN_MIN 8
#define SPAN_EVENTS 4096
#define SPAN_CACHE_EVENTS (1 << 18)
#define SPAN_SEEN_SLOTS (1 << 14)
/* When fewer than 1 in SPAN_RARE of SPAN_TRIAL look-ups find a node seen before (a
 * graph with little sharing, as after lossless compression of jittered times), the
 * next SPAN_PAUSE sub-trees are entered without one. */
#define SPAN_TRIAL 1024
#define SPAN_RARE 16
#define SPAN_PAUSE (1 << 16)

enum { EMIT_FORWARD, EMIT_READ, EMIT_RAW };   /* how emit treats a METRIC sample */
enum { MOVE_END, MOVE_EVENT, MOVE_CHILD };    /* what advance found */

#define ARENA_COLUMNS(X) X(time) X(ref) X(comm) X(tag) X(request) X(size) X(recv_size) X(value)

static void spans_free(span_cache *c) {
    ccg_columns *a = &c->arena;
    map_free(&c->of);
    free(c->seen);
    free(c->spans);
#define FREE_COLUMN(name) free(a->name);
    ARENA_COLUMNS(FREE_COLUMN)
    free(a->kind);
    memset(c, 0, sizeof *c);
}

static void spans_reset(span_cache *c) {
    map_clear(&c->of);
    c->count = 0;
    c->used = 0;
}

ccg_walk *ccg_walk_new(const ccg_source *source, int64_t root, int64_t start) {
    ccg_walk *w = calloc(1, sizeof *w);
    if (!w)
        return NULL;
    w->source = source;
    w->root = root;
    w->start = start;
    w->index = -1;
    w->last_block = -1;
    return w;
}

void ccg_walk_free(ccg_walk *w) {
    if (!w)
        return;
    free(w->at.frames);
    free(w->scratch.frames);
    free(w->stack);
    map_free(&w->metrics);
    spans_free(&w->spans);
    free(w);
}

const char *ccg_walk_error(const ccg_walk *w) { return w->error; }

int64_t ccg_walk_index(const ccg_walk *w) { return w->index; }

/* Blocks may have been evicted or replaced since the last call: check them afresh. */
static inline void begin_call(ccg_walk *w) { w->last_block = -1; }

int ccg_walk_count(ccg_walk *w, int64_t *count) {
    begin_call(w);
    if (!w->counted) {
        node_ref r;
        int code = node_get(w, w->root, -1, &r);
        if (code != CCG_OK)
            return code;
        int64_t events = r.block->nodes.events[r.local];
        if (events < 0)
            return fail(w->error, CCG_ERR_INPUT, "root node %lld has a negative event count", (long long)w->root);
        w->count = events;
        w->counted = 1;
    }
    *count = w->count;
    return CCG_OK;
}

static inline frame *top(cursor *c) { return &c->frames[c->depth - 1]; }

HOT_INLINE int push(ccg_walk *w, cursor *c, int64_t node, int64_t slot, int64_t time, const node_ref *r) {
    if (!grow((void **)&c->frames, &c->capacity, c->depth + 1, sizeof(frame)))
        return fail(w->error, CCG_ERR_MEMORY, "out of memory for the walk's frames");
    frame *f = &c->frames[c->depth++];
    f->node = node;
    f->slot = slot;
    f->time = time;
    f->ref = *r;
    return CCG_OK;
}

/* A failed move leaves the cursor unusable until the next seek. */
static int broken(ccg_walk *w, int code) {
    w->valid = 0;
    w->at.depth = 0;
    return code;
}

/* Resolve every frame's node again (blocks may have been evicted since the last call). */
static int refresh(ccg_walk *w) {
    begin_call(w);
    if (!w->valid)
        return fail(w->error, CCG_ERR_INPUT, "the cursor is invalid after an error; seek first");
    frame *frames = w->at.frames;
    for (int64_t i = 0; i < w->at.depth; i++) {
        int code = node_get(w, frames[i].node, i ? frames[i - 1].ref.block_index : -1, &frames[i].ref);
        if (code != CCG_OK)
            return broken(w, code);
    }
    return CCG_OK;
}

static int uneven(ccg_walk *w, int64_t node) {
    return fail(w->error, CCG_ERR_INPUT, "event counts below node %lld do not add up", (long long)node);
}

/* Put the cursor on event `index` by the descent of 4.5.1, summing the metric
 * differences of every sub-tree it passes when `metrics` is set. */
static int seek(ccg_walk *w, int64_t index, int metrics) {
    int64_t count;
    int code = ccg_walk_count(w, &count);
    if (code != CCG_OK)
        return code;
    cursor *c = &w->at;
    c->depth = 0;
    w->valid = 0;
    map_clear(&w->metrics);
    if (index < 0 || index > count)
        return fail(w->error, CCG_ERR_INPUT, "event index %lld outside 0..%lld", (long long)index, (long long)count);
    w->index = index;
    if (index == count) {
        w->valid = 1;
        return CCG_OK;
    }
    int64_t node = w->root, time = w->start, remaining = index, hint = -1;
    for (;;) {
        node_ref r;
        if ((code = node_get(w, node, hint, &r)) != CCG_OK)
            return broken(w, code);
        if (r.kind >= ATOMIC || (r.kind == CCG_CALL && remaining == 0)) {
            if (remaining != 0)
                return broken(w, uneven(w, node));
            if ((code = push(w, c, node, 0, time, &r)) != CCG_OK)
                return broken(w, code);
            break;
        }
        int64_t first_child_slot = 0;
        if (r.kind == CCG_CALL) {
            remaining--;
            first_child_slot = 1;
        }
        int64_t child_time = add64(time, r.d[0]), j;
        for (j = 0; j < r.n; j++) {
            int64_t child = r.children[j];
            child_info info = {0, 0, NULL, NULL};
            if ((code = child_ok(w, node, child)) != CCG_OK ||
                (code = child_get(w, &r, child, metrics, &info)) != CCG_OK)
                return broken(w, code);
            if (remaining < info.events)
                break;
            remaining -= info.events;
            for (int64_t m = 0; metrics && m < info.metrics; m++) {
                int64_t *value = map_slot(&w->metrics, info.metric_id[m], 0);
                if (!value)
                    return broken(w, fail(w->error, CCG_ERR_MEMORY, "out of memory for metric values"));
                *value = add64(*value, info.metric_sum[m]);
            }
            child_time = add64(child_time, add64(r.d[2 * j + 1], r.d[2 * j + 2]));
        }
        if (j == r.n) {   /* past every child: the leave */
            if (r.kind != CCG_CALL || remaining != 0)
                return broken(w, uneven(w, node));
            if ((code = push(w, c, node, r.n + 1, child_time, &r)) != CCG_OK)
                return broken(w, code);
            break;
        }
        if ((code = push(w, c, node, j + first_child_slot, child_time, &r)) != CCG_OK)
            return broken(w, code);
        node = r.children[j];
        time = child_time;
        hint = r.block_index;
    }
    w->valid = 1;
    return CCG_OK;
}

int ccg_walk_seek(ccg_walk *w, int64_t index) { return seek(w, index, 1); }

/* Push frames from `node` (a child of `parent`, starting at `time`) down to its first
 * event; `found` is 0 when the sub-tree holds no event (an empty artificial node).
 * `known` is `node` already resolved, or NULL. */
HOT_INLINE int descend_first(ccg_walk *w, cursor *c, int64_t parent, int64_t hint, int64_t node, int64_t time,
                         const node_ref *known, int *found) {
    for (;;) {
        node_ref r;
        int code;
        if (known) {
            r = *known;
            known = NULL;
        } else if ((code = child_ok(w, parent, node)) != CCG_OK || (code = node_get(w, node, hint, &r)) != CCG_OK) {
            return code;
        }
        if (r.kind != CCG_ARTIFICIAL) {
            *found = 1;
            return push(w, c, node, 0, time, &r);
        }
        if (r.n == 0) {
            *found = 0;
            return CCG_OK;
        }
        time = add64(time, r.d[0]);
        if ((code = push(w, c, node, 0, time, &r)) != CCG_OK)
            return code;
        parent = node;
        hint = r.block_index;
        node = r.children[0];
    }
}

/* Push frames from `node` (starting at `time`) down to its last event. */
static int descend_last(ccg_walk *w, cursor *c, int64_t parent, int64_t hint, int64_t node, int64_t time,
                        int *found) {
    for (;;) {
        node_ref r;
        int code;
        if ((code = child_ok(w, parent, node)) != CCG_OK || (code = node_get(w, node, hint, &r)) != CCG_OK)
            return code;
        if (r.kind >= ATOMIC) {
            *found = 1;
            return push(w, c, node, 0, time, &r);
        }
        int64_t end = add64(time, node_total(&r));
        if (r.kind == CCG_CALL) {
            *found = 1;
            return push(w, c, node, r.n + 1, end, &r);
        }
        if (r.n == 0) {
            *found = 0;
            return CCG_OK;
        }
        time = sub64(end, add64(r.d[2 * r.n], r.d[2 * r.n - 1]));
        if ((code = push(w, c, node, r.n - 1, time, &r)) != CCG_OK)
            return code;
        parent = node;
        hint = r.block_index;
        node = r.children[r.n - 1];
    }
}

/* Move the top frames on by one slot (Cursor.next up to the descent): to a call's leave
 * (MOVE_EVENT), to the next child, left for the caller to enter (MOVE_CHILD), or past
 * the sub-tree's end (MOVE_END). */
HOT_INLINE int advance(cursor *c, int64_t *child) {
    while (c->depth > 0) {
        frame *f = top(c);
        const node_ref *r = &f->ref;
        if (r->kind >= ATOMIC) {
            c->depth--;
            continue;
        }
        if (r->kind == CCG_CALL) {
            if (f->slot == r->n + 1) {
                c->depth--;
                continue;
            }
            f->time = add64(f->time, f->slot == 0 ? r->d[0] : add64(r->d[2 * f->slot - 1], r->d[2 * f->slot]));
            f->slot++;
            if (f->slot == r->n + 1)
                return MOVE_EVENT;
            *child = r->children[f->slot - 1];
            return MOVE_CHILD;
        }
        if (f->slot + 1 >= r->n) {
            c->depth--;
            continue;
        }
        f->time = add64(f->time, add64(r->d[2 * f->slot + 1], r->d[2 * f->slot + 2]));
        f->slot++;
        *child = r->children[f->slot];
        return MOVE_CHILD;
    }
    return MOVE_END;
}

/* Move the frames to the following event (Cursor.next without the metric update). */
static int step_forward(ccg_walk *w, cursor *c, int *found) {
    for (;;) {
        int64_t child;
        int move = advance(c, &child);
        if (move != MOVE_CHILD) {
            *found = move == MOVE_EVENT;
            return CCG_OK;
        }
        const frame *f = top(c);
        int code = descend_first(w, c, f->node, f->ref.block_index, child, f->time, NULL, found);
        if (code != CCG_OK || *found)
            return code;
    }
}

/* Move the frames to the preceding event (Cursor.prev without the metric update). */
static int step_backward(ccg_walk *w, cursor *c, int *found) {
    while (c->depth > 0) {
        frame *f = top(c);
        const node_ref *r = &f->ref;
        if (r->kind >= ATOMIC || f->slot == 0) {
            c->depth--;
            continue;
        }
        int64_t first_child_slot = r->kind == CCG_CALL;
        if (r->kind == CCG_CALL && f->slot == 1) {
            f->slot = 0;
            f->time = sub64(f->time, r->d[0]);
            *found = 1;   /* the enter */
            return CCG_OK;
        }
        /* child j (or the leave, j = n) starts at the frame's time; the previous child
         * starts two durations before the gap that precedes child j */
        int64_t j = f->slot - first_child_slot;
        f->time = sub64(f->time, add64(r->d[2 * j], r->d[2 * j - 1]));
        f->slot--;
        int code = descend_last(w, c, f->node, r->block_index, r->children[f->slot - first_child_slot], f->time,
                                found);
        if (code != CCG_OK || *found)
            return code;
    }
    *found = 0;
    return CCG_OK;
}

/* Write the event of frame `f` to row `at`. A METRIC's value is the running value plus
 * its difference (EMIT_READ), also stored as the new running value (EMIT_FORWARD), or
 * the difference alone (EMIT_RAW). */
HOT_INLINE int emit(ccg_walk *w, const frame *f, const ccg_columns *out, int64_t at, int mode) {
    const node_ref *r = &f->ref;
    int64_t c[COLUMN_COUNT] = {0};
    int kind = r->kind;
    if (kind == CCG_CALL) {
        kind = f->slot == 0 ? CCG_ENTER : CCG_LEAVE;
        c[COL_REF] = r->key[0];
    } else {
        for (int h = 0; h < ccg_hard_count[kind]; h++)
            c[hard_columns[kind][h]] = r->key[h];
        for (int s = 0; s < ccg_soft_count[kind]; s++)
            c[soft_columns[kind][s]] = r->soft[s];
        if (kind == CCG_METRIC && mode != EMIT_RAW) {
            int64_t *value = mode == EMIT_FORWARD ? map_slot(&w->metrics, r->key[0], 0)
                                                  : map_find(&w->metrics, r->key[0]);
            if (mode == EMIT_FORWARD && !value)
                return fail(w->error, CCG_ERR_MEMORY, "out of memory for metric values");
            c[COL_VALUE] = add64(value ? *value : 0, r->soft[0]);
            if (mode == EMIT_FORWARD)
                *value = c[COL_VALUE];
        }
    }
    out->time[at] = f->time;
    out->kind[at] = (uint8_t)kind;
    out->ref[at] = c[COL_REF];
    out->comm[at] = c[COL_COMM];
    out->tag[at] = c[COL_TAG];
    out->request[at] = c[COL_REQUEST];
    out->size[at] = c[COL_SIZE];
    out->recv_size[at] = c[COL_RECV_SIZE];
    out->value[at] = c[COL_VALUE];
    return CCG_OK;
}

int ccg_walk_event(ccg_walk *w, int64_t index, const ccg_columns *out) {
    /* metric sums are only needed when the event is a sample */
    int code = seek(w, index, 0);
    if (code == CCG_OK && w->at.depth && top(&w->at)->ref.kind == CCG_METRIC)
        code = seek(w, index, 1);
    if (code != CCG_OK)
        return code;
    if (!w->at.depth)
        return fail(w->error, CCG_ERR_INPUT, "event index %lld is past the end", (long long)index);
    code = emit(w, top(&w->at), out, 0, EMIT_READ);
    w->valid = 0;
    return code;
}

/* ------------------------------------------------------------------ spans */

static int span_arena(ccg_walk *w) {
    ccg_columns *a = &w->spans.arena;
    if (a->time)
        return CCG_OK;
    int ok = (a->kind = malloc(SPAN_CACHE_EVENTS)) != NULL;
#define ALLOCATE_COLUMN(name) ok = ok && (a->name = malloc(SPAN_CACHE_EVENTS * sizeof(int64_t))) != NULL;
    ARENA_COLUMNS(ALLOCATE_COLUMN)
    if (ok)
        return CCG_OK;
    free(a->kind);
    ARENA_COLUMNS(FREE_COLUMN)
    memset(a, 0, sizeof *a);
    return fail(w->error, CCG_ERR_MEMORY, "out of memory for expanded sub-trees");
}

/* Expand `node` (a sub-tree of `events` events) into the arena at row `at`. */
static int span_expand(ccg_walk *w, int64_t node, int64_t hint, int64_t events, int64_t at, int64_t *samples) {
    cursor *c = &w->scratch;
    c->depth = 0;
    *samples = 0;
    int found, code = descend_first(w, c, node + 1, hint, node, 0, NULL, &found);
    for (int64_t i = 0; code == CCG_OK && i < events; i++) {
        if (!found)
            return uneven(w, node);
        const frame *f = top(c);
        *samples += f->ref.kind == CCG_METRIC;
        if ((code = emit(w, f, &w->spans.arena, at + i, EMIT_RAW)) == CCG_OK)
            code = step_forward(w, c, &found);
    }
    if (code == CCG_OK && found)
        return uneven(w, node);
    return code;
}

/* The span of `node` (`events` events): NULL the first time the node is asked for,
 * expanded the second time, then cached. */
static int span_get(ccg_walk *w, int64_t node, int64_t hint, int64_t events, const span **out) {
    span_cache *c = &w->spans;
    *out = NULL;
    if (++c->tries == SPAN_TRIAL) {
        if (c->hits * SPAN_RARE < SPAN_TRIAL)
            c->pause = SPAN_PAUSE;
        c->tries = c->hits = 0;
    }
    int64_t *known = map_find(&c->of, node);
    if (known) {
        c->hits++;
        *out = &c->spans[*known];
        return CCG_OK;
    }
    if (!c->seen) {
        if (!(c->seen = malloc(SPAN_SEEN_SLOTS * sizeof(int64_t))))
            return fail(w->error, CCG_ERR_MEMORY, "out of memory for expanded sub-trees");
        memset(c->seen, 0xff, SPAN_SEEN_SLOTS * sizeof(int64_t));
    }
    int64_t *seen = &c->seen[map_home(node, SPAN_SEEN_SLOTS)];
    if (*seen != node) {
        *seen = node;
        return CCG_OK;
    }
    c->hits++;
    int code = span_arena(w);
    if (code != CCG_OK)
        return code;
    if (c->used + events > SPAN_CACHE_EVENTS)
        spans_reset(c);
    if (!grow((void **)&c->spans, &c->capacity, c->count + 1, sizeof(span)))
        return fail(w->error, CCG_ERR_MEMORY, "out of memory for expanded sub-trees");
    span *s = &c->spans[c->count];
    s->offset = c->used;
    s->events = events;
    if ((code = span_expand(w, node, hint, events, c->used, &s->samples)) != CCG_OK)
        return code;
    int64_t *index = map_slot(&c->of, node, c->count);
    if (!index)
        return fail(w->error, CCG_ERR_MEMORY, "out of memory for expanded sub-trees");
    *index = c->count++;
    c->used += events;
    *out = s;
    return CCG_OK;
}

/* Copy a span to rows `at`.. of `out`, starting at time `base`; its METRIC differences
 * become running values. */
static int span_copy(ccg_walk *w, const span *s, const ccg_columns *out, int64_t at, int64_t base) {
    const ccg_columns *a = &w->spans.arena;
    int64_t from = s->offset, n = s->events;
    for (int64_t i = 0; i < n; i++)
        out->time[at + i] = add64(a->time[from + i], base);
    memcpy(out->kind + at, a->kind + from, (size_t)n);
#define COPY_COLUMN(name) memcpy(out->name + at, a->name + from, (size_t)n * sizeof(int64_t));
    COPY_COLUMN(ref) COPY_COLUMN(comm) COPY_COLUMN(tag) COPY_COLUMN(request) COPY_COLUMN(size)
    COPY_COLUMN(recv_size) COPY_COLUMN(value)
    for (int64_t i = at, left = s->samples; left > 0; i++) {
        if (out->kind[i] != CCG_METRIC)
            continue;
        int64_t *value = map_slot(&w->metrics, out->ref[i], 0);
        if (!value)
            return fail(w->error, CCG_ERR_MEMORY, "out of memory for metric values");
        *value = out->value[i] = add64(*value, out->value[i]);
        left--;
    }
    return CCG_OK;
}

/* ------------------------------------------------------------------ iteration */

static int ended_early(ccg_walk *w) {
    return broken(w, fail(w->error, CCG_ERR_INPUT, "the graph of root %lld ends at event %lld of %lld",
                          (long long)w->root, (long long)w->index, (long long)w->count));
}

int ccg_walk_forward(ccg_walk *w, const ccg_columns *out, int64_t capacity, int64_t *written) {
    *written = 0;
    int code = refresh(w);
    if (code != CCG_OK)
        return code;
    cursor *c = &w->at;
    int64_t want = w->index < 0 ? 0 : w->count - w->index;
    if (want > capacity)
        want = capacity;
    int64_t k = 0;
    while (k < want) {
        if (c->depth == 0)
            return ended_early(w);
        if ((code = emit(w, top(c), out, k, EMIT_FORWARD)) != CCG_OK)
            return broken(w, code);
        *written = ++k;
        if (++w->index == w->count) {
            c->depth = 0;
            break;
        }
        for (;;) {   /* on to the next event, copying whole cached sub-trees on the way */
            int64_t child;
            int move = advance(c, &child);
            if (move == MOVE_EVENT)
                break;
            if (move == MOVE_END)
                return ended_early(w);
            const frame *f = top(c);
            int64_t node = f->node, time = f->time;
            node_ref r;
            int found;
            if ((code = child_ok(w, node, child)) != CCG_OK ||
                (code = node_get(w, child, f->ref.block_index, &r)) != CCG_OK)
                return broken(w, code);
            int64_t events;
            if (r.kind < ATOMIC && w->spans.pause) {
                w->spans.pause--;
            } else if (r.kind < ATOMIC && (events = r.block->nodes.events[r.local]) >= SPAN_MIN &&
                       events <= SPAN_EVENTS && events <= want - k) {
                const span *s;
                if ((code = span_get(w, child, r.block_index, events, &s)) != CCG_OK)
                    return broken(w, code);
                if (s) {
                    if ((code = span_copy(w, s, out, k, time)) != CCG_OK)
                        return broken(w, code);
                    *written = k += s->events;
                    if ((w->index += s->events) == w->count) {
                        c->depth = 0;
                        return CCG_OK;
                    }
                    continue;
                }
            }
            if ((code = descend_first(w, c, node, r.block_index, child, time, &r, &found)) != CCG_OK)
                return broken(w, code);
            if (found)
                break;
        }
    }
    return CCG_OK;
}

int ccg_walk_backward(ccg_walk *w, const ccg_columns *out, int64_t capacity, int64_t *written) {
    *written = 0;
    int code = refresh(w);
    if (code != CCG_OK)
        return code;
    cursor *c = &w->at;
    int64_t want = w->index >= w->count ? 0 : w->index + 1;
    if (want > capacity)
        want = capacity;
    for (int64_t k = 0; k < want; k++) {
        if (c->depth == 0)
            return ended_early(w);
        if ((code = emit(w, top(c), out, k, EMIT_READ)) != CCG_OK)
            return broken(w, code);
        *written = k + 1;
        if (w->index == 0) {
            w->index = -1;
            c->depth = 0;
            break;
        }
        w->index--;
        int found;
        if ((code = step_backward(w, c, &found)) != CCG_OK)
            return broken(w, code);
        if (!found)
            return ended_early(w);
        const node_ref *r = &top(c)->ref;
        if (r->kind == CCG_METRIC) {
            int64_t *value = map_slot(&w->metrics, r->key[0], 0);
            if (!value)
                return broken(w, fail(w->error, CCG_ERR_MEMORY, "out of memory for metric values"));
            *value = sub64(*value, r->soft[0]);
        }
    }
    return CCG_OK;
}

/* ------------------------------------------------------------------ time search */

int ccg_walk_find(ccg_walk *w, int64_t time, int64_t *index) {
    begin_call(w);
    int64_t node = w->root, start = w->start, found = 0, hint = -1;
    for (;;) {
        node_ref r;
        int code = node_get(w, node, hint, &r);
        if (code != CCG_OK)
            return code;
        if (time <= start)
            break;
        if (r.kind >= ATOMIC) {   /* only a damaged graph leads here: its event is before time */
            found++;
            break;
        }
        if (r.kind == CCG_CALL)
            found++;
        int64_t child_start = add64(start, r.d[0]), j;
        for (j = 0; j < r.n; j++) {
            int64_t child_end = add64(child_start, r.d[2 * j + 1]);
            if (time <= child_end)
                break;
            child_info c = {0, 0, NULL, NULL};
            if ((code = child_ok(w, node, r.children[j])) != CCG_OK ||
                (code = child_get(w, &r, r.children[j], 0, &c)) != CCG_OK)
                return code;
            found += c.events;
            child_start = add64(child_end, r.d[2 * j + 2]);
        }
        if (j == r.n) {   /* past every child: the leave, if the call ends at or after time */
            if (r.kind == CCG_CALL && time > add64(start, node_total(&r)))
                found++;
            break;
        }
        if (time <= child_start)
            break;
        if ((code = child_ok(w, node, r.children[j])) != CCG_OK)
            return code;
        node = r.children[j];
        start = child_start;
        hint = r.block_index;
    }
    *index = found;
    return CCG_OK;
}

int ccg_walk_call_stack(ccg_walk *w, int64_t time, int64_t *depth) {
    begin_call(w);
    int64_t node = w->root, start = w->start, hint = -1, n = 0;
    for (;;) {
        node_ref r;
        int code = node_get(w, node, hint, &r);
        if (code != CCG_OK)
            return code;
        if (r.kind >= ATOMIC || !(start <= time && time < add64(start, node_total(&r))))
            break;
        if (r.kind == CCG_CALL) {
            if (!grow((void **)&w->stack, &w->stack_capacity, n + 1, sizeof(int64_t)))
                return fail(w->error, CCG_ERR_MEMORY, "out of memory for a call stack");
            w->stack[n++] = r.key[0];
        }
        int64_t child_start = add64(start, r.d[0]), j;
        for (j = 0; j < r.n; j++) {
            if (child_start <= time && time < add64(child_start, r.d[2 * j + 1]))
                break;
            child_start = add64(child_start, add64(r.d[2 * j + 1], r.d[2 * j + 2]));
        }
        if (j == r.n)
            break;
        if ((code = child_ok(w, node, r.children[j])) != CCG_OK)
            return code;
        node = r.children[j];
        start = child_start;
        hint = r.block_index;
    }
    *depth = n;
    return CCG_OK;
}

const int64_t *ccg_walk_stack(const ccg_walk *w) { return w->stack; }
