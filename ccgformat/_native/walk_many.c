/* Walking many locations in one call: see walk_many.h. */
#include "walk_many.h"
#include "walk.h"
#include "walk_support.h"

static int walk_one(ccg_walk *w, int64_t expected, const ccg_columns *out, char *error) {
    int64_t count = 0, written = 0;
    int rc = ccg_walk_count(w, &count);
    if (!rc && count != expected)
        return fail(error, CCG_ERR_INPUT, "the graph holds %lld events, the root says %lld",
                    (long long)count, (long long)expected);
    if (!rc && count)
        rc = ccg_walk_seek(w, 0);
    if (!rc && count)
        rc = ccg_walk_forward(w, out, count, &written);
    if (rc)
        return fail(error, rc, "%s", ccg_walk_error(w));
    if (written != count)
        return fail(error, CCG_ERR_INPUT, "the walk stopped after %lld of %lld events", (long long)written,
                    (long long)count);
    return CCG_OK;
}

int ccg_walk_many(const ccg_source *source, int64_t n, const int64_t *roots, const int64_t *starts,
                  const int64_t *offsets, const ccg_columns *out, int64_t *failed, char *error) {
    for (int64_t i = 0; i < n; i++) {
        int64_t at = offsets[i];
        ccg_columns part = {out->time + at, out->kind + at, out->ref + at, out->comm + at, out->tag + at,
                            out->request + at, out->size + at, out->recv_size + at, out->value + at};
        ccg_walk *w = ccg_walk_new(source, roots[i], starts[i]);
        if (!w) {
            *failed = i;
            return fail(error, CCG_ERR_MEMORY, "out of memory for a graph walk");
        }
        int rc = walk_one(w, offsets[i + 1] - at, &part, error);
        ccg_walk_free(w);
        if (rc) {
            *failed = i;
            return rc;
        }
    }
    return CCG_OK;
}
