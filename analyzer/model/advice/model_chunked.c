/* model_chunked.c — a batch on the device whole, cut into chunks by the program: T and B read
 * from its token batch (model_chunked.h). */
#include "model_chunked.h"

#include <stdio.h>
#include <string.h>

int model_chunked_tokens(nano_config *c, long long n)
{
    config_value *t = &c->v[CFG_block_size];
    long long G = c->batch_global_v;
    if (!c->batch_chunked || G <= 0 || t->src != CONFIG_SRC_UNKNOWN || n % G)
        return 0;
    char where[sizeof t->where];
    snprintf(where, sizeof where,
             "T = %lld: %lld tokens in the token batch over %.40s %lld, the whole batch on the "
             "device before the program cuts it into chunks",
             n / G, n, c->batch_global, G);
    config_from_trace(t, n / G, where);
    return 1;
}

int model_chunked_seen(nano_config *c, long long b0, long long now, long long T, const char *first)
{
    if (!c->batch_chunked || !T || b0 != c->batch_global_v || (now && now != b0))
        return 0;
    config_value *b = &c->v[CFG_batch_size];
    size_t w = strlen(b->where);
    snprintf(b->where + w, sizeof b->where - w,
             "; the trace agrees: the whole batch of %lld on the device (%s), %lld backward "
             "passes before each optimizer step",
             b0, first, c->v[CFG_gradient_accumulation_steps].i);
    return 1;
}
