/* model_kv.c — transformers' KV cache in a calibration (model_trace.h): the share of it that
 * use_cache=False would not make, and where a generation's cache is not the training forward's
 * to take away. */
#include <string.h>

#include "model_trace.h"

void model_kv_kept(const run_facts *f, cat_breakdown *kv)
{
    double kept = f->kv_replaced;
    for (int k = 0; kept > 0 && k < CAT_COUNT; k++)
        kv->bytes[k] = (uint64_t)((double)kv->bytes[k] * (1.0 - kept));
}

void model_kv_calib(model_result *m, const run_facts *f)
{
    model_calib *c = &m->calib;
    if (cat_breakdown_total(&f->at_peak) > 0 || m->measured_at_tensors)
        c->kv = m->measured_at_tensors ? f->kv_at_tensors : f->kv_at_peak;
    c->no_kv_tensors = f->tensors_no_kv;
    model_kv_kept(f, &c->kv); /* (less what the attention would keep) */
    c->kv_unmeasured = f->kv_unmeasured, c->kv_read = f->kv_read_bytes;
    /* a peak in a no-grad pass of a run whose generation reads its cache: use_cache=False of the
     * training forward leaves that pass's cache, so nothing of it is taken away there */
    if (c->kv_read && f->peak_phase && !strcmp(f->peak_phase, "eval"))
        memset(&c->kv, 0, sizeof c->kv);
}
