/* Paje in C (export_paje.h): the C twin of writer._Writer.step for events without hints
 * of the kinds it writes; it stops where the reference must take over. */
#include "export_paje.h"

/* Where a line's fields come from: a batch row, or (row -1) a LEAVE held back. */
typedef struct event_at {
    int64_t time, location, ref, row;
} event_at;

static int is_send(int kind) { return kind == CCG_SEND || kind == CCG_ISEND; }
static int is_message(int kind) { return kind >= CCG_SEND && kind <= CCG_IRECV; }

static char *describe(const ccg_paje_style *s, const ccg_columns *c, int64_t i, char *at) {
    int kind = c->kind[i];
    at = ccg_put_string(at, &s->describe_head, kind);
    for (int64_t f = s->describe_start[kind]; f < s->describe_start[kind + 1]; f++) {
        at = ccg_put_string(at, &s->describe_key, f);
        at = ccg_put_i64(at, ccg_column(c, s->describe_column[f], i));
    }
    return ccg_put_string(at, &s->describe_tail, kind);
}

/* A link's key: sender-receiver-comm-tag-number. */
static char *link_key(const ccg_columns *c, const ccg_paje_batch *b, int64_t i, int64_t location, char *at) {
    int send = is_send(c->kind[i]);
    at = ccg_put_i64(at, send ? location : c->ref[i]);
    *at++ = '-';
    at = ccg_put_i64(at, send ? c->ref[i] : location);
    *at++ = '-';
    at = ccg_put_i64(at, c->comm[i]);
    *at++ = '-';
    at = ccg_put_i64(at, c->tag[i]);
    *at++ = '-';
    return ccg_put_i64(at, b->link_number[i]);
}

static char *line(const ccg_paje_style *s, const ccg_paje_batch *b, int kind, const event_at *e, char *at) {
    const ccg_columns *c = &b->columns;
    at = ccg_put_string(at, &s->line_id, kind);
    for (int64_t j = s->line_start[kind]; j < s->line_start[kind + 1]; j++) {
        *at++ = ' ';
        switch (s->slot[j]) {
        case CCG_PAJE_LITERAL: at = ccg_put_string(at, &s->literal, s->slot_literal[j]); break;
        case CCG_PAJE_TIME: at = ccg_put_time(at, &s->clock, e->time); break;
        case CCG_PAJE_CONTAINER: at = ccg_put_string(at, &s->container, e->location); break;
        case CCG_PAJE_REGION_TYPE: at = ccg_put_string(at, &s->region_type, e->ref); break;
        case CCG_PAJE_REGION_VALUE: at = ccg_put_string(at, &s->region_value, e->ref); break;
        case CCG_PAJE_METRIC_TYPE: at = ccg_put_string(at, &s->metric_type, e->ref); break;
        case CCG_PAJE_METRIC_VALUE:
            at = s->metric_format[e->ref] ? ccg_put_u64(at, (uint64_t)c->value[e->row])
                                          : ccg_put_i64(at, c->value[e->row]);
            break;
        case CCG_PAJE_LINK_VALUE:
            at = ccg_put(at, "\"comm ", 6);
            at = ccg_put_i64(at, c->comm[e->row]);
            at = ccg_put(at, " tag ", 5);
            at = ccg_put_i64(at, c->tag[e->row]);
            *at++ = '"';
            break;
        case CCG_PAJE_LINK_KEY: at = link_key(c, b, e->row, e->location, at); break;
        default: at = describe(s, c, e->row, at); break;
        }
    }
    *at++ = '\n';
    return at;
}

/* The line an event gives (-1: none), or -2 when the reference must write it. */
static int line_of(const ccg_paje_style *s, const ccg_paje_state *st, const ccg_paje_batch *b, int64_t i) {
    const ccg_columns *c = &b->columns;
    int kind = c->kind[i];
    int64_t ref = c->ref[i], location = b->location[i];
    int line = -1;
    if (location < 0 || location >= st->locations)
        return -2;
    if (kind == CCG_ENTER || kind == CCG_LEAVE) {
        if (ref < 0 || ref >= s->region_type.count)
            return -2;
        if (kind == CCG_ENTER)
            line = st->depth[location] == 0 ? CCG_PAJE_SET : CCG_PAJE_PUSH;
    } else if (kind == CCG_METRIC) {
        if (ref < 0 || ref >= s->metric_type.count || s->metric_format[ref] < 0)
            return -2;
        line = CCG_PAJE_VARIABLE;
    } else if (kind == CCG_GENERIC || kind == CCG_MARKER) {
        return -2;
    } else if (s->generic) {
        line = is_message(kind) && b->link_matched[i] ? (is_send(kind) ? CCG_PAJE_START_LINK : CCG_PAJE_END_LINK)
                                                      : CCG_PAJE_OTHER;
    }
    return line >= 0 && !s->line_ok[line] ? -2 : line;
}

/* Write the LEAVEs held back as PajePopState lines (those written are dropped):
 * CCG_PAJE_DONE, CCG_PAJE_FULL or CCG_PAJE_EVENT (one the reference must write). */
static int flush(const ccg_paje_style *s, ccg_paje_state *st, const ccg_paje_batch *b, char **at, char *end) {
    int result = CCG_PAJE_DONE;
    int64_t k = 0;
    for (; k < st->pending; k++) {
        int64_t ref = st->pending_ref[k];
        if (!s->line_ok[CCG_PAJE_POP] || ref < 0 || ref >= s->region_type.count) {
            result = CCG_PAJE_EVENT;
            break;
        }
        if (end - *at < s->line_bytes) {
            result = CCG_PAJE_FULL;
            break;
        }
        event_at e = {st->pending_time[k], st->group_location, ref, -1};
        *at = line(s, b, CCG_PAJE_POP, &e, *at);
    }
    st->pending -= k;
    memmove(st->pending_time, st->pending_time + k, (size_t)st->pending * sizeof(int64_t));
    memmove(st->pending_ref, st->pending_ref + k, (size_t)st->pending * sizeof(int64_t));
    return result;
}

int64_t ccg_paje_lines(const ccg_paje_style *s, ccg_paje_state *st, const ccg_paje_batch *b, int64_t index,
                       char *out, int64_t capacity, int64_t *written, int *stop) {
    const ccg_columns *c = &b->columns;
    char *at = out, *end = out + capacity;
    *stop = CCG_PAJE_DONE;
    for (; index < b->count; index++) {
        int kind = c->kind[index];
        int64_t time = c->time[index], location = b->location[index], ref = c->ref[index];
        int line_kind = line_of(s, st, b, index);
        if (line_kind == -2) {
            *stop = CCG_PAJE_EVENT;
            break;
        }
        if (!st->has_group || time != st->group_time || location != st->group_location) {
            if (time >= st->lifecycle) {
                *stop = CCG_PAJE_GROUP;
                break;
            }
            if ((*stop = flush(s, st, b, &at, end)) != CCG_PAJE_DONE)
                break;
            st->has_group = 1, st->group_time = time, st->group_location = location;
        }
        if (kind == CCG_LEAVE) {
            st->pending_time[st->pending] = time;
            st->pending_ref[st->pending++] = ref;
            st->depth[location]--;
            continue;
        }
        if (line_kind == CCG_PAJE_SET)
            st->pending = 0;  /* the LEAVEs a PajeSetState implies */
        if ((*stop = flush(s, st, b, &at, end)) != CCG_PAJE_DONE)
            break;
        if (line_kind >= 0) {
            if (end - at < s->line_bytes) {
                *stop = CCG_PAJE_FULL;
                break;
            }
            event_at e = {time, location, ref, index};
            at = line(s, b, line_kind, &e, at);
        }
        if (kind == CCG_ENTER)
            st->depth[location]++;
    }
    *written = at - out;
    return index;
}
