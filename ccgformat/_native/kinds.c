/* Property counts per node kind: the hard and soft columns of model.KIND_FIELDS. */
#include "ccg.h"

/*                                   CALL ART SEND RECV ISEND IRECV IRQ RQC CB CE MET MRK GEN */
const int ccg_hard_count[CCG_KIND_COUNT] = {1, 0, 3, 3, 4, 4, 1, 1, 0, 3, 1, 2, 2};
const int ccg_soft_count[CCG_KIND_COUNT] = {0, 0, 1, 1, 1, 1, 0, 0, 0, 2, 1, 0, 0};
