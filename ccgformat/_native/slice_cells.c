/* Region times per time slice from a stream of events. See slice_cells.h. */
#include "slice_cells.h"
#include "ccg.h"
#include "walk_support.h"

/* The slice holding ``start`` (bounds[0] <= start < bounds[slices]): walked on from the
 * slice ``hint`` of the interval before when it is at or before it (a location's events
 * come in time order: a batch walks each bound once), else searched. */
static int64_t slice_of(const int64_t *bounds, int64_t slices, int64_t hint, int64_t start) {
    if (hint < 0 || bounds[hint] > start)
        return last_at_or_before(bounds, 0, slices - 1, start);
    while (bounds[hint + 1] <= start)
        hint++;
    return hint;
}

/* Adds [start, stop) to the cells of region, split at the bounds (wrapping sums); returns
 * the slice it ended in (the hint of the next interval, `slice_of`), or ``hint``. */
static int64_t hold(int64_t *cells, int64_t slices, int64_t states, const int64_t *bounds, int64_t start,
                    int64_t stop, int64_t region, int64_t hint) {
    if (stop <= bounds[0] || start >= bounds[slices])
        return hint;
    if (start < bounds[0])
        start = bounds[0];
    if (stop > bounds[slices])
        stop = bounds[slices];
    int64_t slice = slice_of(bounds, slices, hint, start);
    while (stop > bounds[slice + 1]) {
        int64_t *cell = &cells[slice * states + region];
        *cell = add64(*cell, sub64(bounds[slice + 1], start));
        start = bounds[++slice];
    }
    int64_t *cell = &cells[slice * states + region];
    *cell = add64(*cell, sub64(stop, start));
    return slice;
}

int64_t ccg_slice_add(int64_t *cells, int64_t slices, int64_t states, const int64_t *bounds,
                      const int64_t *time, const uint8_t *kind, const int64_t *ref, int64_t from, int64_t count,
                      ccg_slice_state *state, int *why, int64_t *need) {
    int64_t hint = -1;
    for (int64_t i = from; i < count; i++) {
        if (state->has_last && state->last_region >= 0 && time[i] > state->last_time
            && time[i] > bounds[0] && state->last_time < bounds[slices]) {
            if (state->last_region >= states) {
                *why = CCG_SLICE_GROW_STATES;
                *need = state->last_region + 1;
                return i;
            }
            hint = hold(cells, slices, states, bounds, state->last_time, time[i], state->last_region, hint);
        }
        if (kind[i] == CCG_ENTER) {
            if (state->depth == state->capacity) {
                *why = CCG_SLICE_OVERFLOW;
                return i;
            }
            state->stack[state->depth++] = ref[i];
        } else if (kind[i] == CCG_LEAVE) {
            if (state->depth == 0) {
                *why = CCG_SLICE_UNDERFLOW;
                return i;
            }
            state->depth--;
        }
        state->has_last = 1;
        state->last_time = time[i];
        state->last_region = state->depth ? state->stack[state->depth - 1] : -1;
    }
    *why = CCG_SLICE_DONE;
    return count;
}
