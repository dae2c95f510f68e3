/* model_chunked.h — a batch the program puts on the device whole and cuts into chunks, each a
 * forward and backward before one optimizer step (Transformer-XL's torch.chunk(data,
 * args.batch_chunk, 1): scriptaccum.c's batch_chunked): its token batch is the whole batch's,
 * B·A·T, not the micro-batch's (model_chunked.c; parts of model_complete_tokens and
 * model_batch_seen, model_trace.c). */
#ifndef VT_ANALYZER_MODEL_CHUNKED_H
#define VT_ANALYZER_MODEL_CHUNKED_H

#include "model.h"

/* model_chunked_tokens: T = the token batch's n tokens over the whole batch (c->batch_global_v),
 * where the batch is so cut, nothing else gave T and it divides them; 1 when set. (A --batch_size
 * 32 cut into --batch_chunk 2 had been "T = 512: B·T = 8192 tokens ... over the micro-batch 16",
 * its sequences 256.) */
int model_chunked_tokens(nano_config *c, long long n);
/* model_chunked_seen: the first forward's token batch over T (b0; now: the moment's, 0 if not
 * read; first: how it was read) is the whole batch so cut: said in B's row, 1 (B stands); 0 when
 * not so */
int model_chunked_seen(nano_config *c, long long b0, long long now, long long T, const char *first);

#endif
