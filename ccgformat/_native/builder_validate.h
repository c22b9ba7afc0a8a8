/* Event validation for the native builder: model.LocationValidator in C, with the same
 * checks in the same order, so the same first error (message, event index, time) and
 * the same repairs. */
#ifndef CCG_BUILDER_VALIDATE_H
#define CCG_BUILDER_VALIDATE_H

#include "builder_array.h"
#include "ccg.h"

/* The columns of an event batch besides time and kind, in model.COLUMNS order. */
enum {
    CCG_COL_REF, CCG_COL_COMM, CCG_COL_TAG, CCG_COL_REQUEST, CCG_COL_SIZE, CCG_COL_RECV_SIZE, CCG_COL_VALUE,
    CCG_COLUMN_COUNT
};

/* model.KIND_FIELDS: the hard and the soft columns of each kind, -1 terminated. */
extern const int8_t ccg_hard_columns[CCG_KIND_COUNT][5];
extern const int8_t ccg_soft_columns[CCG_KIND_COUNT][3];

/* An error: its message, and where (flags bit 0: the time is known; bit 1: a trace
 * error, else a misuse of the builder; memory errors are told by their return code). */
typedef struct {
    char message[256];
    int64_t location, index, time, flags;
} ccg_error;

/* model.Repair; action 0 = closed, 1 = dropped. */
typedef struct {
    int64_t location, region, time, action;
} ccg_repair;

/* What the checks allow: repair mode, and the definitions' counts when references are
 * checked (``references``). */
typedef struct {
    int repair, references;
    int64_t regions, locations, metrics;
} ccg_rules;

/* One location's validator: events checked so far, the last timestamp, the regions
 * open, and the repairs made. Zero-initialised it is a fresh one. */
typedef struct {
    int64_t location, count, last_time;
    int has_last;
    CCG_VEC(int64_t) open;
    CCG_VEC(ccg_repair) repairs;
} ccg_validator;

/* Check the next ``n`` events (LocationValidator.check); drop[i] = 1 marks the LEAVEs
 * repair mode drops. Returns CCG_OK, CCG_ERR_INPUT or CCG_ERR_MEMORY. */
int ccg_validator_check(ccg_validator *v, const ccg_rules *rules, int64_t n, const int64_t *time,
                        const uint8_t *kind, const int64_t *const *columns, uint8_t *drop, ccg_error *error);

/* The end of the location (LocationValidator.finish): regions still open are an error,
 * or, repairing, closed at the last timestamp (innermost first, appended to repairs). */
int ccg_validator_finish(ccg_validator *v, const ccg_rules *rules, ccg_error *error);

/* Fill ``error`` for a trace error at event ``index`` of ``location`` (at ``time``
 * when ``has_time``); returns CCG_ERR_INPUT. */
int ccg_trace_error(ccg_error *error, int64_t location, int64_t index, int has_time, int64_t time,
                    const char *format, ...) __attribute__((format(printf, 6, 7)));

/* Fill ``error`` for a failed allocation; returns CCG_ERR_MEMORY. */
int ccg_memory_error(ccg_error *error);

void ccg_validator_free(ccg_validator *v);

#endif
