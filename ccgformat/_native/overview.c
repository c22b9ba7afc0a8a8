/* The overview's optimal aggregation (overview.h). */
#include "overview.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "ccg.h"

#define COLUMN(i, j) ((j) * ((j) + 1) / 2 + (i))

static double xlogx(double v) { return v > 0 ? v * log2(v) : 0.0; }

int ccg_overview_measures(const ccg_overview_tree *tree, int64_t slices, int64_t states, const double *values,
                          const double *infos, double *gain, double *loss) {
    int64_t columns = slices * (slices + 1) / 2;
    double *v = malloc(sizeof(double) * (size_t)((slices + 1) * states + slices + 1));
    if (!v) return CCG_ERR_MEMORY;
    double *s = v + (slices + 1) * states;
    for (int64_t n = 0; n < tree->nodes; n++) {
        const double *top = values + tree->stop_leaf[n] * slices * states;
        const double *bottom = values + tree->first_leaf[n] * slices * states;
        const double *itop = infos + tree->stop_leaf[n] * slices, *ibottom = infos + tree->first_leaf[n] * slices;
        for (int64_t x = 0; x < states; x++) v[x] = 0.0;
        s[0] = 0.0;
        for (int64_t t = 0; t < slices; t++) {  /* prefix sums over time of the node's slices */
            for (int64_t x = 0; x < states; x++)
                v[(t + 1) * states + x] = v[t * states + x] + (top[t * states + x] - bottom[t * states + x]);
            s[t + 1] = s[t] + (itop[t] - ibottom[t]);
        }
        int64_t width = tree->stop_leaf[n] - tree->first_leaf[n];
        for (int64_t j = 0; j < slices; j++) {
            for (int64_t i = 0; i <= j; i++) {
                double total = 0.0, entropy = 0.0;
                for (int64_t x = 0; x < states; x++) {
                    double sum = v[(j + 1) * states + x] - v[i * states + x];
                    total += sum;
                    entropy += xlogx(sum);
                }
                double g = entropy - (s[j + 1] - s[i]);
                int64_t column = n * columns + COLUMN(i, j);
                gain[column] = g;
                loss[column] = total * log2((double)(width * (j - i + 1))) - g;
            }
        }
    }
    free(v);
    return CCG_OK;
}

static inline double threshold_of(double top, double tolerance) {
    return top - tolerance * (fabs(top) > 1.0 ? fabs(top) : 1.0);
}

/* the largest a[k] + b[k], k < n (two lanes at a time where SSE2 is there) */
static double top_sum(const double *a, const double *b, int64_t n) {
    double top = -HUGE_VAL;
    int64_t k = 0;
#ifdef __SSE2__
    __m128d lanes = _mm_set1_pd(-HUGE_VAL), more = lanes;  /* two chains, to overlap their latency */
    for (; k + 4 <= n; k += 4) {
        lanes = _mm_max_pd(lanes, _mm_add_pd(_mm_loadu_pd(a + k), _mm_loadu_pd(b + k)));
        more = _mm_max_pd(more, _mm_add_pd(_mm_loadu_pd(a + k + 2), _mm_loadu_pd(b + k + 2)));
    }
    for (; k + 2 <= n; k += 2) lanes = _mm_max_pd(lanes, _mm_add_pd(_mm_loadu_pd(a + k), _mm_loadu_pd(b + k)));
    lanes = _mm_max_pd(lanes, more);
    double pair[2];
    _mm_storeu_pd(pair, lanes);
    top = pair[0] > pair[1] ? pair[0] : pair[1];
#endif
    for (; k < n; k++) top = a[k] + b[k] > top ? a[k] + b[k] : top;
    return top;
}

int ccg_overview_solve(const ccg_overview_tree *tree, int64_t slices, const double *gain, const double *loss,
                       double p, double tolerance, double *pic, int32_t *parts, int32_t *cut) {
    int64_t columns = slices * (slices + 1) / 2;
    /* the node's best pIC in two square layouts, by[i][j] and at[j][i], so that the temporal
     * cuts of (i, j) read by[i][i..j-1] and at[j][i+1..j] contiguously */
    double *by = malloc(sizeof(double) * (size_t)(2 * slices * slices + columns));
    int32_t *pieces = malloc(sizeof(int32_t) * (size_t)columns);
    if (!by || !pieces) {
        free(by), free(pieces);
        return CCG_ERR_MEMORY;
    }
    double *at = by + slices * slices, *spatial = at + slices * slices;
    for (int64_t n = tree->nodes - 1; n >= 0; n--) {
        int64_t row = n * columns;
        const int64_t *kids = tree->child + tree->child_offset[n];
        int64_t count = tree->child_offset[n + 1] - tree->child_offset[n];
        double *own = pic + row;
        int32_t *own_parts = parts + row;
        for (int64_t k = 0; k < count; k++) {  /* the children's sums, in order, as the reference adds them */
            const double *child = pic + kids[k] * columns;
            const int32_t *child_parts = parts + kids[k] * columns;
            for (int64_t column = 0; column < columns; column++) {
                spatial[column] = (k == 0 ? 0.0 : spatial[column]) + child[column];
                pieces[column] = (k == 0 ? 0 : pieces[column]) + child_parts[column];
            }
        }
        for (int64_t length = 1; length <= slices; length++) {
            for (int64_t i = 0; i + length <= slices; i++) {
                int64_t j = i + length - 1, column = COLUMN(i, j);
                double keep = p * gain[row + column] - (1.0 - p) * loss[row + column];
                double split = count > 0 ? spatial[column] : -HUGE_VAL;
                const double *left = by + i * slices + i, *right = at + j * slices + i + 1;
                double top = keep > split ? keep : split;
                double temporal = length > 1 ? top_sum(left, right, length - 1) : -HUGE_VAL;
                top = top > temporal ? top : temporal;
                double threshold = threshold_of(top, tolerance);
                /* the ties within the tolerance of the top: the fewest parts, then the first in order */
                double best = keep;
                int32_t best_parts = 1, best_cut = (int32_t)j;
                if (keep < threshold) {
                    best_parts = INT32_MAX;
                    if (count > 0 && split >= threshold) best = split, best_parts = pieces[column], best_cut = -1;
                    if (temporal >= threshold) {
                        for (int64_t c = i; c < j; c++) {
                            double value = left[c - i] + right[c - i];
                            if (value < threshold) continue;
                            int32_t count_c = own_parts[COLUMN(i, c)] + own_parts[COLUMN(c + 1, j)];
                            if (count_c < best_parts) best = value, best_parts = count_c, best_cut = (int32_t)c;
                        }
                    }
                }
                own[column] = by[i * slices + j] = at[j * slices + i] = best;
                own_parts[column] = best_parts;
                cut[row + column] = best_cut;
            }
        }
    }
    free(by), free(pieces);
    return CCG_OK;
}

int64_t ccg_overview_parts(const ccg_overview_tree *tree, int64_t slices, const int32_t *cut, int64_t capacity,
                           int64_t *node, int64_t *first, int64_t *last) {
    int64_t columns = slices * (slices + 1) / 2, size = 64, top = 0, found = 0;
    int64_t *stack = malloc(sizeof(int64_t) * 3 * (size_t)size);
    if (!stack) return -2;
    stack[0] = 0, stack[1] = 0, stack[2] = slices - 1, top = 1;
    while (top > 0) {
        top--;
        int64_t n = stack[3 * top], i = stack[3 * top + 1], j = stack[3 * top + 2];
        int32_t choice = cut[n * columns + COLUMN(i, j)];
        int64_t count = choice == -1 ? tree->child_offset[n + 1] - tree->child_offset[n] : 2;
        if (choice == j) {
            if (found == capacity) { free(stack); return -1; }
            node[found] = n, first[found] = i, last[found] = j, found++;
            continue;
        }
        if (top + count > size) {
            while (top + count > size) size *= 2;
            int64_t *grown = realloc(stack, sizeof(int64_t) * 3 * (size_t)size);
            if (!grown) { free(stack); return -2; }
            stack = grown;
        }
        if (choice == -1) {
            const int64_t *kids = tree->child + tree->child_offset[n];
            for (int64_t k = count - 1; k >= 0; k--, top++)
                stack[3 * top] = kids[k], stack[3 * top + 1] = i, stack[3 * top + 2] = j;
        } else {
            stack[3 * top] = n, stack[3 * top + 1] = choice + 1, stack[3 * top + 2] = j, top++;
            stack[3 * top] = n, stack[3 * top + 1] = i, stack[3 * top + 2] = choice, top++;
        }
    }
    free(stack);
    return found;
}
