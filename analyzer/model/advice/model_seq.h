/* model_seq.h — a change of the tokens per step between the first forward and the moment explained
 * that is a change of T, not of the micro-batch (model_seq.c): a part of model_batch_seen
 * (model_trace.c) and of the out-of-memory cause (model.c). */
#ifndef VT_ANALYZER_MODEL_SEQ_H
#define VT_ANALYZER_MODEL_SEQ_H

#include "model.h"

/* model_seq_changed: the batch flag (c's B, given) ran the first forward, its n tokens B·T with
 * the trace's T, and divides the token batch at the moment explained, which holds other tokens:
 * the flag stands as B and T changed (a sequence-length warm-up or curriculum), T = the moment's
 * tokens over B, said, c->t_first kept; 1 when so. (The first forward's T had stood, and the
 * moment's tokens over it were called the micro-batch: a warm-up of T 512 -> 2048 at
 * --batch_size 2 was "B = 8 ... the micro-batch changed during the run", and at --batch_size 4
 * "not even a micro-batch of 1 fits" where 1 and 2 run.) */
int model_seq_changed(nano_config *c, const run_facts *f, long long n, long long T);
/* model_seq_short: T is a flag's (--max_seq_length 512), and the token batches of the first forward
 * and of the moment explained, over the micro-batch, are shorter than it and not whole samples of
 * it: padding to a batch's longest (dynamic padding) that never reached the flag. T = the moment's
 * tokens over B, said, 1. (A run of T 104 and 184 under --max_seq_length 512 had its formula
 * comparison at "N = B*T = 12288 tokens" and "sequence length 512 -> 256 ... halve", which changes
 * nothing in that run.) */
int model_seq_short(nano_config *c, const run_facts *f);
/* model_seq_encoder: T is a flag's (--seq_len 336, on the command line or its argparse default),
 * no token batch was read, and the first forward's tensors (f->inferred->fwd_sizes) say the
 * encoder saw other sequences: none of them holds B·T tokens of the program's width d, its most
 * made size divisible by d (at the element size the run computes in) holds N tokens, and a
 * softmax over S·H·T'·T' scores (H the program's heads) gives T' tokens a sequence, S = N / T'
 * sequences, k = S / B per sample of the micro-batch. T = T' from the trace; where k > 1, B = S
 * sequences, k of them each sample of the flag (c->batch_per, the flag kept to spell what-ifs
 * through), said; 1. (PatchTST's channels run as sequences of patches: --seq_len 336 had been
 * "tokens per sample T 336", the encoder's 42 patches a sequence and 21 sequences a sample
 * unsaid.) */
int model_seq_encoder(nano_config *c, const run_facts *f);
/* model_seq_flag: a T flag against the trace, once the flags are read (model_build_head):
 * model_seq_short, then model_seq_encoder (each leaves what the other reads alone). */
void model_seq_flag(nano_config *c, const run_facts *f);
/* model_seq_either: the flag is the moment explained's micro-batch at the trace's T, the first
 * forward's n tokens (T not from its position ids) are fewer, and the flag divides them: its
 * micro-batch ramped up (n / T, then the flag) or its T warmed up (n / the flag, then T), and the
 * trace does not tell which: both said in B's row, 1. (It had said "the micro-batch changed during
 * the run: 1 in its first forward" of --batch_size 4 --seq_len 256 after 2 steps at T 64.) */
int model_seq_either(nano_config *c, const run_facts *f, long long n, long long T);
/* model_seq_unknown: no batch flag, B read from the first forward's n tokens over the trace's T
 * (B = n / T), and the moment explained's token batch holds other tokens: its micro-batch or its
 * T changed, and nothing in the trace tells which (the position ids are the first forward's).
 * Both readings are said, and neither B nor T is chosen (unknown). */
void model_seq_unknown(nano_config *c, const run_facts *f);
/* model_seq_cause: the out-of-memory cause's words for a run whose T changed (c->t_first): the
 * failing step's T against the first forward's, both measured, the micro-batch the same; "" when
 * T did not change. */
void model_seq_cause(const nano_config *c, char *out, size_t len);

#endif
