/* Event validation for the native builder (builder_validate.h): model.LocationValidator. */
#include <stdarg.h>
#include <stdio.h>

#include "builder_validate.h"

const int8_t ccg_hard_columns[CCG_KIND_COUNT][5] = {
    {CCG_COL_REF, -1}, {CCG_COL_REF, -1},
    {CCG_COL_REF, CCG_COL_COMM, CCG_COL_TAG, -1}, {CCG_COL_REF, CCG_COL_COMM, CCG_COL_TAG, -1},
    {CCG_COL_REF, CCG_COL_COMM, CCG_COL_TAG, CCG_COL_REQUEST, -1},
    {CCG_COL_REF, CCG_COL_COMM, CCG_COL_TAG, CCG_COL_REQUEST, -1},
    {CCG_COL_REQUEST, -1}, {CCG_COL_REQUEST, -1}, {-1}, {CCG_COL_REF, CCG_COL_COMM, CCG_COL_TAG, -1},
    {CCG_COL_REF, -1}, {CCG_COL_REF, CCG_COL_VALUE, -1}, {CCG_COL_REF, CCG_COL_VALUE, -1},
};
const int8_t ccg_soft_columns[CCG_KIND_COUNT][3] = {
    {-1}, {-1}, {CCG_COL_SIZE, -1}, {CCG_COL_SIZE, -1}, {CCG_COL_SIZE, -1}, {CCG_COL_SIZE, -1}, {-1}, {-1}, {-1},
    {CCG_COL_SIZE, CCG_COL_RECV_SIZE, -1}, {CCG_COL_VALUE, -1}, {-1}, {-1},
};

static const char *const KIND_NAMES[CCG_KIND_COUNT] = {
    "ENTER", "LEAVE", "SEND", "RECV", "ISEND", "IRECV", "IRECV_REQUEST", "REQUEST_COMPLETE",
    "COLL_BEGIN", "COLL_END", "METRIC", "MARKER", "GENERIC",
};
static const char *const COLUMN_NAMES[CCG_COLUMN_COUNT] = {
    "ref", "comm", "tag", "request", "size", "recv_size", "value",
};

#define I64 "%lld"
#define LL(x) ((long long)(x))

int ccg_trace_error(ccg_error *error, int64_t location, int64_t index, int has_time, int64_t time,
                    const char *format, ...)
{
    va_list args;
    va_start(args, format);
    vsnprintf(error->message, sizeof error->message, format, args);
    va_end(args);
    error->location = location, error->index = index, error->time = has_time ? time : 0;
    error->flags = (has_time ? 1 : 0) | 2;
    return CCG_ERR_INPUT;
}

int ccg_memory_error(ccg_error *error)
{
    snprintf(error->message, sizeof error->message, "out of memory");
    error->flags = 0;
    return CCG_ERR_MEMORY;
}

/* The columns a kind must leave zero, as a bit mask over CCG_COL_*. */
static uint8_t unused_columns(int kind)
{
    unsigned used = 0;
    for (int j = 0; ccg_hard_columns[kind][j] >= 0; j++)
        used |= 1u << ccg_hard_columns[kind][j];
    for (int j = 0; ccg_soft_columns[kind][j] >= 0; j++)
        used |= 1u << ccg_soft_columns[kind][j];
    return (uint8_t)~used;
}

/* The first zero-only column that is not zero: the reference tries the kinds present in
 * ascending order, each kind's columns in order, and reports the first event. */
static int check_columns(ccg_validator *v, int64_t n, const int64_t *time, const uint8_t *kind,
                         const int64_t *const *columns, ccg_error *error)
{
    uint8_t unused[CCG_KIND_COUNT], any = 0;
    for (int k = 0; k < CCG_KIND_COUNT; k++)
        unused[k] = unused_columns(k);
    for (int64_t i = 0; i < n; i++) {  /* one pass finds whether anything is wrong */
        uint8_t nonzero = 0;
        for (int c = 0; c < CCG_COLUMN_COUNT; c++)
            nonzero |= (uint8_t)((columns[c][i] != 0) << c);
        any |= nonzero & unused[kind[i]];
    }
    for (int k = 0; any && k < CCG_KIND_COUNT; k++)
        for (int c = 0; c < CCG_COLUMN_COUNT; c++) {
            if (!((unused[k] >> c) & 1))
                continue;
            for (int64_t i = 0; i < n; i++)
                if (kind[i] == k && columns[c][i] != 0)
                    return ccg_trace_error(error, v->location, v->count + i, 1, time[i],
                                           "column '%s' must be 0 for %s", COLUMN_NAMES[c], KIND_NAMES[k]);
        }
    return CCG_OK;
}

/* References outside the definitions: regions, then peer locations, then metrics. */
static int check_references(ccg_validator *v, const ccg_rules *rules, int64_t n, const int64_t *time,
                            const uint8_t *kind, const int64_t *ref, ccg_error *error)
{
    static const char *const what[3] = {"region", "peer location", "metric"};
    const int64_t counts[3] = {rules->regions, rules->locations, rules->metrics};
    for (int check = 0; check < 3; check++)
        for (int64_t i = 0; i < n; i++) {
            uint8_t k = kind[i];
            int selected = check == 0 ? k <= CCG_LEAVE : check == 1 ? k >= CCG_SEND && k <= CCG_IRECV
                                                                    : k == CCG_METRIC;
            if (selected && (ref[i] < 0 || ref[i] >= counts[check]))
                return ccg_trace_error(error, v->location, v->count + i, 1, time[i],
                                       "%s " I64 " is not defined (" I64 " defined)", what[check], LL(ref[i]),
                                       LL(counts[check]));
        }
    return CCG_OK;
}

/* Follow ENTER/LEAVE (_check_nesting); repair mode drops a LEAVE whose region is not
 * open at all. */
static int check_nesting(ccg_validator *v, const ccg_rules *rules, int64_t n, const int64_t *time,
                         const uint8_t *kind, const int64_t *ref, uint8_t *drop, ccg_error *error)
{
    for (int64_t i = 0; i < n; i++) {
        drop[i] = 0;
        if (kind[i] > CCG_LEAVE)
            continue;
        int64_t region = ref[i];
        if (kind[i] == CCG_ENTER) {
            if (CCG_PUSH(v->open, region))
                return ccg_memory_error(error);
            continue;
        }
        if (v->open.n && v->open.data[v->open.n - 1] == region) {
            v->open.n--;
            continue;
        }
        int open_further_out = 0;
        for (int64_t j = 0; j < v->open.n && !open_further_out; j++)
            open_further_out = v->open.data[j] == region;
        if (rules->repair && !open_further_out) {
            ccg_repair r = {v->location, region, time[i], 1};
            if (CCG_PUSH(v->repairs, r))
                return ccg_memory_error(error);
            drop[i] = 1;
        } else if (!v->open.n) {
            return ccg_trace_error(error, v->location, v->count + i, 1, time[i],
                                   "LEAVE of region " I64 " with no region open", LL(region));
        } else {
            return ccg_trace_error(error, v->location, v->count + i, 1, time[i],
                                   "LEAVE of region " I64 " but region " I64 " is open", LL(region),
                                   LL(v->open.data[v->open.n - 1]));
        }
    }
    return CCG_OK;
}

int ccg_validator_check(ccg_validator *v, const ccg_rules *rules, int64_t n, const int64_t *time,
                        const uint8_t *kind, const int64_t *const *columns, uint8_t *drop, ccg_error *error)
{
    if (n <= 0)
        return CCG_OK;
    for (int64_t i = 0; i < n; i++)
        if (kind[i] >= CCG_KIND_COUNT)
            return ccg_trace_error(error, v->location, v->count + i, 1, time[i], "unknown event kind %d", kind[i]);
    int rc = check_columns(v, n, time, kind, columns, error);
    if (rc)
        return rc;
    if (v->has_last && time[0] < v->last_time)
        return ccg_trace_error(error, v->location, v->count, 1, time[0],
                               "timestamp decreases (previous event at " I64 ")", LL(v->last_time));
    for (int64_t i = 1; i < n; i++)
        if (time[i] < time[i - 1])
            return ccg_trace_error(error, v->location, v->count + i, 1, time[i],
                                   "timestamp decreases (previous event at " I64 ")", LL(time[i - 1]));
    for (int c = CCG_COL_SIZE; c <= CCG_COL_RECV_SIZE; c++)
        for (int64_t i = 0; i < n; i++)
            if (columns[c][i] < 0)
                return ccg_trace_error(error, v->location, v->count + i, 1, time[i], "%s must not be negative",
                                       COLUMN_NAMES[c]);
    if (rules->references && (rc = check_references(v, rules, n, time, kind, columns[CCG_COL_REF], error)))
        return rc;
    if ((rc = check_nesting(v, rules, n, time, kind, columns[CCG_COL_REF], drop, error)))
        return rc;
    v->count += n;
    v->has_last = 1;
    v->last_time = time[n - 1];
    return CCG_OK;
}

int ccg_validator_finish(ccg_validator *v, const ccg_rules *rules, ccg_error *error)
{
    int64_t open = v->open.n;
    if (!open)
        return CCG_OK;
    if (!rules->repair)
        return ccg_trace_error(error, v->location, v->count, v->has_last, v->last_time,
                               I64 " region(s) still open at the end (innermost: region " I64 "); use repair "
                               "mode to close them", LL(open), LL(v->open.data[open - 1]));
    for (int64_t j = open - 1; j >= 0; j--) {
        ccg_repair r = {v->location, v->open.data[j], v->last_time, 0};
        if (CCG_PUSH(v->repairs, r))
            return ccg_memory_error(error);
    }
    v->open.n = 0;
    return CCG_OK;
}

void ccg_validator_free(ccg_validator *v)
{
    free(v->open.data), free(v->repairs.data);
    v->open.data = NULL, v->repairs.data = NULL;
    v->open.n = v->open.cap = v->repairs.n = v->repairs.cap = 0;
}
