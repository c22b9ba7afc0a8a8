/* OTF2 export in C (export_otf2.h): the C twin of export._LocationWriter._event for the
 * rows its caller found in range. */
#include "export_otf2.h"

int64_t ccg_otf2_write(const ccg_otf2_records *r, void *w, const ccg_otf2_batch *b, int64_t index, int *error) {
    const ccg_columns *c = &b->columns;
    *error = 0;
    for (; index < b->count && b->ok[index]; index++) {
        uint64_t time = (uint64_t)c->time[index];
        uint32_t target = (uint32_t)b->target[index], comm = (uint32_t)b->comm[index];
        uint32_t tag = (uint32_t)c->tag[index];
        uint64_t size = (uint64_t)c->size[index], request = (uint64_t)c->request[index];
        int code;
        switch (c->kind[index]) {
        case CCG_ENTER: code = r->enter(w, NULL, time, target); break;
        case CCG_LEAVE: code = r->leave(w, NULL, time, target); break;
        case CCG_SEND: code = r->send(w, NULL, time, target, comm, tag, size); break;
        case CCG_RECV: code = r->recv(w, NULL, time, target, comm, tag, size); break;
        case CCG_ISEND: code = r->isend(w, NULL, time, target, comm, tag, size, request); break;
        case CCG_IRECV: code = r->irecv(w, NULL, time, target, comm, tag, size, request); break;
        case CCG_IRECV_REQUEST: code = r->irecv_request(w, NULL, time, request); break;
        case CCG_REQUEST_COMPLETE: code = r->isend_complete(w, NULL, time, request); break;
        case CCG_COLL_BEGIN: code = r->collective_begin(w, NULL, time); break;
        case CCG_COLL_END:
            code = r->collective_end(w, NULL, time, (uint8_t)c->ref[index], comm, target, size,
                                     (uint64_t)c->recv_size[index]);
            break;
        case CCG_METRIC: {
            uint8_t type = (uint8_t)b->metric_type[index];
            uint64_t value = (uint64_t)c->value[index];
            code = r->metric(w, NULL, time, target, 1, &type, &value);
            break;
        }
        default: return index;
        }
        if (code != 0) {
            *error = code;
            return index;
        }
    }
    return index;
}
