/* The timeline by location (ccgformat/query/timeline.py, dissertation 4.5.4): each
 * location's tree depth first (the top frames of the stack a batch at a time, so that
 * their nodes are fetched from memory together), painting per pixel column the
 * exclusive time of each region group (formula 4.28) straight into the image. Sub-trees
 * inside one column add their memoized group times (the shared partial results of
 * 4.5.3); nodes with many children skip the children inside a column with running sums
 * over them (`ChildRuns` of timeline.py). The node columns are those of the window
 * descent (window.h). */
#ifndef CCG_TIMELINE_H
#define CCG_TIMELINE_H

#include <stdint.h>

#include "window.h"

/* `ChildRuns` of timeline.py: the parents with running sums over their children. */
typedef struct ccg_timeline_runs {
    const int32_t *slot;               /* per node, its number among the parents, or -1 */
    int64_t parents;
    const int64_t *base;               /* parents + 1: parent i has children base[i] .. base[i + 1] - 1 */
    const int64_t *total, *gap, *origin;  /* per parent */
    const int64_t *kids, *starts, *ends, *gaps;  /* per child */
    const int64_t *prefix;             /* base[parents] + 1 rows of groups + 1 running sums */
} ccg_timeline_runs;

/* The image and what is painted into it. */
typedef struct ccg_timeline_canvas {
    int64_t width;
    const int64_t *bounds;     /* width + 1 column bounds: start + i*(stop - start)//width */
    int64_t groups;
    int64_t rows;
    int64_t *image;            /* (rows, width, groups), added to */
    int64_t regions;
    const int64_t *group_of;   /* per region, its group */
    const int64_t *exclusive;  /* per node, groups + 1 columns: `group_exclusive` of timeline.py */
} ccg_timeline_canvas;

/* Paint into image row row[i] from root[i] (starting at begin[i]) for each of `roots`
 * locations (several may share a row: their times add up). Returns CCG_OK, or an error
 * code with a message in `error` (ERROR_SIZE bytes). */
int ccg_timeline_paint(const ccg_query_tables *t, const ccg_timeline_runs *runs, const ccg_timeline_canvas *c,
                       int64_t roots, const int64_t *root, const int64_t *begin, const int64_t *row, char *error);

/* `group_exclusive` of timeline.py: per node, groups + 1 columns into out - the exclusive
 * time of its sub-tree's calls per group (formula 4.26: a call's own total - inner time
 * in the group of its region, plus its children's sums, every reference counted; sums
 * wrap like numpy's int64), in one pass by node id (every child is an earlier node, as the
 * node blocks store them, else an error), and 0 in the last column (the caller's). */
int ccg_group_exclusive(const ccg_query_tables *t, const int64_t *inner, int64_t regions, const int64_t *group_of,
                        int64_t groups, int64_t *out, char *error);

#endif
