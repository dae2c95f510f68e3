/* model_cache.c — a representation cache's steps (model_cache.h). GradCache (Tevatron, the
 * grad_cache package) and sentence-transformers' Cached* losses encode a batch in chunks under
 * no_grad, take the loss's gradient with respect to the cached representations (a backward pass
 * whose leaves are not weights), then encode each chunk again and back-propagate its part: one
 * optimizer step per batch, the forward's batch a chunk. Read as accumulation, a GradCache run of
 * 512 queries in chunks of 32 and 1,024 passages in chunks of 16 had been "A = 81", "effective
 * batch 41472", and, at chunks of 256, "micro-batch 512 → 256 … fits" where 256 ran out of memory
 * in its chunk's forward as 512 had: the batch flag does not set a forward's batch. Neither B nor
 * A is known; what-ifs of them are not made (the micro-batch's row says why). */
#include "model_cache.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "replay.h"
#include "scriptflags.h"

/* chunk_flags: the recorded script's flags whose name says chunk (GradCache's --gc_q_chunk_size,
 * --gc_p_chunk_size; OpenCLIP's are not so named), ", "-joined into out ("" none): the size
 * each forward took is theirs, the lever that the batch flag is not */
static void chunk_flags(const nano_config *c, const run_facts *f, char *out, size_t n)
{
    out[0] = '\0';
    const config_recfile *rf = config_recorded_script(c, f->argc, f->argv);
    script_flag *fl = rf ? malloc(SCRIPT_FLAGS_MAX * sizeof *fl) : NULL;
    if (!fl)
        return;
    int k = scriptflags_parse(rf->data, rf->len, fl, SCRIPT_FLAGS_MAX);
    for (int i = 0; i < k; i++) {
        const char *name = fl[i].names[0];
        if (!strcasestr(name, "chunk") || strlen(out) + strlen(name) + 3 > n)
            continue;
        size_t w = strlen(out);
        snprintf(out + w, n - w, "%s%s", w ? ", " : "", name);
    }
    free(fl);
}

/* unknown: v unset, why said in its row (config_unknown_text says a value's where) */
static void unknown(config_value *v, const char *why)
{
    v->i = 0;
    v->src = CONFIG_SRC_UNKNOWN;
    v->flag[0] = '\0', v->flag_sep = 0, v->call[0] = '\0';
    snprintf(v->where, sizeof v->where, "%s", why);
}

void model_cache_passes(nano_config *c, const run_facts *f)
{
    if (!f->cache_passes)
        return;
    char passes[160], why[384];
    if (f->iterations > 0)
        snprintf(passes, sizeof passes, "%d backward passes before each optimizer step",
                 f->cache_passes);
    else
        snprintf(passes, sizeof passes,
                 "%d backward passes begun by the out-of-memory error, no optimizer step",
                 f->cache_passes);
    config_value *a = &c->v[CFG_gradient_accumulation_steps];
    if (a->src == CONFIG_SRC_TRACE || a->src == CONFIG_SRC_UNKNOWN) /* (a flag's stands) */
        unknown(a, "");
    if (a->src == CONFIG_SRC_UNKNOWN) {
        snprintf(why, sizeof why,
                 "%s, the first of which made no gradient of a weight (a loss's gradient with "
                 "respect to cached representations, as GradCache's): the others are chunks of "
                 "one batch, not micro-batches of gradient accumulation",
                 passes);
        snprintf(a->where, sizeof a->where, "%s", why);
    }
    config_value *b = &c->v[CFG_batch_size];
    char given[160] = "";
    if (b->src != CONFIG_SRC_UNKNOWN && b->flag[0] && b->flag_sep != '(')
        snprintf(given, sizeof given, "%s %lld sets a step's batch, not a forward's: ", b->flag,
                 b->i);
    char chunks[160];
    chunk_flags(c, f, chunks, sizeof chunks);
    snprintf(why, sizeof why,
             "%s%s, the first of which made no gradient of a weight (a representation cache, as "
             "GradCache's): each forward encodes a chunk of the batch, its size %s%s",
             given, passes, chunks[0] ? "set by the program's " : "the program's",
             chunks[0] ? chunks : "");
    unknown(b, why);
}

void model_step_passes(nano_config *c, const run_facts *f)
{
    config_value *a = &c->v[CFG_gradient_accumulation_steps];
    const infer_value *ta = f->inferred ? &f->inferred->v[INFER_gradient_accumulation_steps] : 0;
    /* a logical batch split into A physical batches whose every backward pass the trace ended in
     * a step (a gradient free: Opacus's skipped steps free .grad and grad_sample): the optimizer
     * steps are those over A (a DP run of 2 steps of 4 physical batches had been "8 optimizer
     * steps" beside "A = 4 ... before each optimizer step") */
    if (c->batch_split && (a->src == CONFIG_SRC_ARG || a->src == CONFIG_SRC_FILE) && a->i >= 2 &&
        f->iterations > 0 && ta && ta->known && ta->value == 1)
        c->split_on = 1, c->split_steps = (unsigned)(f->iterations / a->i);
    if (!f->steps_why || (a->src != CONFIG_SRC_TRACE && a->src != CONFIG_SRC_UNKNOWN))
        return;
    /* (SAM's 2 steps of 2 passes each had been "A = 1: 1 backward pass before each of the 4
     * optimizer steps", and a micro-batch halved "2 micro-steps per optimizer step instead of 1")
     */
    char why[384];
    snprintf(why, sizeof why,
             "%d backward pass%s: how many made each optimizer step is not known (%.300s)",
             f->backward_passes, f->backward_passes == 1 ? "" : "es", f->steps_why);
    unknown(a, why);
}
