/* Messages grouped by channel (export_channels.h): open addressing on the four columns. */
#include "export_channels.h"
#include "ccg.h"

#include <stdlib.h>

static uint64_t mix(uint64_t h, int64_t value) {
    h ^= (uint64_t)value + UINT64_C(0x9E3779B97F4A7C15) + (h << 6) + (h >> 2);
    h ^= h >> 31;
    h *= UINT64_C(0xBF58476D1CE4E5B9);
    return h ^ (h >> 29);
}

int ccg_channel_ranks(int64_t n, const int64_t *a, const int64_t *b, const int64_t *c, const int64_t *d,
                      int64_t *channel, int64_t *rank, int64_t *first, int64_t *count) {
    int64_t size = 16;
    while (size < 2 * n)
        size *= 2;
    int64_t *slots = malloc((size_t)size * sizeof(int64_t));  /* channel + 1, 0: empty */
    int64_t *seen = malloc((size_t)(n ? n : 1) * sizeof(int64_t));  /* rows of each channel so far */
    if (!slots || !seen) {
        free(slots);
        free(seen);
        return CCG_ERR_MEMORY;
    }
    for (int64_t s = 0; s < size; s++)
        slots[s] = 0;
    int64_t channels = 0;
    for (int64_t i = 0; i < n; i++) {
        uint64_t h = mix(mix(mix(mix(0, a[i]), b[i]), c[i]), d[i]);
        int64_t s = (int64_t)(h & (uint64_t)(size - 1));
        for (;; s = (s + 1) & (size - 1)) {
            int64_t k = slots[s] - 1;
            if (k < 0) {
                k = channels++;
                slots[s] = k + 1;
                first[k] = i;
                seen[k] = 0;
            } else {
                int64_t j = first[k];
                if (a[j] != a[i] || b[j] != b[i] || c[j] != c[i] || d[j] != d[i])
                    continue;
            }
            channel[i] = k;
            rank[i] = seen[k]++;
            break;
        }
    }
    *count = channels;
    free(slots);
    free(seen);
    return CCG_OK;
}
