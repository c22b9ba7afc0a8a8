/* Message matching helpers (messages.h). */
#include "messages.h"

#include <stdlib.h>
#include <string.h>

#include "ccg.h"

static uint64_t row_hash(int64_t k, const int64_t *const *keys, int64_t row) {
    uint64_t h = 0x243F6A8885A308D3ULL;
    for (int64_t c = 0; c < k; c++) {
        h ^= (uint64_t)keys[c][row];
        h *= 0x9E3779B97F4A7C15ULL;
        h ^= h >> 29;
    }
    return h;
}

static int same_key(int64_t k, const int64_t *const *keys, int64_t a, int64_t b) {
    for (int64_t c = 0; c < k; c++)
        if (keys[c][a] != keys[c][b])
            return 0;
    return 1;
}

int ccg_pair_fifo(int64_t n, int64_t k, const int64_t *const *keys, const uint8_t *side, int64_t *partner) {
    /* an open-addressing table of the keys met, at most half full: per slot a row holding
     * the key, and the queue of that key's rows still waiting (all of one side) */
    int64_t slots = 16;
    while (slots < 2 * n)
        slots *= 2;
    int64_t *owner = malloc((size_t)slots * sizeof *owner);
    int64_t *head = malloc((size_t)slots * sizeof *head);
    int64_t *tail = malloc((size_t)slots * sizeof *tail);
    int64_t *next = malloc((size_t)(n > 0 ? n : 1) * sizeof *next);
    if (!owner || !head || !tail || !next) {
        free(owner), free(head), free(tail), free(next);
        return CCG_ERR_MEMORY;
    }
    for (int64_t s = 0; s < slots; s++)
        owner[s] = -1;
    for (int64_t i = 0; i < n; i++) {
        partner[i] = -1;
        int64_t s = (int64_t)(row_hash(k, keys, i) & (uint64_t)(slots - 1));
        while (owner[s] >= 0 && !same_key(k, keys, owner[s], i))
            s = (s + 1) & (slots - 1);
        if (owner[s] < 0) {
            owner[s] = i;
            head[s] = tail[s] = -1;
        }
        int64_t first = head[s];
        if (first >= 0 && side[first] != side[i]) {  /* the oldest waiting row of the other side */
            partner[i] = first;
            partner[first] = i;
            head[s] = next[first];
            if (head[s] < 0)
                tail[s] = -1;
        } else {                                     /* wait behind this side's earlier rows */
            next[i] = -1;
            if (tail[s] >= 0)
                next[tail[s]] = i;
            else
                head[s] = i;
            tail[s] = i;
        }
    }
    free(owner), free(head), free(tail), free(next);
    return CCG_OK;
}

static const char digit_pairs[201] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

/* The decimal digits of v at out (two at a time); returns how many. */
static int64_t put_int(char *out, int64_t v) {
    char digits[20];
    uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    int at = 20;
    while (u >= 100) {
        const char *pair = digit_pairs + 2 * (u % 100);
        u /= 100;
        digits[--at] = pair[1];
        digits[--at] = pair[0];
    }
    if (u >= 10) {
        digits[--at] = digit_pairs[2 * u + 1];
        digits[--at] = digit_pairs[2 * u];
    } else {
        digits[--at] = (char)('0' + u);
    }
    int64_t written = 0;
    if (v < 0)
        out[written++] = '-';
    memcpy(out + written, digits + at, (size_t)(20 - at));
    return written + 20 - at;
}

int64_t ccg_format_rows(int64_t n, int64_t k, const int64_t *const *columns, const char *const *prefix,
                        const char *suffix, const char *separator, char *out, int64_t capacity) {
    size_t suffix_length = strlen(suffix), separator_length = strlen(separator);
    size_t prefix_length[64];
    if (k > 64)
        return -1;
    size_t row_most = suffix_length + separator_length;
    for (int64_t c = 0; c < k; c++) {
        prefix_length[c] = strlen(prefix[c]);
        row_most += prefix_length[c] + 20;
    }
    int64_t at = 0;
    for (int64_t i = 0; i < n; i++) {
        if (capacity - at < (int64_t)row_most)
            return -1;
        if (i) {
            memcpy(out + at, separator, separator_length);
            at += (int64_t)separator_length;
        }
        for (int64_t c = 0; c < k; c++) {
            memcpy(out + at, prefix[c], prefix_length[c]);
            at += (int64_t)prefix_length[c];
            at += put_int(out + at, columns[c][i]);
        }
        memcpy(out + at, suffix, suffix_length);
        at += (int64_t)suffix_length;
    }
    return at;
}
