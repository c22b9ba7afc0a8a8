/* Chrome Trace Event JSON in C (export_chrome.h): the C twins of the reference's first
 * reading (calls.CallScan fed by tokens.Tokenizer) and second (writer._write_tokens),
 * for batches of calls and ccgformat instants. */
#include "export_chrome.h"

enum { MUST_BE_EMPTY = 1, MUST_LAST = 2 };

/* A call or instant starting at `start` (calls.CallScan._entry). */
static void entry(ccg_chrome_scan *s, int64_t start, int call) {
    int after_end = s->has_ended && s->ended == start;
    if (call) {
        int64_t must = after_end ? MUST_LAST : 0;
        if (s->has_entry && s->entry == start && !s->entry_open)
            must |= MUST_BE_EMPTY;
        if (must == (MUST_BE_EMPTY | MUST_LAST))
            s->complete = 0;
        s->number[s->depth] = s->calls++;
        s->start[s->depth] = start;
        s->must[s->depth++] = must;
    } else if (after_end) {
        s->complete = 0;
    }
    s->has_entry = 1, s->entry = start, s->entry_open = call;
    s->has_ended = 0;
}

int ccg_chrome_scan_batch(ccg_chrome_scan *s, const int64_t *time, const uint8_t *kind, int64_t n,
                          int64_t first_call, int64_t *ends, int64_t *late_number, int64_t *late_end,
                          int64_t *late_count, int64_t *failed_at) {
    *late_count = 0;
    for (int64_t i = 0; i < n; i++) {
        int64_t at = time[i];
        if (kind[i] != CCG_LEAVE) {
            entry(s, at, kind[i] == CCG_ENTER);
            continue;
        }
        if (s->depth == 0) {
            *failed_at = i;
            return CCG_ERR_INPUT;
        }
        s->depth--;
        int64_t number = s->number[s->depth], start = s->start[s->depth], must = s->must[s->depth];
        if (((must & MUST_BE_EMPTY) && at != start) || ((must & MUST_LAST) && at == start))
            s->complete = 0;
        s->entry_open = 0;
        s->has_ended = 1, s->ended = at;
        if (number >= first_call) {
            ends[number - first_call] = at;
        } else {
            late_number[*late_count] = number;
            late_end[(*late_count)++] = at;
        }
    }
    return CCG_OK;
}

/* An instant of category ccgformat: a flow event when the message has a partner. */
static char *instant(const ccg_chrome_style *style, const ccg_columns *c, int64_t i, int64_t flow, char *at) {
    int kind = c->kind[i];
    at = ccg_put_string(at, flow ? &style->flow : &style->instant, kind);
    for (int64_t f = style->field_start[kind]; f < style->field_start[kind + 1]; f++) {
        at = ccg_put_string(at, &style->field_key, f);
        int64_t which = style->field_column[f];
        at = which < 0 ? ccg_put_string(at, &style->peer, c->ref[i]) : ccg_put_i64(at, ccg_column(c, which, i));
    }
    *at++ = '}';
    if (flow) {
        at = ccg_put(at, ",\"id\":", 6);
        at = ccg_put_i64(at, flow);
        at = ccg_put_string(at, &style->flow_end, kind);
    }
    return at;
}

int64_t ccg_chrome_lines(const ccg_chrome_style *style, ccg_chrome_batch *b, int64_t index, char *out,
                         int64_t capacity, int64_t *written) {
    const ccg_columns *c = &b->columns;
    const ccg_clock *clock = &style->clock;
    char *at = out, *end = out + capacity;
    for (; index < b->count && end - at >= style->line_bytes; index++) {
        int kind = c->kind[index];
        int64_t ref = c->ref[index];
        if (kind == CCG_LEAVE && b->complete)
            continue;
        if (!b->first)
            at = ccg_put(at, ",\n", 2);
        b->first = 0;
        if (kind == CCG_ENTER) {
            at = ccg_put_string(at, b->complete ? &style->complete_begin : &style->begin, ref);
        } else if (kind == CCG_LEAVE) {
            at = ccg_put_string(at, &style->end, ref);
        } else {
            at = instant(style, c, index, b->flow[index], at);
        }
        at = ccg_put(at, b->place, (size_t)b->place_bytes);
        at = ccg_put(at, ",\"ts\":", 6);
        __int128 start = ccg_clock_scaled(clock, c->time[index]);
        at = ccg_put_fixed(at, start, clock->digits, clock->strip);
        if (kind == CCG_ENTER && b->complete) {
            at = ccg_put(at, ",\"dur\":", 7);
            at = ccg_put_fixed(at, ccg_clock_scaled(clock, b->ends[b->ends_used++]) - start, clock->digits,
                               clock->strip);
        }
        *at++ = '}';
    }
    *written = at - out;
    return index;
}
