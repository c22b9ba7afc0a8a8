/* Hash tables for the native builder (builder_hash.h). */
#include <stdlib.h>
#include <string.h>

#include "builder_hash.h"


int64_t *ccg_map_get(const ccg_i64map *m, int64_t key)
{
    if (!m->cap)
        return NULL;
    uint64_t mask = (uint64_t)m->cap - 1;
    for (uint64_t i = ccg_finish_hash((uint64_t)key) & mask; m->used[i]; i = (i + 1) & mask)
        if (m->keys[i] == key)
            return &m->values[i];
    return NULL;
}

static int ccg_map_grow(ccg_i64map *m)
{
    ccg_i64map bigger = {0};
    bigger.cap = m->cap ? 2 * m->cap : 16;
    bigger.keys = malloc((size_t)bigger.cap * sizeof(int64_t));
    bigger.values = malloc((size_t)bigger.cap * sizeof(int64_t));
    bigger.used = calloc((size_t)bigger.cap, 1);
    if (!bigger.keys || !bigger.values || !bigger.used) {
        free(bigger.keys), free(bigger.values), free(bigger.used);
        return -1;
    }
    uint64_t mask = (uint64_t)bigger.cap - 1;
    for (int64_t j = 0; j < m->cap; j++) {
        if (!m->used[j])
            continue;
        uint64_t i = ccg_finish_hash((uint64_t)m->keys[j]) & mask;
        while (bigger.used[i])
            i = (i + 1) & mask;
        bigger.used[i] = 1, bigger.keys[i] = m->keys[j], bigger.values[i] = m->values[j];
    }
    bigger.n = m->n;
    free(m->keys), free(m->values), free(m->used);
    *m = bigger;
    return 0;
}

int ccg_map_put(ccg_i64map *m, int64_t key, int64_t value)
{
    int64_t *slot = ccg_map_get(m, key);
    if (slot) {
        *slot = value;
        return 0;
    }
    if (2 * (m->n + 1) > m->cap && ccg_map_grow(m))
        return -1;
    uint64_t mask = (uint64_t)m->cap - 1;
    uint64_t i = ccg_finish_hash((uint64_t)key) & mask;
    while (m->used[i])
        i = (i + 1) & mask;
    m->used[i] = 1, m->keys[i] = key, m->values[i] = value;
    m->n++;
    return 0;
}

void ccg_map_delete(ccg_i64map *m, int64_t key)
{
    if (!m->cap)
        return;
    uint64_t mask = (uint64_t)m->cap - 1;
    uint64_t i = ccg_finish_hash((uint64_t)key) & mask;
    while (m->used[i] && m->keys[i] != key)
        i = (i + 1) & mask;
    if (!m->used[i])
        return;
    for (uint64_t j = (i + 1) & mask; m->used[j]; j = (j + 1) & mask) {
        uint64_t home = ccg_finish_hash((uint64_t)m->keys[j]) & mask;
        if (((j - home) & mask) >= ((j - i) & mask)) {  /* j may move back to the hole i */
            m->keys[i] = m->keys[j], m->values[i] = m->values[j];
            i = j;
        }
    }
    m->used[i] = 0;
    m->n--;
}

void ccg_map_free(ccg_i64map *m)
{
    free(m->keys), free(m->values), free(m->used);
    memset(m, 0, sizeof *m);
}

static int ccg_idtable_grow(ccg_idtable *t)
{
    int64_t cap = t->cap ? 2 * t->cap : 1024;
    ccg_slot *slots = malloc((size_t)cap * sizeof *slots);
    if (!slots)
        return -1;
    for (int64_t i = 0; i < cap; i++)
        slots[i].id = -1;
    uint64_t mask = (uint64_t)cap - 1;
    for (int64_t j = 0; j < t->cap; j++) {
        if (t->slots[j].id < 0)
            continue;
        uint64_t i = t->slots[j].hash & mask;
        while (slots[i].id >= 0)
            i = (i + 1) & mask;
        slots[i] = t->slots[j];
    }
    free(t->slots);
    t->slots = slots, t->cap = cap;
    return 0;
}

int ccg_idtable_insert(ccg_idtable *t, uint64_t h, int64_t value)
{
    if (2 * (t->n + 1) > t->cap && ccg_idtable_grow(t))
        return -1;
    uint64_t mask = (uint64_t)t->cap - 1;
    uint64_t i = h & mask;
    while (t->slots[i].id >= 0)
        i = (i + 1) & mask;
    t->slots[i].hash = h, t->slots[i].id = value;
    t->n++;
    return 0;
}

void ccg_idtable_delete(ccg_idtable *t, uint64_t h, int64_t value)
{
    uint64_t mask = (uint64_t)t->cap - 1;
    uint64_t i = h & mask;
    while (t->slots[i].id != value) {
        if (t->slots[i].id < 0)
            return;
        i = (i + 1) & mask;
    }
    for (uint64_t j = (i + 1) & mask; t->slots[j].id >= 0; j = (j + 1) & mask) {
        uint64_t home = t->slots[j].hash & mask;
        if (((j - home) & mask) >= ((j - i) & mask)) {  /* j may move back to the hole i */
            t->slots[i] = t->slots[j];
            i = j;
        }
    }
    t->slots[i].id = -1;
    t->n--;
}
