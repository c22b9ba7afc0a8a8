/* The coded gaps stream (gapcoder.h): a binary range coder (32-bit range, 12-bit
 * probabilities moving 1/2, 1/4, ... then 1/32 of the way to each bit seen) over the bit
 * length of each value (a 6-level bit tree) and its bits below the leading one (the top
 * MODELLED in a bit tree per bit length, each lower one with a probability of its own per
 * bit length and position), spec/format.md 5.8; archive/gapcoder.py is the reference. */
#include "gapcoder.h"

#include <stdlib.h>
#include <string.h>

#define PROB_BITS 12
#define PROB_ONE (1u << PROB_BITS)
/* A probability's n-th update moves it 2**-RATE[n] of the way (the last entry thereafter):
 * fast while it has seen few bits, then steadier. */
static const uint8_t RATE[] = {1, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 4, 4, 5};
#define RATES (sizeof RATE / sizeof RATE[0])
#define TOP ((uint32_t)1 << 24)
#define LENGTH_BITS 6
#define MODELLED 4
#define LENGTHS (1 << LENGTH_BITS)
#define LIMIT62 ((uint64_t)1 << 62)

/* An adaptive probability of a 0 bit, in units of 1/PROB_ONE, and how often it moved
 * (counted up to RATES - 1, whose rate it keeps: the rate is a plain table read). */
typedef struct {
    uint16_t p;
    uint16_t updates;
} prob;

/* The probabilities of one row: the bit length tree, and per bit length its mantissa tree
 * and its low bits by position, reset when the row first meets the length (``row`` of
 * ``seen``: the row that last did). */
typedef struct {
    prob length[LENGTHS];
    prob mantissa[LENGTHS][1 << MODELLED];
    prob low[LENGTHS][LENGTHS];
    int64_t seen[LENGTHS];
    int64_t row;
} model;

static void model_start(model *m, int64_t row) {
    for (size_t i = 0; i < LENGTHS; i++) m->length[i] = (prob){PROB_ONE / 2, 0};
    m->row = row;
}

static void model_meet(model *m, int c) {
    if (m->seen[c] == m->row) return;
    m->seen[c] = m->row;
    for (size_t i = 0; i < 1 << MODELLED; i++) m->mantissa[c][i] = (prob){PROB_ONE / 2, 0};
    for (size_t i = 0; i < LENGTHS; i++) m->low[c][i] = (prob){PROB_ONE / 2, 0};
}

static void model_init(model *m) {
    for (size_t c = 0; c < LENGTHS; c++) m->seen[c] = -1;
}

/* Move ``q`` toward the bit seen; it stays within 1 .. PROB_ONE - 1. */
/* Branch-free (``mask``: all ones for a 1 bit, else 0): the bits of a noisy row are
 * unpredictable. */
static inline void adapt(prob *q, uint32_t mask) {
    uint32_t p = q->p, updates = q->updates, rate = RATE[updates];
    q->p = (uint16_t)(p + (((PROB_ONE - p) >> rate) & ~mask) - ((p >> rate) & mask));
    q->updates = (uint16_t)(updates + (updates < RATES - 1));
}

static int bit_length(uint64_t v) { return v ? 64 - __builtin_clzll(v) : 0; }

/* ------------------------------------------------------------------ encoding */

typedef struct {
    uint64_t low;
    uint32_t range;
    uint8_t cache;
    uint64_t cache_size;
    uint8_t *out;
    size_t length, capacity;
    int failed;
} encoder;

static void put(encoder *e, uint8_t byte) {
    if (e->length == e->capacity) {
        size_t capacity = e->capacity ? 2 * e->capacity : 256;
        uint8_t *grown = realloc(e->out, capacity);
        if (!grown) {
            e->failed = 1;
            return;
        }
        e->out = grown;
        e->capacity = capacity;
    }
    e->out[e->length++] = byte;
}

static void shift_low(encoder *e) {
    if ((uint32_t)e->low < 0xFF000000u || (e->low >> 32) != 0) {
        uint8_t carry = (uint8_t)(e->low >> 32);
        uint8_t temp = e->cache;
        do {
            put(e, (uint8_t)(temp + carry));
            temp = 0xFF;
        } while (--e->cache_size != 0);
        e->cache = (uint8_t)(e->low >> 24);
    }
    e->cache_size++;
    e->low = (e->low & 0x00FFFFFFu) << 8;
}

static void encode_bit(encoder *e, prob *q, int bit) {
    uint32_t bound = (e->range >> PROB_BITS) * q->p;
    if (bit) {
        e->low += bound;
        e->range -= bound;
    } else {
        e->range = bound;
    }
    adapt(q, 0u - (uint32_t)bit);
    while (e->range < TOP) {
        e->range <<= 8;
        shift_low(e);
    }
}

static void encode_tree(encoder *e, prob *probs, int bits, uint64_t value) {
    size_t node = 1;
    for (int i = bits - 1; i >= 0; i--) {
        int bit = (int)(value >> i) & 1;
        encode_bit(e, &probs[node], bit);
        node = 2 * node + (size_t)bit;
    }
}

static void encode_value(encoder *e, model *m, uint64_t v) {
    int c = bit_length(v);
    encode_tree(e, m->length, LENGTH_BITS, (uint64_t)c);
    if (c < 2) return;
    int rest = c - 1, modelled = rest < MODELLED ? rest : MODELLED;
    model_meet(m, c);
    encode_tree(e, m->mantissa[c], modelled, (v >> (rest - modelled)) & ((1u << modelled) - 1));
    for (int i = rest - modelled - 1; i >= 0; i--) encode_bit(e, &m->low[c][i], (int)(v >> i) & 1);
}

int ccg_code_gaps(const uint64_t *values, int64_t count, const int64_t *row_length, int64_t rows,
                  uint8_t **out, size_t *out_length) {
    encoder e = {0, 0xFFFFFFFFu, 0, 1, NULL, 0, 0, 0};
    model m;
    model_init(&m);
    for (int64_t r = 0, at = 0; r < rows && at < count; r++) {
        model_start(&m, r);
        for (int64_t i = 0; i < row_length[r] && at < count; i++) encode_value(&e, &m, values[at++]);
    }
    for (int i = 0; i < 5; i++) shift_low(&e);
    if (e.failed) {
        free(e.out);
        return CCG_ERR_MEMORY;
    }
    *out = e.out ? e.out : malloc(1);
    *out_length = e.length;
    return *out ? CCG_OK : CCG_ERR_MEMORY;
}

/* ------------------------------------------------------------------ decoding */

typedef struct {
    const uint8_t *in;
    size_t length, position;
    uint32_t range, code;
    int overrun;
} decoder;

static uint8_t next(decoder *d) {
    if (d->position < d->length) return d->in[d->position++];
    d->overrun = 1;
    return 0;
}

static void normalize(decoder *d) {
    while (d->range < TOP) {
        d->range <<= 8;
        d->code = (d->code << 8) | next(d);
    }
}

/* One bit of probability ``p`` (that of ``q``, read by the caller), ``q`` adapted.
 * Branch-free, as adapt (``mask``: all ones for a 1 bit). */
static inline uint32_t decode_bit_of(decoder *d, prob *q, uint32_t p) {
    uint32_t bound = (d->range >> PROB_BITS) * p;
    uint32_t bit = d->code >= bound, mask = 0u - bit;
    d->code -= bound & mask;
    d->range = (bound & ~mask) | ((d->range - bound) & mask);
    adapt(q, mask);
    if (d->range < TOP) normalize(d);
    return bit;
}

static inline uint32_t decode_bit(decoder *d, prob *q) { return decode_bit_of(d, q, q->p); }

/* A bit tree of ``bits`` >= 1 levels. Above the last level both children's
 * probabilities are read before the bit chooses one: the next bit need not wait for a
 * load. */
static inline uint64_t decode_tree(decoder *d, prob *probs, int bits) {
    size_t node = 1;
    uint32_t p = probs[1].p;
    for (int i = 1; i < bits; i++) {
        uint32_t zero = probs[2 * node].p, one = probs[2 * node + 1].p;
        uint32_t mask = 0u - decode_bit_of(d, &probs[node], p);
        node = 2 * node + (mask & 1);
        p = (zero & ~mask) | (one & mask);
    }
    node = 2 * node + decode_bit_of(d, &probs[node], p);
    return node - ((size_t)1 << bits);
}

static uint64_t decode_value(decoder *d, model *m) {
    int c = (int)decode_tree(d, m->length, LENGTH_BITS);
    if (c < 2) return (uint64_t)c;
    if (c > 62) {
        d->overrun = 1;  /* no value below 2**62 is that long */
        return 0;
    }
    int rest = c - 1, modelled = rest < MODELLED ? rest : MODELLED;
    model_meet(m, c);
    uint64_t v = ((uint64_t)1 << modelled) | decode_tree(d, m->mantissa[c], modelled);
    for (int i = rest - modelled - 1; i >= 0; i--) v = 2 * v + (uint64_t)decode_bit(d, &m->low[c][i]);
    return v;
}

int ccg_decode_gaps(const uint8_t *coded, size_t length, const int64_t *row_length, int64_t rows,
                    uint64_t *values, int64_t count) {
    if (length == 0 || coded[0] != 0) return CCG_ERR_INPUT;  /* the encoder's first byte is 0 */
    decoder d = {coded, length, 0, 0xFFFFFFFFu, 0, 0};
    for (int i = 0; i < 5; i++) d.code = (d.code << 8) | next(&d);
    model m;
    model_init(&m);
    int64_t at = 0;
    for (int64_t r = 0; r < rows && !d.overrun; r++) {
        if (row_length[r] > count - at) return CCG_ERR_INPUT;
        model_start(&m, r);
        for (int64_t i = 0; i < row_length[r] && !d.overrun; i++) values[at++] = decode_value(&d, &m);
    }
    return d.overrun || at != count || d.position != length ? CCG_ERR_INPUT : CCG_OK;
}
