/* Messages grouped by channel for the exporters (ccgformat/formats/channels.py is the
 * reference; export_channels.py wraps this): rows (sender, receiver, comm, tag) numbered
 * by channel in one pass through a hash table, instead of sorting them. */
#ifndef CCG_EXPORT_CHANNELS_H
#define CCG_EXPORT_CHANNELS_H

#include <stdint.h>

/* For rows i < n of the columns a, b, c, d: channel[i] (channels numbered in order of
 * their first row, whose index goes to first[k]) and rank[i] (earlier rows of the same
 * channel); *count the channels. CCG_ERR_MEMORY when the table cannot be allocated. */
int ccg_channel_ranks(int64_t n, const int64_t *a, const int64_t *b, const int64_t *c, const int64_t *d,
                      int64_t *channel, int64_t *rank, int64_t *first, int64_t *count);

#endif
