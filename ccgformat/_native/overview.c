/* The overview's optimal aggregation (overview.h). */
#include "overview.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "ccg.h"

#define COLUMN(i, j) ((j) * ((j) + 1) / 2 + (i))

static double xlogx(double v) { return v > 0 ? v * log2(v) : 0.0; }

/* whether node n covers the same leaves as node n + 1 (its only child, in preorder) */
static int same_as_next(const ccg_overview_tree *tree, int64_t n) {
    return n + 1 < tree->nodes && tree->first_leaf[n + 1] == tree->first_leaf[n]
           && tree->stop_leaf[n + 1] == tree->stop_leaf[n];
}

int ccg_overview_measures(const ccg_overview_tree *tree, int64_t slices, int64_t states, const double *values,
                          const double *infos, double *gain, double *loss) {
    int64_t columns = slices * (slices + 1) / 2;
    double *v = malloc(sizeof(double) * (size_t)((slices + 1) * states + 2 * slices + 1));
    int64_t *active = malloc(sizeof(int64_t) * (size_t)(states > 0 ? states : 1));
    if (!v || !active) {
        free(v), free(active);
        return CCG_ERR_MEMORY;
    }
    double *s = v + (slices + 1) * states, *logs = s + slices + 1;
    for (int64_t n = tree->nodes - 1; n >= 0; n--) {
        if (same_as_next(tree, n)) {  /* the same cells as its only child: the same values, bit for bit */
            memcpy(gain + n * columns, gain + (n + 1) * columns, sizeof(double) * (size_t)columns);
            memcpy(loss + n * columns, loss + (n + 1) * columns, sizeof(double) * (size_t)columns);
            continue;
        }
        const double *top = values + tree->stop_leaf[n] * slices * states;
        const double *bottom = values + tree->first_leaf[n] * slices * states;
        const double *itop = infos + tree->stop_leaf[n] * slices, *ibottom = infos + tree->first_leaf[n] * slices;
        int64_t used = 0;
        for (int64_t x = 0; x < states; x++) {  /* prefix sums over time of the node's slices, per state */
            int nonzero = 0;
            v[x] = 0.0;
            for (int64_t t = 0; t < slices; t++) {
                double cell = top[t * states + x] - bottom[t * states + x];
                nonzero |= cell != 0.0;
                v[(t + 1) * states + x] = v[t * states + x] + cell;
            }
            if (nonzero) active[used++] = x;  /* a state that is 0 in every slice adds exactly 0 below */
        }
        s[0] = 0.0;
        for (int64_t t = 0; t < slices; t++) s[t + 1] = s[t] + (itop[t] - ibottom[t]);
        int64_t width = tree->stop_leaf[n] - tree->first_leaf[n];
        for (int64_t length = 1; length <= slices; length++) logs[length - 1] = log2((double)(width * length));
        for (int64_t j = 0; j < slices; j++) {
            const double *end = v + (j + 1) * states;
            for (int64_t i = 0; i <= j; i++) {
                const double *begin = v + i * states;
                double total = 0.0, entropy = 0.0;
                for (int64_t k = 0; k < used; k++) {
                    double sum = end[active[k]] - begin[active[k]];
                    total += sum;
                    entropy += xlogx(sum);
                }
                double g = entropy - (s[j + 1] - s[i]);
                int64_t column = n * columns + COLUMN(i, j);
                gain[column] = g;
                loss[column] = total * logs[j - i] - g;
            }
        }
    }
    free(v), free(active);
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

/* the temporal cut c of (i, j), at or above the threshold: kept if it has fewer parts */
static inline void tie(const double *left, const double *right, const int32_t *own_parts, int64_t i, int64_t j,
                       int64_t c, double *best, int32_t *best_parts, int32_t *best_cut) {
    int32_t count = own_parts[COLUMN(i, c)] + own_parts[COLUMN(c + 1, j)];
    if (count < *best_parts) *best = left[c - i] + right[c - i], *best_parts = count, *best_cut = (int32_t)c;
}

/* The DP of one node over every interval, given its children's sums (when count > 0): its best
 * pIC into by[i][j] and at[j][i] (square layouts, so that the temporal cuts of (i, j) read
 * by[i][i..j-1] and at[j][i+1..j] contiguously), its part counts into own_parts and its cuts
 * into cut (the node's rows). */
static void solve_node(int64_t slices, const double *gain, const double *loss, double p, double tolerance,
                       int64_t count, const double *spatial, const int32_t *pieces, double *by, double *at,
                       int32_t *own_parts, int32_t *cut) {
    for (int64_t length = 1; length <= slices; length++) {
        for (int64_t i = 0; i + length <= slices; i++) {
            int64_t j = i + length - 1, column = COLUMN(i, j);
            double keep = p * gain[column] - (1.0 - p) * loss[column];
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
                    int64_t c = i;
#ifdef __SSE2__
                    /* two cuts at a time: only those not below the threshold are looked at */
                    __m128d limit = _mm_set1_pd(threshold);
                    for (; c + 2 <= j; c += 2) {
                        __m128d sums = _mm_add_pd(_mm_loadu_pd(left + c - i), _mm_loadu_pd(right + c - i));
                        int high = _mm_movemask_pd(_mm_cmpnlt_pd(sums, limit));
                        if (high & 1) tie(left, right, own_parts, i, j, c, &best, &best_parts, &best_cut);
                        if (high & 2) tie(left, right, own_parts, i, j, c + 1, &best, &best_parts, &best_cut);
                    }
#endif
                    for (; c < j; c++)
                        if (!(left[c - i] + right[c - i] < threshold))
                            tie(left, right, own_parts, i, j, c, &best, &best_parts, &best_cut);
                }
            }
            by[i * slices + j] = at[j * slices + i] = best;
            own_parts[column] = best_parts;
            cut[column] = best_cut;
        }
    }
}

int ccg_overview_solve(const ccg_overview_tree *tree, int64_t slices, const double *gain, const double *loss,
                       double p, double tolerance, double *whole, int32_t *whole_parts, int32_t *cut) {
    int64_t columns = slices * (slices + 1) / 2, height = 1;
    int64_t *depth = malloc(sizeof(int64_t) * (size_t)tree->nodes);
    if (!depth) return CCG_ERR_MEMORY;
    depth[0] = 0;
    for (int64_t n = 0; n < tree->nodes; n++)  /* preorder: a parent's depth is known before its children's */
        for (int64_t k = tree->child_offset[n]; k < tree->child_offset[n + 1]; k++) {
            depth[tree->child[k]] = depth[n] + 1;
            height = depth[n] + 2 > height ? depth[n] + 2 : height;
        }
    free(depth);
    /* a walk in postorder (children in order), so that the children's sums of the nodes on the
     * path build up child after child in one row per depth, not in [nodes x columns] tables */
    double *by = malloc(sizeof(double) * (size_t)(2 * slices * slices + height * columns));
    int32_t *counts = malloc(sizeof(int32_t) * (size_t)((height + 1) * columns));
    int64_t *path = malloc(sizeof(int64_t) * 2 * (size_t)height);
    if (!by || !counts || !path) {
        free(by), free(counts), free(path);
        return CCG_ERR_MEMORY;
    }
    double *at = by + slices * slices, *spatial = at + slices * slices;
    int32_t *own_parts = counts + height * columns;
    int64_t top = 1;
    path[0] = 0, path[1] = 0;  /* (node, how many of its children are done) per depth */
    while (top > 0) {
        int64_t n = path[2 * (top - 1)], done = path[2 * (top - 1) + 1];
        int64_t count = tree->child_offset[n + 1] - tree->child_offset[n];
        if (done < count) {
            path[2 * top] = tree->child[tree->child_offset[n] + done], path[2 * top + 1] = 0;
            path[2 * (top - 1) + 1]++, top++;
            continue;
        }
        int64_t level = top - 1;
        solve_node(slices, gain + n * columns, loss + n * columns, p, tolerance, count, spatial + level * columns,
                   counts + level * columns, by, at, own_parts, cut + n * columns);
        if (--top == 0) break;
        /* into the parent's sums, the children in order, as the reference adds them */
        int first = path[2 * (top - 1) + 1] == 1;
        double *sums = spatial + (top - 1) * columns;
        int32_t *pieces = counts + (top - 1) * columns;
        for (int64_t j = 0; j < slices; j++)
            for (int64_t i = 0; i <= j; i++) {
                int64_t column = COLUMN(i, j);
                sums[column] = (first ? 0.0 : sums[column]) + by[i * slices + j];
                pieces[column] = (first ? 0 : pieces[column]) + own_parts[column];
            }
    }
    *whole = by[slices - 1];
    *whole_parts = own_parts[COLUMN(0, slices - 1)];
    free(by), free(counts), free(path);
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
