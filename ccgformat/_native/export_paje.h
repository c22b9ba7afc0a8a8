/* Paje in C: the lines of merged batches of calls, messages, other events and integer
 * metric samples without hints (ccgformat/formats/paje/writer.py is the reference;
 * export_paje.py wraps this, ccgformat/formats/paje/fast.py prepares it). */
#ifndef CCG_EXPORT_PAJE_H
#define CCG_EXPORT_PAJE_H

#include <stdint.h>
#include "ccg.h"
#include "export.h"

/* The lines the fast path writes, each from the first event definition of its name. */
enum { CCG_PAJE_SET = 0, CCG_PAJE_PUSH = 1, CCG_PAJE_POP = 2, CCG_PAJE_START_LINK = 3, CCG_PAJE_END_LINK = 4,
       CCG_PAJE_OTHER = 5, CCG_PAJE_VARIABLE = 6, CCG_PAJE_LINES = 7 };
/* What a field of a line holds: a literal (slot_literal), the date, the location's
 * container, the region's state type or value, the metric's type or value, a link's
 * value or key, or the description of an event without a Paje counterpart. */
enum { CCG_PAJE_LITERAL = 0, CCG_PAJE_TIME = 1, CCG_PAJE_CONTAINER = 2, CCG_PAJE_REGION_TYPE = 3,
       CCG_PAJE_REGION_VALUE = 4, CCG_PAJE_METRIC_TYPE = 5, CCG_PAJE_METRIC_VALUE = 6, CCG_PAJE_LINK_VALUE = 7,
       CCG_PAJE_LINK_KEY = 8, CCG_PAJE_DESCRIBE = 9 };
/* Why ccg_paje_lines stopped: every event written, no room for a line, the event at the
 * index needs the reference, or it begins a group (time, location) at which containers
 * may change (the reference writes those changes first). */
enum { CCG_PAJE_DONE = 0, CCG_PAJE_FULL = 1, CCG_PAJE_EVENT = 2, CCG_PAJE_GROUP = 3 };

/* The text of one trace's lines, rendered (and quoted) by Python. Line kind k (when
 * line_ok[k]) is line_id[k] and the fields slot[line_start[k] .. line_start[k + 1]).
 * Per region its state type and value, per location its container, per metric its type
 * and whether C writes its values (0: int64, 1: uint64, -1: no). Per kind, how C
 * describes it in the generic layout (describe_head, then ` field=value` for each of
 * describe_column/describe_key[describe_start[k] ..], then describe_tail). */
typedef struct ccg_paje_style {
    ccg_clock clock;
    int64_t generic;
    ccg_strings line_id;
    const int64_t *line_ok, *line_start, *slot, *slot_literal;
    ccg_strings literal;
    ccg_strings region_type, region_value, container, metric_type;
    const int64_t *metric_format;
    ccg_strings describe_head, describe_tail, describe_key;
    const int64_t *describe_start, *describe_column;
    int64_t line_bytes;
} ccg_paje_style;

/* The writer's state (writer._Writer): the group of the latest event, the LEAVEs held
 * back (room for `capacity`), the call depth per location, and the time from which a
 * new group may change containers. */
typedef struct ccg_paje_state {
    int64_t has_group, group_time, group_location;
    int64_t pending, capacity;
    int64_t *pending_time, *pending_ref;
    int64_t *depth;
    int64_t locations;
    int64_t lifecycle;
} ccg_paje_state;

/* A merged batch: its columns, each event's location, and in the generic layout each
 * message's number in its channel and whether it has a partner. */
typedef struct ccg_paje_batch {
    ccg_columns columns;
    int64_t count;
    const int64_t *location;
    const int64_t *link_number;
    const uint8_t *link_matched;
} ccg_paje_batch;

/* Write events from `index` on into out[0 .. capacity); returns the index of the first
 * event not written and why (*stop), *written the bytes. */
int64_t ccg_paje_lines(const ccg_paje_style *style, ccg_paje_state *state, const ccg_paje_batch *batch,
                       int64_t index, char *out, int64_t capacity, int64_t *written, int *stop);

#endif
