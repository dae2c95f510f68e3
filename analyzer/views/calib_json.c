/* calib_json.c — a run's shape and the report's calibration as JSON and back (calib_json.h).
 * A fraction or ratio is written in the digits that read back as the same double (exact_number);
 * byte counts are integers below 2^53, exact. */
#include "calib_json.h"

#include "escape.h"

#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* X(field, "key") by kind: U a uint64_t count, N an int count, D a double, Y an int flag
 * (a boolean in JSON), O a flag an older report may lack (false then), P a count it may lack
 * (0 then). */
#define VT_SHAPE_FIELDS(U, N, D, Y, O, P)                                                          \
    U(B, "batch_size")                                                                             \
    U(T, "block_size")                                                                             \
    U(A, "gradient_accumulation_steps")                                                            \
    U(L, "n_layer")                                                                                \
    U(H, "n_head")                                                                                 \
    U(d, "n_embd")                                                                                 \
    U(V, "vocab_size")                                                                             \
    D(dropout, "dropout")                                                                          \
    Y(bias, "bias")                                                                                \
    N(dtype_bytes, "dtype_bytes")                                                                  \
    Y(compile, "compile")                                                                          \
    Y(unfused_attention, "unfused_attention")                                                      \
    Y(checkpointing, "checkpointing")                                                              \
    Y(iteration0, "before_first_step")                                                             \
    Y(accum_unknown, "accumulation_unknown")                                                       \
    Y(generic, "no_formula")                                                                       \
    Y(opt_set, "optimizer_bytes_known")                                                            \
    D(opt_bpp, "optimizer_bytes_per_trainable_param")                                              \
    D(train_frac, "trainable_fraction")                                                            \
    Y(patch_tokens, "patch_tokens")                                                                \
    Y(gated, "gated_mlp")                                                                          \
    U(I, "mlp_width")                                                                              \
    U(kv, "kv_width")                                                                              \
    Y(untied, "untied_head")                                                                       \
    O(hf_gpt2, "hf_gpt2_block")                                                                    \
    O(params16, "parameters_16bit")                                                                \
    O(bert, "bert_block")                                                                          \
    O(dropout_on, "dropout_masks")                                                                 \
    O(no_training, "no_training")                                                                  \
    O(none_seen_trained, "none_seen_trained")                                                      \
    O(no_head, "no_lm_head")                                                                       \
    P(pos_rows, "position_rows")                                                                   \
    P(type_rows, "token_type_rows")

/* (P: a count an older report may lack: 0 then) */
#define VT_CALIB_FIELDS(U, N, D, Y, P, O)                                                          \
    D(cache_fraction, "cache_fraction")                                                            \
    Y(expandable, "expandable_segments")                                                           \
    Y(partial, "partial")                                                                          \
    D(temp_per_token, "temporaries_per_token")                                                     \
    Y(calibrated, "calibrated")                                                                    \
    Y(global, "one_ratio")                                                                         \
    Y(weights_exact, "weights_exact")                                                              \
    Y(has_oom, "oom_state")                                                                        \
    Y(oom_tight, "oom_tight")                                                                      \
    U(oom_request, "oom_request_bytes")                                                            \
    D(act_whole, "activations_whole")                                                              \
    D(logits_whole, "logits_whole_bytes")                                                          \
    P(ema, "ema_bytes")                                                                            \
    P(eval_batch, "evaluation_batch")                                                              \
    P(eval_train, "evaluation_training_bytes")                                                     \
    P(eval_tensors, "evaluation_tensor_bytes")                                                     \
    P(eval_scaled, "evaluation_batch_scaled_bytes")                                                \
    P(frozen, "frozen_model_bytes")                                                                \
    P(passes_kept, "passes_kept_bytes")                                                            \
    P(no_kv_tensors, "tensors_without_kv_cache_bytes")                                             \
    P(compiled_casts, "compiled_weight_casts_bytes")                                               \
    O(step_unreached, "optimizer_step_unreached")                                                  \
    O(oom_later, "oom_after_measured_step")                                                        \
    O(after_forward, "measured_after_forward")                                                     \
    O(grads_kept, "gradients_kept_through_forward")                                                \
    O(oom_in_step, "oom_in_optimizer_step")                                                        \
    O(eval_cut, "evaluation_cut")                                                                  \
    O(eval_feeds, "evaluation_feeds_step")                                                         \
    O(state_not_kept, "optimizer_state_not_kept")

/* exact_number: d under key as the digits that read back as d itself (the fewest of 15, 16, 17;
 * cJSON's own "%1.15g" is taken when it reads back within its tolerance, a unit in the last
 * place off: `predict --from` the report's JSON had said 547332683 where `--from` the trace said
 * 547332682); NaN and infinities as null, as cJSON writes them. The locale's point as '.'. */
static void exact_number(cJSON *o, const char *key, double d)
{
    char num[32];
    int len = 0;
    if (!isfinite(d)) {
        cJSON_AddNullToObject(o, key);
        return;
    }
    if (d == floor(d) && fabs(d) < 1e15) { /* (a whole number: cJSON's digits are exact) */
        cJSON_AddNumberToObject(o, key, d);
        return;
    }
    for (int digits = 15; digits <= 17; digits++)
        if ((len = snprintf(num, sizeof num, "%.*g", digits, d)) > 0 &&
            strtod(num, NULL) == d) /* (strtod reads the locale's point, as printf wrote it) */
            break;
    char point = *localeconv()->decimal_point;
    for (int i = 0; i < len && i < (int)sizeof num; i++)
        if (num[i] == point)
            num[i] = '.';
    cJSON_AddRawToObject(o, key, num);
}

#define W_NUM(f, key) cJSON_AddNumberToObject(o, key, (double)s->f);
#define W_DBL(f, key) exact_number(o, key, (double)s->f);
#define W_BOOL(f, key) cJSON_AddBoolToObject(o, key, s->f != 0);

cJSON *calib_shape_json(const gpt_shape *s)
{
    cJSON *o = cJSON_CreateObject();
    VT_SHAPE_FIELDS(W_NUM, W_NUM, W_DBL, W_BOOL, W_BOOL, W_NUM)
    if (s->grads_frac > 0) /* (only where steps of different weights read their gradients) */
        exact_number(o, "gradients_live_fraction", s->grads_frac);
    if (s->nbs) { /* (only where the program sets its accumulation from its micro-batch) */
        cJSON_AddNumberToObject(o, "accumulation_nominal_batch", (double)s->nbs);
        cJSON_AddNumberToObject(o, "accumulation_nominal_floor", (double)s->nbs_floor);
    }
    return o;
}

/* calib_cats_json / ratio_json: {category key: value} for every category (calib_cats_json:
 * also categories_json's, model_json.c) */
cJSON *calib_cats_json(const uint64_t v[CAT_COUNT])
{
    cJSON *o = cJSON_CreateObject();
    for (int k = 0; k < CAT_COUNT; k++)
        cJSON_AddNumberToObject(o, category_key((category)k), (double)v[k]);
    return o;
}

static cJSON *ratio_json(const double *v)
{
    cJSON *o = cJSON_CreateObject();
    for (int k = 0; k < CAT_COUNT; k++)
        exact_number(o, category_key((category)k), v[k]);
    return o;
}

cJSON *calib_json(const model_calib *s)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddItemToObject(o, "measured_shape", calib_shape_json(&s->measured_shape));
    cJSON_AddItemToObject(o, "measured", calib_cats_json(s->measured.bytes));
    cJSON_AddItemToObject(o, "refined", calib_cats_json(s->refined.bytes));
    cJSON_AddItemToObject(o, "ratio", ratio_json(s->ratio));
    cJSON_AddItemToObject(o, "training_ratio", ratio_json(s->train_ratio));
    cJSON_AddItemToObject(o, "fixed", calib_cats_json(s->fixed));
    cJSON_AddItemToObject(o, "oom_live", calib_cats_json(s->oom_live.bytes));
    cJSON_AddItemToObject(o, "kv_cache", calib_cats_json(s->kv.bytes));
    cJSON_AddItemToObject(o, "kv_cache_oom", calib_cats_json(s->kv_oom.bytes));
    cJSON_AddItemToObject(o, "optimizer_step", calib_cats_json(s->step.bytes));
    cJSON_AddItemToObject(o, "forward_whole", calib_cats_json(s->fwd_whole.bytes));
    VT_CALIB_FIELDS(W_NUM, W_NUM, W_DBL, W_BOOL, W_NUM, W_BOOL)
    if (s->eval_flag[0]) /* (the evaluation's batch flag and value, as the text says it) */
        cJSON_AddStringToObject(o, "evaluation_batch_flag", s->eval_flag);
    else
        cJSON_AddNullToObject(o, "evaluation_batch_flag");
    if (s->packed) /* (only where weights are packed 4-bit: advice_weights_at) */
        cJSON_AddNumberToObject(o, "packed_4bit_weight_bytes", (double)s->packed);
    if (s->packed && s->qstate) /* (their absmax beside them: no parameters) */
        cJSON_AddNumberToObject(o, "packed_4bit_quant_state_bytes", (double)s->qstate);
    if (s->later_cache_fraction >= 0) /* (a run of one step taken again: model.c) */
        exact_number(o, "later_cache_fraction", s->later_cache_fraction);
    else
        cJSON_AddNullToObject(o, "later_cache_fraction");
    return o;
}

/* num / flag: the number or boolean at key; -1 with "PREFIXkey: ..." in err when it is not. */
static int num(const cJSON *o, const char *prefix, const char *key, double *out, char *err,
               size_t errlen)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!cJSON_IsNumber(v)) {
        snprintf(err, errlen, "%s%s: missing or not a number", prefix, key);
        return -1;
    }
    *out = v->valuedouble;
    return 0;
}

static int flag(const cJSON *o, const char *prefix, const char *key, int *out, char *err,
                size_t errlen)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!cJSON_IsBool(v)) {
        snprintf(err, errlen, "%s%s: missing or not a boolean", prefix, key);
        return -1;
    }
    *out = cJSON_IsTrue(v);
    return 0;
}

/* count: a number that is a whole count of at most 2^60 (bytes, sizes). */
static int count(const cJSON *o, const char *prefix, const char *key, uint64_t *out, char *err,
                 size_t errlen)
{
    double v;
    if (num(o, prefix, key, &v, err, errlen) < 0)
        return -1;
    if (!(v >= 0 && v <= 1152921504606846976.0) || v != (double)(uint64_t)v) {
        snprintf(err, errlen, "%s%s: %g is not a count", prefix, key, v);
        return -1;
    }
    *out = (uint64_t)v;
    return 0;
}

#define R_U64(f, key)                                                                              \
    if (count(o, prefix, key, &u, err, errlen) < 0)                                                \
        return -1;                                                                                 \
    s->f = u;
#define R_INT(f, key)                                                                              \
    if (count(o, prefix, key, &u, err, errlen) < 0)                                                \
        return -1;                                                                                 \
    if (u > 64) {                                                                                  \
        snprintf(err, errlen, "%s%s: %llu is out of range", prefix, key, (unsigned long long)u);   \
        return -1;                                                                                 \
    }                                                                                              \
    s->f = (int)u;
#define R_DBL(f, key)                                                                              \
    if (num(o, prefix, key, &dv, err, errlen) < 0)                                                 \
        return -1;                                                                                 \
    s->f = dv;
#define R_BOOL(f, key)                                                                             \
    if (flag(o, prefix, key, &iv, err, errlen) < 0)                                                \
        return -1;                                                                                 \
    s->f = iv;

#define R_OPT(f, key)                                                                              \
    if (cJSON_GetObjectItemCaseSensitive(o, key)) {                                                \
        R_BOOL(f, key)                                                                             \
    }

#define R_OPTU(f, key)                                                                             \
    if (cJSON_GetObjectItemCaseSensitive(o, key) != NULL) {                                        \
        R_U64(f, key)                                                                              \
    }

static int shape_from(const cJSON *o, const char *name, gpt_shape *s, char *err, size_t errlen)
{
    uint64_t u;
    double dv;
    int iv;
    char prefix[64] = "";
    if (name[0])
        snprintf(prefix, sizeof prefix, "%s.", name);
    memset(s, 0, sizeof *s);
    if (!cJSON_IsObject(o)) {
        snprintf(err, errlen, "%s%snot an object", name, name[0] ? ": " : "");
        return -1;
    }
    VT_SHAPE_FIELDS(R_U64, R_INT, R_DBL, R_BOOL, R_OPT, R_OPTU)
    if (cJSON_GetObjectItemCaseSensitive(o, "gradients_live_fraction")) {
        R_DBL(grads_frac, "gradients_live_fraction")
    }
    R_OPTU(nbs, "accumulation_nominal_batch")
    R_OPTU(nbs_floor, "accumulation_nominal_floor")
    return 0;
}

int calib_shape_from_json(const cJSON *o, gpt_shape *s, char *err, size_t errlen)
{
    return shape_from(o, "", s, err, errlen);
}

/* cats_from: {category key: count} into v (every category). */
static int cats_from(const cJSON *o, const char *key, uint64_t *v, char *err, size_t errlen)
{
    const cJSON *c = cJSON_GetObjectItemCaseSensitive(o, key);
    char prefix[64];
    snprintf(prefix, sizeof prefix, "%s.", key);
    for (int k = 0; k < CAT_COUNT; k++)
        if (count(c, prefix, category_key((category)k), &v[k], err, errlen) < 0)
            return -1;
    return 0;
}

int calib_from_json(const cJSON *o, model_calib *s, char *err, size_t errlen)
{
    const char *prefix = "";
    uint64_t u;
    double dv;
    int iv;
    memset(s, 0, sizeof *s);
    if (!cJSON_IsObject(o)) {
        snprintf(err, errlen, "not an object");
        return -1;
    }
    if (shape_from(cJSON_GetObjectItemCaseSensitive(o, "measured_shape"), "measured_shape",
                   &s->measured_shape, err, errlen) < 0 ||
        cats_from(o, "measured", s->measured.bytes, err, errlen) < 0 ||
        cats_from(o, "refined", s->refined.bytes, err, errlen) < 0 ||
        cats_from(o, "fixed", s->fixed, err, errlen) < 0 ||
        cats_from(o, "oom_live", s->oom_live.bytes, err, errlen) < 0 ||
        (cJSON_GetObjectItemCaseSensitive(o, "kv_cache") && /* (an older report: none) */
         (cats_from(o, "kv_cache", s->kv.bytes, err, errlen) < 0 ||
          cats_from(o, "kv_cache_oom", s->kv_oom.bytes, err, errlen) < 0)) ||
        (cJSON_GetObjectItemCaseSensitive(o, "optimizer_step") && /* (an older report: none) */
         cats_from(o, "optimizer_step", s->step.bytes, err, errlen) < 0) ||
        (cJSON_GetObjectItemCaseSensitive(o, "forward_whole") && /* (an older report: none) */
         cats_from(o, "forward_whole", s->fwd_whole.bytes, err, errlen) < 0))
        return -1;
    const cJSON *r = cJSON_GetObjectItemCaseSensitive(o, "ratio");
    for (int k = 0; k < CAT_COUNT; k++)
        if (num(r, "ratio.", category_key((category)k), &s->ratio[k], err, errlen) < 0)
            return -1;
    const cJSON *tr = cJSON_GetObjectItemCaseSensitive(o, "training_ratio");
    for (int k = 0; tr && k < CAT_COUNT; k++) /* (an older report: none) */
        if (num(tr, "training_ratio.", category_key((category)k), &s->train_ratio[k], err, errlen) <
            0)
            return -1;
    VT_CALIB_FIELDS(R_U64, R_INT, R_DBL, R_BOOL, R_OPTU, R_OPT)
    R_OPTU(packed, "packed_4bit_weight_bytes") /* (present only where some are: else 0) */
    R_OPTU(qstate, "packed_4bit_quant_state_bytes")
    /* (a report's file may be anyone's: the flag escaped for the terminal; null or an older
     * report's none: "") */
    const cJSON *ef = cJSON_GetObjectItemCaseSensitive(o, "evaluation_batch_flag");
    if (cJSON_IsString(ef))
        escape_term(ef->valuestring, strlen(ef->valuestring), s->eval_flag, sizeof s->eval_flag);
    else if (ef && !cJSON_IsNull(ef)) {
        snprintf(err, errlen, "evaluation_batch_flag: not a string");
        return -1;
    }
    /* (null, or an older report's none: every step's cache the share measured) */
    const cJSON *later = cJSON_GetObjectItemCaseSensitive(o, "later_cache_fraction");
    s->later_cache_fraction = -1;
    if (cJSON_IsNumber(later) && later->valuedouble >= 0 && later->valuedouble < 1e6)
        s->later_cache_fraction = later->valuedouble;
    else if (later && !cJSON_IsNull(later)) {
        snprintf(err, errlen, "later_cache_fraction: not a share of the tensors");
        return -1;
    }
    return 0;
}
