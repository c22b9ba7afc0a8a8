/* Reading OTF2 event files with C callbacks into columns; see otf2read.h. */
#define _GNU_SOURCE
#include "ccg.h"
#include "otf2read.h"

#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ the OTF2 API used
 * Declared from the documented API. OTF2_ErrorCode has negative members (an int);
 * OTF2_CallbackCode is an enum of small non-negative values, mirrored here. */
typedef int otf2_error;
typedef enum { OTF2R_CALLBACK_SUCCESS = 0, OTF2R_CALLBACK_INTERRUPT = 1 } otf2_callback_code;
typedef union { int64_t signed_int; uint64_t unsigned_int; double floating_point; } otf2_metric_value;

#define CALLBACK_HEAD uint64_t otf2_location, uint64_t time, uint64_t position, void *user, void *attributes
typedef otf2_callback_code (*cb_plain)(CALLBACK_HEAD);
typedef otf2_callback_code (*cb_region)(CALLBACK_HEAD, uint32_t region);
typedef otf2_callback_code (*cb_p2p)(CALLBACK_HEAD, uint32_t peer, uint32_t comm, uint32_t tag, uint64_t length);
typedef otf2_callback_code (*cb_ip2p)(CALLBACK_HEAD, uint32_t peer, uint32_t comm, uint32_t tag, uint64_t length,
                                      uint64_t request);
typedef otf2_callback_code (*cb_request)(CALLBACK_HEAD, uint64_t request);
typedef otf2_callback_code (*cb_coll_end)(CALLBACK_HEAD, uint8_t operation, uint32_t comm, uint32_t root,
                                          uint64_t sent, uint64_t received);
typedef otf2_callback_code (*cb_metric)(CALLBACK_HEAD, uint32_t metric, uint8_t count, const uint8_t *types,
                                        const otf2_metric_value *values);

/* The functions looked up, in the order of `symbol_names`. */
typedef struct otf2_api {
    void *(*get_evt_reader)(void *reader, uint64_t location);
    otf2_error (*close_evt_reader)(void *reader, void *evt_reader);
    otf2_error (*set_callbacks)(void *evt_reader, const void *callbacks, void *user);
    otf2_error (*read_events)(void *evt_reader, uint64_t records, uint64_t *read);
    void *(*callbacks_new)(void);
    void (*callbacks_delete)(void *callbacks);
    uint32_t (*attribute_count)(const void *attributes);
    const char *(*error_name)(otf2_error code);
    otf2_error (*set_enter)(void *callbacks, cb_region callback);
    otf2_error (*set_leave)(void *callbacks, cb_region callback);
    otf2_error (*set_mpi_send)(void *callbacks, cb_p2p callback);
    otf2_error (*set_mpi_recv)(void *callbacks, cb_p2p callback);
    otf2_error (*set_mpi_isend)(void *callbacks, cb_ip2p callback);
    otf2_error (*set_mpi_irecv)(void *callbacks, cb_ip2p callback);
    otf2_error (*set_mpi_irecv_request)(void *callbacks, cb_request callback);
    otf2_error (*set_mpi_isend_complete)(void *callbacks, cb_request callback);
    otf2_error (*set_mpi_collective_begin)(void *callbacks, cb_plain callback);
    otf2_error (*set_mpi_collective_end)(void *callbacks, cb_coll_end callback);
    otf2_error (*set_metric)(void *callbacks, cb_metric callback);
    otf2_error (*set_unknown)(void *callbacks, cb_plain callback);
} otf2_api;

static const char *const symbol_names[] = {
    "OTF2_Reader_GetEvtReader", "OTF2_Reader_CloseEvtReader", "OTF2_EvtReader_SetCallbacks",
    "OTF2_EvtReader_ReadEvents", "OTF2_EvtReaderCallbacks_New", "OTF2_EvtReaderCallbacks_Delete",
    "OTF2_AttributeList_GetNumberOfElements", "OTF2_Error_GetName",
    "OTF2_EvtReaderCallbacks_SetEnterCallback", "OTF2_EvtReaderCallbacks_SetLeaveCallback",
    "OTF2_EvtReaderCallbacks_SetMpiSendCallback", "OTF2_EvtReaderCallbacks_SetMpiRecvCallback",
    "OTF2_EvtReaderCallbacks_SetMpiIsendCallback", "OTF2_EvtReaderCallbacks_SetMpiIrecvCallback",
    "OTF2_EvtReaderCallbacks_SetMpiIrecvRequestCallback", "OTF2_EvtReaderCallbacks_SetMpiIsendCompleteCallback",
    "OTF2_EvtReaderCallbacks_SetMpiCollectiveBeginCallback", "OTF2_EvtReaderCallbacks_SetMpiCollectiveEndCallback",
    "OTF2_EvtReaderCallbacks_SetMetricCallback", "OTF2_EvtReaderCallbacks_SetUnknownCallback",
};
#define SYMBOL_COUNT ((int64_t)(sizeof symbol_names / sizeof symbol_names[0]))

#define INT64_LIMIT ((uint64_t)1 << 63)
#define UNDEFINED_RANK UINT32_C(0xFFFFFFFF)
/* Records asked of the library per call at most (a chunk ends earlier through an
 * interrupt); never more than one past the records the chunk headers announce. */
#define RECORDS_PER_CALL (UINT64_C(1) << 20)
/* A reference table is dense (an array indexed by reference) below this many entries. */
#define DENSE_LIMIT (INT64_C(1) << 22)

struct otf2r_library {
    void *handle;
    otf2_api api;
};

/* OTF2 reference -> index: a dense array when the references are small, else a sorted
 * array searched by bisection. */
typedef struct ref_map {
    int64_t count;
    uint64_t *refs;
    int64_t *index;
    int64_t dense_size;
    int64_t *dense;       /* ref -> index, -1 undefined */
} ref_map;

struct otf2r_reader {
    otf2r_library *library;
    void *otf2_reader;
    void *callbacks;
    ref_map regions, comms, metrics;   /* metrics: ref -> position in the metric arrays */
    int64_t comm_count;
    int64_t *comm_size, *comm_offset;
    int64_t member_count;
    int64_t *comm_members;
    int64_t *metric_first, *metric_type_start;
    uint8_t *metric_types;
};

struct otf2r_stream {
    otf2r_reader *reader;
    void *evt_reader;
    uint64_t position;      /* of the last record seen */
    uint64_t records;       /* read by the library, with or without a callback of ours */
    uint64_t skipped;       /* records without a callback of ours */
    uint64_t limit;         /* records the chunk headers announce */
    int64_t *stack;         /* model regions of the open ENTERs */
    int64_t depth, stack_capacity;
    int reason;
    int full, ended, out_of_memory;
    otf2r_columns *out;
};

static void set_message(char *message, size_t size, const char *format, ...) {
    if (message == NULL || size == 0) return;
    va_list args;
    va_start(args, format);
    vsnprintf(message, size, format, args);
    va_end(args);
}

int64_t otf2r_symbol_count(void) { return SYMBOL_COUNT; }

const char *otf2r_symbol_name(int64_t index) {
    return index >= 0 && index < SYMBOL_COUNT ? symbol_names[index] : NULL;
}

/* ------------------------------------------------------------------ library */

int otf2r_library_open(const char *path, const char *const *names, int64_t name_count, otf2r_library **out,
                       char *message, size_t message_size) {
    *out = NULL;
    if (name_count != SYMBOL_COUNT) {
        set_message(message, message_size, "expected %lld OTF2 function names, got %lld",
                    (long long)SYMBOL_COUNT, (long long)name_count);
        return CCG_ERR_INPUT;
    }
    otf2r_library *library = calloc(1, sizeof *library);
    if (library == NULL) return CCG_ERR_MEMORY;
    library->handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (library->handle == NULL) {
        const char *reason = dlerror();
        set_message(message, message_size, "cannot load %s: %s", path, reason ? reason : "unknown error");
        free(library);
        return CCG_ERR_INPUT;
    }
    void *found[SYMBOL_COUNT];
    for (int64_t i = 0; i < SYMBOL_COUNT; i++) {
        found[i] = names[i] == NULL ? NULL : dlsym(library->handle, names[i]);
        if (found[i] == NULL) {
            set_message(message, message_size, "%s has no function %s", path, names[i] ? names[i] : "(null)");
            dlclose(library->handle);
            free(library);
            return CCG_ERR_INPUT;
        }
    }
    /* POSIX: a dlsym result converts to the function pointer it names */
    void (**slots[])(void) = {
        (void (**)(void))&library->api.get_evt_reader, (void (**)(void))&library->api.close_evt_reader,
        (void (**)(void))&library->api.set_callbacks, (void (**)(void))&library->api.read_events,
        (void (**)(void))&library->api.callbacks_new, (void (**)(void))&library->api.callbacks_delete,
        (void (**)(void))&library->api.attribute_count, (void (**)(void))&library->api.error_name,
        (void (**)(void))&library->api.set_enter, (void (**)(void))&library->api.set_leave,
        (void (**)(void))&library->api.set_mpi_send, (void (**)(void))&library->api.set_mpi_recv,
        (void (**)(void))&library->api.set_mpi_isend, (void (**)(void))&library->api.set_mpi_irecv,
        (void (**)(void))&library->api.set_mpi_irecv_request,
        (void (**)(void))&library->api.set_mpi_isend_complete,
        (void (**)(void))&library->api.set_mpi_collective_begin,
        (void (**)(void))&library->api.set_mpi_collective_end,
        (void (**)(void))&library->api.set_metric, (void (**)(void))&library->api.set_unknown,
    };
    _Static_assert(sizeof slots / sizeof slots[0] == sizeof symbol_names / sizeof symbol_names[0],
                   "one slot per symbol");
    for (int64_t i = 0; i < SYMBOL_COUNT; i++) memcpy(slots[i], &found[i], sizeof found[i]);
    *out = library;
    return CCG_OK;
}

void otf2r_library_close(otf2r_library *library) {
    if (library == NULL) return;
    dlclose(library->handle);
    free(library);
}

/* ------------------------------------------------------------------ reference maps */

static void map_free(ref_map *map) {
    free(map->refs);
    free(map->index);
    free(map->dense);
    memset(map, 0, sizeof *map);
}

/* A map of `count` sorted refs; false when out of memory or not sorted and unique. */
static int map_init(ref_map *map, int64_t count, const uint64_t *refs, const int64_t *index) {
    memset(map, 0, sizeof *map);
    if (count <= 0) return 1;
    map->count = count;
    map->refs = malloc((size_t)count * sizeof *map->refs);
    map->index = malloc((size_t)count * sizeof *map->index);
    if (map->refs == NULL || map->index == NULL) return 0;
    memcpy(map->refs, refs, (size_t)count * sizeof *refs);
    memcpy(map->index, index, (size_t)count * sizeof *index);
    for (int64_t i = 1; i < count; i++)
        if (refs[i] <= refs[i - 1]) return 0;
    uint64_t largest = refs[count - 1];
    if (largest < (uint64_t)DENSE_LIMIT && largest < (uint64_t)(16 * count + 4096)) {
        map->dense_size = (int64_t)largest + 1;
        map->dense = malloc((size_t)map->dense_size * sizeof *map->dense);
        if (map->dense == NULL) return 0;
        for (int64_t i = 0; i < map->dense_size; i++) map->dense[i] = -1;
        for (int64_t i = 0; i < count; i++) map->dense[refs[i]] = index[i];
    }
    return 1;
}

static inline int64_t map_find(const ref_map *map, uint64_t ref) {
    if (map->dense != NULL) return ref < (uint64_t)map->dense_size ? map->dense[ref] : -1;
    int64_t low = 0, high = map->count;
    while (low < high) {
        int64_t middle = low + (high - low) / 2;
        if (map->refs[middle] < ref) low = middle + 1;
        else high = middle;
    }
    return low < map->count && map->refs[low] == ref ? map->index[low] : -1;
}

/* ------------------------------------------------------------------ callbacks */

static inline otf2_callback_code fall_back(otf2r_stream *s, int reason) {
    if (s->reason == OTF2R_MAPPED) s->reason = reason;
    return OTF2R_CALLBACK_INTERRUPT;
}

/* Notes `records` skipped records before the chunk's next event; false when the gap
 * columns are full. */
static int add_gap(otf2r_stream *s, uint64_t records) {
    otf2r_columns *c = s->out;
    if (c->gap_count >= c->gap_capacity) return 0;
    c->gap_at[c->gap_count] = c->count;
    c->gap_records[c->gap_count] = (int64_t)records;
    c->gap_count++;
    s->skipped += records;
    return 1;
}

/* The checks every record passes before it is mapped: the records skipped before it (a
 * jump in the positions) noted as a gap, no attribute list, a timestamp in int64. */
static inline int record_ok(otf2r_stream *s, uint64_t time, uint64_t position, void *attributes) {
    if (position <= s->position) return fall_back(s, OTF2R_DAMAGED), 0;
    if (position > s->limit) return fall_back(s, OTF2R_DAMAGED), 0;
    if (position != s->position + 1 && !add_gap(s, position - s->position - 1))
        return fall_back(s, OTF2R_RECORD), 0;
    s->position = position;
    if (attributes != NULL && s->reader->library->api.attribute_count(attributes) != 0)
        return fall_back(s, OTF2R_ATTRIBUTES), 0;
    if (time >= INT64_LIMIT) return fall_back(s, OTF2R_TIME), 0;
    return 1;
}

static inline void emit(otf2r_stream *s, uint64_t time, uint8_t kind, int64_t ref, int64_t comm, int64_t tag,
                        int64_t request, int64_t size, int64_t recv_size, int64_t value) {
    otf2r_columns *c = s->out;
    int64_t i = c->count++;
    c->events.time[i] = (int64_t)time;
    c->events.kind[i] = kind;
    c->events.ref[i] = ref;
    c->events.comm[i] = comm;
    c->events.tag[i] = tag;
    c->events.request[i] = request;
    c->events.size[i] = size;
    c->events.recv_size[i] = recv_size;
    c->events.value[i] = value;
}

/* After a mapped record: stop when the chunk has no room for another record's events and
 * the gap before it (a record adds at most one gap; the end of the location one more). */
static inline otf2_callback_code record_done(otf2r_stream *s) {
    if (s->out->count >= s->out->capacity - OTF2R_HEADROOM || s->out->gap_count >= s->out->gap_capacity - 1) {
        s->full = 1;
        return OTF2R_CALLBACK_INTERRUPT;
    }
    return OTF2R_CALLBACK_SUCCESS;
}

static otf2_callback_code on_enter(CALLBACK_HEAD, uint32_t region) {
    otf2r_stream *s = user;
    if (!record_ok(s, time, position, attributes)) return OTF2R_CALLBACK_INTERRUPT;
    int64_t index = map_find(&s->reader->regions, region);
    if (index < 0) return fall_back(s, OTF2R_UNDEFINED);
    if (s->depth == s->stack_capacity) {
        int64_t capacity = s->stack_capacity ? 2 * s->stack_capacity : 64;
        int64_t *grown = realloc(s->stack, (size_t)capacity * sizeof *grown);
        if (grown == NULL) {
            s->out_of_memory = 1;
            return OTF2R_CALLBACK_INTERRUPT;
        }
        s->stack = grown;
        s->stack_capacity = capacity;
    }
    s->stack[s->depth++] = index;
    emit(s, time, CCG_ENTER, index, 0, 0, 0, 0, 0, 0);
    return record_done(s);
}

static otf2_callback_code on_leave(CALLBACK_HEAD, uint32_t region) {
    otf2r_stream *s = user;
    if (!record_ok(s, time, position, attributes)) return OTF2R_CALLBACK_INTERRUPT;
    int64_t index = map_find(&s->reader->regions, region);
    if (index < 0) return fall_back(s, OTF2R_UNDEFINED);
    if (s->depth == 0 || s->stack[s->depth - 1] != index) return fall_back(s, OTF2R_NESTING);
    s->depth--;
    emit(s, time, CCG_LEAVE, index, 0, 0, 0, 0, 0, 0);
    return record_done(s);
}

/* The model communicator of `comm` (-1: undefined) and the location of `rank` in it (-1:
 * not mappable). */
static inline int64_t comm_location(const otf2r_reader *r, int64_t comm, uint32_t rank) {
    int64_t size = r->comm_size[comm];
    if ((int64_t)rank >= size) return -1;
    int64_t at = r->comm_offset[comm] + (int64_t)rank;
    if (at < 0 || at >= r->member_count) return -1;
    return r->comm_members[at];
}

static inline otf2_callback_code p2p(otf2r_stream *s, uint8_t kind, uint64_t time, uint32_t peer, uint32_t comm,
                                     uint32_t tag, uint64_t length, uint64_t request) {
    const otf2r_reader *r = s->reader;
    int64_t index = map_find(&r->comms, comm);
    if (index < 0) return fall_back(s, OTF2R_UNDEFINED);
    int64_t location = comm_location(r, index, peer);
    if (location < 0 || length >= INT64_LIMIT) return fall_back(s, OTF2R_NOT_EXACT);
    emit(s, time, kind, location, index, (int64_t)tag, (int64_t)request, (int64_t)length, 0, 0);
    return record_done(s);
}

static otf2_callback_code on_mpi_send(CALLBACK_HEAD, uint32_t peer, uint32_t comm, uint32_t tag, uint64_t length) {
    if (!record_ok(user, time, position, attributes)) return OTF2R_CALLBACK_INTERRUPT;
    return p2p(user, CCG_SEND, time, peer, comm, tag, length, 0);
}

static otf2_callback_code on_mpi_recv(CALLBACK_HEAD, uint32_t peer, uint32_t comm, uint32_t tag, uint64_t length) {
    if (!record_ok(user, time, position, attributes)) return OTF2R_CALLBACK_INTERRUPT;
    return p2p(user, CCG_RECV, time, peer, comm, tag, length, 0);
}

static otf2_callback_code on_mpi_isend(CALLBACK_HEAD, uint32_t peer, uint32_t comm, uint32_t tag, uint64_t length,
                                       uint64_t request) {
    if (!record_ok(user, time, position, attributes)) return OTF2R_CALLBACK_INTERRUPT;
    return p2p(user, CCG_ISEND, time, peer, comm, tag, length, request);
}

static otf2_callback_code on_mpi_irecv(CALLBACK_HEAD, uint32_t peer, uint32_t comm, uint32_t tag, uint64_t length,
                                       uint64_t request) {
    if (!record_ok(user, time, position, attributes)) return OTF2R_CALLBACK_INTERRUPT;
    return p2p(user, CCG_IRECV, time, peer, comm, tag, length, request);
}

static otf2_callback_code on_mpi_irecv_request(CALLBACK_HEAD, uint64_t request) {
    otf2r_stream *s = user;
    if (!record_ok(s, time, position, attributes)) return OTF2R_CALLBACK_INTERRUPT;
    emit(s, time, CCG_IRECV_REQUEST, 0, 0, 0, (int64_t)request, 0, 0, 0);
    return record_done(s);
}

static otf2_callback_code on_mpi_isend_complete(CALLBACK_HEAD, uint64_t request) {
    otf2r_stream *s = user;
    if (!record_ok(s, time, position, attributes)) return OTF2R_CALLBACK_INTERRUPT;
    emit(s, time, CCG_REQUEST_COMPLETE, 0, 0, 0, (int64_t)request, 0, 0, 0);
    return record_done(s);
}

static otf2_callback_code on_mpi_collective_begin(CALLBACK_HEAD) {
    otf2r_stream *s = user;
    if (!record_ok(s, time, position, attributes)) return OTF2R_CALLBACK_INTERRUPT;
    emit(s, time, CCG_COLL_BEGIN, 0, 0, 0, 0, 0, 0, 0);
    return record_done(s);
}

static otf2_callback_code on_mpi_collective_end(CALLBACK_HEAD, uint8_t operation, uint32_t comm, uint32_t root,
                                                uint64_t sent, uint64_t received) {
    otf2r_stream *s = user;
    if (!record_ok(s, time, position, attributes)) return OTF2R_CALLBACK_INTERRUPT;
    const otf2r_reader *r = s->reader;
    int64_t index = map_find(&r->comms, comm);
    if (index < 0) return fall_back(s, OTF2R_UNDEFINED);
    int64_t location = root == UNDEFINED_RANK ? -1 : comm_location(r, index, root);
    if ((root != UNDEFINED_RANK && location < 0) || sent >= INT64_LIMIT || received >= INT64_LIMIT)
        return fall_back(s, OTF2R_NOT_EXACT);
    emit(s, time, CCG_COLL_END, operation, index, location, 0, (int64_t)sent, (int64_t)received, 0);
    return record_done(s);
}

static otf2_callback_code on_metric(CALLBACK_HEAD, uint32_t metric, uint8_t count, const uint8_t *types,
                                    const otf2_metric_value *values) {
    otf2r_stream *s = user;
    if (!record_ok(s, time, position, attributes)) return OTF2R_CALLBACK_INTERRUPT;
    const otf2r_reader *r = s->reader;
    int64_t at = map_find(&r->metrics, metric);
    if (at < 0) return fall_back(s, OTF2R_UNDEFINED);
    int64_t start = r->metric_type_start[at], members = r->metric_type_start[at + 1] - start;
    if (members != count || (count && (types == NULL || values == NULL ||
                                       memcmp(types, r->metric_types + start, count) != 0)))
        return fall_back(s, OTF2R_NOT_EXACT);
    int64_t first = r->metric_first[at];
    for (int64_t i = 0; i < count; i++) {
        int64_t bits;
        memcpy(&bits, &values[i], sizeof bits);
        emit(s, time, CCG_METRIC, first + i, 0, 0, 0, 0, 0, bits);
    }
    return record_done(s);
}

static otf2_callback_code on_unknown(CALLBACK_HEAD) {
    return fall_back(user, OTF2R_RECORD);
}

/* ------------------------------------------------------------------ reader */

static int copy_array(void *target, const void *source, int64_t count, size_t item) {
    void **slot = target;
    *slot = malloc(count > 0 ? (size_t)count * item : 1);
    if (*slot == NULL) return 0;
    if (count > 0) memcpy(*slot, source, (size_t)count * item);
    return 1;
}

static int register_callbacks(otf2r_reader *r) {
    const otf2_api *api = &r->library->api;
    void *c = r->callbacks;
    return api->set_enter(c, on_enter) == 0 && api->set_leave(c, on_leave) == 0 &&
           api->set_mpi_send(c, on_mpi_send) == 0 && api->set_mpi_recv(c, on_mpi_recv) == 0 &&
           api->set_mpi_isend(c, on_mpi_isend) == 0 && api->set_mpi_irecv(c, on_mpi_irecv) == 0 &&
           api->set_mpi_irecv_request(c, on_mpi_irecv_request) == 0 &&
           api->set_mpi_isend_complete(c, on_mpi_isend_complete) == 0 &&
           api->set_mpi_collective_begin(c, on_mpi_collective_begin) == 0 &&
           api->set_mpi_collective_end(c, on_mpi_collective_end) == 0 &&
           api->set_metric(c, on_metric) == 0 && api->set_unknown(c, on_unknown) == 0;
}

/* Every table index within its bounds (Python builds them, but C relies on them). */
static int tables_valid(const otf2r_tables *t) {
    if (t->region_count < 0 || t->comm_count < 0 || t->member_count < 0 || t->metric_count < 0) return 0;
    for (int64_t i = 0; i < t->comm_count; i++) {
        int64_t index = t->comm_index[i];
        if (index < 0 || index >= t->comm_count) return 0;
        if (t->comm_size[i] < 0 || t->comm_offset[i] < 0 || t->comm_offset[i] > t->member_count ||
            t->comm_size[i] > t->member_count - t->comm_offset[i]) return 0;
    }
    if (t->metric_count > 0 && t->metric_type_start[0] != 0) return 0;
    for (int64_t i = 0; i < t->metric_count; i++)
        if (t->metric_type_start[i + 1] < t->metric_type_start[i]) return 0;
    return 1;
}

int otf2r_reader_new(otf2r_library *library, void *otf2_reader, const otf2r_tables *tables, otf2r_reader **out,
                     char *message, size_t message_size) {
    *out = NULL;
    if (!tables_valid(tables)) {
        set_message(message, message_size, "inconsistent reference tables");
        return CCG_ERR_INPUT;
    }
    otf2r_reader *r = calloc(1, sizeof *r);
    if (r == NULL) return CCG_ERR_MEMORY;
    r->library = library;
    r->otf2_reader = otf2_reader;
    int64_t metric_values = tables->metric_count ? tables->metric_type_start[tables->metric_count] : 0;
    int64_t *positions = malloc((size_t)(tables->metric_count > 0 ? tables->metric_count : 1) * sizeof *positions);
    int ok = positions != NULL;
    for (int64_t i = 0; ok && i < tables->metric_count; i++) positions[i] = i;
    ok = ok && map_init(&r->regions, tables->region_count, tables->region_refs, tables->region_index) &&
         map_init(&r->comms, tables->comm_count, tables->comm_refs, tables->comm_index) &&
         map_init(&r->metrics, tables->metric_count, tables->metric_refs, positions);
    free(positions);
    r->comm_count = tables->comm_count;
    r->member_count = tables->member_count;
    ok = ok && copy_array(&r->comm_size, tables->comm_size, tables->comm_count, sizeof(int64_t)) &&
         copy_array(&r->comm_offset, tables->comm_offset, tables->comm_count, sizeof(int64_t)) &&
         copy_array(&r->comm_members, tables->comm_members, tables->member_count, sizeof(int64_t)) &&
         copy_array(&r->metric_first, tables->metric_first, tables->metric_count, sizeof(int64_t)) &&
         copy_array(&r->metric_type_start, tables->metric_type_start, tables->metric_count + 1, sizeof(int64_t)) &&
         copy_array(&r->metric_types, tables->metric_types, metric_values, 1);
    if (!ok) {
        otf2r_reader_free(r);
        set_message(message, message_size, "out of memory or unsorted reference tables");
        return CCG_ERR_MEMORY;
    }
    /* a communicator index is a position in comm_size: the sorted map's index values */
    r->callbacks = library->api.callbacks_new();
    if (r->callbacks == NULL || !register_callbacks(r)) {
        otf2r_reader_free(r);
        set_message(message, message_size, "the OTF2 library refused the event callbacks");
        return CCG_ERR_INPUT;
    }
    *out = r;
    return CCG_OK;
}

void otf2r_reader_free(otf2r_reader *r) {
    if (r == NULL) return;
    if (r->callbacks != NULL) r->library->api.callbacks_delete(r->callbacks);
    map_free(&r->regions);
    map_free(&r->comms);
    map_free(&r->metrics);
    free(r->comm_size);
    free(r->comm_offset);
    free(r->comm_members);
    free(r->metric_first);
    free(r->metric_type_start);
    free(r->metric_types);
    free(r);
}

void otf2r_reader_attach(otf2r_reader *r, void *otf2_reader) { r->otf2_reader = otf2_reader; }

/* ------------------------------------------------------------------ streams */

int otf2r_stream_open(otf2r_reader *reader, uint64_t location, uint64_t event_limit, otf2r_stream **out,
                      char *message, size_t message_size) {
    *out = NULL;
    otf2r_stream *s = calloc(1, sizeof *s);
    if (s == NULL) return CCG_ERR_MEMORY;
    s->reader = reader;
    s->limit = event_limit;
    const otf2_api *api = &reader->library->api;
    s->evt_reader = api->get_evt_reader(reader->otf2_reader, location);
    if (s->evt_reader == NULL) {
        s->reason = OTF2R_DAMAGED;      /* the Python reference says why */
    } else {
        otf2_error error = api->set_callbacks(s->evt_reader, reader->callbacks, s);
        if (error != 0) {
            set_message(message, message_size, "cannot set the event callbacks: %s", api->error_name(error));
            otf2r_stream_close(s);
            return CCG_ERR_INPUT;
        }
    }
    *out = s;
    return CCG_OK;
}

int otf2r_stream_read(otf2r_stream *s, otf2r_columns *columns, int *state) {
    columns->count = 0;
    columns->gap_count = 0;
    if (columns->capacity < 2 * OTF2R_HEADROOM || columns->gap_capacity < 2) return CCG_ERR_INPUT;
    s->out = columns;
    s->full = 0;
    while (s->reason == OTF2R_MAPPED && !s->ended) {
        uint64_t read = 0, left = s->limit - s->records;
        uint64_t ask = left < RECORDS_PER_CALL ? left + 1 : RECORDS_PER_CALL;
        otf2_error error = s->reader->library->api.read_events(s->evt_reader, ask, &read);
        s->records += read;
        if (s->out_of_memory) {
            s->out = NULL;
            return CCG_ERR_MEMORY;
        }
        if (s->reason != OTF2R_MAPPED) break;
        if (s->full) {
            s->out = NULL;
            *state = OTF2R_MORE;
            return CCG_OK;
        }
        if (error != 0 || s->records > s->limit) {
            s->reason = OTF2R_DAMAGED;
        } else if (read < ask) {
            s->ended = 1;
            if (s->records != s->limit) s->reason = OTF2R_DAMAGED;
            else if (s->records > s->position && !add_gap(s, s->records - s->position))   /* at the end */
                s->reason = OTF2R_RECORD;
            else if (s->depth != 0) s->reason = OTF2R_NESTING;
            s->position = s->records;
        }
    }
    s->out = NULL;
    *state = s->reason != OTF2R_MAPPED ? OTF2R_FALLBACK : OTF2R_END;
    return CCG_OK;
}

void otf2r_columns_place(otf2r_columns *columns, char *buffer, int64_t capacity, int64_t gap_capacity) {
    int64_t *rows = (int64_t *)buffer;
    int64_t **row[] = {&columns->events.time, &columns->events.ref, &columns->events.comm, &columns->events.tag,
                       &columns->events.request, &columns->events.size, &columns->events.recv_size,
                       &columns->events.value};
    size_t count = sizeof row / sizeof row[0];
    for (size_t i = 0; i < count; i++) *row[i] = rows + (int64_t)i * capacity;
    columns->capacity = capacity;
    columns->gap_capacity = gap_capacity;
    columns->gap_at = rows + (int64_t)count * capacity;
    columns->gap_records = columns->gap_at + gap_capacity;
    columns->events.kind = (uint8_t *)(columns->gap_records + gap_capacity);
}

int otf2r_stream_reason(const otf2r_stream *s) { return s->reason; }

int64_t otf2r_stream_skipped(const otf2r_stream *s) { return (int64_t)s->skipped; }

void otf2r_stream_close(otf2r_stream *s) {
    if (s == NULL) return;
    if (s->evt_reader != NULL) s->reader->library->api.close_evt_reader(s->reader->otf2_reader, s->evt_reader);
    free(s->stack);
    free(s);
}
