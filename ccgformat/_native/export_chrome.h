/* Chrome Trace Event JSON in C: the two readings of a location's batches that hold only
 * calls and instants of category ccgformat (ccgformat/formats/chrome/calls.py and
 * writer.py are the reference; export_chrome.py wraps these). */
#ifndef CCG_EXPORT_CHROME_H
#define CCG_EXPORT_CHROME_H

#include <stdint.h>
#include "ccg.h"
#include "export.h"

/* The first reading's state (calls.CallScan): calls begun, whether complete events
 * still fit, the latest call or instant and the latest end since, and the open calls
 * (capacity: at least the depth plus the batch's calls). */
typedef struct ccg_chrome_scan {
    int64_t calls;
    int64_t complete;
    int64_t has_entry, entry, entry_open;
    int64_t has_ended, ended;
    int64_t depth;
    int64_t capacity;
    int64_t *number, *start, *must;
} ccg_chrome_scan;

/* Scan events [0, n): the end of each call begun in the batch goes to ends[number -
 * first_call], that of a call begun earlier to late_number/late_end (room: the depth at
 * the start). CCG_ERR_INPUT when a LEAVE finds no call open, its index in *failed_at. */
int ccg_chrome_scan_batch(ccg_chrome_scan *scan, const int64_t *time, const uint8_t *kind, int64_t n,
                          int64_t first_call, int64_t *ends, int64_t *late_number, int64_t *late_end,
                          int64_t *late_count, int64_t *failed_at);

/* What the lines are made of, rendered by Python (export_chrome.py). Per region, the
 * start of its X, B and E events (`{"ph":"X","name":...`); per location, its [pid,tid];
 * per kind, the start of its instant (`{"ph":"i","s":"t","name":...,"args":{"kind":...`),
 * of its flow event and what follows a flow's id; the fields of each kind's args:
 * field_column (0 = ref .. 6 = value, -1 = the peer's [pid,tid]) and field_key
 * (`,"comm":`), those of kind k at field_start[k] .. field_start[k + 1]. */
typedef struct ccg_chrome_style {
    ccg_clock clock;
    ccg_strings complete_begin, begin, end;
    ccg_strings peer;
    ccg_strings instant, flow, flow_end;
    const int64_t *field_start;
    const int64_t *field_column;
    ccg_strings field_key;
    int64_t line_bytes;         /* the longest line an event can give */
} ccg_chrome_style;

/* A location's batch to write: its columns, its `"pid":..,"tid":..` (with a leading comma,
 * or empty), whether calls are X events (their ends, `ends_used` of them taken so far),
 * the flow id of each event (0: none), and whether no event was written yet. */
typedef struct ccg_chrome_batch {
    ccg_columns columns;
    int64_t count;
    const char *place;
    int64_t place_bytes;
    int64_t complete;
    const int64_t *ends;
    int64_t ends_used;
    const int64_t *flow;
    int64_t first;
} ccg_chrome_batch;

/* Write the lines of events from `index` on into out[0 .. capacity) while a line still
 * fits; returns the index of the first event not written, *written the bytes. */
int64_t ccg_chrome_lines(const ccg_chrome_style *style, ccg_chrome_batch *batch, int64_t index, char *out,
                         int64_t capacity, int64_t *written);

#endif
