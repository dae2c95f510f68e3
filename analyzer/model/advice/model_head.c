/* model_head.c — model_build: a run out of memory in its first forward, whose model may or may
 * not end in an output layer over its vocabulary (model_result.head_unknown), is built twice:
 * without the layer's logits (its what-ifs lower bounds) and with a language model's, whose
 * figures each what-if and the need are told beside. Interface: model.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"

/* head_words: what what-if w needs with an output layer over the vocabulary (the build that
 * assumes one), after m's words */
static void head_words(char *out, size_t n, const advice_item *w, int lower)
{
    size_t k = strlen(out);
    snprintf(out + k, n - k,
             "; with an output layer over its vocabulary (a language model's B·T×V logits): "
             "%s%.2f GiB, %s",
             lower ? "at least " : "~", (double)w->predicted_peak / 1073741824.0,
             w->fits == 1   ? (lower ? "may fit" : "fits")
             : w->fits == 0 ? "does not fit"
                            : "the card not known");
}

/* head_both: a first forward cut before its end whose model may or may not end in an output
 * layer over its vocabulary (m->head_unknown): m counts no logits (lower bounds), w, the build
 * that assumes a language model's, counts them; each what-if and the need are told with both.
 * Assumed alone, a language model's logits had put an encoder's need far above what it measured
 * (SimCSE, 1024 sequences of 32 tokens: 11.18 GiB of logits, "needs ~25.63 GiB", where a larger
 * card measured 15.14; "1024 -> 512 does not fit", where 512 ran at 8.54 GiB); left out without
 * the lower bounds, they had told a GPT-2 recorded without Python frames that a batch that ran
 * out of memory fits. */
static void head_both(model_result *m, const model_result *w)
{
    for (int i = 0; i < m->nitems; i++)
        for (int j = 0; j < w->nitems; j++)
            if (!strcmp(m->items[i].change, w->items[j].change)) {
                head_words(m->items[i].note, sizeof m->items[i].note, &w->items[j],
                           w->lower_bounds);
                break;
            }
    if (m->nnotes >= (int)(sizeof m->notes / sizeof m->notes[0]))
        return;
    char lo[40] = "", most[80] = "";
    if (w->current_own && !w->lower_bounds)
        snprintf(lo, sizeof lo, "%.2f GiB to ", (double)w->current_own / 1073741824.0);
    if (w->largest_batch)
        snprintf(most, sizeof most, ", and the largest micro-batch that fits is %s%llu",
                 w->lower_bounds ? "at most " : "", (unsigned long long)w->largest_batch);
    snprintf(m->notes[m->nnotes++], sizeof m->notes[0],
             "with an output layer over its vocabulary (a language model's B·T×V logits at the "
             "end of its forward), the current configuration needs %s%s%.2f GiB%s",
             w->lower_bounds ? "at least " : "~", lo, (double)w->current.peak_bytes / 1073741824.0,
             most);
}

int model_build(model_result *m, const run_facts *f, const model_opts *o, char *err, size_t errlen)
{
    if (model_build_head(m, f, o, err, errlen, 0) < 0)
        return -1;
    if (!m->head_unknown)
        return 0;
    model_result *w = malloc(sizeof *w);
    if (w && model_build_head(w, f, o, err, errlen, 1) == 0)
        head_both(m, w);
    free(w);
    return 0;
}
