/* Helpers of the walk and its checkpoint accumulator (walk.c, walk_checkpoints.c):
 * wrap-around arithmetic, error messages, growing arrays and an int64 -> int64 map. */
#ifndef CCG_WALK_SUPPORT_H
#define CCG_WALK_SUPPORT_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ERROR_SIZE 256

static inline int64_t add64(int64_t a, int64_t b) { return (int64_t)((uint64_t)a + (uint64_t)b); }
static inline int64_t sub64(int64_t a, int64_t b) { return (int64_t)((uint64_t)a - (uint64_t)b); }

/* The first i in [lo, hi) with values[i] >= key (values ascending there), or hi. */
static inline int64_t lower_bound(const int64_t *values, int64_t lo, int64_t hi, int64_t key) {
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (values[mid] < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The last i in [lo, hi] with values[i] <= key (values ascending there), or lo. */
static inline int64_t last_at_or_before(const int64_t *values, int64_t lo, int64_t hi, int64_t key) {
    while (lo < hi) {
        int64_t mid = lo + (hi - lo + 1) / 2;
        if (values[mid] <= key)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

static inline int fail(char *error, int code, const char *format, ...) {
    va_list args;
    va_start(args, format);
    vsnprintf(error, ERROR_SIZE, format, args);
    va_end(args);
    return code;
}

static inline int grow(void **array, int64_t *capacity, int64_t needed, size_t item) {
    if (needed <= *capacity)
        return 1;
    int64_t wanted = *capacity ? *capacity : 16;
    while (wanted < needed)
        wanted *= 2;
    if ((uint64_t)wanted > SIZE_MAX / item)
        return 0;
    void *moved = realloc(*array, (size_t)wanted * item);
    if (!moved)
        return 0;
    *array = moved;
    *capacity = wanted;
    return 1;
}

/* ------------------------------------------------------------------ int64 -> int64 map */

/* Open addressing with linear probing; metric values and region entries by id. */
typedef struct i64map {
    int64_t *keys;
    int64_t *values;
    uint8_t *used;
    int64_t capacity;   /* a power of two, or 0 */
    int64_t size;
} i64map;

static inline int64_t map_home(int64_t key, int64_t capacity) {
    return (int64_t)(((uint64_t)key * UINT64_C(0x9E3779B97F4A7C15)) >> 17) & (capacity - 1);
}

static inline void map_free(i64map *map) {
    free(map->keys);
    free(map->values);
    free(map->used);
    memset(map, 0, sizeof *map);
}

static inline void map_clear(i64map *map) {
    if (map->size)
        memset(map->used, 0, (size_t)map->capacity);
    map->size = 0;
}

static inline int64_t *map_find(const i64map *map, int64_t key) {
    if (!map->size)
        return NULL;
    for (int64_t i = map_home(key, map->capacity);; i = (i + 1) & (map->capacity - 1)) {
        if (!map->used[i])
            return NULL;
        if (map->keys[i] == key)
            return &map->values[i];
    }
}

static inline int map_rehash(i64map *map, int64_t capacity) {
    i64map bigger = {malloc((size_t)capacity * 8), malloc((size_t)capacity * 8), calloc((size_t)capacity, 1),
                     capacity, 0};
    if (!bigger.keys || !bigger.values || !bigger.used) {
        map_free(&bigger);
        return 0;
    }
    for (int64_t i = 0; i < map->capacity; i++) {
        if (!map->used[i])
            continue;
        int64_t j = map_home(map->keys[i], capacity);
        while (bigger.used[j])
            j = (j + 1) & (capacity - 1);
        bigger.used[j] = 1;
        bigger.keys[j] = map->keys[i];
        bigger.values[j] = map->values[i];
        bigger.size++;
    }
    map_free(map);
    *map = bigger;
    return 1;
}

/* The value of `key`, inserted as `initial` when new; NULL when out of memory. */
static inline int64_t *map_slot(i64map *map, int64_t key, int64_t initial) {
    int64_t *found = map_find(map, key);
    if (found)
        return found;
    if (2 * (map->size + 1) > map->capacity && !map_rehash(map, map->capacity ? 2 * map->capacity : 16))
        return NULL;
    int64_t i = map_home(key, map->capacity);
    while (map->used[i])
        i = (i + 1) & (map->capacity - 1);
    map->used[i] = 1;
    map->keys[i] = key;
    map->values[i] = initial;
    map->size++;
    return &map->values[i];
}

static inline int compare_first(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* The map's (key, value) pairs sorted by key into `out` (grown as needed). */
static inline int map_sorted_pairs(const i64map *map, int64_t **out, int64_t *capacity) {
    if (!grow((void **)out, capacity, 2 * map->size + 2, 8))
        return 0;
    int64_t n = 0;
    for (int64_t i = 0; i < map->capacity; i++) {
        if (map->used[i]) {
            (*out)[2 * n] = map->keys[i];
            (*out)[2 * n + 1] = map->values[i];
            n++;
        }
    }
    qsort(*out, (size_t)n, 2 * sizeof(int64_t), compare_first);
    return 1;
}

#endif
