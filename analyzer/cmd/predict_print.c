/* predict_print.c — the breakdown of one prediction, rows that add up (predict_print.h). */
#include "predict_print.h"

#include <stdio.h>

#include "cards.h"

/* the categories that are tensors (the rest: the cache, and what lies outside PyTorch) */
static int outside(int k)
{
    return k == CAT_CACHE || k == CAT_CONTEXT || k == CAT_KERNEL_CODE || k == CAT_EXTERNAL;
}

void predict_anchors(const prediction *p, int64_t *tensors, int64_t *rest)
{
    uint64_t rows = 0, out = 0;
    for (int k = 0; k < CAT_COUNT; k++)
        if (outside(k))
            out += p->by_cat.bytes[k];
        else
            rows += p->by_cat.bytes[k];
    *tensors = (int64_t)p->tensor_bytes - (int64_t)rows;
    *rest = (int64_t)p->peak_bytes - (int64_t)(p->tensor_bytes + out);
}

/* anchor_row: one anchor as a row (nothing when 0) */
static void anchor_row(int64_t v, const char *why)
{
    char b[32], sb[40];
    if (!v)
        return;
    card_format_bytes((uint64_t)(v < 0 ? -v : v), b, sizeof b);
    snprintf(sb, sizeof sb, "%c%s", v < 0 ? '-' : '+', b);
    printf("  %-18s %12s  (%s)\n", "anchored to run", sb, why);
}

void predict_print_breakdown(const prediction *p, const model_calib *cal, int generic, int compile,
                             uint64_t kv)
{
    char b1[32];
    int64_t at, ar;
    predict_anchors(p, &at, &ar);
    printf("%s", p->oom_state ? "at the failure (what was live when the run ran out of memory, "
                                "its batch-sized parts scaled with the micro-batch):\n"
                 : generic
                     ? "at the step's peak (what the run measured, its batch-sized parts scaled "
                       "with the micro-batch):\n"
                     : "at the step's peak (start of the loss backward; refined formula, "
                       "formula.md §3):\n");
    for (int k = 0; k < CAT_COUNT; k++) {
        if (!p->by_cat.bytes[k] || outside(k))
            continue;
        printf("  %-18s %12s  %s\n", category_name((category)k),
               card_format_bytes(p->by_cat.bytes[k], b1, sizeof b1), category_doc((category)k));
    }
    anchor_row(at, at < 0 ? "the formula's rows over-predict the run they are calibrated with: "
                            "the tensors scaled to it"
                          : "the run measured more tensors than the formula's rows give it: "
                            "added");
    printf("  %-18s %12s  (≈ torch.cuda.max_memory_allocated)\n", "= tensors",
           card_format_bytes(p->tensor_bytes, b1, sizeof b1));
    printf("  %-18s %12s  (%.0f %% of tensors: %s)\n", category_name(CAT_CACHE),
           card_format_bytes(p->by_cat.bytes[CAT_CACHE], b1, sizeof b1),
           p->tensor_bytes ? 100.0 * (double)p->by_cat.bytes[CAT_CACHE] / (double)p->tensor_bytes
                           : 0,
           cal->lower ? "none counted: a lower bound (its fragmentation floor, 20 % eager, is "
                        "room the run may need beside)"
           : cal->calibrated
               ? (cal->partial
                      ? "the fragmentation floor: the run ended in an OOM, which squeezed its "
                        "cache, so what it held then is not a measure of what it needs"
                      : "the share the run measured")
           : compile ? "assumed fragmentation room, compiled"
                     : "assumed fragmentation room, eager");
    for (int k = CAT_CONTEXT; k <= CAT_EXTERNAL; k++)
        if (k != CAT_CACHE && p->by_cat.bytes[k])
            printf("  %-18s %12s  (%s)\n", category_name((category)k),
                   card_format_bytes(p->by_cat.bytes[k], b1, sizeof b1),
                   cal->calibrated ? "as measured" : "assumed, lazy kernel loading");
    anchor_row(ar, ar > 0 ? "the run measured more than the formula's rows give it: added"
                          : "scaled with the tensors to the run");
    if (kv)
        printf("  (not counted: transformers' GPT-2 keeps a KV cache in training unless "
               "use_cache=False, a key and a value of B*T*d a block: %s more)\n",
               card_format_bytes(kv, b1, sizeof b1));
}
