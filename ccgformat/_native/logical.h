/* Graph kernels of logical time (ccgformat/query/logical_graph.py, paper 003 section 3.1):
 * longest paths over a directed acyclic graph, which give Lamport steps, Ravel's strides,
 * steps and phase offsets, and the strongly connected components that merge
 * communication groups into phases. Nodes are 0 .. n - 1, edges the arrays src[k] ->
 * dst[k] (k < m); both read only. Besides, the scan that finds the call holding each
 * communication event (ccgformat/query/logical_walk.py, paper 003 section 2). */
#ifndef CCG_LOGICAL_H
#define CCG_LOGICAL_H

#include <stdint.h>

/* value[v] = max(base[v], max over the edges u -> v of value[u] + weight[k]), the nodes
 * taken in an order where every edge's source comes first (Kahn). Returns the number of
 * nodes reached; the others (on or behind a cycle) keep INT64_MIN. -1: out of memory;
 * -2: an edge names a node outside 0 .. n - 1. */
int64_t ccg_logical_longest(int64_t n, int64_t m, const int64_t *src, const int64_t *dst, const int64_t *weight,
                            const int64_t *base, int64_t *value);

/* component[v]: the strongly connected component of v, numbered from 0 in the order
 * Tarjan's algorithm completes them. Returns the number of components; -1: out of
 * memory; -2: an edge names a node outside 0 .. n - 1. */
int64_t ccg_logical_scc(int64_t n, int64_t m, const int64_t *src, const int64_t *dst, int64_t *component);

/* distance[m]: the distance of section 3.3.1 between member m and member centre[m], whose
 * events are step/value[start[x] .. stop[x]) with rising steps: over the steps where either
 * has an event, the squared difference of their values (a member without an event there
 * keeps its previous one; without any, the step is skipped), averaged (0 for no step).
 * Returns members; -2: a centre outside 0 .. members - 1. */
int64_t ccg_logical_distances(int64_t members, const int64_t *start, const int64_t *stop, const int64_t *centre,
                              const int64_t *step, const int64_t *value, double *distance);

/* The innermost call holding each wanted event of a chunk of walked events, the chunk's
 * locations in runs (owner), carrying what a location has open from one chunk to the next
 * (query/logical_walk.py `Calls`). state: the location the last chunk ended in, its events
 * so far and its open calls (depth), whose ENTER times are opened[0 .. depth) (capacity
 * depth + n); updated. Per wanted event (kind with wanted[kind] set), in order: its
 * position (rows), index in its location, the ENTER time of the innermost call open at it
 * (its own time outside any), the time and index of that call's LEAVE (its own time and
 * -1 until found, and for good where its location ends first), and level: the depth it
 * waits at when its call is still open at the chunk's end, else 0. closes[d - 1]: the
 * position of the LEAVE that closes the level d open before the chunk (its location
 * going on), -1: none. Returns the number of wanted events; -1: out of memory. */
int64_t ccg_logical_calls(int64_t n, const int64_t *owner, const uint8_t *kind, const int64_t *time,
                          const uint8_t *wanted, int64_t *state, int64_t *opened, int64_t *rows, int64_t *index,
                          int64_t *enter, int64_t *exit, int64_t *leave, int64_t *level, int64_t *closes);

#endif
