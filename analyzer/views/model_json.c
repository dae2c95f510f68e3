/* model_json.c — the model's fields of `report --json` (model_views.h): "config",
 * "formula", "oom" (diagnosis), "advice", "prediction", from a built model_result; and the
 * one writer of a by-category object. A string the analysis built may quote the trace (a
 * class, a file, a flag, a command line): each goes through jsonw (valid UTF-8). */
#include <string.h>

#include "calib_json.h"
#include "config_view.h"
#include "jsonw.h"
#include "model_views.h"

cJSON *categories_json(const cat_breakdown *b)
{
    return calib_cats_json(b->bytes);
}

static void add_formula_json(cJSON *root, const model_result *m)
{
    cJSON *fo = cJSON_AddObjectToObject(root, "formula");
    uint64_t tm = 0, td = 0, tr = 0;
    /* no formula applies: none is compared (not even the refined formula's assumed context) */
    int fo_ok = m->formula_ok;
    for (int c = 0; c < CAT_COUNT; c++) {
        uint64_t me = m->measured.bytes[c], d = fo_ok ? m->doc.bytes[c] : 0,
                 r = fo_ok ? m->refined.bytes[c] : 0;
        tm += me, td += d, tr += r;
        cJSON *e = cJSON_AddObjectToObject(fo, category_key((category)c));
        cJSON_AddNumberToObject(e, "measured_bytes", (double)me);
        cJSON_AddNumberToObject(e, "document_bytes", (double)d);
        cJSON_AddNumberToObject(e, "refined_bytes", (double)r);
        if (r)
            cJSON_AddNumberToObject(e, "ratio", (double)me / r);
        else
            cJSON_AddNullToObject(e, "ratio");
        if (d)
            cJSON_AddNumberToObject(e, "ratio_document", (double)me / d);
        else
            cJSON_AddNullToObject(e, "ratio_document");
        if (m->reason_doc[c][0])
            jsonw_add_c(e, "reason", m->reason_doc[c]);
        if (m->reason_ref[c][0])
            jsonw_add_c(e, "reason_refined", m->reason_ref[c]);
    }
    cJSON *t = cJSON_AddObjectToObject(fo, "total");
    cJSON_AddNumberToObject(t, "measured_bytes", (double)tm);
    cJSON_AddNumberToObject(t, "document_bytes", (double)td);
    cJSON_AddNumberToObject(t, "refined_bytes", (double)tr);
    if (tr)
        cJSON_AddNumberToObject(t, "ratio", (double)tm / tr);
    else
        cJSON_AddNullToObject(t, "ratio");
    cJSON *mu = cJSON_AddObjectToObject(fo, "activation_multiplier");
    cJSON_AddNumberToObject(mu, "measured", m->mult_act);
    cJSON_AddNumberToObject(mu, "measured_with_logits_attention", m->mult_all);
    cJSON_AddBoolToObject(mu, "forward_unfinished", m->forward_cut);
    if (fo_ok) {
        cJSON_AddNumberToObject(mu, "document_basic", FORMULA_DOC_MULT_BASIC);
        cJSON_AddNumberToObject(mu, "document_empirical", FORMULA_DOC_MULT_EMPIRICAL);
    } else {
        cJSON_AddNullToObject(mu, "document_basic");
        cJSON_AddNullToObject(mu, "document_empirical");
    }
    cJSON *pc = cJSON_AddObjectToObject(fo, "parameter_count");
    cJSON_AddNumberToObject(pc, "exact", (double)formula_params_exact(&m->shape));
    cJSON_AddNumberToObject(pc, "reported", (double)m->docf.params_reported);
    cJSON_AddNumberToObject(pc, "document_estimate", (double)m->docf.params_estimate);
    cJSON_AddNumberToObject(pc, "decayed", (double)m->docf.decayed_params);
    if (m->params_trace && !m->weights_untyped) /* not nanoGPT: what the weight tensors hold
                                                 * (not where some have no element size known) */
        cJSON_AddNumberToObject(pc, "from_trace", (double)m->params_trace);
    else
        cJSON_AddNullToObject(pc, "from_trace");
}

static void add_oom_json(cJSON *root, const model_result *m, const run_facts *f)
{
    if (!f->has_oom) {
        cJSON_AddNullToObject(root, "oom");
        return;
    }
    cJSON *oo = cJSON_AddObjectToObject(root, "oom");
    cJSON_AddNumberToObject(oo, "requested_bytes", (double)f->oom_requested);
    cJSON_AddNumberToObject(oo, "capacity_bytes",
                            (double)(f->oom_capacity ? f->oom_capacity : m->capacity));
    cJSON_AddStringToObject(oo, "cause", advice_cause_key(m->cause));
    cJSON_AddStringToObject(oo, "cause_text", advice_cause_text_on(m->cause, model_cause_on(m, f)));
    jsonw_add_c(oo, "evidence", m->why);
    cJSON_AddItemToObject(oo, "live_by_category", categories_json(&f->at_oom));
    cJSON_AddNumberToObject(oo, "allocator_cache_bytes", (double)f->oom_cache);
    cJSON_AddNumberToObject(oo, "outside_pytorch_bytes", (double)f->oom_outside);
    jsonw_add_c(oo, "phase", f->oom_phase ? f->oom_phase : "");
    /* (the eval phase of a rollout is no evaluation: what the pass is, as the text says it) */
    cJSON_AddBoolToObject(oo, "step_pass", f->oom_step_pass != 0);
    /* (phase forward by default: after the backward passes of one forward, outside a forward) */
    if (f->oom_passes)
        cJSON_AddNumberToObject(oo, "after_backward_passes", f->oom_passes);
    else
        cJSON_AddNullToObject(oo, "after_backward_passes");
    jsonw_add_c(oo, "site", f->oom_site ? f->oom_site : "");
    cJSON_AddBoolToObject(oo, "pytorch_retry", f->oom_pytorch_pattern != 0);
}

/* advice_json: one advice item. */
static cJSON *advice_json(const advice_item *it, int lower)
{
    cJSON *e = cJSON_CreateObject();
    jsonw_add_c(e, "change", it->change);
    /* the arguments alone; a change in the program's code apart (the text's "change:" line
     * says both) */
    char args[sizeof it->cmdline], code[sizeof it->cmdline];
    advice_cmdline_split(it->cmdline, args, sizeof args, code, sizeof code);
    jsonw_add_c(e, "command_line", args);
    jsonw_add_c(e, "code_change", code);
    cJSON_AddNumberToObject(e, "predicted_peak_bytes", (double)it->predicted_peak);
    /* a forward the OOM cut short: the prediction is a lower bound ("fits": may fit) */
    cJSON_AddBoolToObject(e, "predicted_peak_at_least", lower);
    /* the moment of its peak: the step's, the run's optimizer step moved to its shape, or the
     * backward's end */
    cJSON_AddStringToObject(e, "predicted_peak_at", advice_moment_key(it->moment));
    cJSON_AddNumberToObject(e, "predicted_reserved_bytes", (double)it->predicted_reserved);
    cJSON_AddNumberToObject(e, "predicted_allocated_bytes", (double)it->predicted_tensors);
    cJSON_AddNumberToObject(e, "required_bytes", (double)it->required);
    if (it->fits < 0)
        cJSON_AddNullToObject(e, "fits");
    else
        cJSON_AddBoolToObject(e, "fits", it->fits == 1);
    cJSON_AddNumberToObject(e, "headroom_bytes", (double)it->headroom_bytes);
    cJSON_AddNumberToObject(e, "allocator_cache_bytes", (double)it->cache_assumed);
    if (it->cache_limit) /* the cache decides: fits with at most this much of it */
        cJSON_AddNumberToObject(e, "fits_with_cache_at_most_bytes", (double)it->cache_limit);
    else
        cJSON_AddNullToObject(e, "fits_with_cache_at_most_bytes");
    jsonw_add_c(e, "note", it->note);
    cJSON_AddBoolToObject(e, "recommended", it->recommended != 0);
    cJSON_AddNumberToObject(e, "batch_size", (double)it->shape.B);
    if (it->shape.accum_unknown) /* the run's A is not known: only the factor is */
        cJSON_AddNullToObject(e, "gradient_accumulation_steps");
    else
        cJSON_AddNumberToObject(e, "gradient_accumulation_steps", (double)it->shape.A);
    if (it->shape.T) /* (a model with no sequence: a CNN's, a U-Net's, a GAN's) */
        cJSON_AddNumberToObject(e, "block_size", (double)it->shape.T);
    else
        cJSON_AddNullToObject(e, "block_size");
    if (it->shape.eval_B) /* the evaluation's own batch, where the option changes it */
        cJSON_AddNumberToObject(e, "evaluation_batch", (double)it->shape.eval_B);
    else
        cJSON_AddNullToObject(e, "evaluation_batch");
    return e;
}

static cJSON *add_feature(cJSON *o, const char *key, const recog_feature *f)
{
    cJSON *e = cJSON_AddObjectToObject(o, key);
    if (f->state == FEAT_UNKNOWN)
        cJSON_AddNullToObject(e, "on");
    else
        cJSON_AddBoolToObject(e, "on", f->state == FEAT_ON);
    jsonw_add_c(e, "where", f->where);
    return e;
}

/* add_recognized_json: "recognized": what was trained and what was on, with the evidence. */
static void add_recognized_json(cJSON *root, const model_result *m)
{
    const run_recognition *r = &m->rec;
    cJSON *o = cJSON_AddObjectToObject(root, "recognized");
    cJSON_AddStringToObject(o, "family", family_told_key(r)); /* (as family_text says it) */
    cJSON_AddStringToObject(o, "family_text", family_text(r));
    cJSON_AddBoolToObject(o, "family_from_sizes", r->family_by_sizes);
    jsonw_add_c(o, "family_where", r->family_where);
    if (!r->lm_head) /* (not known: null, as an unknown value is written) */
        cJSON_AddNullToObject(o, "lm_head");
    else
        cJSON_AddBoolToObject(o, "lm_head", r->lm_head > 0);
    jsonw_add_c(o, "model_class", r->model_class);
    cJSON_AddBoolToObject(o, "nanogpt", m->cfg.program == PROG_NANOGPT);
    cJSON_AddBoolToObject(o, "batchnorm", r->batchnorm != 0);
    if (model_trained_unsure(m)) /* (the family is what ran, not told trained) */
        cJSON_AddStringToObject(o, "trained_unsure", model_trained_unsure(m));
    cJSON *op = cJSON_AddObjectToObject(o, "optimizer");
    cJSON_AddStringToObject(op, "kind", optim_key(r->optim));
    cJSON_AddStringToObject(op, "text", optim_text(r));
    jsonw_add_c(op, "class", r->optim_class);
    if (r->optim_bpp >= 0)
        cJSON_AddNumberToObject(op, "state_bytes_per_trainable_param", r->optim_bpp);
    else
        cJSON_AddNullToObject(op, "state_bytes_per_trainable_param");
    cJSON_AddBoolToObject(op, "steps_may_be_skipped", r->steps_maybe_skipped != 0);
    cJSON_AddBoolToObject(op, "state_cut", r->state_cut != 0);
    jsonw_add_c(op, "where", r->optim_where);
    /* no step ran and the script constructs several kinds: which (none: []) */
    cJSON *kinds = cJSON_AddArrayToObject(op, "script_kinds");
    for (int k = 0; k < OPT_COUNT; k++)
        if (r->optim_kinds & 1u << k)
            cJSON_AddItemToArray(kinds, cJSON_CreateString(optim_key((optim_kind)k)));
    cJSON *lp = cJSON_AddObjectToObject(o, "training_loop");
    if (r->loop[0])
        jsonw_add_c(lp, "kind", r->loop);
    else
        cJSON_AddNullToObject(lp, "kind");
    jsonw_add_c(lp, "where", r->loop_where);
    if (r->trainable)
        cJSON_AddNumberToObject(o, "trainable_params", (double)r->trainable);
    else
        cJSON_AddNullToObject(o, "trainable_params");
    if (r->trainable && model_trained_bytes(m) != formula_param_bytes(&m->shape))
        cJSON_AddNumberToObject(o, "trainable_element_bytes", model_trained_bytes(m));
    if (r->trainable && r->trainable_lower) /* (present only then: a lower bound) */
        cJSON_AddTrueToObject(o, "trainable_params_at_least");
    if (r->trainable && r->rest_untold) /* (present only then: frozen or not reached, untold) */
        cJSON_AddTrueToObject(o, "trainable_params_rest_untold");
    if (m->weights_untyped) /* (present only then: weights with no element size known) */
        cJSON_AddNumberToObject(o, "untyped_weight_bytes", (double)m->weights_untyped);
    if (m->weights_untyped && m->untyped_packed) /* (... of them packed 4-bit: counted) */
        cJSON_AddNumberToObject(o, "untyped_packed_4bit_elements", 2.0 * (double)m->untyped_packed);
    for (int i = 0; i < FEATURE_COUNT; i++) {
        cJSON *e = add_feature(o, feature_key((feature_id)i), &r->feat[i]);
        if (i == FEATURE_EMA) /* its copy of the weights among the parameters, when explained */
            cJSON_AddNumberToObject(e, "bytes", (double)r->ema_bytes);
    }
}

void model_json(cJSON *root, const model_result *m, const run_facts *f)
{
    config_add_json(root, &m->cfg, model_config_shown(m));
    if (m->note[0])
        jsonw_add_c(root, "config_note", m->note);
    add_recognized_json(root, m);
    cJSON_AddBoolToObject(root, "formula_applies", m->formula_ok != 0);
    cJSON_AddBoolToObject(root, "no_allocation", m->empty != 0);
    if (m->advice_none[0])
        jsonw_add_c(root, "advice_note", m->advice_none);
    if (!m->formula_ok)
        jsonw_add_c(root, "formula_note", m->formula_why);
    if (m->formula_block[0])
        jsonw_add_c(root, "formula_block_note", m->formula_block);
    add_formula_json(root, m);
    add_oom_json(root, m, f);
    cJSON *adv = cJSON_AddArrayToObject(root, "advice");
    for (int i = 0; i < m->nitems; i++)
        cJSON_AddItemToArray(adv, advice_json(&m->items[i], m->lower_bounds != 0));
    cJSON *pr = cJSON_AddObjectToObject(root, "prediction");
    cJSON_AddNumberToObject(pr, "current_peak_bytes", (double)m->current.peak_bytes);
    if (m->current_own) /* (the range's low end: the run's own cache share, not the floor) */
        cJSON_AddNumberToObject(pr, "current_peak_own_cache_bytes", (double)m->current_own);
    else
        cJSON_AddNullToObject(pr, "current_peak_own_cache_bytes");
    cJSON_AddNumberToObject(pr, "current_reserved_bytes", (double)m->current.reserved_bytes);
    cJSON_AddNumberToObject(pr, "current_allocated_bytes", (double)m->current.tensor_bytes);
    cJSON_AddNumberToObject(pr, "capacity_bytes", (double)m->capacity);
    jsonw_add_c(pr, "capacity_name", m->capacity_name);
    cJSON_AddNumberToObject(pr, "headroom_fraction", ADVICE_HEADROOM);
    if (m->largest_unpredicted || m->advice_none[0]) /* not predicted: nothing measures it */
        cJSON_AddNullToObject(pr, "largest_batch_size");
    else
        cJSON_AddNumberToObject(pr, "largest_batch_size", (double)m->largest_batch);
    if (m->largest_ran) /* (none keeps the headroom; the run's own ran on the card: model_ran.c) */
        cJSON_AddNumberToObject(pr, "largest_batch_size_ran", (double)m->largest_ran);
    else
        cJSON_AddNullToObject(pr, "largest_batch_size_ran");
    /* (predict --from this JSON reads it: the largest on another card is not predicted either) */
    cJSON_AddBoolToObject(pr, "batch_growth_measured", !m->growth_unmeasured);
    cJSON_AddBoolToObject(pr, "largest_batch_size_at_most", m->lower_bounds != 0);
    /* an evaluation pass of the script the trace never reached: the what-ifs and the largest
     * count the training step only (model_script.c); null where none */
    if (m->unreached[0]) {
        cJSON *u = cJSON_AddObjectToObject(pr, "unreached_pass");
        jsonw_add_c(u, "where", m->unreached_where);
        if (m->unreached_flag[0])
            jsonw_add_c(u, "batch_flag", m->unreached_flag);
        else
            cJSON_AddNullToObject(u, "batch_flag");
        cJSON_AddBoolToObject(u, "batch_flag_on_command_line", m->unreached_flag_argv != 0);
        jsonw_add_c(u, "largest_counts", m->unreached_short);
        jsonw_add_c(u, "note", m->unreached);
    } else
        cJSON_AddNullToObject(pr, "unreached_pass");
    /* the cache assumed at the largest, and the most with which it keeps the headroom: null
     * where the views say nothing of it (model.h) */
    if (m->largest_cache_most && !m->largest_unpredicted && m->largest_batch) {
        cJSON_AddNumberToObject(pr, "largest_batch_cache_assumed_bytes", (double)m->largest_cache);
        cJSON_AddNumberToObject(pr, "largest_batch_cache_most_bytes",
                                (double)m->largest_cache_most);
    } else {
        cJSON_AddNullToObject(pr, "largest_batch_cache_assumed_bytes");
        cJSON_AddNullToObject(pr, "largest_batch_cache_most_bytes");
    }
    /* the largest with the cache share the run measured, above the one that counts the room for
     * fragmentation (model.h largest_own), as the text says it */
    if (m->largest_own && !m->largest_unpredicted)
        cJSON_AddNumberToObject(pr, "largest_batch_size_own_cache", (double)m->largest_own);
    else
        cJSON_AddNullToObject(pr, "largest_batch_size_own_cache");
    /* the next micro-batch's (1 after none): the cache assumed, and the most with which it
     * would fit, as the text says it */
    if (m->next_cache_most && !m->largest_unpredicted && !m->advice_none[0] &&
        config_known(&m->cfg, CFG_batch_size)) {
        cJSON_AddNumberToObject(pr, "next_batch_cache_assumed_bytes", (double)m->next_cache);
        cJSON_AddNumberToObject(pr, "next_batch_cache_most_bytes", (double)m->next_cache_most);
    } else {
        cJSON_AddNullToObject(pr, "next_batch_cache_assumed_bytes");
        cJSON_AddNullToObject(pr, "next_batch_cache_most_bytes");
    }
    cJSON_AddBoolToObject(pr, "optimizer_state_assumed_adamw", m->opt_assumed != 0);
    cJSON_AddBoolToObject(pr, "tight_fit", m->tight != 0);
    cJSON_AddBoolToObject(pr, "gradients_kept_assumed", m->accum_assumed != 0);
    cJSON *notes = cJSON_AddArrayToObject(pr, "notes");
    for (int i = 0; i < m->nnotes; i++)
        cJSON_AddItemToArray(notes, jsonw_item(m->notes[i], strlen(m->notes[i])));
    if (m->oom_forward[0])
        jsonw_add_c(pr, "first_forward_note", m->oom_forward);
    else
        cJSON_AddNullToObject(pr, "first_forward_note");
    cJSON_AddItemToObject(pr, "calibrated_by_category", categories_json(&m->current.by_cat));
    /* the model itself, for `predict --from` this JSON: the same as from the trace */
    /* its accumulation not known: the 2 the predictions assume, and said to be assumed (it said
     * "accumulation_unknown": false beside the config's unknown) */
    gpt_shape rs = m->shape;
    rs.accum_unknown = !rs.no_training && m->accum_assumed;
    cJSON_AddItemToObject(pr, "run_shape", calib_shape_json(&rs));
    cJSON_AddItemToObject(pr, "calibration", calib_json(&m->calib));
}
