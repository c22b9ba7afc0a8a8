/* Hash consing of a node table for ccgformat/archive/merge (merge.c). */
#ifndef CCG_MERGE_H
#define CCG_MERGE_H

#include "ccg.h"

/* canon[i] = the first node j <= i of ``nodes`` equal to node i (local ids; kind, key,
 * soft values, durations and child count equal, and the children's canonical ids
 * equal) among those with ``shared`` set (a node without it is its own), bottom-up:
 * every child must lie below its parent (CCG_ERR_INPUT otherwise). */
int ccg_merge_canonical(const ccg_nodes *nodes, const uint8_t *shared, int64_t *canon);

#endif
