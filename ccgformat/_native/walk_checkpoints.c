/* The checkpoint accumulator of the snapshot and summary indexes: the C port of
 * `_Accumulator` in ccgformat/archive/indexes.py. See walk_checkpoints.h. */
#include "walk_checkpoints.h"
#include "walk_support.h"

typedef struct open_call {
    int64_t entry, enter, child_time;
} open_call;

struct ccg_checkpointer {
    open_call *stack;
    int64_t depth, capacity;
    i64map region_entry;     /* region -> index into entries */
    int64_t *entries;        /* per region: region, calls, inclusive, exclusive */
    int64_t entry_count, entry_capacity;
    i64map metrics;          /* metric -> last value */
    int64_t messages[4], collectives[3];
    int64_t *out_stack, *out_metrics, *out_regions;
    int64_t out_stack_capacity, out_metrics_capacity, out_regions_capacity;
    int64_t added;           /* events so far, for messages */
    char error[ERROR_SIZE];
};

ccg_checkpointer *ccg_checkpointer_new(void) { return calloc(1, sizeof(ccg_checkpointer)); }

void ccg_checkpointer_free(ccg_checkpointer *acc) {
    if (!acc)
        return;
    free(acc->stack);
    free(acc->entries);
    free(acc->out_stack);
    free(acc->out_metrics);
    free(acc->out_regions);
    map_free(&acc->region_entry);
    map_free(&acc->metrics);
    free(acc);
}

const char *ccg_checkpointer_error(const ccg_checkpointer *acc) { return acc->error; }

static int enter(ccg_checkpointer *acc, int64_t region, int64_t time) {
    int64_t *entry = map_slot(&acc->region_entry, region, acc->entry_count);
    if (!entry || !grow((void **)&acc->stack, &acc->capacity, acc->depth + 1, sizeof(open_call)))
        return fail(acc->error, CCG_ERR_MEMORY, "out of memory for the call statistics");
    if (*entry == acc->entry_count) {
        if (!grow((void **)&acc->entries, &acc->entry_capacity, 4 * (acc->entry_count + 1), sizeof(int64_t)))
            return fail(acc->error, CCG_ERR_MEMORY, "out of memory for the call statistics");
        int64_t *e = &acc->entries[4 * acc->entry_count++];
        e[0] = region;
        e[1] = e[2] = e[3] = 0;
    }
    acc->entries[4 * *entry + 1]++;
    acc->stack[acc->depth++] = (open_call){*entry, time, 0};
    return CCG_OK;
}

int ccg_checkpointer_add(ccg_checkpointer *acc, const ccg_columns *events, int64_t count) {
    for (int64_t i = 0; i < count; i++, acc->added++) {
        int64_t time = events->time[i];
        int code;
        switch (events->kind[i]) {
        case CCG_ENTER:
            if ((code = enter(acc, events->ref[i], time)) != CCG_OK)
                return code;
            break;
        case CCG_LEAVE: {
            if (acc->depth == 0)
                return fail(acc->error, CCG_ERR_INPUT, "event %lld leaves a region that was never entered",
                            (long long)acc->added);
            open_call call = acc->stack[--acc->depth];
            int64_t inclusive = sub64(time, call.enter);
            int64_t *e = &acc->entries[4 * call.entry];
            e[2] = add64(e[2], inclusive);
            e[3] = add64(e[3], sub64(inclusive, call.child_time));
            if (acc->depth)
                acc->stack[acc->depth - 1].child_time = add64(acc->stack[acc->depth - 1].child_time, inclusive);
            break;
        }
        case CCG_SEND:
        case CCG_ISEND:
            acc->messages[0]++;
            acc->messages[1] = add64(acc->messages[1], events->size[i]);
            break;
        case CCG_RECV:
        case CCG_IRECV:
            acc->messages[2]++;
            acc->messages[3] = add64(acc->messages[3], events->size[i]);
            break;
        case CCG_COLL_END:
            acc->collectives[0]++;
            acc->collectives[1] = add64(acc->collectives[1], events->size[i]);
            acc->collectives[2] = add64(acc->collectives[2], events->recv_size[i]);
            break;
        case CCG_METRIC: {
            int64_t *value = map_slot(&acc->metrics, events->ref[i], 0);
            if (!value)
                return fail(acc->error, CCG_ERR_MEMORY, "out of memory for metric values");
            *value = events->value[i];
            break;
        }
        default:
            break;
        }
    }
    return CCG_OK;
}

int ccg_checkpointer_snapshot(ccg_checkpointer *acc, int64_t time, ccg_checkpoint *out) {
    int64_t regions = acc->entry_count;
    if (!grow((void **)&acc->out_regions, &acc->out_regions_capacity, 4 * regions + 4, sizeof(int64_t)) ||
        !grow((void **)&acc->out_stack, &acc->out_stack_capacity, 2 * acc->depth + 2, sizeof(int64_t)) ||
        !map_sorted_pairs(&acc->metrics, &acc->out_metrics, &acc->out_metrics_capacity))
        return fail(acc->error, CCG_ERR_MEMORY, "out of memory for a checkpoint");
    int64_t *rows = acc->out_regions;
    if (regions)
        memcpy(rows, acc->entries, (size_t)(4 * regions) * sizeof(int64_t));
    for (int64_t s = 0; s < acc->depth; s++) {
        const open_call *call = &acc->stack[s];
        int64_t *e = &rows[4 * call->entry];
        int64_t elapsed = sub64(time, call->enter);
        e[2] = add64(e[2], elapsed);
        e[3] = add64(e[3], sub64(elapsed, call->child_time));
        /* an open call's exclusive part also excludes its open callee's elapsed time */
        if (s + 1 < acc->depth)
            e[3] = sub64(e[3], sub64(time, acc->stack[s + 1].enter));
        acc->out_stack[2 * s] = rows[4 * call->entry];
        acc->out_stack[2 * s + 1] = call->enter;
    }
    if (regions)
        qsort(rows, (size_t)regions, 4 * sizeof(int64_t), compare_first);
    out->stack_count = acc->depth;
    out->stack = acc->out_stack;
    out->metric_count = acc->metrics.size;
    out->metrics = acc->out_metrics;
    out->region_count = regions;
    out->regions = rows;
    memcpy(out->messages, acc->messages, sizeof acc->messages);
    memcpy(out->collectives, acc->collectives, sizeof acc->collectives);
    return CCG_OK;
}
