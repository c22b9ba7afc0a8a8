/* Reading OTF2 event files at the C library's speed (ccgformat/formats/otf2/native.py).
 *
 * The OTF2 C library is not linked: `otf2r_library_open` dlopens the shared object of the
 * `otf2` PyPI package (which exports the whole OTF2 C API) and looks up the few functions
 * below by name. Their prototypes are declared here from the documented API (OTF2_Reader.h,
 * OTF2_EvtReader.h, OTF2_EvtReaderCallbacks.h, OTF2_AttributeList.h, OTF2_ErrorCodes.h);
 * no OTF2 header is needed.
 *
 * A stream reads one location's events with C callbacks that append them to columns, with
 * the mapping of the Python reference (callbacks.py + columns.py): OTF2 region,
 * communicator and metric references become model indexes through the tables Python
 * passes in, peer and root ranks become locations. Records without a kind of their own
 * have no callback here: the library skips them, and the stream notes each run of skipped
 * records as a gap (where in the columns, how many records; seen as a jump in the event
 * positions) for Python to fill with the reference's events of those records. Whatever
 * else the reference would turn into a GENERIC event or an error - an attribute list on a
 * mapped record, the library's Unknown record, a rank outside its communicator, a size or
 * timestamp beyond int64, metric values of other types than defined, an ENTER/LEAVE that
 * breaks the nesting, an undefined reference, a library error, another number of records
 * than the file's chunk headers announce - is not mapped here: the stream stops with
 * `OTF2R_FALLBACK` and a reason, and the location is read again by the Python reference.
 */
#ifndef OTF2READ_H
#define OTF2READ_H

#include <stddef.h>
#include <stdint.h>

#include "ccg.h"

/* Why a stream left a location to the Python reference (otf2r_stream.reason). */
enum {
    OTF2R_MAPPED = 0,          /* nothing: every event so far is mapped */
    OTF2R_RECORD = 1,          /* an Unknown record, or more gaps than the columns hold */
    OTF2R_ATTRIBUTES = 2,      /* a record with an attribute list */
    OTF2R_UNDEFINED = 3,       /* an undefined region, communicator or metric */
    OTF2R_NOT_EXACT = 4,       /* rank outside its communicator, size beyond int64, metric types */
    OTF2R_NESTING = 5,         /* an ENTER/LEAVE that breaks the nesting */
    OTF2R_TIME = 6,            /* a timestamp beyond int64 */
    OTF2R_DAMAGED = 7,         /* a library error, or not the records the chunk headers announce */
    OTF2R_REASON_COUNT = 8
};

/* Results of otf2r_stream_read. */
enum { OTF2R_MORE = 0, OTF2R_END = 1, OTF2R_FALLBACK = 2 };

typedef struct otf2r_library otf2r_library;
typedef struct otf2r_reader otf2r_reader;
typedef struct otf2r_stream otf2r_stream;

/* OTF2 reference -> model index tables (all arrays sorted by reference; Python owns them). */
typedef struct otf2r_tables {
    int64_t region_count;
    const uint64_t *region_refs;
    const int64_t *region_index;
    int64_t comm_count;
    const uint64_t *comm_refs;
    const int64_t *comm_index;
    const int64_t *comm_size;       /* per model communicator: ranks (0: not mappable) */
    const int64_t *comm_offset;     /* per model communicator: start in comm_members */
    int64_t member_count;
    const int64_t *comm_members;    /* location indexes in rank order */
    int64_t metric_count;
    const uint64_t *metric_refs;
    const int64_t *metric_first;    /* per metric: its first model metric */
    const int64_t *metric_type_start;   /* metric_count + 1 offsets into metric_types */
    const uint8_t *metric_types;    /* the OTF2_Type of every member */
} otf2r_tables;

/* Where a chunk goes: `capacity` events in each column (Python owns them); a read stops
 * after the record that brings `count` to `capacity - OTF2R_HEADROOM` or beyond, or
 * `gap_count` to `gap_capacity - 1` (at least 2). Gap i: gap_records[i] skipped records,
 * whose events go before event gap_at[i] of the chunk. */
typedef struct otf2r_columns {
    int64_t capacity;
    int64_t count;
    ccg_columns events;
    int64_t gap_capacity;
    int64_t gap_count;
    int64_t *gap_at;
    int64_t *gap_records;
} otf2r_columns;

/* The most events one record makes (a Metric record of 255 values), plus one. */
#define OTF2R_HEADROOM 256

int64_t otf2r_symbol_count(void);
const char *otf2r_symbol_name(int64_t index);

/* dlopen `path` and look up the functions named `names` (otf2r_symbol_count of them, in the
 * order of otf2r_symbol_name). */
int otf2r_library_open(const char *path, const char *const *names, int64_t name_count, otf2r_library **out,
                       char *message, size_t message_size);
void otf2r_library_close(otf2r_library *library);

/* A reader of the open OTF2_Reader `otf2_reader` (whose event files are open, local
 * definitions read) with `tables` (copied). */
int otf2r_reader_new(otf2r_library *library, void *otf2_reader, const otf2r_tables *tables, otf2r_reader **out,
                     char *message, size_t message_size);
void otf2r_reader_free(otf2r_reader *reader);
/* Read from now on through the OTF2_Reader `otf2_reader` (another one with the same
 * archive: the importer opens one per batch of locations); no stream may be open. */
void otf2r_reader_attach(otf2r_reader *reader, void *otf2_reader);

/* A stream over location `location` from its first event; `event_limit` = the records its
 * event file's chunk headers announce: the stream asks for at most one more, and any other
 * count is damage (UINT64_MAX, unknown, always leaves the location to the reference). */
int otf2r_stream_open(otf2r_reader *reader, uint64_t location, uint64_t event_limit, otf2r_stream **out,
                      char *message, size_t message_size);
/* Fills `columns` (from count 0) with the next events; `*state` = OTF2R_MORE, OTF2R_END
 * (the last chunk, nesting checked) or OTF2R_FALLBACK (see otf2r_stream_reason). */
int otf2r_stream_read(otf2r_stream *stream, otf2r_columns *columns, int *state);
/* Points `columns` into one chunk buffer of `capacity` events and `gap_capacity` gaps:
 * the int64 rows time, ref, comm, tag, request, size, recv_size and value one after the
 * other, then the gaps' positions and their record counts, then the kinds (one pointer
 * each set in C, not one Python attribute each per chunk). */
void otf2r_columns_place(otf2r_columns *columns, char *buffer, int64_t capacity, int64_t gap_capacity);
int otf2r_stream_reason(const otf2r_stream *stream);
/* The records skipped so far (the sum of all gaps). */
int64_t otf2r_stream_skipped(const otf2r_stream *stream);
/* Closes the location's event reader (a later stream reads the location from its start). */
void otf2r_stream_close(otf2r_stream *stream);

#endif
