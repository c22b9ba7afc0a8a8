/* OTF2 export in C: a location's batch handed to the OTF2 event writer a record at a
 * time without Python (ccgformat/formats/otf2/export.py is the reference; export_otf2.py
 * wraps this, ccgformat/formats/otf2/fast.py prepares the batch). The event writer
 * functions are those of the OTF2 library inside the `otf2` package (their addresses come
 * from its binding; the argument types are checked against otf2read.c's). */
#ifndef CCG_EXPORT_OTF2_H
#define CCG_EXPORT_OTF2_H

#include <stdint.h>
#include "ccg.h"

typedef int (*ccg_otf2_region_fn)(void *writer, void *attributes, uint64_t time, uint32_t region);
typedef int (*ccg_otf2_p2p_fn)(void *writer, void *attributes, uint64_t time, uint32_t peer, uint32_t comm,
                               uint32_t tag, uint64_t length);
typedef int (*ccg_otf2_ip2p_fn)(void *writer, void *attributes, uint64_t time, uint32_t peer, uint32_t comm,
                                uint32_t tag, uint64_t length, uint64_t request);
typedef int (*ccg_otf2_request_fn)(void *writer, void *attributes, uint64_t time, uint64_t request);
typedef int (*ccg_otf2_plain_fn)(void *writer, void *attributes, uint64_t time);
typedef int (*ccg_otf2_coll_end_fn)(void *writer, void *attributes, uint64_t time, uint8_t operation, uint32_t comm,
                                    uint32_t root, uint64_t sent, uint64_t received);
typedef int (*ccg_otf2_metric_fn)(void *writer, void *attributes, uint64_t time, uint32_t metric, uint8_t count,
                                  const uint8_t *types, const uint64_t *values);

/* OTF2_EvtWriter_Enter, _Leave, _MpiSend, _MpiRecv, _MpiIsend, _MpiIrecv, _MpiIrecvRequest,
 * _MpiIsendComplete, _MpiCollectiveBegin, _MpiCollectiveEnd and _Metric. */
typedef struct ccg_otf2_records {
    ccg_otf2_region_fn enter, leave;
    ccg_otf2_p2p_fn send, recv;
    ccg_otf2_ip2p_fn isend, irecv;
    ccg_otf2_request_fn irecv_request, isend_complete;
    ccg_otf2_plain_fn collective_begin;
    ccg_otf2_coll_end_fn collective_end;
    ccg_otf2_metric_fn metric;
} ccg_otf2_records;

/* A location's batch, prepared: the rows C writes (`ok`: every argument in range), and
 * per row its OTF2 reference (`target`: the region, the peer's rank, the root's rank or
 * the metric), communicator and, for a metric, its member's value type. */
typedef struct ccg_otf2_batch {
    ccg_columns columns;
    int64_t count;
    const uint8_t *ok;
    const int64_t *target, *comm, *metric_type;
} ccg_otf2_batch;

/* Write the rows from `index` on while they are ok; returns the first row not written.
 * A record the library refuses stops it there with its error code in *error. */
int64_t ccg_otf2_write(const ccg_otf2_records *records, void *writer, const ccg_otf2_batch *batch, int64_t index,
                       int *error);

#endif
