/* Text of the exporters' fast paths (export_chrome.c, export_paje.c): tables of strings
 * rendered by Python, decimal integers, and timestamps as fixed-point decimals. Every
 * function writes at `at`, which must have room (the callers check a line's bound), and
 * returns the position after what it wrote. */
#ifndef CCG_EXPORT_H
#define CCG_EXPORT_H

#include <stdint.h>
#include <string.h>

#include "ccg.h"

/* Strings rendered by Python: string i is bytes[start[i] .. start[i + 1]). */
typedef struct ccg_strings {
    const char *bytes;
    const int64_t *start;
    int64_t count;
} ccg_strings;

/* Ticks to a decimal with `digits` decimals: (time - offset) * scale when scale is not 0,
 * else (time - offset) * numerator / denominator rounded half to even (half_even) or half
 * up; `strip` drops the trailing zeros of the decimals (and a bare point). Python checks
 * that |time - offset| * scale or numerator stays below 2^126 (export_text.py). */
typedef struct ccg_clock {
    int64_t offset;
    int64_t scale;
    int64_t numerator;
    int64_t denominator;
    int32_t digits;
    int32_t half_even;
    int32_t strip;
} ccg_clock;

/* The longest text of a 128-bit fixed-point decimal: 39 digits, sign and point. */
#define CCG_FIXED_BYTES 41
/* The longest text of a 64-bit integer. */
#define CCG_INT_BYTES 20

static inline char *ccg_put(char *at, const char *text, size_t length) {
    memcpy(at, text, length);
    return at + length;
}

static inline char *ccg_put_string(char *at, const ccg_strings *strings, int64_t i) {
    return ccg_put(at, strings->bytes + strings->start[i], (size_t)(strings->start[i + 1] - strings->start[i]));
}

/* Column `which` of an event's columns in EventBatch order after kind (0 = ref .. 6 = value). */
static inline int64_t ccg_column(const ccg_columns *c, int64_t which, int64_t i) {
    switch (which) {
    case 0: return c->ref[i];
    case 1: return c->comm[i];
    case 2: return c->tag[i];
    case 3: return c->request[i];
    case 4: return c->size[i];
    case 5: return c->recv_size[i];
    default: return c->value[i];
    }
}

char *ccg_put_u64(char *at, uint64_t value);
char *ccg_put_i64(char *at, int64_t value);
/* `value` with `digits` decimals (see ccg_clock for `strip`). */
char *ccg_put_fixed(char *at, __int128 value, int digits, int strip);
/* A timestamp in units of the clock's last decimal. */
__int128 ccg_clock_scaled(const ccg_clock *clock, int64_t time);

static inline char *ccg_put_time(char *at, const ccg_clock *clock, int64_t time) {
    return ccg_put_fixed(at, ccg_clock_scaled(clock, time), clock->digits, clock->strip);
}

#endif
