/* Decimal text of integers and fixed-point timestamps (export.h). */
#include "export.h"

static const char PAIRS[201] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

char *ccg_put_u64(char *at, uint64_t value) {
    char digits[CCG_INT_BYTES];
    char *end = digits + sizeof digits, *p = end;
    while (value >= 100) {
        unsigned pair = (unsigned)(value % 100) * 2;
        value /= 100;
        *--p = PAIRS[pair + 1];
        *--p = PAIRS[pair];
    }
    if (value >= 10) {
        *--p = PAIRS[value * 2 + 1];
        *--p = PAIRS[value * 2];
    } else {
        *--p = (char)('0' + value);
    }
    return ccg_put(at, p, (size_t)(end - p));
}

char *ccg_put_i64(char *at, int64_t value) {
    if (value < 0) {
        *at++ = '-';
        return ccg_put_u64(at, (uint64_t)0 - (uint64_t)value);
    }
    return ccg_put_u64(at, (uint64_t)value);
}

/* The decimal digits of a magnitude, exactly `width` of them (zero-padded) when width > 0. */
static char *put_magnitude(char *at, unsigned __int128 value, int width) {
    char digits[40];
    char *end = digits + sizeof digits, *p = end;
    while (value >> 64) {
        *--p = (char)('0' + (int)(value % 10));
        value /= 10;
    }
    uint64_t low = (uint64_t)value;
    do {
        *--p = (char)('0' + (int)(low % 10));
        low /= 10;
    } while (low);
    while (end - p < width)
        *--p = '0';
    return ccg_put(at, p, (size_t)(end - p));
}

static const uint64_t POWERS[20] = {
    UINT64_C(1), UINT64_C(10), UINT64_C(100), UINT64_C(1000), UINT64_C(10000), UINT64_C(100000),
    UINT64_C(1000000), UINT64_C(10000000), UINT64_C(100000000), UINT64_C(1000000000), UINT64_C(10000000000),
    UINT64_C(100000000000), UINT64_C(1000000000000), UINT64_C(10000000000000), UINT64_C(100000000000000),
    UINT64_C(1000000000000000), UINT64_C(10000000000000000), UINT64_C(100000000000000000),
    UINT64_C(1000000000000000000), UINT64_C(10000000000000000000)};

/* The decimals of a fraction below 10^digits: all `digits` of them, or without the
 * trailing zeros (none at all for 0) when `strip`. */
static char *put_fraction(char *at, unsigned __int128 fraction, int digits, int strip) {
    if (strip) {
        if (fraction == 0)
            return at;
        if (!(fraction >> 64)) {  /* 64-bit divisions where they do */
            uint64_t small = (uint64_t)fraction;
            while (small % 10 == 0) {
                small /= 10;
                digits--;
            }
            fraction = small;
        } else {
            while (fraction % 10 == 0) {
                fraction /= 10;
                digits--;
            }
        }
    }
    *at++ = '.';
    return put_magnitude(at, fraction, digits);
}

char *ccg_put_fixed(char *at, __int128 value, int digits, int strip) {
    unsigned __int128 magnitude = value < 0 ? (unsigned __int128)0 - (unsigned __int128)value
                                            : (unsigned __int128)value;
    if (value < 0)
        *at++ = '-';
    if (digits == 0)
        return put_magnitude(at, magnitude, 0);
    if (!(magnitude >> 64) && digits < 20) {  /* in 64 bits: no 128-bit division */
        uint64_t small = (uint64_t)magnitude, unit = POWERS[digits];
        at = ccg_put_u64(at, small / unit);
        return put_fraction(at, small % unit, digits, strip);
    }
    unsigned __int128 unit = 1;
    for (int i = 0; i < digits; i++)
        unit *= 10;
    at = put_magnitude(at, magnitude / unit, 0);
    return put_fraction(at, magnitude % unit, digits, strip);
}

__int128 ccg_clock_scaled(const ccg_clock *clock, int64_t time) {
    __int128 ticks = (__int128)time - clock->offset;
    if (clock->scale)
        return ticks * clock->scale;
    __int128 product = ticks * clock->numerator, denominator = clock->denominator;
    __int128 quotient = product / denominator, remainder = product % denominator;
    if (remainder < 0) {  /* floor division, as Python's divmod */
        quotient -= 1;
        remainder += denominator;
    }
    __int128 twice = 2 * remainder;
    if (clock->half_even)
        return quotient + (twice > denominator || (twice == denominator && (quotient & 1)));
    return quotient + (twice >= denominator);
}
