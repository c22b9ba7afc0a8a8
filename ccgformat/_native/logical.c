/* Graph kernels of logical time and the scan of its events' calls (logical.h). */
#include "logical.h"
#include "ccg.h"

#include <stdlib.h>
#include <string.h>

/* The edges grouped by source (compressed rows): out[start[u] .. start[u + 1]) are the
 * positions k of u's edges, in input order. 0 on success, -1 out of memory, -2 a bad node. */
static int by_source(int64_t n, int64_t m, const int64_t *src, const int64_t *dst, int64_t **start_out,
                     int64_t **out_out) {
    int64_t *start = calloc((size_t)n + 1, sizeof *start);
    int64_t *out = malloc(((size_t)m + 1) * sizeof *out);
    if (!start || !out) {
        free(start);
        free(out);
        return -1;
    }
    for (int64_t k = 0; k < m; k++) {
        if (src[k] < 0 || src[k] >= n || dst[k] < 0 || dst[k] >= n) {
            free(start);
            free(out);
            return -2;
        }
        start[src[k] + 1]++;
    }
    for (int64_t u = 0; u < n; u++)
        start[u + 1] += start[u];
    int64_t *fill = malloc(((size_t)n + 1) * sizeof *fill);
    if (!fill) {
        free(start);
        free(out);
        return -1;
    }
    memcpy(fill, start, ((size_t)n + 1) * sizeof *fill);
    for (int64_t k = 0; k < m; k++)
        out[fill[src[k]]++] = k;
    free(fill);
    *start_out = start;
    *out_out = out;
    return 0;
}

int64_t ccg_logical_longest(int64_t n, int64_t m, const int64_t *src, const int64_t *dst, const int64_t *weight,
                            const int64_t *base, int64_t *value) {
    int64_t *start, *out;
    int code = by_source(n, m, src, dst, &start, &out);
    if (code)
        return code;
    /* per node its sources not yet final, and the queue of final nodes: one allocation */
    int64_t *waiting = calloc(2 * ((size_t)n + 1), sizeof *waiting);
    if (!waiting) {
        free(start);
        free(out);
        return -1;
    }
    int64_t *queue = waiting + n + 1;
    for (int64_t k = 0; k < m; k++)
        waiting[dst[k]]++;
    int64_t head = 0, tail = 0;
    for (int64_t v = 0; v < n; v++) {
        value[v] = base[v];
        if (!waiting[v])
            queue[tail++] = v;
    }
    /* a node is queued once every source has given it its value: it is final then */
    while (head < tail) {
        int64_t u = queue[head++];
        for (int64_t e = start[u]; e < start[u + 1]; e++) {
            int64_t k = out[e], v = dst[k];
            if (value[u] + weight[k] > value[v])
                value[v] = value[u] + weight[k];
            if (--waiting[v] == 0)
                queue[tail++] = v;
        }
    }
    for (int64_t v = 0; v < n; v++)
        if (waiting[v])
            value[v] = INT64_MIN;
    free(start);
    free(out);
    free(waiting);
    return tail;
}

int64_t ccg_logical_scc(int64_t n, int64_t m, const int64_t *src, const int64_t *dst, int64_t *component) {
    int64_t *start, *out;
    int code = by_source(n, m, src, dst, &start, &out);
    if (code)
        return code;
    /* iterative Tarjan: index and lowlink per node, the node stack, the call stack of nodes
     * with their next edge position, and whether a node is on the stack: one allocation */
    int64_t *scratch = malloc(6 * ((size_t)n + 1) * sizeof *scratch);
    if (!scratch) {
        free(start);
        free(out);
        return -1;
    }
    int64_t *index = scratch, *low = index + n + 1, *stack = low + n + 1, *calls = stack + n + 1;
    int64_t *next = calls + n + 1, *on_stack = next + n + 1;
    for (int64_t v = 0; v < n; v++)
        on_stack[v] = 0;
    for (int64_t v = 0; v < n; v++)
        index[v] = -1;
    int64_t counter = 0, top = 0, depth = 0, components = 0;
    for (int64_t root = 0; root < n; root++) {
        if (index[root] >= 0)
            continue;
        calls[depth++] = root;
        index[root] = low[root] = counter++;
        next[root] = start[root];
        stack[top++] = root;
        on_stack[root] = 1;
        while (depth) {
            int64_t u = calls[depth - 1];
            if (next[u] < start[u + 1]) {
                int64_t v = dst[out[next[u]++]];
                if (index[v] < 0) {
                    index[v] = low[v] = counter++;
                    next[v] = start[v];
                    stack[top++] = v;
                    on_stack[v] = 1;
                    calls[depth++] = v;
                } else if (on_stack[v] && index[v] < low[u]) {
                    low[u] = index[v];
                }
                continue;
            }
            depth--;
            if (depth && low[u] < low[calls[depth - 1]])
                low[calls[depth - 1]] = low[u];
            if (low[u] == index[u]) {
                int64_t w;
                do {
                    w = stack[--top];
                    on_stack[w] = 0;
                    component[w] = components;
                } while (w != u);
                components++;
            }
        }
    }
    free(start);
    free(out);
    free(scratch);
    return components;
}

int64_t ccg_logical_distances(int64_t members, const int64_t *start, const int64_t *stop, const int64_t *centre,
                              const int64_t *step, const int64_t *value, double *distance) {
    for (int64_t m = 0; m < members; m++) {
        int64_t c = centre[m];
        if (c < 0 || c >= members)
            return -2;
        int64_t i = start[m], j = start[c];
        const int64_t end_m = stop[m], end_c = stop[c];
        int have_m = 0, have_c = 0;
        double last_m = 0.0, last_c = 0.0, total = 0.0;
        int64_t counted = 0;
        while (i < end_m || j < end_c) {
            /* the next step either has an event at; each takes its value there, else keeps its last */
            int64_t at = i < end_m && (j >= end_c || step[i] <= step[j]) ? step[i] : step[j];
            if (i < end_m && step[i] == at) {
                last_m = (double)value[i++];
                have_m = 1;
            }
            if (j < end_c && step[j] == at) {
                last_c = (double)value[j++];
                have_c = 1;
            }
            if (have_m && have_c) {
                total += (last_m - last_c) * (last_m - last_c);
                counted++;
            }
        }
        distance[m] = counted ? total / (double)counted : 0.0;
    }
    return members;
}

int64_t ccg_logical_calls(int64_t n, const int64_t *owner, const uint8_t *kind, const int64_t *time,
                          const uint8_t *wanted, int64_t *state, int64_t *opened, int64_t *rows, int64_t *index,
                          int64_t *enter, int64_t *exit, int64_t *leave, int64_t *level, int64_t *closes) {
    int64_t location = state[0], seen = state[1], depth = state[2], carried = state[2];
    /* per level the last of the rows waiting for its LEAVE, each row linked to the one before */
    int64_t *last = malloc(((size_t)(depth + n) + 1) * sizeof *last);
    int64_t *before = malloc(((size_t)n + 1) * sizeof *before);
    if (!last || !before) {
        free(last);
        free(before);
        return -1;
    }
    for (int64_t d = 0; d <= depth + n; d++)
        last[d] = -1;
    for (int64_t d = 0; d < carried; d++)
        closes[d] = -1;
    int64_t count = 0;
    for (int64_t i = 0; i < n; i++) {
        if (owner[i] != location) { /* a new location: what is open keeps its own times */
            for (int64_t d = 1; d <= depth; d++)
                last[d] = -1;
            location = owner[i];
            seen = depth = carried = 0;
        }
        int64_t at = seen++;
        if (kind[i] == CCG_ENTER) {
            opened[depth++] = time[i];
        } else if (kind[i] == CCG_LEAVE) {
            if (!depth)
                continue;
            for (int64_t r = last[depth]; r >= 0; r = before[r]) {
                exit[r] = time[i];
                leave[r] = at;
            }
            last[depth] = -1;
            if (depth <= carried) { /* a level open before this chunk: the first LEAVE at it closes it */
                closes[depth - 1] = i;
                carried = depth - 1;
            }
            depth--;
        } else if (wanted[kind[i]]) {
            rows[count] = i;
            index[count] = at;
            enter[count] = depth ? opened[depth - 1] : time[i];
            exit[count] = time[i];
            leave[count] = -1;
            level[count] = 0;
            if (depth) {
                before[count] = last[depth];
                last[depth] = count;
            }
            count++;
        }
    }
    for (int64_t d = 1; d <= depth; d++) /* the rows still waiting at the chunk's end */
        for (int64_t r = last[d]; r >= 0; r = before[r])
            level[r] = d;
    state[0] = location;
    state[1] = seen;
    state[2] = depth;
    free(last);
    free(before);
    return count;
}
