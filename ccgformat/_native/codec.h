/* The node block codec (spec/format.md section 5; Python reference ccgformat/archive/codec.py).
 *
 * Encoding turns nodes first .. stop-1 of a ccg_nodes table into the payload of one NODES
 * block, carrying the writer's pending stack (spec 5.3) from block to block in a
 * ccg_encoder. Decoding checks every count, width, length, index and id of a payload
 * before using it and builds a C-owned ccg_block: the nodes with their durations (the
 * stored gaps interleaved with the children's totals), the event counts, totals and
 * metric sums recomputed bottom-up, and the block's import table.
 */
#ifndef CCG_CODEC_H
#define CCG_CODEC_H

#include "ccg.h"

/* The pending stack keeps at most this many ids; older ones fall off its bottom. */
#define CCG_PENDING_LIMIT 4096
/* A block may hold at most this many (distinct metric) x (node + child reference)
 * cells: the reader's bound on the memory of the metric sums (codec.METRIC_CELL_LIMIT). */
#define CCG_METRIC_CELL_LIMIT ((int64_t)1 << 24)

/* Predicted references (PREDICTED_NODES, spec 5.7): each move-to-front list of children
 * keeps at most this many (codec.REFERENCE_LIST_LIMIT). */
#define CCG_REFERENCE_LIST_LIMIT 64

/* The writer's side: the pending stack carried from one block to the next (NULL when out
 * of memory). */
typedef struct ccg_encoder ccg_encoder;

ccg_encoder *ccg_encoder_new(void);
void ccg_encoder_free(ccg_encoder *encoder);

/* The payload of the NODES block of nodes first .. stop-1, which ``nodes`` must hold, in
 * a new buffer (*out, *out_length; release it with ccg_bytes_free), and unless
 * ``predicted`` is NULL the payload of the same nodes as a PREDICTED_NODES block
 * (*predicted, *predicted_length), and then unless ``coded`` is NULL as a CODED_NODES
 * block (*coded, *coded_length: the PREDICTED_NODES payload with its gaps coded, spec
 * 5.8), and then unless ``coded_soft`` is NULL as a CODED_SOFT_NODES block (*coded_soft,
 * *coded_soft_length: the CODED_NODES payload with its soft values coded too, spec 5.9;
 * NULL and 0 when the block has no soft value or one the coder cannot hold). The event counts, totals and metric sums of the
 * children in earlier blocks come from ``nodes`` when it holds them, else from
 * ``earlier`` (sorted by id; may be NULL). On error the encoder's stack is unchanged and
 * the message says why. */
int ccg_encode_nodes(ccg_encoder *encoder, const ccg_nodes *nodes, const ccg_imports *earlier,
                     int64_t first, int64_t stop, uint8_t **out, size_t *out_length,
                     uint8_t **predicted, size_t *predicted_length, uint8_t **coded, size_t *coded_length,
                     uint8_t **coded_soft, size_t *coded_soft_length, char *message, size_t message_size);
void ccg_bytes_free(uint8_t *bytes);

/* The node block kinds ccg_decode_nodes reads (spec 5.2, 5.7, 5.8, 5.9). */
enum { CCG_BLOCK_NODES = 0, CCG_BLOCK_PREDICTED = 1, CCG_BLOCK_CODED = 2, CCG_BLOCK_CODED_SOFT = 3 };

/* Decode and check one raw payload of a block of ``kind`` (CCG_BLOCK_*) into a new block
 * (*out; release it with ccg_block_free). CCG_ERR_INPUT names the damage in ``message``. */
int ccg_decode_nodes(const uint8_t *raw, size_t length, int kind, ccg_block **out, char *message,
                     size_t message_size);
void ccg_block_free(ccg_block *block);

#endif
