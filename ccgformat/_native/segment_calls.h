/* The calls of one segment of a location's events: the C port of `SegmentIndex._calls`
 * (ccgformat/archive/indexes.py), the reference it is tested against. Per batch it
 * matches ENTER and LEAVE events on a stack (a call's level is the depth before its
 * ENTER): the calls it both opens and closes give their region's shortest and longest
 * duration; the LEAVEs that close calls open before the batch, and the calls still open
 * after it, go back to the caller, who keeps the calls open across batches. */
#ifndef CCG_SEGMENT_CALLS_H
#define CCG_SEGMENT_CALLS_H

#include <stdint.h>

/* What one batch's calls give (the arrays have room for count entries each). */
typedef struct ccg_segment_calls {
    int64_t *closed_level, *closed_time;         /* LEAVEs of calls open before, in event order */
    int64_t closed;
    int64_t *region, *shortest, *longest;        /* calls opened and closed in the batch, per region */
    int64_t regions;
    int64_t *open_region, *open_enter;           /* calls opened in the batch and still open, outermost first */
    int64_t open;
    int64_t kept;                                /* the calls open before that stay open (levels 0 .. kept - 1) */
} ccg_segment_calls;

/* The calls among the events (time, kind, ref) 0..count-1 with depth calls open before
 * them. Returns CCG_OK, CCG_ERR_INPUT for a LEAVE without an open call, or CCG_ERR_MEMORY. */
int ccg_segment_calls_add(const int64_t *time, const uint8_t *kind, const int64_t *ref, int64_t count, int64_t depth,
                          ccg_segment_calls *out);

#endif
