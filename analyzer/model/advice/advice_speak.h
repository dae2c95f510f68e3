/* advice_speak.h — the advice in the traced program's own words (advice_speak.c): the flags its
 * command line used or the keywords of its script's call, a change no flag carries said as the
 * code change it is, and the accumulation said as a factor where the program's is not known. */
#ifndef VT_ADVICE_SPEAK_H
#define VT_ADVICE_SPEAK_H

#include "advice.h"

/* advice_speak: rewrites items (made for cur) in the traced program's language: nanoGPT keeps
 * `--key=value`; otherwise a knob changes through the flag that carried it on the command line
 * (config_value.flag / flag_sep, e.g. `--batch-size 4 --grad-accum 4`) or the keyword of the
 * script's call that set it (`TrainingArguments(per_device_train_batch_size=4)`; activation
 * checkpointing as `TrainingArguments(gradient_checkpointing=True)` under Hugging Face's Trainer,
 * unless the script has a switch of its own), and the change is said
 * in plain words ("micro-batch 8 → 4, accumulation 2 → 4"); a knob no flag carried gets no
 * command line (never a flag the program does not have). When the run's accumulation is not
 * known (cur->accum_unknown, nanoGPT too), a change of it is a factor in words. rec (may be
 * NULL): what was recognized: a Hugging Face model's own checkpointing switch; a network with
 * BatchNorm is not promised "the same final model" from smaller micro-batches. */
void advice_speak(advice_item *items, int n, const nano_config *cfg, const gpt_shape *cur,
                  const run_recognition *rec);

/* advice_flag_of: "--batch-size 8" for config key with value v, as the traced command line
 * spelled it (config_value.flag / flag_sep), or the script's call that set it
 * ("TrainingArguments(per_device_train_batch_size=8)"); 0 when nothing carried the key.
 * advice_flags: the same for n keys at once: the flags first, then each call once with its
 * keywords ("--seq-len 512; TrainingArguments(per_device_train_batch_size=2,
 * gradient_accumulation_steps=8)"); 0 and "" when one key was carried by nothing or out is too
 * small. */
int advice_flag_of(const nano_config *cfg, int key, uint64_t v, char *out, size_t len);
int advice_flags(const nano_config *cfg, int n, const int *keys, const uint64_t *vals, char *out,
                 size_t len);
/* advice_keep_effective: the largest micro-batch b <= lb that keeps the effective batch B*A (a
 * divisor of it; of B alone when the run's A is unknown, s->accum_unknown) and its accumulation
 * a (A * B / b then); 0 if none (lb = 0). */
int advice_keep_effective(const gpt_shape *s, uint64_t lb, uint64_t *b, uint64_t *a);
/* advice_batch_flags: how the traced program takes micro-batch b and accumulation a: nanoGPT's
 * --key=value, the flags its command line used; in an argparse script with no flag for the
 * accumulation (and no training-arguments call, targs, from advice_targs), its micro-batch flag
 * and the code change the report's what-ifs say; else "" (none carried them). */
void advice_batch_flags(const nano_config *c, const gpt_shape *s, uint64_t b, uint64_t a,
                        const char *targs, char *out, size_t len);
/* advice_targs: the training-arguments call a Trainer's switches go in (the script's own, or
 * TrainingArguments under Hugging Face's Trainer: loop, run_recognition.loop, "hf_trainer"),
 * NULL when the loop has none. */
const char *advice_targs(const nano_config *cfg, const char *loop);
/* advice_accum_unknown: 1 when the program's gradient accumulation is an assumption (not
 * nanoGPT, and no argument, file or option gave it): advice then speaks of a factor. */
int advice_accum_unknown(const nano_config *cfg);

#endif
