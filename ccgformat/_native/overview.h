/* The overview's optimal aggregation (ccgformat/query/overview_measures.py and
 * overview_dp.py, paper 000 section III.E): the gain and loss of every (node, interval)
 * area, the dynamic programme over them and the parts of the optimal partition.
 * Intervals (i, j), i <= j, are packed per node in T (T + 1) / 2 columns, column
 * j (j + 1) / 2 + i. The numpy code is the reference these are tested against. */
#ifndef CCG_OVERVIEW_H
#define CCG_OVERVIEW_H

#include <stdint.h>

/* The hierarchy: nodes in preorder, node n covering leaves first_leaf[n] .. stop_leaf[n] - 1,
 * its children child[child_offset[n]] .. child[child_offset[n + 1] - 1], in order. */
typedef struct ccg_overview_tree {
    int64_t nodes;
    const int64_t *first_leaf, *stop_leaf;
    const int64_t *child_offset, *child;
} ccg_overview_tree;

/* gain and loss ([nodes, T (T + 1) / 2]) from the prefix sums over leaves of the
 * proportions (values: [leaves + 1, slices, states]) and of sum_x r log2 r (infos:
 * [leaves + 1, slices]). Returns CCG_OK or CCG_ERR_MEMORY. */
int ccg_overview_measures(const ccg_overview_tree *tree, int64_t slices, int64_t states, const double *values,
                          const double *infos, double *gain, double *loss);

/* The DP at p: the cut ([nodes, T (T + 1) / 2]) of every area, and the best pIC and part
 * count of the whole (root, 0 .. slices - 1); nodes are solved in postorder, holding the
 * pIC and part counts of only the children of the nodes on the path. Candidates, in order:
 * one part (cut j), the spatial cut (-1), the temporal cuts c = i .. j - 1; of those within
 * tolerance * max(1, |top|) of the highest pIC, the one with the fewest parts wins, then the
 * first. Returns CCG_OK or CCG_ERR_MEMORY. */
int ccg_overview_solve(const ccg_overview_tree *tree, int64_t slices, const double *gain, const double *loss,
                       double p, double tolerance, double *whole, int32_t *whole_parts, int32_t *cut);

/* The parts of the partition the cuts give from (root, 0 .. slices - 1), depth first
 * (children in order, the earlier interval first), at most capacity of them. Returns how
 * many, -1 if there are more than capacity, -2 when memory runs out. */
int64_t ccg_overview_parts(const ccg_overview_tree *tree, int64_t slices, const int32_t *cut, int64_t capacity,
                           int64_t *node, int64_t *first, int64_t *last);

#endif
