/* Region times per time slice from a stream of events: the C port of
 * `SliceTimes.add` (ccgformat/query/slice_stream.py), the reference it is tested against.
 * The cells of the microscopic model (spec 4.10; formula 4.28 of dissertation 4.5.3, the
 * exclusive time of the innermost open region) from the events themselves (4.5.1):
 * between two consecutive events of a location the innermost open region holds the time,
 * and an interval crossing slice bounds is split at them. */
#ifndef CCG_SLICE_CELLS_H
#define CCG_SLICE_CELLS_H

#include <stdint.h>

/* The running state of one location: its open regions (stack[0 .. depth - 1],
 * outermost first; room for capacity) and its last event's time and innermost open
 * region (has_last 0: no event yet). */
typedef struct ccg_slice_state {
    int64_t *stack;
    int64_t depth, capacity;
    int64_t has_last, last_time, last_region;
} ccg_slice_state;

/* Why ccg_slice_add stopped before the end of the events. */
enum { CCG_SLICE_DONE = 0, CCG_SLICE_GROW_STATES = 1, CCG_SLICE_UNDERFLOW = 2, CCG_SLICE_OVERFLOW = 3 };

/* Adds events from..count-1 (time, kind, ref) to the cells ([slices, states], int64
 * ticks, wrapping) of one location under bounds[0 .. slices], updating state. Returns the
 * index of the event it stopped before and sets *why: CCG_SLICE_DONE (all added),
 * CCG_SLICE_GROW_STATES (the region *need - 1 holds time but the cells have fewer states:
 * grow them and call again from there), CCG_SLICE_UNDERFLOW (a LEAVE without an open
 * region) or CCG_SLICE_OVERFLOW (the stack is full). */
int64_t ccg_slice_add(int64_t *cells, int64_t slices, int64_t states, const int64_t *bounds,
                      const int64_t *time, const uint8_t *kind, const int64_t *ref, int64_t from, int64_t count,
                      ccg_slice_state *state, int *why, int64_t *need);

#endif
