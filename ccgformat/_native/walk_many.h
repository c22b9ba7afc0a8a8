/* Walking many locations in one call (walk.h): every location's events, in time order,
 * into its own range of one set of columns - what a conversion's indexes and `ccg cat`
 * read for all locations, without a walker object per location. */
#ifndef CCG_WALK_MANY_H
#define CCG_WALK_MANY_H

#include "ccg.h"

/* Walk location i (root roots[i], first event at starts[i]) into rows offsets[i] ..
 * offsets[i+1] - 1 of `out`, for i = 0 .. n-1; a location whose graph holds another
 * number of events is an error. On an error, `failed` is the failing i and `error`
 * (256 bytes) says why. */
int ccg_walk_many(const ccg_source *source, int64_t n, const int64_t *roots, const int64_t *starts,
                  const int64_t *offsets, const ccg_columns *out, int64_t *failed, char *error);

#endif
