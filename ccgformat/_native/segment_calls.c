/* The calls of one segment of a location's events. See segment_calls.h. */
#include "segment_calls.h"
#include "ccg.h"
#include "walk_support.h"

int ccg_segment_calls_add(const int64_t *time, const uint8_t *kind, const int64_t *ref, int64_t count, int64_t depth,
                          ccg_segment_calls *out) {
    i64map by_region = {0};  /* region -> its row in out->region */
    int64_t kept = depth;
    out->closed = out->regions = out->open = 0;
    for (int64_t i = 0; i < count; i++) {
        if (kind[i] == CCG_ENTER) {
            out->open_region[out->open] = ref[i];
            out->open_enter[out->open++] = time[i];
            depth++;
        } else if (kind[i] == CCG_LEAVE) {
            if (!depth) {
                map_free(&by_region);
                return CCG_ERR_INPUT;
            }
            depth--;
            if (out->open) {  /* closes a call of this batch */
                int64_t region = out->open_region[--out->open];
                int64_t duration = sub64(time[i], out->open_enter[out->open]);
                int64_t *row = map_slot(&by_region, region, out->regions);
                if (!row) {
                    map_free(&by_region);
                    return CCG_ERR_MEMORY;
                }
                if (*row == out->regions) {
                    out->region[out->regions] = region;
                    out->shortest[out->regions] = out->longest[out->regions] = duration;
                    out->regions++;
                } else {
                    if (duration < out->shortest[*row])
                        out->shortest[*row] = duration;
                    if (duration > out->longest[*row])
                        out->longest[*row] = duration;
                }
            } else {  /* closes a call open before the batch */
                out->closed_level[out->closed] = depth;
                out->closed_time[out->closed++] = time[i];
                kept = depth;
            }
        }
    }
    out->kept = kept;
    map_free(&by_region);
    return CCG_OK;
}
