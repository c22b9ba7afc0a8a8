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
#include "gapcoder.h"
#include "softrows.h"

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

/* alloc without the zeroing, for the decoder's large arrays whose every element is
 * written before any is read (zeroing them took a tenth of a block's decoding) */
static void *alloc_unset(size_t count, size_t size) { return malloc((count ? count : 1) * size); }

/* The pending stack as a ring of a power-of-two capacity: at most CCG_PENDING_LIMIT ids,
 * the bottom one dropped when a push exceeds it. */
#define RING 8192
typedef struct {
    int64_t id[RING];
    size_t start, depth;
} pending_stack;

static void stack_push(pending_stack *s, int64_t node) {
    s->id[(s->start + s->depth) & (RING - 1)] = node;
    if (++s->depth > CCG_PENDING_LIMIT) {
        s->start = (s->start + 1) & (RING - 1);
        s->depth--;
    }
}

static int64_t stack_top(const pending_stack *s) { return s->id[(s->start + s->depth - 1) & (RING - 1)]; }

static int64_t stack_at(const pending_stack *s, size_t k) { return s->id[(s->start + k) & (RING - 1)]; }

/* A call or artificial node's shape (kind, key values, child count), for grouping gaps. */
typedef struct {
    int64_t kind, children, key_length, node;
    const int64_t *key;
} shape;

static int same_shape(const shape *x, const shape *y) {
    if (x->kind != y->kind || x->key_length != y->key_length || x->children != y->children) return 0;
    for (int64_t k = 0; k < x->key_length; k++)
        if (x->key[k] != y->key[k]) return 0;
    return 1;
}

static uint64_t hash_shape(const shape *x) {
    uint64_t h = ((uint64_t)x->kind * 0x9E3779B97F4A7C15u) ^ ((uint64_t)x->children + 0x632BE59BD9B4E019u);
    for (int64_t k = 0; k < x->key_length; k++) h = (h ^ (uint64_t)x->key[k]) * 0xFF51AFD7ED558CCDu;
    return h ^ (h >> 29);
}

/* Where the gaps of each shape lie in the gaps stream (spec 5.4: shapes in order of first
 * appearance, within a shape position by position, within a position node by node): gap
 * p of shapes[i] is at offset[i] + p * stride[i]; unless ``rows`` is NULL, the stream's
 * row lengths too (per shape n+1 rows of its m nodes: *row_count of them, at most the
 * gap count). Returns 0 when out of memory. */
static int place_gaps(const shape *shapes, int64_t count, int64_t *offset, int64_t *stride, int64_t *rows,
                      int64_t *row_count) {
    size_t slots = 2;
    while (slots < 2 * (size_t)count) slots *= 2;
    int64_t *table = malloc(slots * sizeof *table);  /* a group's first shape, or -1 */
    int64_t *label = alloc((size_t)count, sizeof *label), *members = alloc((size_t)count, sizeof *members);
    int64_t *start = alloc((size_t)count, sizeof *start);
    int ok = table && label && members && start;
    if (ok) {
        memset(table, 0xFF, slots * sizeof *table);
        int64_t groups = 0;
        for (int64_t i = 0; i < count; i++) {
            size_t slot = hash_shape(&shapes[i]) & (slots - 1);
            while (table[slot] >= 0 && !same_shape(&shapes[table[slot]], &shapes[i])) slot = (slot + 1) & (slots - 1);
            if (table[slot] < 0) {
                table[slot] = i;
                label[i] = groups++;
            } else {
                label[i] = label[table[slot]];
            }
            offset[i] = members[label[i]]++;  /* the rank within the group, for now */
        }
        int64_t n = 0;
        for (int64_t i = 0, at = 0; i < count; i++)
            if (offset[i] == 0) {  /* the group's first shape: groups are met in their order */
                start[label[i]] = at;
                at += members[label[i]] * (shapes[i].children + 1);
                for (int64_t p = 0; rows && p <= shapes[i].children; p++) rows[n++] = members[label[i]];
            }
        if (rows) *row_count = n;
        for (int64_t i = 0; i < count; i++) {
            offset[i] += start[label[i]];
            stride[i] = members[label[i]];
        }
    }
    free(table);
    free(label);
    free(members);
    free(start);
    return ok;
}

static size_t hash_id(int64_t id) {
    uint64_t h = (uint64_t)id * 0x9E3779B97F4A7C15u;
    return (size_t)(h ^ (h >> 32));
}

/* The first index of the sorted ``values`` whose value is not below ``key`` (branch-free). */
static int64_t rank_of(const int64_t *values, int64_t count, int64_t key) {
    if (count == 0) return 0;
    const int64_t *base = values;
    for (int64_t n = count; n > 1; n -= n >> 1)
        base = base[n >> 1] < key ? base + (n >> 1) : base;
    return (base - values) + (*base < key);
}

static int compare_i64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* The move-to-front lists of predicted references (spec 5.7), one per context (parent
 * kind, region or -1, child count, child position), found through an open-addressing
 * table sized for ``references`` contexts at most. */
typedef struct {
    int64_t key[4], length;
    int64_t item[CCG_REFERENCE_LIST_LIMIT];
} reference_list;

typedef struct {
    reference_list *list;
    int64_t count, *slot;
    size_t slots;
} reference_lists;

static int reference_lists_init(reference_lists *t, int64_t references) {
    t->slots = 2;
    while (t->slots < 2 * (size_t)references + 2) t->slots *= 2;
    t->count = 0;
    t->list = malloc((size_t)(references ? references : 1) * sizeof *t->list);  /* each set up on first use */
    t->slot = malloc(t->slots * sizeof *t->slot);
    if (!t->list || !t->slot) return 0;
    memset(t->slot, 0xFF, t->slots * sizeof *t->slot);
    return 1;
}

static void reference_lists_free(reference_lists *t) {
    free(t->list);
    free(t->slot);
}

/* The list of a context, made empty on first use (at most ``references`` of them). */
static reference_list *reference_list_of(reference_lists *t, const int64_t key[4]) {
    uint64_t h = 0x9E3779B97F4A7C15u;
    for (int k = 0; k < 4; k++) h = (h ^ (uint64_t)key[k]) * 0xFF51AFD7ED558CCDu;
    size_t slot = (size_t)(h ^ (h >> 29)) & (t->slots - 1);
    int64_t at;
    while ((at = t->slot[slot]) >= 0 && memcmp(t->list[at].key, key, sizeof t->list[at].key))
        slot = (slot + 1) & (t->slots - 1);
    if (at >= 0) return &t->list[at];
    reference_list *list = &t->list[t->slot[slot] = t->count++];
    memcpy(list->key, key, sizeof list->key);
    list->length = 0;
    return list;
}

/* Moves ``child`` to the front of ``list``: from index ``at``, or, when it is new
 * (``at`` = -1), dropping the last entry of a full list. */
static void move_to_front(reference_list *list, int64_t at, int64_t child) {
    if (at < 0) {
        if (list->length == CCG_REFERENCE_LIST_LIMIT) list->length--;
        at = list->length++;
    }
    memmove(list->item + 1, list->item, (size_t)at * sizeof *list->item);
    list->item[0] = child;
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
    int64_t low = rank_of(earlier->id, earlier->count, id);
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

/* One block being encoded: its streams, the writer's pending stack as the block leaves
 * it, the shapes of its call and artificial nodes and the children it imports from
 * earlier blocks (repeats included until encode_imports sorts them out). */
typedef struct {
    const ccg_nodes *nodes;
    int64_t first, stop;
    report *r;
    column c[S_COUNT];
    pending_stack *stack;
    shape *shapes;
    int64_t inner;
    int64_t *imports;
    int64_t imported;           /* after encode_imports: the distinct ones, sorted */
    int64_t *rows, row_count;   /* after encode_gaps: the gaps stream's row lengths (5.4) */
} block_encoding;

static void encoding_free(block_encoding *e) {
    for (int s = 0; s < S_COUNT; s++) free(e->c[s].value);
    free(e->stack);
    free(e->shapes);
    free(e->imports);
    free(e->rows);
}

/* Room for the shapes and imports, a copy of the encoder's pending stack, and that stack
 * as the first stream. */
static int encoding_start(block_encoding *e, const ccg_encoder *encoder) {
    const ccg_nodes *nodes = e->nodes;
    int64_t inner = 0;
    size_t import_capacity = 0;
    for (int64_t i = e->first - nodes->first; i < e->stop - nodes->first; i++)
        if (nodes->kind[i] <= CCG_ARTIFICIAL) {
            inner++;
            import_capacity += (size_t)(nodes->child_start[i + 1] - nodes->child_start[i]);
        }
    e->stack = malloc(sizeof *e->stack);
    e->shapes = alloc((size_t)inner, sizeof *e->shapes);
    e->imports = alloc(import_capacity, sizeof *e->imports);
    if (!e->stack || !e->shapes || !e->imports) return CCG_ERR_MEMORY;
    *e->stack = encoder->stack;
    int64_t pending[CCG_PENDING_LIMIT];
    for (size_t k = 0; k < e->stack->depth; k++) pending[k] = stack_at(e->stack, k);
    return push_deltas(&e->c[S_PENDING], pending, e->stack->depth) ? CCG_OK : CCG_ERR_MEMORY;
}

/* A call or artificial node's children (spec 5.3): its child count, per child a fresh
 * flag (set for the children popped from the pending stack, last child first), the ids
 * of the others, and the children in earlier blocks among the imports; then its shape. */
static int encode_children(block_encoding *e, int64_t node) {
    const ccg_nodes *nodes = e->nodes;
    column *c = e->c;
    int64_t i = node - nodes->first, a = nodes->child_start[i], n = nodes->child_start[i + 1] - a;
    const int64_t *children = nodes->children + a;
    if (nodes->duration_start[i + 1] - nodes->duration_start[i] != 2 * n + 1)
        return fail(e->r, "node %lld has %lld children but %lld durations", (long long)node, (long long)n,
                    (long long)(nodes->duration_start[i + 1] - nodes->duration_start[i]));
    if (!column_push(&c[S_CHILD_COUNT], (uint64_t)n)) return CCG_ERR_MEMORY;
    size_t fresh_at = c[S_CHILD_FRESH].count;
    for (int64_t j = 0; j < n; j++)
        if (!column_push(&c[S_CHILD_FRESH], 0)) return CCG_ERR_MEMORY;
    for (int64_t j = n - 1; j >= 0; j--) {
        if (e->stack->depth && stack_top(e->stack) == children[j]) {
            e->stack->depth--;
            c[S_CHILD_FRESH].value[fresh_at + (size_t)j] = 1;
        }
    }
    for (int64_t j = 0; j < n; j++) {
        if (children[j] < 0 || children[j] >= node)
            return fail(e->r, "node %lld has child %lld", (long long)node, (long long)children[j]);
        if (!c[S_CHILD_FRESH].value[fresh_at + (size_t)j] && !column_push(&c[S_CHILD_ID], (uint64_t)children[j]))
            return CCG_ERR_MEMORY;
        if (children[j] < e->first) e->imports[e->imported++] = children[j];
    }
    int64_t k = nodes->key_start[i];
    e->shapes[e->inner++] = (shape){nodes->kind[i], n, nodes->key_start[i + 1] - k, node, nodes->key + k};
    return CCG_OK;
}

/* A node's kind, children, hard and soft properties; then it waits on the pending stack. */
static int encode_node(block_encoding *e, int64_t node) {
    const ccg_nodes *nodes = e->nodes;
    column *c = e->c;
    int64_t i = node - nodes->first;
    if (!column_push(&c[S_KIND], nodes->kind[i])) return CCG_ERR_MEMORY;
    if (nodes->kind[i] <= CCG_ARTIFICIAL) {
        int status = encode_children(e, node);
        if (status != CCG_OK) return status;
    }
    for (int64_t k = nodes->key_start[i]; k < nodes->key_start[i + 1]; k++)
        if (!column_push(&c[S_KEY], zigzag(nodes->key[k]))) return CCG_ERR_MEMORY;
    for (int64_t k = nodes->soft_start[i]; k < nodes->soft_start[i + 1]; k++)
        if (!column_push(&c[S_SOFT], zigzag(nodes->soft[k]))) return CCG_ERR_MEMORY;
    stack_push(e->stack, node);
    return CCG_OK;
}

/* The gaps stream (spec 5.4): the n+1 gaps of every call and artificial node, moved from
 * node order to the order of place_gaps. */
static int encode_gaps(block_encoding *e) {
    const ccg_nodes *nodes = e->nodes;
    column *gaps = &e->c[S_GAPS];
    int64_t *offset = alloc((size_t)e->inner, sizeof *offset), *stride = alloc((size_t)e->inner, sizeof *stride);
    int64_t gap_count = 0;
    for (int64_t k = 0; k < e->inner; k++) gap_count += e->shapes[k].children + 1;
    e->rows = alloc((size_t)gap_count, sizeof *e->rows);
    int status = offset && stride && e->rows && place_gaps(e->shapes, e->inner, offset, stride, e->rows, &e->row_count)
                     ? CCG_OK : CCG_ERR_MEMORY;
    for (int64_t k = 0; status == CCG_OK && k < e->inner; k++) {
        int64_t i = e->shapes[k].node - nodes->first;
        for (int64_t position = 0; status == CCG_OK && position <= e->shapes[k].children; position++) {
            int64_t gap = nodes->durations[nodes->duration_start[i] + 2 * position];
            if (gap < 0)
                status = fail(e->r, "node %lld has a negative gap", (long long)e->shapes[k].node);
            else if (!column_push(gaps, (uint64_t)gap))
                status = CCG_ERR_MEMORY;
        }
    }
    uint64_t *ordered = status == CCG_OK ? alloc(gaps->count, sizeof *ordered) : NULL;
    if (status == CCG_OK && !ordered) status = CCG_ERR_MEMORY;
    if (status == CCG_OK) {
        for (int64_t k = 0, at = 0; k < e->inner; k++)
            for (int64_t position = 0; position <= e->shapes[k].children; position++)
                ordered[offset[k] + position * stride[k]] = gaps->value[at++];
        free(gaps->value);
        gaps->value = ordered;
        gaps->capacity = gaps->count;
    }
    free(offset);
    free(stride);
    return status;
}

/* The import table: the distinct children in earlier blocks, ascending, with the total,
 * the event count and the metric sums of each (from ``nodes`` or ``earlier``). */
static int encode_imports(block_encoding *e, const ccg_imports *earlier) {
    column *c = e->c;
    int64_t *imports = e->imports;
    qsort(imports, (size_t)e->imported, sizeof *imports, compare_i64);
    int64_t unique = 0;
    for (int64_t k = 0; k < e->imported; k++)
        if (k == 0 || imports[k] != imports[unique - 1]) imports[unique++] = imports[k];
    e->imported = unique;
    if (!push_deltas(&c[S_IMPORT_ID], imports, (size_t)unique)) return CCG_ERR_MEMORY;
    for (int64_t k = 0; k < unique; k++) {
        import_values v;
        if (!find_import(e->nodes, earlier, imports[k], &v))
            return fail(e->r, "child %lld is in neither the table nor the earlier nodes given", (long long)imports[k]);
        if (v.events < 0 || v.total < 0)
            return fail(e->r, "node %lld has a negative event count or total", (long long)imports[k]);
        if (!column_push(&c[S_IMPORT_TOTAL], (uint64_t)v.total) || !column_push(&c[S_IMPORT_EVENTS], (uint64_t)v.events)
            || !column_push(&c[S_IMPORT_METRIC_COUNT], (uint64_t)v.pairs))
            return CCG_ERR_MEMORY;
        for (int64_t p = 0; p < v.pairs; p++) {
            if (v.metric_id[p] < 0)
                return fail(e->r, "node %lld has a negative metric id", (long long)imports[k]);
            if (!column_push(&c[S_IMPORT_METRIC_ID], (uint64_t)v.metric_id[p])
                || !column_push(&c[S_IMPORT_METRIC_SUM], zigzag(v.metric_sum[p])))
                return CCG_ERR_MEMORY;
        }
    }
    return CCG_OK;
}

/* A stream stored coded (spec 5.8, 5.9): its range coder's bytes; NULL bytes: plain. */
typedef struct {
    const uint8_t *bytes;
    size_t length;
} coded_stream;

/* The payload: the block start, then every stream (width u8, count u32, byte planes; a
 * coded one width 0, its byte count u32 and its bytes). ``coded`` (NULL: none) holds per
 * stream its coded bytes, if it is coded. */
static int write_payload(const block_encoding *e, const coded_stream *coded, uint8_t **out, size_t *out_length) {
    const column *c = e->c;
    size_t length = 12;
    int width[S_COUNT];
    for (int s = 0; s < S_COUNT; s++) {
        int is_coded = coded && coded[s].bytes;
        if (c[s].count >= LIMIT32) return fail(e->r, "a stream of %zu values does not fit a block", c[s].count);
        if (is_coded && coded[s].length >= LIMIT32)
            return fail(e->r, "%zu coded bytes do not fit a block", coded[s].length);
        width[s] = is_coded ? 0 : stream_width(&c[s]);
        length += 5 + (is_coded ? 4 + coded[s].length : (size_t)width[s] * c[s].count);
    }
    uint8_t *payload = malloc(length);
    if (!payload) return CCG_ERR_MEMORY;
    uint8_t *at = put_le(put_le(payload, (uint64_t)e->first, 8), (uint64_t)(e->stop - e->first), 4);
    for (int s = 0; s < S_COUNT; s++) {
        at = put_le(put_le(at, (uint64_t)width[s], 1), c[s].count, 4);
        if (width[s] == 0) {  /* spec 5.8: width 0, then the byte count and the bytes */
            at = put_le(at, coded[s].length, 4);
            memcpy(at, coded[s].bytes, coded[s].length);
            at += coded[s].length;
        }
        for (int b = 0; b < width[s]; b++)
            for (size_t i = 0; i < c[s].count; i++) *at++ = (uint8_t)(c[s].value[i] >> (8 * b));
    }
    *out = payload;
    *out_length = length;
    return CCG_OK;
}

/* The coded soft stream of the block (spec 5.9): its values row by row of their contexts
 * (softrows.h). *bytes stays NULL when the block has no soft value or one of 2**62 or more,
 * which the coder cannot hold. */
static int code_soft(const block_encoding *e, uint8_t **bytes, size_t *length) {
    const ccg_nodes *nodes = e->nodes;
    const column *soft = &e->c[S_SOFT];
    int64_t i = e->first - nodes->first, count = (int64_t)soft->count, row_count = 0;
    *bytes = NULL;
    *length = 0;
    if (!count) return CCG_OK;
    for (int64_t k = 0; k < count; k++)
        if (soft->value[k] >= LIMIT62) return CCG_OK;
    int64_t *order = malloc((size_t)count * sizeof *order), *rows = malloc((size_t)count * sizeof *rows);
    uint64_t *values = malloc((size_t)count * sizeof *values);
    int status = order && rows && values ? CCG_OK : CCG_ERR_MEMORY;
    if (status == CCG_OK)
        status = ccg_soft_rows(nodes->kind + i, nodes->key_start + i, nodes->key, nodes->soft_start + i,
                               e->stop - e->first, order, rows, &row_count);
    if (status == CCG_OK) {
        for (int64_t k = 0; k < count; k++) values[k] = soft->value[order[k]];
        status = ccg_code_gaps(values, count, rows, row_count, bytes, length);
    }
    free(order);
    free(rows);
    free(values);
    return status;
}

/* The child_id stream of a PREDICTED_NODES block (spec 5.7): per child that is not fresh,
 * its index in its context's move-to-front list, else the list's length plus its import
 * row, else plus the import count plus its distance below the parent minus one. */
static int encode_predicted(const block_encoding *e, int64_t references, column *codes) {
    const ccg_nodes *nodes = e->nodes;
    const uint64_t *fresh = e->c[S_CHILD_FRESH].value;
    reference_lists t;
    int ok = reference_lists_init(&t, references);
    size_t edge = 0;
    for (int64_t node = e->first; ok && node < e->stop; node++) {
        int64_t i = node - nodes->first;
        if (nodes->kind[i] > CCG_ARTIFICIAL) continue;
        int64_t a = nodes->child_start[i], n = nodes->child_start[i + 1] - a;
        int64_t region = nodes->kind[i] == CCG_CALL ? nodes->key[nodes->key_start[i]] : -1;
        for (int64_t j = 0; ok && j < n; j++) {
            if (fresh[edge + (size_t)j]) continue;
            int64_t child = nodes->children[a + j], key[4] = {nodes->kind[i], region, n, j}, at = -1;
            reference_list *list = reference_list_of(&t, key);
            for (int64_t k = 0; k < list->length && at < 0; k++)
                if (list->item[k] == child) at = k;
            uint64_t code = at >= 0 ? (uint64_t)at
                : (uint64_t)list->length + (uint64_t)(child < e->first ? rank_of(e->imports, e->imported, child)
                                                                       : e->imported + node - 1 - child);
            move_to_front(list, at, child);
            ok = column_push(codes, code);
        }
        edge += (size_t)n;
    }
    reference_lists_free(&t);
    return ok ? CCG_OK : CCG_ERR_MEMORY;
}

int ccg_encode_nodes(ccg_encoder *encoder, const ccg_nodes *nodes, const ccg_imports *earlier,
                     int64_t first, int64_t stop, uint8_t **out, size_t *out_length,
                     uint8_t **predicted, size_t *predicted_length, uint8_t **coded, size_t *coded_length,
                     uint8_t **coded_soft, size_t *coded_soft_length, char *message, size_t message_size) {
    report r = {message, message_size};
    uint8_t **outs[] = {out, predicted, coded, coded_soft};
    size_t *lengths[] = {out_length, predicted_length, coded_length, coded_soft_length};
    int wanted = !predicted ? 1 : !coded ? 2 : !coded_soft ? 3 : 4;
    for (int k = 0; k < wanted; k++) {
        *outs[k] = NULL;
        *lengths[k] = 0;
    }
    if (first < nodes->first || stop < first || stop - nodes->first > nodes->count || stop - first >= (int64_t)LIMIT32)
        return fail(&r, "nodes %lld..%lld are not all in the table of %lld nodes from %lld", (long long)first,
                    (long long)stop - 1, (long long)nodes->count, (long long)nodes->first);
    block_encoding e = {.nodes = nodes, .first = first, .stop = stop, .r = &r};
    coded_stream streams[S_COUNT] = {{0}};
    uint8_t *gaps = NULL, *soft = NULL;
    column ids = {0};
    int status = encoding_start(&e, encoder);
    for (int64_t node = first; status == CCG_OK && node < stop; node++) status = encode_node(&e, node);
    if (status == CCG_OK) status = encode_gaps(&e);
    if (status == CCG_OK) status = encode_imports(&e, earlier);
    if (status == CCG_OK) status = write_payload(&e, NULL, out, out_length);
    if (status == CCG_OK && wanted >= 2) {
        ids = e.c[S_CHILD_ID];
        e.c[S_CHILD_ID] = (column){0};
        status = encode_predicted(&e, (int64_t)ids.count, &e.c[S_CHILD_ID]);
        if (status == CCG_OK) status = write_payload(&e, NULL, predicted, predicted_length);
    }
    if (status == CCG_OK && wanted >= 3) {
        const column *g = &e.c[S_GAPS];
        status = ccg_code_gaps(g->value, (int64_t)g->count, e.rows, e.row_count, &gaps, &streams[S_GAPS].length);
        streams[S_GAPS].bytes = gaps;
        if (status == CCG_OK) status = write_payload(&e, streams, coded, coded_length);
    }
    if (status == CCG_OK && wanted >= 4) {
        status = code_soft(&e, &soft, &streams[S_SOFT].length);
        streams[S_SOFT].bytes = soft;
        if (status == CCG_OK && soft) status = write_payload(&e, streams, coded_soft, coded_soft_length);
    }
    free(gaps);
    free(soft);
    if (wanted >= 2) {
        free(e.c[S_CHILD_ID].value);
        e.c[S_CHILD_ID] = ids;
    }
    if (status != CCG_OK)
        for (int k = 0; k < wanted; k++) {
            free(*outs[k]);
            *outs[k] = NULL;
            *lengths[k] = 0;
        }
    if (status == CCG_OK) encoder->stack = *e.stack;  /* the block is made: its stack carries on */
    if (status == CCG_ERR_MEMORY) out_of_memory(&r);
    encoding_free(&e);
    return status;
}

/* ------------------------------------------------------------------ decoding */

/* A stream in place: ``count`` values of ``width`` bytes, byte plane by byte plane; or,
 * width CODED (gaps and soft values, spec 5.8, 5.9), ``coded`` range-coded bytes at
 * ``planes``. */
typedef struct {
    const uint8_t *planes;
    int64_t count;
    int width;
    size_t coded;
} stream;

#define CODED 0

static uint64_t read_le(const uint8_t *at, int bytes) {
    uint64_t value = 0;
    for (int b = 0; b < bytes; b++) value |= (uint64_t)at[b] << (8 * b);
    return value;
}

/* Value i of a stream (i < count). */
static inline uint64_t get(const stream *s, int64_t i) {
    const uint8_t *p = s->planes + i;
    size_t n = (size_t)s->count;
    switch (s->width) {
    case 1: return p[0];
    case 2: return p[0] | (uint64_t)p[n] << 8;
    case 4: return p[0] | (uint64_t)p[n] << 8 | (uint64_t)p[2 * n] << 16 | (uint64_t)p[3 * n] << 24;
    default: {
        uint64_t value = 0;
        for (int b = 0; b < 8; b++) value |= (uint64_t)p[b * n] << (8 * b);
        return value;
    }
    }
}

/* The 14 streams of a payload after its 12-byte start, checked against its length; the
 * streams in ``coded`` (bit k for stream k) are coded, and only they: the gaps of a
 * CODED_NODES block (spec 5.8), the gaps and the soft values of a CODED_SOFT_NODES block
 * (spec 5.9). */
static int read_streams(const uint8_t *raw, size_t length, stream *s, unsigned coded, report *r) {
    static const char *const names[S_COUNT] = {[S_GAPS] = "gaps", [S_SOFT] = "soft"};
    size_t position = 12;
    for (int k = 0; k < S_COUNT; k++) {
        if (length - position < 5) return fail(r, "the block ends inside a stream header");
        int width = raw[position];
        uint64_t count = read_le(raw + position + 1, 4);
        position += 5;
        if (coded >> k & 1) {
            if (width != CODED) return fail(r, "the %s of a coded block are not coded (width %d)", names[k], width);
            if (length - position < 4) return fail(r, "the block ends inside a stream header");
            uint64_t bytes = read_le(raw + position, 4);
            position += 4;
            if (bytes > length - position) return fail(r, "a coded stream of %llu bytes runs past the block end",
                                                       (unsigned long long)bytes);
            s[k] = (stream){raw + position, (int64_t)count, CODED, (size_t)bytes};
            position += (size_t)bytes;
            continue;
        }
        if (width != 1 && width != 2 && width != 4 && width != 8)
            return fail(r, "stream width %d is not 1, 2, 4 or 8", width);
        if ((uint64_t)width * count > length - position)
            return fail(r, "a stream of %llu values x %d bytes runs past the block end", (unsigned long long)count, width);
        s[k] = (stream){raw + position, (int64_t)count, width, 0};
        position += (size_t)width * (size_t)count;
    }
    if (position != length) return fail(r, "%zu bytes after the last stream", length - position);
    return CCG_OK;
}

/* The soft values of a coded soft stream (spec 5.9), decoded row by row of their contexts
 * and put back in stream order. */
static int decode_soft(ccg_nodes *n, const stream *soft, report *r) {
    int64_t count = soft->count, row_count = 0;
    int64_t *order = alloc_unset((size_t)count, sizeof *order), *rows = alloc_unset((size_t)count, sizeof *rows);
    uint64_t *values = alloc_unset((size_t)count, sizeof *values);
    int status = order && rows && values ? CCG_OK : out_of_memory(r);
    if (status == CCG_OK
        && ccg_soft_rows(n->kind, n->key_start, n->key, n->soft_start, n->count, order, rows, &row_count) != CCG_OK)
        status = out_of_memory(r);
    if (status == CCG_OK && ccg_decode_gaps(soft->planes, soft->coded, rows, row_count, values, count) != CCG_OK)
        status = fail(r, "the coded soft values do not decode to their count");
    for (int64_t k = 0; status == CCG_OK && k < count; k++) n->soft[order[k]] = unzigzag(values[k]);
    free(order);
    free(rows);
    free(values);
    return status;
}

static int all_below(const stream *s, uint64_t bound) {
    for (int64_t i = 0; i < s->count; i++)
        if (get(s, i) >= bound) return 0;
    return 1;
}

/* A delta-coded list of increasing ids below ``limit`` (spec 5.2). */
static int undelta(const stream *s, int64_t limit, int64_t *ids, const char *what, report *r) {
    uint64_t running = 0;
    for (int64_t i = 0; i < s->count; i++) {
        if (get(s, i) >= LIMIT62 || (i > 0 && get(s, i) == 0))
            return fail(r, "%s ids are not increasing", what);
        running += get(s, i);  /* below 2**62 + 2**62: no overflow */
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


/* Sorts the few metric ranks a node touches (insertion sort; qsort for many). */
static void sort_ranks(int64_t *ranks, int64_t count) {
    if (count > 16) {
        qsort(ranks, (size_t)count, sizeof *ranks, compare_i64);
        return;
    }
    for (int64_t i = 1; i < count; i++) {
        int64_t value = ranks[i], j = i;
        for (; j > 0 && ranks[j - 1] > value; j--) ranks[j] = ranks[j - 1];
        ranks[j] = value;
    }
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
    uint64_t first;
    int64_t count, inner, edges, pairs, distinct;
    int64_t *pending;
    int64_t *import_ids;        /* predicted blocks: the import ids, read before the children */
    int64_t *row;               /* per child reference: its import table row, or -1 inside the block */
    int64_t *id_slots;          /* import rows by hashed id */
    shape *shapes;              /* the call and artificial nodes, for the gaps */
    int64_t *offset, *stride;
    int64_t *metrics;           /* the block's distinct metrics, sorted */
    int64_t *pair_rank, *import_rank, *stamp, *touched;
    uint64_t *acc;
} scratch;

static void scratch_free(scratch *w) {
    void *arrays[] = {w->pending, w->import_ids, w->row, w->id_slots, w->shapes, w->offset, w->stride, w->metrics, w->pair_rank, w->import_rank,
                      w->stamp, w->touched, w->acc};
    for (size_t k = 0; k < sizeof arrays / sizeof *arrays; k++) free(arrays[k]);
}

#define NEED(pointer) do { if (!(pointer)) return out_of_memory(r); } while (0)

/* The block start, the streams, and every per-node count checked against them (5.2). */
static int read_nodes(const uint8_t *raw, size_t length, unsigned coded, ccg_nodes *n, scratch *w, report *r) {
    if (length < 12) return fail(r, "shorter than its header");
    uint64_t first = w->first = read_le(raw, 8);
    int64_t count = w->count = (int64_t)read_le(raw + 8, 4);
    stream *s = w->s;
    int status = read_streams(raw, length, s, coded, r);
    if (status != CCG_OK) return status;
    if (count == 0 || count != s[S_KIND].count)
        return fail(r, "%lld kinds for %lld nodes", (long long)s[S_KIND].count, (long long)count);
    if (first >= LIMIT62 || first + (uint64_t)count >= LIMIT62) return fail(r, "node ids out of range");
    if (!all_below(&s[S_KIND], CCG_KIND_COUNT)) return fail(r, "unknown node kind");
    n->first = (int64_t)first;
    n->count = count;
    NEED(n->kind = alloc((size_t)count, 1));
    int64_t inner = 0, keys = 0, softs = 0;
    for (int64_t i = 0; i < count; i++) {
        uint8_t kind = n->kind[i] = (uint8_t)get(&s[S_KIND], i);
        inner += kind <= CCG_ARTIFICIAL;
        keys += ccg_hard_count[kind];
        softs += ccg_soft_count[kind];
    }
    w->inner = inner;
    if (s[S_CHILD_COUNT].count != inner) return fail(r, "child counts do not match the node kinds");
    if (!all_below(&s[S_CHILD_COUNT], LIMIT32)) return fail(r, "implausible child count");
    NEED(n->child_start = alloc((size_t)count + 1, sizeof(int64_t)));
    NEED(n->duration_start = alloc((size_t)count + 1, sizeof(int64_t)));
    NEED(n->key_start = alloc((size_t)count + 1, sizeof(int64_t)));
    NEED(n->soft_start = alloc((size_t)count + 1, sizeof(int64_t)));
    int64_t edges = 0, gaps = 0;
    for (int64_t i = 0, k = 0; i < count; i++) {
        int64_t children = n->kind[i] <= CCG_ARTIFICIAL ? (int64_t)get(&s[S_CHILD_COUNT], k++) : 0;
        edges += children;  /* below 2**32 + the fresh flag count: no overflow */
        if (edges > s[S_CHILD_FRESH].count) return fail(r, "fresh flags do not match the child counts");
        gaps += n->kind[i] <= CCG_ARTIFICIAL ? children + 1 : 0;
        n->child_start[i + 1] = edges;
        n->duration_start[i + 1] = n->duration_start[i] + (n->kind[i] <= CCG_ARTIFICIAL ? 2 * children + 1 : 0);
        n->key_start[i + 1] = n->key_start[i] + ccg_hard_count[n->kind[i]];
        n->soft_start[i + 1] = n->soft_start[i] + ccg_soft_count[n->kind[i]];
    }
    w->edges = edges;
    if (s[S_CHILD_FRESH].count != edges) return fail(r, "fresh flags do not match the child counts");
    if (!all_below(&s[S_CHILD_FRESH], 2)) return fail(r, "a fresh flag is not 0 or 1");
    int64_t fresh = 0;
    for (int64_t e = 0; e < edges; e++) fresh += (int64_t)get(&s[S_CHILD_FRESH], e);
    if (s[S_CHILD_ID].count != edges - fresh) return fail(r, "child ids do not match the fresh flags");
    if (!all_below(&s[S_CHILD_ID], LIMIT62)) return fail(r, "implausible child id");
    if (s[S_GAPS].count != gaps) return fail(r, "gap count does not match the child counts");
    if (s[S_GAPS].width != CODED && !all_below(&s[S_GAPS], LIMIT62)) return fail(r, "implausible gap");
    if (s[S_KEY].count != keys || s[S_SOFT].count != softs) return fail(r, "property counts do not match the node kinds");
    NEED(n->key = alloc_unset((size_t)keys, sizeof(int64_t)));
    NEED(n->soft = alloc_unset((size_t)softs, sizeof(int64_t)));
    for (int64_t k = 0; k < keys; k++) n->key[k] = unzigzag(get(&s[S_KEY], k));
    if (s[S_SOFT].width == CODED) {
        status = decode_soft(n, &s[S_SOFT], r);
        if (status != CCG_OK) return status;
    } else {
        for (int64_t k = 0; k < softs; k++) n->soft[k] = unzigzag(get(&s[S_SOFT], k));
    }
    if (s[S_PENDING].count > CCG_PENDING_LIMIT)
        return fail(r, "pending stack is too long or names a node outside the earlier blocks");
    NEED(w->pending = alloc((size_t)s[S_PENDING].count, sizeof(int64_t)));
    return undelta(&s[S_PENDING], (int64_t)first, w->pending, "pending", r);
}

/* The child of reference code ``code`` of node ``node`` in a PREDICTED_NODES block
 * (spec 5.7), moved to the front of its context's list; -1 when the code points nowhere. */
static int64_t predicted_child(reference_lists *t, const int64_t key[4], uint64_t code, int64_t node,
                               const scratch *w) {
    reference_list *list = reference_list_of(t, key);
    int64_t child, at = -1;
    uint64_t imported = (uint64_t)w->s[S_IMPORT_ID].count;
    if (code < (uint64_t)list->length) {
        child = list->item[at = (int64_t)code];
    } else {
        code -= (uint64_t)list->length;
        if (code < imported) {
            child = w->import_ids[code];
        } else {
            code -= imported;
            if (code >= (uint64_t)(node - (int64_t)w->first)) return -1;
            child = node - 1 - (int64_t)code;
        }
    }
    move_to_front(list, at, child);
    return child;
}

/* Child ids by replaying the pending stack node by node (spec 5.3); in a predicted block
 * the others from their reference codes (spec 5.7). */
static int replay_children(ccg_nodes *n, scratch *w, int predicted, report *r) {
    const stream *fresh = &w->s[S_CHILD_FRESH], *explicit = &w->s[S_CHILD_ID];
    NEED(n->children = alloc_unset((size_t)w->edges, sizeof(int64_t)));
    reference_lists t = {0};
    if (predicted) {
        NEED(w->import_ids = alloc((size_t)w->s[S_IMPORT_ID].count, sizeof(int64_t)));
        int status = undelta(&w->s[S_IMPORT_ID], (int64_t)w->first, w->import_ids, "import", r);
        if (status != CCG_OK) return status;
        if (!reference_lists_init(&t, explicit->count)) {
            reference_lists_free(&t);
            return out_of_memory(r);
        }
    }
    int status = CCG_OK;
    pending_stack stack;
    stack.start = stack.depth = 0;
    for (int64_t k = 0; k < w->s[S_PENDING].count; k++) stack_push(&stack, w->pending[k]);
    int64_t next = 0;
    for (int64_t i = 0; status == CCG_OK && i < w->count; i++) {
        int64_t a = n->child_start[i], b = n->child_start[i + 1], node = (int64_t)w->first + i;
        for (int64_t e = b - 1; status == CCG_OK && e >= a; e--) {
            if (!get(fresh, e)) continue;
            if (!stack.depth) status = fail(r, "a node pops an empty pending stack");
            else n->children[e] = stack_top(&stack), stack.depth--;
        }
        int64_t region = n->kind[i] == CCG_CALL ? n->key[n->key_start[i]] : -1;
        for (int64_t e = a; status == CCG_OK && e < b; e++) {
            if (get(fresh, e)) continue;
            if (predicted) {
                int64_t key[4] = {n->kind[i], region, b - a, e - a};
                n->children[e] = predicted_child(&t, key, get(explicit, next++), node, w);
                if (n->children[e] < 0) status = fail(r, "a child reference code points outside the block");
            } else {
                n->children[e] = (int64_t)get(explicit, next++);
            }
            if (status == CCG_OK && n->children[e] >= node)
                status = fail(r, "a child reference does not point to an earlier node");
        }
        stack_push(&stack, node);
    }
    reference_lists_free(&t);
    return status;
}

/* The import table (streams 9-14), and the row of every child in an earlier block. */
static int read_imports(const ccg_nodes *n, ccg_imports *m, scratch *w, report *r) {
    const stream *s = w->s;
    int64_t imported = s[S_IMPORT_ID].count;
    NEED(m->id = alloc((size_t)imported, sizeof(int64_t)));
    int status = undelta(&s[S_IMPORT_ID], (int64_t)w->first, m->id, "import", r);
    if (status != CCG_OK) return status;
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
        m->events[k] = (int64_t)get(&s[S_IMPORT_EVENTS], k);
        m->total[k] = (int64_t)get(&s[S_IMPORT_TOTAL], k);
        m->metric_start[k + 1] = m->metric_start[k] + (int64_t)get(&s[S_IMPORT_METRIC_COUNT], k);
        if (m->metric_start[k + 1] > s[S_IMPORT_METRIC_ID].count)  /* also keeps the sum from overflowing */
            return fail(r, "import metric sums do not match their counts");
    }
    int64_t pairs = w->pairs = m->metric_start[imported];
    if (s[S_IMPORT_METRIC_ID].count != pairs || s[S_IMPORT_METRIC_SUM].count != pairs)
        return fail(r, "import metric sums do not match their counts");
    NEED(m->metric_id = alloc((size_t)pairs, sizeof(int64_t)));
    NEED(m->metric_sum = alloc((size_t)pairs, sizeof(int64_t)));
    for (int64_t k = 0; k < imported; k++)
        for (int64_t p = m->metric_start[k]; p < m->metric_start[k + 1]; p++) {
            uint64_t metric = get(&s[S_IMPORT_METRIC_ID], p);
            if (metric >= (uint64_t)1 << 63 || (p > m->metric_start[k] && metric <= (uint64_t)m->metric_id[p - 1]))
                return fail(r, "the metric ids of an imported node are not increasing");
            m->metric_id[p] = (int64_t)metric;
            m->metric_sum[p] = unzigzag(get(&s[S_IMPORT_METRIC_SUM], p));
        }
    /* an open-addressing hash of the import ids: their rows, -1 in empty slots */
    size_t slots = 2;
    while (slots < 2 * (size_t)imported) slots *= 2;
    NEED(w->row = alloc_unset((size_t)w->edges, sizeof(int64_t)));
    NEED(w->id_slots = malloc(slots * sizeof(int64_t)));
    memset(w->id_slots, 0xFF, slots * sizeof(int64_t));
    for (int64_t k = 0; k < imported; k++) {
        size_t slot = hash_id(m->id[k]) & (slots - 1);
        while (w->id_slots[slot] >= 0) slot = (slot + 1) & (slots - 1);
        w->id_slots[slot] = k;
    }
    for (int64_t e = 0; e < w->edges; e++) {
        int64_t child = n->children[e], k = -1;
        if (child < (int64_t)w->first) {
            size_t slot = hash_id(child) & (slots - 1);
            while ((k = w->id_slots[slot]) >= 0 && m->id[k] != child) slot = (slot + 1) & (slots - 1);
            if (k < 0) return fail(r, "a child in an earlier block is missing from the import table");
        }
        w->row[e] = k;
    }
    return CCG_OK;
}

/* place_durations of a coded gaps stream (spec 5.8): decoded row by row of the shape
 * matrices. A shape's first node starts its matrix, at the offset where the previous
 * matrix ended; its n+1 rows hold ``stride`` (its node count) gaps each. */
static int place_coded_durations(ccg_nodes *n, scratch *w, report *r) {
    const stream *gaps = &w->s[S_GAPS];
    int64_t *rows = alloc_unset((size_t)gaps->count, sizeof *rows);
    uint64_t *values = alloc_unset((size_t)gaps->count, sizeof *values);
    int64_t row_count = 0, matrix_end = 0;
    int status = rows && values ? CCG_OK : out_of_memory(r);
    for (int64_t k = 0; status == CCG_OK && k < w->inner; k++)
        if (w->offset[k] == matrix_end)
            for (int64_t position = 0; position <= w->shapes[k].children; position++) {
                rows[row_count++] = w->stride[k];
                matrix_end += w->stride[k];
            }
    if (status == CCG_OK && ccg_decode_gaps(gaps->planes, gaps->coded, rows, row_count, values, gaps->count) != CCG_OK)
        status = fail(r, "the coded gaps do not decode to the gap count");
    for (int64_t k = 0; status == CCG_OK && k < w->inner; k++) {
        int64_t d = n->duration_start[w->shapes[k].node];
        for (int64_t position = 0; position <= w->shapes[k].children; position++)
            n->durations[d + 2 * position] = (int64_t)values[w->offset[k] + position * w->stride[k]];
    }
    free(rows);
    free(values);
    return status;
}

/* The gaps back in node order, as durations d_0, d_2, ..., d_2n (spec 5.4). */
static int place_durations(ccg_nodes *n, scratch *w, report *r) {
    NEED(w->shapes = alloc_unset((size_t)w->inner, sizeof *w->shapes));
    for (int64_t i = 0, k = 0; i < w->count; i++)
        if (n->kind[i] <= CCG_ARTIFICIAL)
            w->shapes[k++] = (shape){n->kind[i], n->child_start[i + 1] - n->child_start[i],
                                     n->key_start[i + 1] - n->key_start[i], i, n->key + n->key_start[i]};
    NEED(n->durations = alloc_unset((size_t)n->duration_start[w->count], sizeof(int64_t)));
    NEED(w->offset = alloc_unset((size_t)w->inner, sizeof(int64_t)));
    NEED(w->stride = alloc_unset((size_t)w->inner, sizeof(int64_t)));
    NEED(place_gaps(w->shapes, w->inner, w->offset, w->stride, NULL, NULL));
    const stream *gaps = &w->s[S_GAPS];
    if (gaps->width == CODED) return place_coded_durations(n, w, r);
    for (int64_t k = 0; k < w->inner; k++) {
        int64_t d = n->duration_start[w->shapes[k].node];
        for (int64_t position = 0; position <= w->shapes[k].children; position++)
            n->durations[d + 2 * position] = (int64_t)get(gaps, w->offset[k] + position * w->stride[k]);
    }
    return CCG_OK;
}

/* The block's metrics, sampled by its METRIC nodes or listed by its imports, within the
 * reader's bound on their memory. */
static int collect_metrics(const ccg_nodes *n, const ccg_imports *m, scratch *w, report *r) {
    int64_t samples = 0, listed = 0, distinct = 0;
    for (int64_t i = 0; i < w->count; i++) samples += n->kind[i] == CCG_METRIC;
    NEED(w->metrics = alloc((size_t)(samples + w->pairs), sizeof(int64_t)));
    for (int64_t i = 0; i < w->count; i++)
        if (n->kind[i] == CCG_METRIC) w->metrics[listed++] = n->key[n->key_start[i]];
    for (int64_t p = 0; p < w->pairs; p++) w->metrics[listed++] = m->metric_id[p];
    qsort(w->metrics, (size_t)listed, sizeof(int64_t), compare_i64);
    for (int64_t k = 0; k < listed; k++)
        if (k == 0 || w->metrics[k] != w->metrics[distinct - 1]) w->metrics[distinct++] = w->metrics[k];
    w->distinct = distinct;
    if ((i128)distinct * (w->count + w->edges) > CCG_METRIC_CELL_LIMIT)
        return fail(r, "%lld metrics over %lld nodes and child references exceed the reader's limit",
                    (long long)distinct, (long long)(w->count + w->edges));
    return CCG_OK;
}

/* Totals, event counts and metric sums in id order (children precede their parents), and
 * the children's totals into the durations d_1, d_3, ... (spec 5.4). */
static int sum_up(ccg_nodes *n, const ccg_imports *m, scratch *w, report *r) {
    int64_t count = w->count, distinct = w->distinct;
    NEED(n->events = alloc_unset((size_t)count, sizeof(int64_t)));
    NEED(n->total = alloc_unset((size_t)count, sizeof(int64_t)));
    NEED(n->metric_start = alloc((size_t)count + 1, sizeof(int64_t)));
    int64_t capacity = distinct ? count : 0;  /* pairs, grown as needed up to distinct * count */
    NEED(n->metric_id = alloc((size_t)capacity, sizeof(int64_t)));
    NEED(n->metric_sum = alloc((size_t)capacity, sizeof(int64_t)));
    NEED(w->pair_rank = alloc((size_t)capacity, sizeof(int64_t)));
    NEED(w->import_rank = alloc((size_t)w->pairs, sizeof(int64_t)));
    NEED(w->stamp = alloc((size_t)distinct, sizeof(int64_t)));
    NEED(w->touched = alloc((size_t)distinct, sizeof(int64_t)));
    NEED(w->acc = alloc((size_t)distinct, sizeof(uint64_t)));
    for (int64_t p = 0; p < w->pairs; p++) w->import_rank[p] = rank_of(w->metrics, distinct, m->metric_id[p]);
    for (int64_t k = 0; k < distinct; k++) w->stamp[k] = -1;
    for (int64_t i = 0; i < count; i++) {
        uint8_t kind = n->kind[i];
        i128 total = 0, events = kind == CCG_CALL ? 2 : kind == CCG_ARTIFICIAL ? 0 : 1;
        int64_t touched = 0;
        /* metric sums: modulo 2**64, accumulated per metric rank touched by this node */
#define TOUCH(rank, value) do { int64_t rank_ = (rank); \
            if (w->stamp[rank_] != i) { w->stamp[rank_] = i; w->acc[rank_] = 0; w->touched[touched++] = rank_; } \
            w->acc[rank_] += (uint64_t)(value); } while (0)
        if (kind == CCG_METRIC)
            TOUCH(rank_of(w->metrics, distinct, n->key[n->key_start[i]]), n->soft[n->soft_start[i]]);
        int64_t d = n->duration_start[i];
        for (int64_t e = n->child_start[i]; e < n->child_start[i + 1]; e++, d += 2) {
            int64_t child_total;
            total += n->durations[d];
            if (w->row[e] < 0) {
                int64_t c = n->children[e] - (int64_t)w->first;
                child_total = n->total[c];
                events += n->events[c];
                for (int64_t p = n->metric_start[c]; p < n->metric_start[c + 1]; p++)
                    TOUCH(w->pair_rank[p], n->metric_sum[p]);
            } else {
                int64_t k = w->row[e];
                child_total = m->total[k];
                events += m->events[k];
                for (int64_t p = m->metric_start[k]; p < m->metric_start[k + 1]; p++)
                    TOUCH(w->import_rank[p], m->metric_sum[p]);
            }
            total += child_total;
            n->durations[d + 1] = child_total;
        }
#undef TOUCH
        if (kind <= CCG_ARTIFICIAL) total += n->durations[d];
        if (total > INT64_MAX || events > INT64_MAX) return fail(r, "sub-tree duration or event count overflows");
        n->total[i] = (int64_t)total;
        n->events[i] = (int64_t)events;
        sort_ranks(w->touched, touched);
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

int ccg_decode_nodes(const uint8_t *raw, size_t length, int kind, ccg_block **out, char *message,
                     size_t message_size) {
    report r = {message, message_size};
    int predicted = kind != CCG_BLOCK_NODES;
    unsigned coded = kind == CCG_BLOCK_CODED ? 1u << S_GAPS : kind == CCG_BLOCK_CODED_SOFT ? 1u << S_GAPS | 1u << S_SOFT : 0;
    *out = NULL;
    ccg_block *block = calloc(1, sizeof *block);
    if (!block) return out_of_memory(&r);
    scratch w;
    memset(&w, 0, sizeof w);
    int status = read_nodes(raw, length, coded, &block->nodes, &w, &r);
    if (status == CCG_OK) status = replay_children(&block->nodes, &w, predicted, &r);
    if (status == CCG_OK) status = read_imports(&block->nodes, &block->imports, &w, &r);
    if (status == CCG_OK) status = place_durations(&block->nodes, &w, &r);
    if (status == CCG_OK) status = collect_metrics(&block->nodes, &block->imports, &w, &r);
    if (status == CCG_OK) status = sum_up(&block->nodes, &block->imports, &w, &r);
    scratch_free(&w);
    if (status != CCG_OK) {
        ccg_block_free(block);
        return status;
    }
    *out = block;
    return CCG_OK;
}
