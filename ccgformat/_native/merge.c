/* Hash consing of a node table: equal sub-trees get equal ids (merge.h), the node pass of
 * ccgformat/archive/merge/nodes.py (its Python twin is `canonical_ids` there). */
#include <stdlib.h>
#include <string.h>

#include "builder_hash.h"
#include "merge.h"

static int same_run(const int64_t *start, const int64_t *values, int64_t a, int64_t b)
{
    int64_t length = start[a + 1] - start[a];
    return length == start[b + 1] - start[b]
           && !memcmp(values + start[a], values + start[b], (size_t)length * sizeof *values);
}

static int same_node(const ccg_nodes *t, const int64_t *canon, int64_t a, int64_t b)
{
    if (t->kind[a] != t->kind[b] || !same_run(t->key_start, t->key, a, b) || !same_run(t->soft_start, t->soft, a, b)
        || !same_run(t->duration_start, t->durations, a, b))
        return 0;
    int64_t count = t->child_start[a + 1] - t->child_start[a];
    if (count != t->child_start[b + 1] - t->child_start[b])
        return 0;
    const int64_t *x = t->children + t->child_start[a], *y = t->children + t->child_start[b];
    for (int64_t k = 0; k < count; k++)
        if (canon[x[k] - t->first] != canon[y[k] - t->first])
            return 0;
    return 1;
}

int ccg_merge_canonical(const ccg_nodes *t, const uint8_t *shared, int64_t *canon)
{
    ccg_idtable table = {0};
    int status = CCG_OK;
    for (int64_t i = 0; i < t->count && status == CCG_OK; i++) {
        uint64_t h = ccg_mix(0x243F6A8885A308D3ULL, t->kind[i]);
        h = ccg_hash_run(h, t->key + t->key_start[i], t->key_start[i + 1] - t->key_start[i]);
        h = ccg_hash_run(h, t->soft + t->soft_start[i], t->soft_start[i + 1] - t->soft_start[i]);
        h = ccg_hash_run(h, t->durations + t->duration_start[i], t->duration_start[i + 1] - t->duration_start[i]);
        const int64_t *children = t->children + t->child_start[i];
        int64_t count = t->child_start[i + 1] - t->child_start[i];
        h = ccg_mix(h, (uint64_t)count);
        for (int64_t k = 0; k < count; k++) {
            int64_t child = children[k] - t->first;
            if (child < 0 || child >= i) {
                status = CCG_ERR_INPUT;
                break;
            }
            h = ccg_mix(h, (uint64_t)canon[child]);
        }
        if (status != CCG_OK)
            break;
        h = ccg_finish_hash(h);
        canon[i] = i;
        if (!shared[i])
            continue;
        if (table.cap) {
            uint64_t mask = (uint64_t)table.cap - 1;
            for (uint64_t s = h & mask; table.slots[s].id >= 0; s = (s + 1) & mask)
                if (table.slots[s].hash == h && same_node(t, canon, table.slots[s].id, i)) {
                    canon[i] = table.slots[s].id;
                    break;
                }
        }
        if (canon[i] == i && ccg_idtable_insert(&table, h, i))
            status = CCG_ERR_MEMORY;
    }
    free(table.slots);
    return status;
}
