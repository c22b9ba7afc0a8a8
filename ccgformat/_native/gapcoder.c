/* The coded gaps stream (gapcoder.h): a binary range coder (32-bit range, 12-bit
 * probabilities moving 1/2, 1/4, ... then 1/32 of the way to each bit seen) over the bit length of each value
 * (a 6-level bit tree) and its mantissa (the top MODELLED bits in a bit tree per bit
 * length, the rest at probability 1/2), spec/format.md 5.8. */
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
#define MODELLED 3
#define LIMIT62 ((uint64_t)1 << 62)

/* An adaptive probability of a 0 bit, in units of 1/PROB_ONE, and how often it moved. */
typedef struct {
    uint16_t p;
    uint16_t updates;
} prob;

/* The probabilities of one row. */
typedef struct {
    prob length[1 << LENGTH_BITS];
    prob mantissa[1 << LENGTH_BITS][1 << MODELLED];
} model;

static void model_reset(model *m) {
    for (size_t i = 0; i < 1 << LENGTH_BITS; i++) m->length[i] = (prob){PROB_ONE / 2, 0};
    for (size_t c = 0; c < 1 << LENGTH_BITS; c++)
        for (size_t i = 0; i < 1 << MODELLED; i++) m->mantissa[c][i] = (prob){PROB_ONE / 2, 0};
}

/* Move ``q`` toward the bit seen; it stays within 1 .. PROB_ONE - 1. */
static void adapt(prob *q, int bit) {
    int rate = RATE[q->updates < RATES ? q->updates : RATES - 1];
    if (bit) q->p -= q->p >> rate;
    else q->p += (PROB_ONE - q->p) >> rate;
    if (q->updates < RATES) q->updates++;
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
    adapt(q, bit);
    while (e->range < TOP) {
        e->range <<= 8;
        shift_low(e);
    }
}

static void encode_direct(encoder *e, int bit) {
    e->range >>= 1;
    if (bit) e->low += e->range;
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
    encode_tree(e, m->mantissa[c], modelled, (v >> (rest - modelled)) & ((1u << modelled) - 1));
    for (int i = rest - modelled - 1; i >= 0; i--) encode_direct(e, (int)(v >> i) & 1);
}

int ccg_code_gaps(const uint64_t *values, int64_t count, const int64_t *row_length, int64_t rows,
                  uint8_t **out, size_t *out_length) {
    encoder e = {0, 0xFFFFFFFFu, 0, 1, NULL, 0, 0, 0};
    model m;
    for (int64_t r = 0, at = 0; r < rows && at < count; r++) {
        model_reset(&m);
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

static int decode_bit(decoder *d, prob *q) {
    uint32_t bound = (d->range >> PROB_BITS) * q->p;
    int bit = d->code >= bound;
    if (bit) {
        d->code -= bound;
        d->range -= bound;
    } else {
        d->range = bound;
    }
    adapt(q, bit);
    normalize(d);
    return bit;
}

static uint64_t decode_tree(decoder *d, prob *probs, int bits) {
    size_t node = 1;
    for (int i = 0; i < bits; i++) node = 2 * node + (size_t)decode_bit(d, &probs[node]);
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
    uint64_t v = ((uint64_t)1 << modelled) | decode_tree(d, m->mantissa[c], modelled);
    for (int i = 0; i < rest - modelled; i++) {
        d->range >>= 1;
        int bit = d->code >= d->range;
        if (bit) d->code -= d->range;
        normalize(d);
        v = 2 * v + (uint64_t)bit;
    }
    return v;
}

int ccg_decode_gaps(const uint8_t *coded, size_t length, const int64_t *row_length, int64_t rows,
                    uint64_t *values, int64_t count) {
    if (length == 0 || coded[0] != 0) return CCG_ERR_INPUT;  /* the encoder's first byte is 0 */
    decoder d = {coded, length, 0, 0xFFFFFFFFu, 0, 0};
    for (int i = 0; i < 5; i++) d.code = (d.code << 8) | next(&d);
    model m;
    int64_t at = 0;
    for (int64_t r = 0; r < rows && !d.overrun; r++) {
        if (row_length[r] > count - at) return CCG_ERR_INPUT;
        model_reset(&m);
        for (int64_t i = 0; i < row_length[r] && !d.overrun; i++) values[at++] = decode_value(&d, &m);
    }
    return d.overrun || at != count || d.position != length ? CCG_ERR_INPUT : CCG_OK;
}
