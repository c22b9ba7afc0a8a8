/* The node block codec in C: the same bytes and the same checks as the Python reference
 * (ccgformat/archive/codec.py), following spec/format.md section 5.
 *
 * A payload is the block start (first id u64, node count u32) and 14 streams of
 * unsigned integers stored byte plane by byte plane at the narrowest width (dissertation
 * 4.1.3). Children are referenced through the pending stack (spec 5.3), durations keep
 * only the gaps, grouped by node shape (5.4), and the totals, event counts and metric
 * sums of sub-trees are recomputed bottom-up from the block and its import table.
 */
#include "codec.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

__extension__ typedef __int128 i128;

#define LIMIT62 ((uint64_t)1 << 62)
#define LIMIT32 ((uint64_t)1 << 32)

enum {
    S_PENDING, S_KIND, S_CHILD_COUNT, S_CHILD_FRESH, S_CHILD_ID, S_GAPS, S_KEY, S_SOFT, S_IMPORT_ID,
    S_IMPORT_TOTAL, S_IMPORT_EVENTS, S_IMPORT_METRIC_COUNT, S_IMPORT_METRIC_ID, S_IMPORT_METRIC_SUM,
    S_COUNT
};

/* ------------------------------------------------------------------ shared helpers */

typedef struct {
    char *message;
    size_t size;
} report;

static int fail(report *r, const char *format, ...) {
    if (r->message && r->size) {
        va_list args;
        va_start(args, format);
        vsnprintf(r->message, r->size, format, args);
        va_end(args);
    }
    return CCG_ERR_INPUT;
}

static int out_of_memory(report *r) {
    if (r->message && r->size)
        snprintf(r->message, r->size, "out of memory");
    return CCG_ERR_MEMORY;
}

static uint64_t zigzag(int64_t v) { return ((uint64_t)v << 1) ^ (v < 0 ? UINT64_MAX : 0); }
static int64_t unzigzag(uint64_t z) { return (int64_t)((z >> 1) ^ (~(z & 1) + 1)); }

/* calloc of at least one element, so that empty arrays are valid pointers too */
static void *alloc(size_t count, size_t size) { return calloc(count ? count : 1, size); }

/* The pending stack as a ring: at most CCG_PENDING_LIMIT ids, the bottom one dropped. */
typedef struct {
    int64_t id[CCG_PENDING_LIMIT + 1];
    size_t start, depth;
} pending_stack;

static void stack_push(pending_stack *s, int64_t node) {
    s->id[(s->start + s->depth) % (CCG_PENDING_LIMIT + 1)] = node;
    if (++s->depth > CCG_PENDING_LIMIT) {
        s->start = (s->start + 1) % (CCG_PENDING_LIMIT + 1);
        s->depth--;
    }
}

static int64_t stack_top(const pending_stack *s) {
    return s->id[(s->start + s->depth - 1) % (CCG_PENDING_LIMIT + 1)];
}

static int64_t stack_at(const pending_stack *s, size_t k) {
    return s->id[(s->start + k) % (CCG_PENDING_LIMIT + 1)];
}

/* A call or artificial node's shape (kind, key values, child count), for grouping gaps. */
typedef struct {
    int64_t kind, children, key_length, node;
    const int64_t *key;
} shape;

static int compare_shapes(const void *a, const void *b) {
    const shape *x = a, *y = b;
    if (x->kind != y->kind) return x->kind < y->kind ? -1 : 1;
    if (x->key_length != y->key_length) return x->key_length < y->key_length ? -1 : 1;
    for (int64_t k = 0; k < x->key_length; k++)
        if (x->key[k] != y->key[k]) return x->key[k] < y->key[k] ? -1 : 1;
    if (x->children != y->children) return x->children < y->children ? -1 : 1;
    return (x->node > y->node) - (x->node < y->node);
}

static int same_shape(const shape *x, const shape *y) {
    if (x->kind != y->kind || x->key_length != y->key_length || x->children != y->children) return 0;
    for (int64_t k = 0; k < x->key_length; k++)
        if (x->key[k] != y->key[k]) return 0;
    return 1;
}

/* A run of equal shapes after sorting: its members start at ``start`` in the sorted
 * array; ``first`` is the node that has the shape first. */
typedef struct {
    int64_t first, start, members;
} shape_group;

static int compare_groups(const void *a, const void *b) {
    const shape_group *x = a, *y = b;
    return (x->first > y->first) - (x->first < y->first);
}

static int compare_i64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Sort the shapes and return their groups in order of first appearance (stream order:
 * group by group, within a group position by position, within a position node by node). */
static shape_group *group_shapes(shape *shapes, int64_t count, int64_t *group_count) {
    qsort(shapes, (size_t)count, sizeof *shapes, compare_shapes);
    shape_group *groups = alloc((size_t)count, sizeof *groups);
    if (!groups) return NULL;
    int64_t g = 0;
    for (int64_t i = 0; i < count; i++) {
        if (i == 0 || !same_shape(&shapes[i - 1], &shapes[i]))
            groups[g++] = (shape_group){shapes[i].node, i, 0};
        groups[g - 1].members++;
    }
    qsort(groups, (size_t)g, sizeof *groups, compare_groups);
    *group_count = g;
    return groups;
}

/* ------------------------------------------------------------------ encoding */

struct ccg_encoder {
    pending_stack stack;  /* nodes made but not yet referenced, newest on top */
};

ccg_encoder *ccg_encoder_new(void) { return calloc(1, sizeof(ccg_encoder)); }

void ccg_encoder_free(ccg_encoder *encoder) { free(encoder); }

void ccg_bytes_free(uint8_t *bytes) { free(bytes); }

typedef struct {
    uint64_t *value;
    size_t count, capacity;
} column;

static int column_push(column *c, uint64_t value) {
    if (c->count == c->capacity) {
        size_t capacity = c->capacity ? 2 * c->capacity : 64;
        uint64_t *grown = realloc(c->value, capacity * sizeof *grown);
        if (!grown) return 0;
        c->value = grown;
        c->capacity = capacity;
    }
    c->value[c->count++] = value;
    return 1;
}

static int stream_width(const column *c) {
    uint64_t top = 0;
    for (size_t i = 0; i < c->count; i++)
        if (c->value[i] > top) top = c->value[i];
    return top < (1u << 8) ? 1 : top < (1u << 16) ? 2 : top < LIMIT32 ? 4 : 8;
}

static uint8_t *put_le(uint8_t *out, uint64_t value, int bytes) {
    for (int b = 0; b < bytes; b++) *out++ = (uint8_t)(value >> (8 * b));
    return out;
}

/* Where node ``id`` (a child in an earlier block) finds its events, total and sums. */
typedef struct {
    int64_t events, total, pairs;
    const int64_t *metric_id, *metric_sum;
} import_values;

static int find_import(const ccg_nodes *nodes, const ccg_imports *earlier, int64_t id, import_values *out) {
    if (id >= nodes->first && id - nodes->first < nodes->count) {
        int64_t i = id - nodes->first, a = nodes->metric_start[i];
        *out = (import_values){nodes->events[i], nodes->total[i], nodes->metric_start[i + 1] - a,
                               nodes->metric_id + a, nodes->metric_sum + a};
        return 1;
    }
    if (!earlier) return 0;
    int64_t low = 0, high = earlier->count;
    while (low < high) {
        int64_t middle = low + (high - low) / 2;
        if (earlier->id[middle] < id) low = middle + 1; else high = middle;
    }
    if (low == earlier->count || earlier->id[low] != id) return 0;
    int64_t a = earlier->metric_start[low];
    *out = (import_values){earlier->events[low], earlier->total[low], earlier->metric_start[low + 1] - a,
                           earlier->metric_id + a, earlier->metric_sum + a};
    return 1;
}

static int push_deltas(column *c, const int64_t *ids, size_t count) {
    int64_t previous = 0;
    for (size_t i = 0; i < count; i++) {
        if (!column_push(c, (uint64_t)(ids[i] - previous))) return 0;
        previous = ids[i];
    }
    return 1;
}

int ccg_encode_nodes(ccg_encoder *encoder, const ccg_nodes *nodes, const ccg_imports *earlier,
                     int64_t first, int64_t stop, uint8_t **out, size_t *out_length,
                     char *message, size_t message_size) {
    report r = {message, message_size};
    *out = NULL;
    *out_length = 0;
    if (first < nodes->first || stop < first || stop - nodes->first > nodes->count || stop - first >= (int64_t)LIMIT32)
        return fail(&r, "nodes %lld..%lld are not all in the table of %lld nodes from %lld", (long long)first,
                    (long long)stop - 1, (long long)nodes->count, (long long)nodes->first);
    column c[S_COUNT] = {{0}};
    pending_stack *stack = malloc(sizeof *stack);
    int64_t inner = 0, imported = 0;
    shape *shapes = NULL;
    shape_group *groups = NULL;
    int64_t *imports = NULL;
    uint8_t *payload = NULL;
    int status = CCG_ERR_MEMORY;
    for (int64_t node = first; node < stop; node++)
        if (nodes->kind[node - nodes->first] <= CCG_ARTIFICIAL) inner++;
    shapes = alloc((size_t)inner, sizeof *shapes);
    size_t import_capacity = 0;
    for (int64_t node = first; node < stop; node++) {
        int64_t i = node - nodes->first;
        if (nodes->kind[i] <= CCG_ARTIFICIAL) import_capacity += (size_t)(nodes->child_start[i + 1] - nodes->child_start[i]);
    }
    imports = alloc(import_capacity, sizeof *imports);
    if (!stack || !shapes || !imports) goto done;
    *stack = encoder->stack;
    int64_t pending[CCG_PENDING_LIMIT];
    for (size_t k = 0; k < stack->depth; k++) pending[k] = stack_at(stack, k);
    if (!push_deltas(&c[S_PENDING], pending, stack->depth)) goto done;

    inner = 0;
    for (int64_t node = first; node < stop; node++) {
        int64_t i = node - nodes->first;
        uint8_t kind = nodes->kind[i];
        if (!column_push(&c[S_KIND], kind)) goto done;
        if (kind <= CCG_ARTIFICIAL) {
            int64_t a = nodes->child_start[i], n = nodes->child_start[i + 1] - a;
            const int64_t *children = nodes->children + a;
            if (nodes->duration_start[i + 1] - nodes->duration_start[i] != 2 * n + 1) {
                status = fail(&r, "node %lld has %lld children but %lld durations", (long long)node, (long long)n,
                              (long long)(nodes->duration_start[i + 1] - nodes->duration_start[i]));
                goto done;
            }
            if (!column_push(&c[S_CHILD_COUNT], (uint64_t)n)) goto done;
            size_t fresh_at = c[S_CHILD_FRESH].count;
            for (int64_t j = 0; j < n; j++)
                if (!column_push(&c[S_CHILD_FRESH], 0)) goto done;
            for (int64_t j = n - 1; j >= 0; j--) {
                if (stack->depth && stack_top(stack) == children[j]) {
                    stack->depth--;
                    c[S_CHILD_FRESH].value[fresh_at + (size_t)j] = 1;
                }
            }
            for (int64_t j = 0; j < n; j++) {
                if (children[j] < 0 || children[j] >= node) {
                    status = fail(&r, "node %lld has child %lld", (long long)node, (long long)children[j]);
                    goto done;
                }
                if (!c[S_CHILD_FRESH].value[fresh_at + (size_t)j] && !column_push(&c[S_CHILD_ID], (uint64_t)children[j]))
                    goto done;
                if (children[j] < first) imports[imported++] = children[j];
            }
            int64_t k = nodes->key_start[i];
            shapes[inner++] = (shape){kind, n, nodes->key_start[i + 1] - k, node, nodes->key + k};
        }
        for (int64_t k = nodes->key_start[i]; k < nodes->key_start[i + 1]; k++)
            if (!column_push(&c[S_KEY], zigzag(nodes->key[k]))) goto done;
        for (int64_t k = nodes->soft_start[i]; k < nodes->soft_start[i + 1]; k++)
            if (!column_push(&c[S_SOFT], zigzag(nodes->soft[k]))) goto done;
        stack_push(stack, node);
    }

    int64_t group_count = 0;
    groups = group_shapes(shapes, inner, &group_count);
    if (!groups) goto done;
    for (int64_t g = 0; g < group_count; g++) {
        const shape *member = shapes + groups[g].start;
        for (int64_t position = 0; position <= member->children; position++)
            for (int64_t m = 0; m < groups[g].members; m++) {
                int64_t i = member[m].node - nodes->first;
                int64_t gap = nodes->durations[nodes->duration_start[i] + 2 * position];
                if (gap < 0) {
                    status = fail(&r, "node %lld has a negative gap", (long long)member[m].node);
                    goto done;
                }
                if (!column_push(&c[S_GAPS], (uint64_t)gap)) goto done;
            }
    }

    qsort(imports, (size_t)imported, sizeof *imports, compare_i64);
    int64_t unique = 0;
    for (int64_t k = 0; k < imported; k++)
        if (k == 0 || imports[k] != imports[unique - 1]) imports[unique++] = imports[k];
    if (!push_deltas(&c[S_IMPORT_ID], imports, (size_t)unique)) goto done;
    for (int64_t k = 0; k < unique; k++) {
        import_values v;
        if (!find_import(nodes, earlier, imports[k], &v)) {
            status = fail(&r, "child %lld is in neither the table nor the earlier nodes given", (long long)imports[k]);
            goto done;
        }
        if (v.events < 0 || v.total < 0) {
            status = fail(&r, "node %lld has a negative event count or total", (long long)imports[k]);
            goto done;
        }
        if (!column_push(&c[S_IMPORT_TOTAL], (uint64_t)v.total) || !column_push(&c[S_IMPORT_EVENTS], (uint64_t)v.events)
            || !column_push(&c[S_IMPORT_METRIC_COUNT], (uint64_t)v.pairs))
            goto done;
        for (int64_t p = 0; p < v.pairs; p++) {
            if (v.metric_id[p] < 0) {
                status = fail(&r, "node %lld has a negative metric id", (long long)imports[k]);
                goto done;
            }
            if (!column_push(&c[S_IMPORT_METRIC_ID], (uint64_t)v.metric_id[p])
                || !column_push(&c[S_IMPORT_METRIC_SUM], zigzag(v.metric_sum[p])))
                goto done;
        }
    }

    size_t length = 12;
    int width[S_COUNT];
    for (int s = 0; s < S_COUNT; s++) {
        if (c[s].count >= LIMIT32) {
            status = fail(&r, "a stream of %zu values does not fit a block", c[s].count);
            goto done;
        }
        width[s] = stream_width(&c[s]);
        length += 5 + (size_t)width[s] * c[s].count;
    }
    payload = malloc(length);
    if (!payload) goto done;
    uint8_t *at = put_le(put_le(payload, (uint64_t)first, 8), (uint64_t)(stop - first), 4);
    for (int s = 0; s < S_COUNT; s++) {
        at = put_le(put_le(at, (uint64_t)width[s], 1), c[s].count, 4);
        for (int b = 0; b < width[s]; b++)
            for (size_t i = 0; i < c[s].count; i++) *at++ = (uint8_t)(c[s].value[i] >> (8 * b));
    }
    encoder->stack = *stack;
    *out = payload;
    *out_length = length;
    payload = NULL;
    status = CCG_OK;
done:
    if (status == CCG_ERR_MEMORY) out_of_memory(&r);
    for (int s = 0; s < S_COUNT; s++) free(c[s].value);
    free(stack);
    free(shapes);
    free(groups);
    free(imports);
    free(payload);
    return status;
}

/* ------------------------------------------------------------------ decoding */

typedef struct {
    uint64_t *value;
    int64_t count;
} stream;

static uint64_t read_le(const uint8_t *at, int bytes) {
    uint64_t value = 0;
    for (int b = 0; b < bytes; b++) value |= (uint64_t)at[b] << (8 * b);
    return value;
}

/* The 14 streams of a payload after its 12-byte start: checked, then widened to u64. */
static int read_streams(const uint8_t *raw, size_t length, stream *s, report *r) {
    size_t position = 12;
    for (int k = 0; k < S_COUNT; k++) {
        if (length - position < 5) return fail(r, "the block ends inside a stream header");
        int width = raw[position];
        uint64_t count = read_le(raw + position + 1, 4);
        position += 5;
        if (width != 1 && width != 2 && width != 4 && width != 8)
            return fail(r, "stream width %d is not 1, 2, 4 or 8", width);
        if ((uint64_t)width * count > length - position)
            return fail(r, "a stream of %llu values x %d bytes runs past the block end", (unsigned long long)count, width);
        s[k].count = (int64_t)count;
        s[k].value = alloc((size_t)count, sizeof(uint64_t));
        if (!s[k].value) return out_of_memory(r);
        const uint8_t *planes = raw + position;
        for (int b = 0; b < width; b++)
            for (uint64_t i = 0; i < count; i++) s[k].value[i] |= (uint64_t)planes[(uint64_t)b * count + i] << (8 * b);
        position += (size_t)width * (size_t)count;
    }
    if (position != length) return fail(r, "%zu bytes after the last stream", length - position);
    return CCG_OK;
}

static int all_below(const stream *s, uint64_t bound) {
    for (int64_t i = 0; i < s->count; i++)
        if (s->value[i] >= bound) return 0;
    return 1;
}

/* A delta-coded list of increasing ids below ``limit`` (spec 5.2). */
static int undelta(const stream *s, int64_t limit, int64_t *ids, const char *what, report *r) {
    uint64_t running = 0;
    for (int64_t i = 0; i < s->count; i++) {
        if (s->value[i] >= LIMIT62 || (i > 0 && s->value[i] == 0))
            return fail(r, "%s ids are not increasing", what);
        running += s->value[i];  /* below 2**62 + 2**62: no overflow */
        if (running >= (uint64_t)limit)
            return fail(r, "%s node %llu is not in an earlier block", what, (unsigned long long)running);
        ids[i] = (int64_t)running;
    }
    return CCG_OK;
}

void ccg_block_free(ccg_block *block) {
    if (!block) return;
    ccg_nodes *n = &block->nodes;
    ccg_imports *m = &block->imports;
    void *arrays[] = {n->kind, n->child_start, n->children, n->duration_start, n->durations, n->key_start, n->key,
                      n->soft_start, n->soft, n->events, n->total, n->metric_start, n->metric_id, n->metric_sum,
                      m->id, m->events, m->total, m->metric_start, m->metric_id, m->metric_sum};
    for (size_t k = 0; k < sizeof arrays / sizeof *arrays; k++) free(arrays[k]);
    free(block);
}

static int64_t rank_of(const int64_t *metrics, int64_t count, int64_t metric) {
    int64_t low = 0, high = count;
    while (low < high) {
        int64_t middle = low + (high - low) / 2;
        if (metrics[middle] < metric) low = middle + 1; else high = middle;
    }
    return low;
}

static int grow(int64_t **array, int64_t count) {
    int64_t *grown = realloc(*array, (size_t)count * sizeof(int64_t));
    if (!grown) return 0;
    *array = grown;
    return 1;
}

/* The decoder's working state (freed at the end whatever happens). */
typedef struct {
    stream s[S_COUNT];
    int64_t *pending, *row, *metrics, *pair_rank, *import_rank, *stamp, *touched;
    uint64_t *acc;
    shape *shapes;
    shape_group *groups;
} scratch;

static void scratch_free(scratch *w) {
    for (int k = 0; k < S_COUNT; k++) free(w->s[k].value);
    void *arrays[] = {w->pending, w->row, w->metrics, w->pair_rank, w->import_rank, w->stamp, w->touched,
                      w->acc, w->shapes, w->groups};
    for (size_t k = 0; k < sizeof arrays / sizeof *arrays; k++) free(arrays[k]);
}

static int decode(const uint8_t *raw, size_t length, ccg_block *block, scratch *w, report *r);

int ccg_decode_nodes(const uint8_t *raw, size_t length, ccg_block **out, char *message, size_t message_size) {
    report r = {message, message_size};
    *out = NULL;
    ccg_block *block = calloc(1, sizeof *block);
    if (!block) return out_of_memory(&r);
    scratch w;
    memset(&w, 0, sizeof w);
    int status = decode(raw, length, block, &w, &r);
    scratch_free(&w);
    if (status != CCG_OK) {
        ccg_block_free(block);
        return status;
    }
    *out = block;
    return CCG_OK;
}

#define NEED(pointer) do { if (!(pointer)) return out_of_memory(r); } while (0)

static int decode(const uint8_t *raw, size_t length, ccg_block *block, scratch *w, report *r) {
    if (length < 12) return fail(r, "shorter than its header");
    uint64_t first = read_le(raw, 8);
    int64_t count = (int64_t)read_le(raw + 8, 4);
    stream *s = w->s;
    int status = read_streams(raw, length, s, r);
    if (status != CCG_OK) return status;
    if (count == 0 || count != s[S_KIND].count)
        return fail(r, "%lld kinds for %lld nodes", (long long)s[S_KIND].count, (long long)count);
    if (first >= LIMIT62 || first + (uint64_t)count >= LIMIT62) return fail(r, "node ids out of range");
    if (!all_below(&s[S_KIND], CCG_KIND_COUNT)) return fail(r, "unknown node kind");
    ccg_nodes *n = &block->nodes;
    n->first = (int64_t)first;
    n->count = count;
    NEED(n->kind = alloc((size_t)count, 1));
    int64_t inner = 0, keys = 0, softs = 0;
    for (int64_t i = 0; i < count; i++) {
        uint8_t kind = n->kind[i] = (uint8_t)s[S_KIND].value[i];
        inner += kind <= CCG_ARTIFICIAL;
        keys += ccg_hard_count[kind];
        softs += ccg_soft_count[kind];
    }
    if (s[S_CHILD_COUNT].count != inner) return fail(r, "child counts do not match the node kinds");
    if (!all_below(&s[S_CHILD_COUNT], LIMIT32)) return fail(r, "implausible child count");
    NEED(n->child_start = alloc((size_t)count + 1, sizeof(int64_t)));
    NEED(n->duration_start = alloc((size_t)count + 1, sizeof(int64_t)));
    NEED(n->key_start = alloc((size_t)count + 1, sizeof(int64_t)));
    NEED(n->soft_start = alloc((size_t)count + 1, sizeof(int64_t)));
    int64_t edges = 0, gap_total = 0;
    for (int64_t i = 0, k = 0; i < count; i++) {
        int64_t children = n->kind[i] <= CCG_ARTIFICIAL ? (int64_t)s[S_CHILD_COUNT].value[k++] : 0;
        edges += children;  /* count < 2**32 nodes of < 2**32 children: no overflow */
        gap_total += n->kind[i] <= CCG_ARTIFICIAL ? children + 1 : 0;
        n->child_start[i + 1] = edges;
        n->duration_start[i + 1] = n->duration_start[i] + (n->kind[i] <= CCG_ARTIFICIAL ? 2 * children + 1 : 0);
        n->key_start[i + 1] = n->key_start[i] + ccg_hard_count[n->kind[i]];
        n->soft_start[i + 1] = n->soft_start[i] + ccg_soft_count[n->kind[i]];
    }
    if (s[S_CHILD_FRESH].count != edges) return fail(r, "fresh flags do not match the child counts");
    if (!all_below(&s[S_CHILD_FRESH], 2)) return fail(r, "a fresh flag is not 0 or 1");
    int64_t fresh = 0;
    for (int64_t e = 0; e < edges; e++) fresh += (int64_t)s[S_CHILD_FRESH].value[e];
    if (s[S_CHILD_ID].count != edges - fresh) return fail(r, "child ids do not match the fresh flags");
    if (!all_below(&s[S_CHILD_ID], LIMIT62)) return fail(r, "implausible child id");
    if (s[S_GAPS].count != gap_total) return fail(r, "gap count does not match the child counts");
    if (!all_below(&s[S_GAPS], LIMIT62)) return fail(r, "implausible gap");
    if (s[S_KEY].count != keys || s[S_SOFT].count != softs) return fail(r, "property counts do not match the node kinds");
    NEED(n->key = alloc((size_t)keys, sizeof(int64_t)));
    NEED(n->soft = alloc((size_t)softs, sizeof(int64_t)));
    for (int64_t k = 0; k < keys; k++) n->key[k] = unzigzag(s[S_KEY].value[k]);
    for (int64_t k = 0; k < softs; k++) n->soft[k] = unzigzag(s[S_SOFT].value[k]);
    if (s[S_PENDING].count > CCG_PENDING_LIMIT)
        return fail(r, "pending stack is too long or names a node outside the earlier blocks");
    NEED(w->pending = alloc((size_t)s[S_PENDING].count, sizeof(int64_t)));
    if ((status = undelta(&s[S_PENDING], (int64_t)first, w->pending, "pending", r)) != CCG_OK) return status;

    /* children: replay the pending stack (spec 5.3) */
    NEED(n->children = alloc((size_t)edges, sizeof(int64_t)));
    pending_stack stack;
    stack.start = stack.depth = 0;
    for (int64_t k = 0; k < s[S_PENDING].count; k++) stack_push(&stack, w->pending[k]);
    int64_t next_id = 0;
    for (int64_t i = 0; i < count; i++) {
        int64_t a = n->child_start[i], b = n->child_start[i + 1];
        for (int64_t e = b - 1; e >= a; e--) {
            if (!s[S_CHILD_FRESH].value[e]) continue;
            if (!stack.depth) return fail(r, "a node pops an empty pending stack");
            n->children[e] = stack_top(&stack);
            stack.depth--;
        }
        for (int64_t e = a; e < b; e++) {
            if (s[S_CHILD_FRESH].value[e]) continue;
            n->children[e] = (int64_t)s[S_CHILD_ID].value[next_id++];
            if (n->children[e] >= (int64_t)first + i) return fail(r, "a child reference does not point to an earlier node");
        }
        stack_push(&stack, (int64_t)first + i);
    }

    /* the import table */
    ccg_imports *m = &block->imports;
    int64_t imported = s[S_IMPORT_ID].count;
    NEED(m->id = alloc((size_t)imported, sizeof(int64_t)));
    if ((status = undelta(&s[S_IMPORT_ID], (int64_t)first, m->id, "import", r)) != CCG_OK) return status;
    if (s[S_IMPORT_TOTAL].count != imported || s[S_IMPORT_EVENTS].count != imported
        || s[S_IMPORT_METRIC_COUNT].count != imported)
        return fail(r, "import table columns differ in length");
    if (!all_below(&s[S_IMPORT_TOTAL], LIMIT62) || !all_below(&s[S_IMPORT_EVENTS], LIMIT62))
        return fail(r, "implausible imported total or event count");
    if (!all_below(&s[S_IMPORT_METRIC_COUNT], LIMIT32)) return fail(r, "implausible metric count");
    m->count = imported;
    NEED(m->events = alloc((size_t)imported, sizeof(int64_t)));
    NEED(m->total = alloc((size_t)imported, sizeof(int64_t)));
    NEED(m->metric_start = alloc((size_t)imported + 1, sizeof(int64_t)));
    for (int64_t k = 0; k < imported; k++) {
        m->events[k] = (int64_t)s[S_IMPORT_EVENTS].value[k];
        m->total[k] = (int64_t)s[S_IMPORT_TOTAL].value[k];
        m->metric_start[k + 1] = m->metric_start[k] + (int64_t)s[S_IMPORT_METRIC_COUNT].value[k];
    }
    int64_t pairs = m->metric_start[imported];
    if (s[S_IMPORT_METRIC_ID].count != pairs || s[S_IMPORT_METRIC_SUM].count != pairs)
        return fail(r, "import metric sums do not match their counts");
    NEED(m->metric_id = alloc((size_t)pairs, sizeof(int64_t)));
    NEED(m->metric_sum = alloc((size_t)pairs, sizeof(int64_t)));
    for (int64_t k = 0; k < imported; k++)
        for (int64_t p = m->metric_start[k]; p < m->metric_start[k + 1]; p++) {
            uint64_t metric = s[S_IMPORT_METRIC_ID].value[p];
            if (metric >= (uint64_t)1 << 63 || (p > m->metric_start[k] && metric <= (uint64_t)m->metric_id[p - 1]))
                return fail(r, "the metric ids of an imported node are not increasing");
            m->metric_id[p] = (int64_t)metric;
            m->metric_sum[p] = unzigzag(s[S_IMPORT_METRIC_SUM].value[p]);
        }

    /* every child in an earlier block must be listed: child -> import row, kept in
     * w->pair_rank's place for the moment (edges entries, -1 inside the block) */
    int64_t *row = w->row = alloc((size_t)edges, sizeof(int64_t));
    NEED(row);
    for (int64_t e = 0; e < edges; e++) {
        int64_t child = n->children[e];
        row[e] = -1;
        if (child >= (int64_t)first) continue;
        int64_t k = rank_of(m->id, imported, child);
        if (k == imported || m->id[k] != child)
            return fail(r, "a child in an earlier block is missing from the import table");
        row[e] = k;
    }

    /* gaps back in node order */
    NEED(w->shapes = alloc((size_t)inner, sizeof *w->shapes));
    for (int64_t i = 0, k = 0; i < count; i++)
        if (n->kind[i] <= CCG_ARTIFICIAL)
            w->shapes[k++] = (shape){n->kind[i], n->child_start[i + 1] - n->child_start[i],
                                     n->key_start[i + 1] - n->key_start[i], i, n->key + n->key_start[i]};
    int64_t group_count = 0;
    w->groups = group_shapes(w->shapes, inner, &group_count);
    NEED(n->durations = alloc((size_t)n->duration_start[count], sizeof(int64_t)));
    NEED(w->groups);
    int64_t at = 0;
    for (int64_t g = 0; g < group_count; g++) {
        const shape *member = w->shapes + w->groups[g].start;
        for (int64_t position = 0; position <= member->children; position++)
            for (int64_t k = 0; k < w->groups[g].members; k++)
                n->durations[n->duration_start[member[k].node] + 2 * position] = (int64_t)s[S_GAPS].value[at++];
    }

    /* the metrics of the block: sampled by its METRIC nodes or listed by its imports */
    int64_t samples = 0;
    for (int64_t i = 0; i < count; i++) samples += n->kind[i] == CCG_METRIC;
    int64_t metric_count = 0;
    w->metrics = alloc((size_t)(samples + pairs), sizeof(int64_t));
    NEED(w->metrics);
    for (int64_t i = 0; i < count; i++)
        if (n->kind[i] == CCG_METRIC) w->metrics[metric_count++] = n->key[n->key_start[i]];
    for (int64_t p = 0; p < pairs; p++) w->metrics[metric_count++] = m->metric_id[p];
    qsort(w->metrics, (size_t)metric_count, sizeof(int64_t), compare_i64);
    int64_t distinct = 0;
    for (int64_t k = 0; k < metric_count; k++)
        if (k == 0 || w->metrics[k] != w->metrics[distinct - 1]) w->metrics[distinct++] = w->metrics[k];
    if ((i128)distinct * (count + edges) > CCG_METRIC_CELL_LIMIT)
        return fail(r, "%lld metrics over %lld nodes and child references exceed the reader's limit",
                    (long long)distinct, (long long)(count + edges));

    /* bottom-up: totals, event counts and metric sums (children precede parents) */
    NEED(n->events = alloc((size_t)count, sizeof(int64_t)));
    NEED(n->total = alloc((size_t)count, sizeof(int64_t)));
    NEED(n->metric_start = alloc((size_t)count + 1, sizeof(int64_t)));
    /* at most one pair per metric and node: grown as needed up to distinct * count */
    int64_t capacity = distinct < 16 ? distinct * count : 16 * count;
    NEED(n->metric_id = alloc((size_t)capacity, sizeof(int64_t)));
    NEED(n->metric_sum = alloc((size_t)capacity, sizeof(int64_t)));
    w->pair_rank = alloc((size_t)capacity, sizeof(int64_t));
    w->import_rank = alloc((size_t)pairs, sizeof(int64_t));
    w->stamp = alloc((size_t)distinct, sizeof(int64_t));
    w->touched = alloc((size_t)distinct, sizeof(int64_t));
    w->acc = alloc((size_t)distinct, sizeof(uint64_t));
    if (!w->pair_rank || !w->import_rank || !w->stamp || !w->touched || !w->acc) return out_of_memory(r);
    for (int64_t p = 0; p < pairs; p++) w->import_rank[p] = rank_of(w->metrics, distinct, m->metric_id[p]);
    for (int64_t k = 0; k < distinct; k++) w->stamp[k] = -1;
    for (int64_t i = 0; i < count; i++) {
        uint8_t kind = n->kind[i];
        i128 total = 0, events = kind == CCG_CALL ? 2 : kind == CCG_ARTIFICIAL ? 0 : 1;
        int64_t touched = 0;
#define TOUCH(rank, value) do { int64_t rank_ = (rank); \
            if (w->stamp[rank_] != i) { w->stamp[rank_] = i; w->acc[rank_] = 0; w->touched[touched++] = rank_; } \
            w->acc[rank_] += (uint64_t)(value); } while (0)
        if (kind == CCG_METRIC)
            TOUCH(rank_of(w->metrics, distinct, n->key[n->key_start[i]]), n->soft[n->soft_start[i]]);
        int64_t d = n->duration_start[i];
        for (int64_t e = n->child_start[i]; e < n->child_start[i + 1]; e++) {
            int64_t child = n->children[e], child_total;
            total += n->durations[d];
            if (row[e] < 0) {
                int64_t c = child - (int64_t)first;
                child_total = n->total[c];
                events += n->events[c];
                for (int64_t p = n->metric_start[c]; p < n->metric_start[c + 1]; p++)
                    TOUCH(w->pair_rank[p], n->metric_sum[p]);
            } else {
                int64_t k = row[e];
                child_total = m->total[k];
                events += m->events[k];
                for (int64_t p = m->metric_start[k]; p < m->metric_start[k + 1]; p++)
                    TOUCH(w->import_rank[p], m->metric_sum[p]);
            }
            total += child_total;
            n->durations[d + 1] = child_total;
            d += 2;
        }
#undef TOUCH
        if (kind <= CCG_ARTIFICIAL) total += n->durations[d];
        if (total > INT64_MAX || events > INT64_MAX) return fail(r, "sub-tree duration or event count overflows");
        n->total[i] = (int64_t)total;
        n->events[i] = (int64_t)events;
        qsort(w->touched, (size_t)touched, sizeof(int64_t), compare_i64);
        int64_t p = n->metric_start[i];
        if (p + touched > capacity) {
            capacity = p + touched > 2 * capacity ? p + touched : 2 * capacity;
            if (!grow(&n->metric_id, capacity) || !grow(&n->metric_sum, capacity) || !grow(&w->pair_rank, capacity))
                return out_of_memory(r);
        }
        for (int64_t k = 0; k < touched; k++, p++) {
            w->pair_rank[p] = w->touched[k];
            n->metric_id[p] = w->metrics[w->touched[k]];
            n->metric_sum[p] = (int64_t)w->acc[w->touched[k]];
        }
        n->metric_start[i + 1] = p;
    }
    return CCG_OK;
}
