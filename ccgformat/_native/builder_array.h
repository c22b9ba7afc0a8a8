/* Growable arrays for the native builder (builder.c, builder_validate.c): a CCG_VEC(T) is a
 * struct of data, count n and capacity cap; RESERVE and PUSH return 0 or -1 (no memory). */
#ifndef CCG_BUILDER_ARRAY_H
#define CCG_BUILDER_ARRAY_H

#include <stdint.h>
#include <stdlib.h>

#define CCG_VEC(T) struct { T *data; int64_t n, cap; }

/* Make room for ``need`` elements of ``size`` bytes, doubling the capacity. */
static inline int ccg_reserve(void **data, int64_t *cap, int64_t need, size_t size)
{
    if (need <= *cap)
        return 0;
    int64_t c = *cap ? *cap : 16;
    while (c < need) {
        if (c > INT64_MAX / 4 / (int64_t)size)
            return -1;
        c *= 2;
    }
    void *p = realloc(*data, (size_t)c * size);
    if (!p)
        return -1;
    *data = p;
    *cap = c;
    return 0;
}

#define CCG_RESERVE(v, need) ccg_reserve((void **)&(v).data, &(v).cap, (need), sizeof *(v).data)
#define CCG_PUSH(v, x) (CCG_RESERVE(v, (v).n + 1) ? -1 : ((v).data[(v).n++] = (x), 0))

#endif
