/* report_json.c — `vramtrace report --json`: the same facts as the text report as one cJSON
 * document (field names documented in docs/report.md and docs/json-report.md), plus the model's
 * config / formula / oom diagnosis / advice. Strings from the trace go through jsonw (valid UTF-8
 * JSON). */
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "jsonw.h"
#include "growth_view.h"
#include "infer.h"
#include "model_views.h"
#include "report_views.h"

/* went_on_json: what the program went on with after the last error of its training it caught
 * (oom_caught.went_on; null: nothing measured after one) */
static void went_on_json(cJSON *oc, const replay_result *r)
{
    if (!r->went_on_event) {
        cJSON_AddNullToObject(oc, "went_on");
        return;
    }
    cJSON *w = cJSON_AddObjectToObject(oc, "went_on");
    if (r->went_on_batch)
        cJSON_AddNumberToObject(w, "batch_size", (double)r->went_on_batch);
    else
        cJSON_AddNullToObject(w, "batch_size");
    if (r->went_on_tokens)
        cJSON_AddNumberToObject(w, "tokens", (double)r->went_on_tokens);
    else
        cJSON_AddNullToObject(w, "tokens");
    cJSON_AddNumberToObject(w, "optimizer_steps", r->went_on_steps);
    cJSON_AddNumberToObject(w, "tensors_peak_bytes", (double)r->went_on_tensors);
    cJSON_AddNumberToObject(w, "reserved_peak_bytes", (double)r->went_on_reserved);
    cJSON_AddNumberToObject(w, "process_peak_bytes", (double)r->went_on_process);
}

static cJSON *run_json(const replay_result *r)
{
    cJSON *o = cJSON_CreateObject();
    jsonw_add(o, "file", r->path, strlen(r->path));
    cJSON_AddStringToObject(o, "status", reader_status_name(r->status));
    const tables_process *p = tables_process_get(r->t);
    if (p) {
        cJSON_AddNumberToObject(o, "pid", p->pid);
        cJSON *argv = cJSON_AddArrayToObject(o, "argv");
        for (uint32_t i = 0; i < p->argc; i++)
            cJSON_AddItemToArray(argv, jsonw_item(p->argv[i].s, p->argv[i].len));
    }
    const char *rank = tables_env(r->t, "RANK");
    if (rank)
        jsonw_add(o, "rank", rank, strlen(rank));
    else
        cJSON_AddNullToObject(o, "rank");
    cJSON_AddNumberToObject(o, "peak_reserved_bytes", (double)r->peak_reserved);
    cJSON_AddNumberToObject(o, "peak_process_bytes", (double)r->peak_process);
    cJSON_AddBoolToObject(o, "oom", r->has_oom);
    /* the capture stopped before the program did (its trailer's reason; null: it did not, or
     * the file is cut: status) */
    const char *stop = reader_trailer_key(replay_capture_stopped(r));
    if (stop)
        cJSON_AddStringToObject(o, "stopped_early", stop);
    else
        cJSON_AddNullToObject(o, "stopped_early");
    /* what the stacks were recorded with (CONFIG): "all", "native", "python", "none"; null when
     * the trace does not say */
    const tables_config *cf = tables_config_get(r->t);
    if (cf) {
        unsigned m = cf->stack_mode & (VT_STACKS_NATIVE | VT_STACKS_PYTHON);
        cJSON_AddStringToObject(o, "stacks",
                                m == (VT_STACKS_NATIVE | VT_STACKS_PYTHON) ? "all"
                                : m == VT_STACKS_NATIVE                    ? "native"
                                : m == VT_STACKS_PYTHON                    ? "python"
                                                                           : "none");
        cJSON_AddNumberToObject(o, "stack_depth", cf->stack_depth);
    } else {
        cJSON_AddNullToObject(o, "stacks");
        cJSON_AddNullToObject(o, "stack_depth");
    }
    return o;
}

/* inferred_json: "inferred": what the trace's own tensors say about the model and the step
 * (infer.h), {key: {value, where}} for the values known; {} when nothing is. */
static void inferred_json(cJSON *root, const infer_result *ir)
{
    cJSON *o = cJSON_AddObjectToObject(root, "inferred");
    if (!o || !ir)
        return;
    for (int k = 0; k < INFER_COUNT; k++)
        if (ir->v[k].known) {
            cJSON *v = cJSON_AddObjectToObject(o, infer_key_name((infer_key)k));
            cJSON_AddNumberToObject(v, "value", (double)ir->v[k].value);
            jsonw_add(v, "where", ir->v[k].where, strlen(ir->v[k].where));
        }
}

/* modules_json: [{module, bytes, count, by_category}] for every module, most bytes first. */
static cJSON *modules_json(const report_module *m, size_t n)
{
    cJSON *a = cJSON_CreateArray();
    for (size_t i = 0; a && i < n; i++) {
        cJSON *o = cJSON_CreateObject();
        jsonw_add(o, "module", m[i].text, strlen(m[i].text));
        cJSON_AddNumberToObject(o, "bytes", (double)m[i].bytes);
        cJSON_AddNumberToObject(o, "count", (double)m[i].count);
        cJSON *bc = cJSON_AddObjectToObject(o, "by_category");
        for (int k = 0; k < CAT_COUNT; k++)
            if (m[i].by_cat[k])
                cJSON_AddNumberToObject(bc, category_key((category)k), (double)m[i].by_cat[k]);
        cJSON_AddItemToArray(a, o);
    }
    return a;
}

/* report_doc: the document of report_json, printed (its nodes the arena's: none freed here) */
static int report_doc(FILE *out, const report_ctx *c)
{
    const replay_result *r = &c->runs[0];
    cJSON *root = cJSON_CreateObject();
    if (!root)
        return -1;
    cJSON_AddNumberToObject(root, "schema_version", VT_REPORT_SCHEMA_VERSION);
    cJSON_AddStringToObject(root, "mode",
                            r->allocator_mode && r->segment_mode ? "tensor+segment"
                            : r->tensor_mode && r->segment_mode  ? "mixed"
                            : r->tensor_mode                     ? "tensor"
                            : r->segment_mode                    ? "segment"
                                                                 : "none");
    cJSON_AddStringToObject(root, "mode_note", report_mode_text(r));
    if (report_tracker_text(r))
        cJSON_AddStringToObject(root, "tracker_note", report_tracker_text(r));
    char sn[480];
    if (report_stacks_text(r, sn, sizeof sn))
        cJSON_AddStringToObject(root, "stacks_note", sn);
    cJSON_AddItemToObject(root, "run", run_json(r));
    cJSON_AddNumberToObject(root, "events", (double)r->n_events);
    cJSON_AddNumberToObject(root, "failed_events", (double)r->n_failed);
    /* (the failures the run went on from: `predict --from` the report's JSON says what `--from`
     * the trace says of a run that ran to its end after one) */
    cJSON_AddNumberToObject(root, "oom_recovered", (double)r->oom_recovered);
    /* the out-of-memory errors the program caught and went on from (null: none) */
    if (r->oom_caught) {
        cJSON *oc = cJSON_AddObjectToObject(root, "oom_caught");
        char text[REPORT_CAUGHT_LEN];
        cJSON_AddNumberToObject(oc, "count", r->oom_caught);
        cJSON_AddNumberToObject(oc, "first_time_ns", (double)r->caught.time_ns);
        cJSON_AddNumberToObject(oc, "first_requested_bytes", (double)r->caught.requested);
        cJSON_AddStringToObject(oc, "first_phase", phase_name(r->caught.phase));
        cJSON_AddBoolToObject(oc, "peak_in_its_pass", replay_peak_in_caught(r));
        cJSON_AddBoolToObject(oc, "oom_is_caught", r->oom_went_on != 0);
        cJSON_AddStringToObject(oc, "note", report_caught_text(r, text, sizeof text));
        went_on_json(oc, r);
    } else {
        cJSON_AddNullToObject(root, "oom_caught");
    }
    /* the events lost (the capture could not store them, or a bounded trace's file has no room
     * for them: replay_lost_events), and all the run made: a trace cut before its trailer
     * cannot say */
    cJSON_AddNumberToObject(root, "lost_events", (double)replay_lost_events(r));
    if (r->status == READER_TRUNCATED)
        cJSON_AddNullToObject(root, "made_events");
    else
        cJSON_AddNumberToObject(root, "made_events", (double)replay_made_events(r));
    cJSON_AddNumberToObject(root, "failed_frees", (double)r->n_failed_frees);
    cJSON_AddNumberToObject(root, "failed_frees_at_shutdown", (double)r->n_failed_frees_shutdown);
    cJSON_AddNumberToObject(root, "iterations", report_opt_steps(c));
    /* (0 seen, where a step may leave no trace: not 0 run) */
    if ((c->model && !r->iterations &&
         (optim_steps_unseen(&c->model->rec) || c->model->no_forward)) ||
        replay_steps_unsure(r)) /* (a free that may end a pass, not a step) */
        cJSON_AddBoolToObject(root, "iterations_known", 0);
    cJSON *devs = cJSON_AddArrayToObject(root, "devices");
    for (size_t i = 0; i < tables_n_devices(r->t); i++) {
        const tables_device *d = tables_device_at(r->t, i);
        cJSON *o = cJSON_CreateObject();
        cJSON_AddNumberToObject(o, "ordinal", d->ordinal);
        jsonw_add(o, "name", d->name.s, d->name.len);
        cJSON_AddNumberToObject(o, "total_bytes", (double)d->total_bytes);
        cJSON_AddItemToArray(devs, o);
    }
    if (c->facts.card_bytes) {
        cJSON *card = cJSON_AddObjectToObject(root, "emulated_card");
        jsonw_add(card, "name", c->facts.card_name, strlen(c->facts.card_name));
        cJSON_AddNumberToObject(card, "bytes", (double)c->facts.card_bytes);
    } else {
        cJSON_AddNullToObject(root, "emulated_card");
    }
    cJSON *peak = cJSON_AddObjectToObject(root, "peak");
    if (r->tensor_mode)
        cJSON_AddNumberToObject(peak, "allocated_bytes", (double)r->peak_allocated);
    else
        cJSON_AddNullToObject(peak, "allocated_bytes");
    if (r->blocks_basis != BLOCKS_BASIS_NONE) {
        /* in PyTorch's blocks (torch.cuda.max_memory_allocated), emulated: blocks.c; only
         * with the allocator tracker's events */
        cJSON_AddNumberToObject(peak, "allocated_blocks_bytes", (double)r->peak_allocated_blocks);
        cJSON_AddStringToObject(peak, "allocated_blocks_basis", blocks_basis_key(r->blocks_basis));
        cJSON_AddNumberToObject(peak, "allocated_blocks_unplaced", (double)r->blocks_unplaced);
    }
    cJSON_AddNumberToObject(peak, "reserved_bytes", (double)r->peak_reserved);
    /* physical chunks created and released unmapped (a failed expansion): not in any peak */
    cJSON_AddNumberToObject(peak, "unmapped_chunks_bytes", (double)r->vmm_unmapped_bytes);
    cJSON_AddNumberToObject(peak, "unmapped_chunks", (double)r->vmm_unmapped_handles);
    cJSON_AddNumberToObject(peak, "process_bytes", (double)r->peak_process);
    cJSON_AddNumberToObject(peak, "time_ns", (double)r->t_process);
    cJSON_AddItemToObject(root, "categories", categories_json(&r->at_peak.by_cat));
    /* tensors: each tensor by its lifetime and role; segments: by the phase that forced them */
    cJSON_AddStringToObject(root, "category_basis", r->tensor_mode ? "tensors" : "segments");
    if (r->has_cat_peaks) {
        /* each category's largest live bytes over the whole run, and when */
        cJSON *cp = cJSON_AddObjectToObject(root, "category_peaks");
        for (int i = 0; i < CAT_COUNT; i++) {
            cJSON *o = cJSON_AddObjectToObject(cp, category_key((category)i));
            cJSON_AddNumberToObject(o, "bytes", (double)r->cat_peak[i]);
            cJSON_AddNumberToObject(o, "time_ns", (double)r->cat_peak_ns[i]);
        }
    } else {
        cJSON_AddNullToObject(root, "category_peaks");
        if (r->cat_peaks_lost) /* said, never silently missing */
            cJSON_AddStringToObject(root, "category_peaks_note", r->cat_peaks_lost);
    }
    cJSON_AddNumberToObject(root, "backward_passes", r->backward_passes);
    /* autocast's weight copies of the first forward, and those freed within it (frozen weights) */
    cJSON *fc = cJSON_AddObjectToObject(root, "first_forward_weight_copies");
    cJSON_AddNumberToObject(fc, "bytes_made", (double)r->fwd0_copies_made);
    cJSON_AddNumberToObject(fc, "bytes_freed_in_forward", (double)r->fwd0_copies_freed);
    cJSON_AddNumberToObject(fc, "made_after_the_last_freed", r->fwd0_copies_since_free);
    if (r->vocab)
        cJSON_AddNumberToObject(root, "vocab_inferred", (double)r->vocab);
    else
        cJSON_AddNullToObject(root, "vocab_inferred");
    uint64_t total = cat_breakdown_total(&r->at_peak.by_cat);
    cJSON_AddNumberToObject(root, "unknown_share",
                            total ? (double)r->at_peak.by_cat.bytes[CAT_UNKNOWN] / (double)total
                                  : 0.0);
    cJSON *sites = cJSON_AddArrayToObject(root, "top_sites");
    for (size_t i = 0; i < c->nsites && i < 50; i++) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "category", category_key((category)c->sites[i].category));
        jsonw_add(o, "site", c->sites[i].text, strlen(c->sites[i].text));
        const char *native = report_site_native(c, i);
        jsonw_add(o, "native", native, strlen(native));
        cJSON_AddNumberToObject(o, "bytes", (double)c->sites[i].bytes);
        cJSON_AddNumberToObject(o, "count", c->sites[i].count);
        cJSON_AddItemToArray(sites, o);
    }
    cJSON *phases = cJSON_AddObjectToObject(root, "phases");
    for (int p = 0; p < PHASE_COUNT; p++)
        if (r->phase_peak[p])
            cJSON_AddNumberToObject(phases, phase_name(p), (double)r->phase_peak[p]);
    cJSON *ranks = cJSON_AddArrayToObject(root, "ranks");
    for (int i = 0; i < c->nruns; i++)
        cJSON_AddItemToArray(ranks, run_json(&c->runs[i]));
    /* which rank the report is of (ranks[0]): the first given, or the first out of memory */
    cJSON_AddStringToObject(root, "ranks_first",
                            c->full_oom ? "first_out_of_memory" : "first_given");
    cJSON *mods = cJSON_AddObjectToObject(root, "activations_by_module");
    cJSON_AddItemToObject(mods, "at_peak", modules_json(c->mod_peak, c->nmod_peak));
    cJSON_AddStringToObject(mods, "peak", c->mod_peak_is_tensors ? "allocated" : "process");
    cJSON_AddNumberToObject(mods, "peak_time_ns", (double)c->mod_peak_ns);
    cJSON_AddItemToObject(
        mods, "peak_categories",
        categories_json(c->mod_peak_is_tensors ? &r->at_tensors.by_cat : &r->at_peak.by_cat));
    if (r->has_oom)
        cJSON_AddItemToObject(mods, "at_oom", modules_json(c->mod_oom, c->nmod_oom));
    else
        cJSON_AddNullToObject(mods, "at_oom");
    model_json(root, c->model, &c->facts);
    inferred_json(root, c->facts.inferred);
    growth_json(root, c);
    /* the model adds "oom" (diagnosis) when there is one; keep the replay's own facts too */
    cJSON *oom = cJSON_GetObjectItem(root, "oom");
    if (r->has_oom && cJSON_IsObject(oom)) {
        if (!cJSON_GetObjectItem(oom, "requested_bytes"))
            cJSON_AddNumberToObject(oom, "requested_bytes", (double)r->oom_requested);
        cJSON_AddBoolToObject(oom, "pytorch_retry_pattern", r->oom_pytorch_pattern);
        cJSON_AddBoolToObject(oom, "emulated_card", r->oom_emulated);
        cJSON_AddNumberToObject(oom, "cache_released_bytes", (double)r->oom_cache_released);
        cJSON_AddNumberToObject(oom, "time_ns", (double)r->oom_time_ns);
    } else if (!oom) {
        cJSON_AddNullToObject(root, "oom");
    }
    char *s = jsonw_print(root);
    if (!s)
        return -1;
    jsonw_fputs(s, out);
    fputc('\n', out);
    free(s);
    return 0;
}

int report_json(FILE *out, const report_ctx *c)
{
    jsonw_arena_begin(); /* (the document's nodes released at once) */
    int rc = report_doc(out, c);
    jsonw_arena_end();
    return rc;
}
