/* The rows of a coded `soft` stream (softrows.h, spec/format.md 5.9). */
#include "softrows.h"

#include <stdlib.h>

/* A soft value's context: its node and column (the node's kind and first key value, its
 * `ref`, are read through it). */
typedef struct {
    int64_t node, column;
} context;

static int same_context(const uint8_t *kind, const int64_t *key_start, const int64_t *key, context a, context b) {
    return kind[a.node] == kind[b.node] && a.column == b.column && key[key_start[a.node]] == key[key_start[b.node]];
}

static uint64_t context_hash(const uint8_t *kind, const int64_t *key_start, const int64_t *key, context c) {
    uint64_t h = ((uint64_t)kind[c.node] * 0x100000001B3u ^ (uint64_t)c.column ^ (uint64_t)key[key_start[c.node]])
                 * 0x9E3779B97F4A7C15u;
    return h ^ (h >> 29);
}

int ccg_soft_rows(const uint8_t *kind, const int64_t *key_start, const int64_t *key, const int64_t *soft_start,
                  int64_t count, int64_t *order, int64_t *rows, int64_t *row_count) {
    int64_t values = soft_start[count] - soft_start[0];
    size_t slots = 2;
    while (slots < 2 * (size_t)values) slots *= 2;
    int64_t *slot_row = malloc(slots * sizeof *slot_row);    /* a context's row, -1 when empty */
    context *first = malloc((size_t)(values ? values : 1) * sizeof *first);  /* per row: its first value */
    int64_t *row_of = malloc((size_t)(values ? values : 1) * sizeof *row_of);
    int64_t *start = malloc((size_t)(values ? values : 1) * sizeof *start);  /* per row: where it starts */
    int ok = slot_row && first && row_of && start;
    int64_t made = 0;
    if (ok) {
        for (size_t s = 0; s < slots; s++) slot_row[s] = -1;
        for (int64_t i = 0; i < count; i++)
            for (int64_t j = soft_start[i]; j < soft_start[i + 1]; j++) {
                context c = {i, j - soft_start[i]};
                size_t s = context_hash(kind, key_start, key, c) & (slots - 1);
                while (slot_row[s] >= 0 && !same_context(kind, key_start, key, first[slot_row[s]], c))
                    s = (s + 1) & (slots - 1);
                if (slot_row[s] < 0) {
                    first[made] = c;
                    rows[made] = 0;
                    slot_row[s] = made++;
                }
                row_of[j - soft_start[0]] = slot_row[s];
                rows[slot_row[s]]++;
            }
        /* a counting sort by row, stable: each row's values in stream order */
        for (int64_t r = 0, at = 0; r < made; r++) {
            start[r] = at;
            at += rows[r];
        }
        for (int64_t v = 0; v < values; v++) order[start[row_of[v]]++] = v;
        *row_count = made;
    }
    free(slot_row);
    free(first);
    free(row_of);
    free(start);
    return ok ? CCG_OK : CCG_ERR_MEMORY;
}
