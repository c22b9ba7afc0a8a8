/* Hashing and hash tables for the native builder: 64-bit mixing of int64 runs, an
 * int64 -> int64 map, and a table of ids under stored hashes (open addressing with
 * linear probing and backward-shift deletion, at most half full). */
#ifndef CCG_BUILDER_HASH_H
#define CCG_BUILDER_HASH_H

#include <stdint.h>

static inline uint64_t ccg_mix(uint64_t h, uint64_t w)
{
    h ^= w * 0x9E3779B97F4A7C15ULL;
    h = (h << 31) | (h >> 33);
    return h * 0xBF58476D1CE4E5B9ULL;
}

static inline uint64_t ccg_finish_hash(uint64_t h)
{
    h ^= h >> 33;
    h *= 0xFF51AFD7ED558CCDULL;
    h ^= h >> 33;
    h *= 0xC4CEB9FE1A85EC53ULL;
    return h ^ (h >> 33);
}

static inline uint64_t ccg_hash_run(uint64_t h, const int64_t *values, int64_t count)
{
    h = ccg_mix(h, (uint64_t)count);
    for (int64_t i = 0; i < count; i++)
        h = ccg_mix(h, (uint64_t)values[i]);
    return h;
}

/* An open-addressing int64 -> int64 map with linear probing and backward-shift deletion. */
typedef struct {
    int64_t *keys, *values;
    uint8_t *used;
    int64_t cap, n;
} ccg_i64map;

/* The value of ``key``, or NULL. */
int64_t *ccg_map_get(const ccg_i64map *m, int64_t key);
int ccg_map_put(ccg_i64map *m, int64_t key, int64_t value);  /* 0, or -1 without memory */
void ccg_map_delete(ccg_i64map *m, int64_t key);
void ccg_map_free(ccg_i64map *m);

/* A table of ids keyed by a stored 64-bit hash; equality is decided by the caller. A
 * slot keeps hash and id side by side: one cache line per probe. */
typedef struct {
    uint64_t hash;
    int64_t id;  /* -1: empty */
} ccg_slot;

typedef struct {
    ccg_slot *slots;
    int64_t cap, n;
} ccg_idtable;

/* Add ``value`` under hash ``h``: 0, or -1 without memory. Lookups probe ``slots``
 * from h & (cap - 1) on until an empty slot (id -1); the caller decides equality. */
int ccg_idtable_insert(ccg_idtable *t, uint64_t h, int64_t value);
void ccg_idtable_delete(ccg_idtable *t, uint64_t h, int64_t value);

#endif
