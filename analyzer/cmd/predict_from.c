/* predict_from.c — `vramtrace predict --from`: the run a trace or a `report --json` output
 * describes, read for predict (predict_from.h): its configuration as the report resolved it,
 * the measured peak by category, its calibration and recognized shape (a trace), its card. */
#include <stdio.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "advice_speak.h"
#include "calib_json.h"
#include "cards.h"
#include "escape.h"
#include "notes.h"
#include "predict_from.h"
#include "report.h"

/* load_trace: a trace given to --from (fp, its magic already read into magic: the stream is read
 * once, so a FIFO works): replayed and modelled as `vramtrace report` does (report/report.c),
 * the run's configuration into c (source "file", where "--from PATH"), the measured peak by
 * category into measured, *partial = the run ended in an OOM, the run's card into *cap /
 * capname. Returns 0, or -1 with err. */
static int load_trace(const char *path, FILE *fp, const char *magic, nano_config *c,
                      predict_run *run, char *err, size_t errlen)
{
    cat_breakdown *measured = &run->measured;
    report_ctx rep;
    char rerr[400] = "";
    /* a file is read from its path (a bounded or compressed trace is read by slot, out of
     * order: never from a stream), a pipe or FIFO from the stream opened */
    struct stat st;
    int rrc = fstat(fileno(fp), &st) == 0 && S_ISREG(st.st_mode)
                  ? report_of_trace(path, &rep, rerr, sizeof rerr)
                  : report_of_stream(fp, path, magic, VT_MAGIC_LEN, &rep, rerr, sizeof rerr);
    if (rrc) { /* (its message names the file already) */
        snprintf(err, errlen, "--from %.300s", rerr[0] ? rerr : "cannot replay the trace");
        report_free(&rep);
        return rrc == VT_EXIT_MALFORMED ? -3 : -1; /* as every command exits on it */
    }
    notes_trace("predict", &rep.runs[0], "calibrating from");
    if (!rep.runs[0].tensor_mode && !rep.runs[0].segment_mode) {
        snprintf(err, errlen,
                 "--from %.200s: no allocation of PyTorch's in it (%llu events%s): too short to "
                 "calibrate with",
                 path, (unsigned long long)rep.runs[0].n_events,
                 rep.runs[0].status == READER_TRUNCATED ? ", cut before the first one" : "");
        report_free(&rep);
        return -1;
    }
    const model_result *m = rep.model;
    /* (the report's "advice: none (...)": no forward, or an OOM making the program's own data
     * before one) */
    if (m->advice_none[0]) {
        snprintf(err, errlen, "--from %.200s: %s", path, m->advice_none);
        report_free(&rep);
        return -1;
    }
    char where[160];
    snprintf(where, sizeof where, "--from %s", path);
    int rc = 0;
    c->program = m->cfg.program; /* its flags, and whether its accumulation is known */
    c->nfiles_missing = m->cfg.nfiles_missing;
    /* the script whose flags were read, and the call a Trainer's switches go in: what the
     * report's what-ifs say of a change no flag carries (advice_batch_flags) */
    snprintf(c->script_read, sizeof c->script_read, "%s", m->cfg.script_read);
    snprintf(c->targs_call, sizeof c->targs_call, "%s", m->cfg.targs_call);
    snprintf(c->batch_unplaced, sizeof c->batch_unplaced, "%s", m->cfg.batch_unplaced);
    c->batch_per = m->cfg.batch_per; /* (the flag's samples: k sequences each) */
    snprintf(c->flags_unread, sizeof c->flags_unread, "%s", m->cfg.flags_unread);
    const char *targs = advice_targs(&m->cfg, m->rec.loop);
    snprintf(run->targs, sizeof run->targs, "%s", targs ? targs : "");
    for (int k = 0; k < CFG_COUNT; k++) { /* the values as the model resolved them */
        c->v[k] = m->cfg.v[k];
        if (config_unset(&c->v[k]))
            continue; /* assumed or unknown there: the same here, not the run's own value */
        c->v[k].src = CONFIG_SRC_FILE;
        snprintf(c->v[k].where, sizeof c->v[k].where, "%s", where);
    }
    if (m->cfg.v[CFG_compile].i && !m->shape.compile) /* the model's "ran as eager" */
        c->v[CFG_compile].i = 0;
    *measured = m->measured;
    run->partial = m->partial;
    run->cut = m->cut;
    run->cut_unstepped = m->cut_unstepped;
    run->stopped = m->stopped;
    run->calib = m->calib;
    run->shape = m->shape;
    run->has_shape = 1;
    char cls[sizeof m->rec.model_class]; /* (the trace's class name: text, escaped; cut) */
    escape_term(m->rec.model_class, strlen(m->rec.model_class), cls, sizeof cls);
    snprintf(run->model, sizeof run->model, "%s%s%s%s%s", family_text(&m->rec), cls[0] ? " (" : "",
             cls, cls[0] ? ")" : "", m->formula_ok ? "" : "; no formula applies");
    run->cap = m->capacity;
    snprintf(run->capname, sizeof run->capname, "%s",
             m->capacity_name[0] ? m->capacity_name : "the traced run's card");
    run->lower_bounds = m->lower_bounds;
    run->growth_unmeasured = m->growth_unmeasured;
    run->lora_assumed = m->lora_assumed;
    run->trainable = m->rec.trainable;
    run->trained_elem = (unsigned)model_trained_bytes(m);
    run->rest_untold = m->rec.rest_untold;
    run->params = m->params_trace;
    run->untyped = m->weights_untyped;
    const infer_value *cv = &rep.inferred.v[INFER_cast16_bytes];
    run->cast16 = rep.facts.inferred && cv->known && cv->value > 0 ? (uint64_t)cv->value : 0;
    run->dtype_unknown = !config_known(&m->cfg, CFG_dtype);
    run->retried = !rep.facts.has_oom && rep.facts.oom_recovered;
    run->ran_batch = m->largest_ran, run->ran_peak = m->largest_ran_peak;
    run->caught = m->lower_bounds && rep.facts.caught_peak && !rep.facts.has_oom;
    snprintf(run->forward_note, sizeof run->forward_note, "%s", m->oom_forward);
    snprintf(run->unreached, sizeof run->unreached, "%s", m->unreached);
    snprintf(run->unreached_short, sizeof run->unreached_short, "%s", m->unreached_short);
    for (int i = 0; i < m->nnotes; i++)
        if (!strncmp(m->notes[i], OPTIM_NOTE_PREFIX, strlen(OPTIM_NOTE_PREFIX)))
            snprintf(run->optim_note, sizeof run->optim_note, "%s", m->notes[i]);
    report_free(&rep);
    if (rc == 0 && cat_breakdown_total(measured) == 0) {
        snprintf(err, errlen, "--from %s: the report has no measured bytes to calibrate with",
                 path);
        rc = -1;
    }
    return rc;
}

/* json_config: the configuration the report resolved, key by key as the trace route copies it
 * (load_trace): a value the run gave or the trace showed (source "file", where "--from PATH",
 * the flag that carried it), nanoGPT's default where the report kept one, unknown where it
 * was. Returns 0, or -1 with err. */
static int json_config(const cJSON *root, const cJSON *cfg, const char *where, nano_config *c,
                       char *err, size_t errlen)
{
    cJSON *prog = cJSON_GetObjectItem(root, "config_program");
    if (cJSON_IsString(prog)) {
        c->program = PROG_UNKNOWN; /* a kind this vramtrace does not name: no spelling */
        for (int p = PROG_UNKNOWN; p <= PROG_HF_TRAINER; p++)
            if (!strcmp(prog->valuestring, config_program_name((config_program)p)))
                c->program = (config_program)p;
        /* (the name of a report's JSON until 2026-12-05) */
        if (!strcmp(prog->valuestring, "Hugging Face Trainer arguments"))
            c->program = PROG_HF_TRAINER;
    }
    /* the script whose flags were read, the call a Trainer's switches go in (as the trace
     * route takes them; the file's text, escaped) */
    cJSON *sr = cJSON_GetObjectItem(root, "config_script_read"),
          *tc = cJSON_GetObjectItem(root, "config_targs_call");
    if (cJSON_IsString(sr))
        escape_term(sr->valuestring, strlen(sr->valuestring), c->script_read,
                    sizeof c->script_read);
    if (cJSON_IsString(tc))
        escape_term(tc->valuestring, strlen(tc->valuestring), c->targs_call, sizeof c->targs_call);
    cJSON *bu = cJSON_GetObjectItem(root, "config_batch_flags_unplaced");
    if (cJSON_IsString(bu))
        escape_term(bu->valuestring, strlen(bu->valuestring), c->batch_unplaced,
                    sizeof c->batch_unplaced);
    cJSON *fu = cJSON_GetObjectItem(root, "config_flags_unread");
    if (cJSON_IsString(fu))
        escape_term(fu->valuestring, strlen(fu->valuestring), c->flags_unread,
                    sizeof c->flags_unread);
    cJSON *fm = cJSON_GetObjectItem(root, "config_files_missing");
    if (cJSON_IsNumber(fm) && fm->valuedouble >= 0 && fm->valuedouble < 1000)
        c->nfiles_missing = (int)fm->valuedouble;
    /* what the report did not know stays unknown here, never nanoGPT's default */
    config_forget_defaults(c);
    for (int k = 0; k < CFG_COUNT; k++) {
        cJSON *e = cJSON_GetObjectItem(cfg, config_key_name((config_key)k));
        cJSON *v = cJSON_GetObjectItem(e, "value"), *src = cJSON_GetObjectItem(e, "source"),
              *w = cJSON_GetObjectItem(e, "where"), *fl = cJSON_GetObjectItem(e, "flag"),
              *fs = cJSON_GetObjectItem(e, "flag_sep"), *call = cJSON_GetObjectItem(e, "call"),
              *un = cJSON_GetObjectItem(e, "unplaced");
        if (cJSON_IsString(un)) /* (the script's flags no spelling placed: the file's text) */
            escape_term(un->valuestring, strlen(un->valuestring), c->v[k].unplaced,
                        sizeof c->v[k].unplaced);
        char text[64];
        if (cJSON_IsBool(v))
            snprintf(text, sizeof text, "%s", cJSON_IsTrue(v) ? "True" : "False");
        else if (cJSON_IsNumber(v))
            snprintf(text, sizeof text, "%.17g", v->valuedouble);
        else if (cJSON_IsString(v))
            snprintf(text, sizeof text, "%s", v->valuestring);
        else { /* unknown to the report: so here, with its why */
            snprintf(c->v[k].where, sizeof c->v[k].where, "%s",
                     cJSON_IsString(w) ? w->valuestring : "");
            continue;
        }
        if (config_set(c, config_key_name((config_key)k), text, CONFIG_SRC_FILE, where, err,
                       errlen))
            return -1;
        config_value *cv = &c->v[k];
        if (cJSON_IsString(src) && !strcmp(src->valuestring, "default")) {
            cv->src = CONFIG_SRC_DEFAULT; /* the report kept nanoGPT's default: so does this */
            snprintf(cv->where, sizeof cv->where, "%s", cJSON_IsString(w) ? w->valuestring : "");
        }
        if (cJSON_IsString(fl)) { /* the program's own spelling of it */
            snprintf(cv->flag, sizeof cv->flag, "%s", fl->valuestring);
            cv->flag_sep = cJSON_IsString(fs) && !strcmp(fs->valuestring, "=") ? '=' : ' ';
            if (cJSON_IsString(fs) && !strcmp(fs->valuestring, "(") && cJSON_IsString(call) &&
                call->valuestring[0]) { /* a keyword of the script's call */
                cv->flag_sep = '(';
                snprintf(cv->call, sizeof cv->call, "%s", call->valuestring);
            }
        }
    }
    return 0;
}

/* json_model: the report's own model of the run ("prediction.run_shape", "prediction.calibration"
 * of a report of this vramtrace): 1 when read into run, 0 when the JSON has neither (an older
 * report's, or one made by hand), -1 with err when they do not read. */
static int json_model(const cJSON *pr, predict_run *run, char *err, size_t errlen)
{
    cJSON *sh = cJSON_GetObjectItem(pr, "run_shape"), *ca = cJSON_GetObjectItem(pr, "calibration");
    if (!sh && !ca)
        return 0;
    char why[200];
    if (!cJSON_IsObject(sh) || !cJSON_IsObject(ca)) {
        snprintf(err, errlen, "prediction.%s: missing or not an object",
                 cJSON_IsObject(sh) ? "calibration" : "run_shape");
        return -1;
    }
    if (calib_shape_from_json(sh, &run->shape, why, sizeof why) < 0) {
        snprintf(err, errlen, "prediction.run_shape.%s", why);
        return -1;
    }
    if (calib_from_json(ca, &run->calib, why, sizeof why) < 0) {
        snprintf(err, errlen, "prediction.calibration.%s", why);
        return -1;
    }
    run->has_shape = 1;
    return 1;
}

/* load_json: the JSON of `vramtrace report --json` (root, already parsed): the same run, model
 * and calibration load_trace reads from the trace. Returns 0, or -1 with err. */
static int load_json(const char *path, const cJSON *root, nano_config *c, predict_run *run,
                     char *err, size_t errlen)
{
    cJSON *cfg = cJSON_GetObjectItem(root, "config"), *fo = cJSON_GetObjectItem(root, "formula");
    char where[160], why[300] = "";
    snprintf(where, sizeof where, "--from %s", path);
    if (json_config(root, cfg, where, c, err, errlen) < 0)
        return -1;
    cat_breakdown *measured = &run->measured;
    for (int k = 0; k < CAT_COUNT; k++) {
        cJSON *m = cJSON_GetObjectItem(cJSON_GetObjectItem(fo, category_key((category)k)),
                                       "measured_bytes");
        if (cJSON_IsNumber(m) && m->valuedouble > 0)
            measured->bytes[k] = (uint64_t)m->valuedouble;
    }
    cJSON *none = cJSON_GetObjectItem(root, "advice_note"); /* a run the report gave none */
    if (cJSON_IsString(none)) {
        snprintf(err, errlen, "--from %s: %.300s", path, none->valuestring);
        return -1;
    }
    cJSON *pr = cJSON_GetObjectItem(root, "prediction");
    int model = json_model(pr, run, why, sizeof why);
    if (model < 0) {
        snprintf(err, errlen, "--from %s: %s", path, why);
        return -1;
    }
    /* what the report recognized, said as the trace route says it */
    cJSON *fa = cJSON_GetObjectItem(root, "formula_applies");
    cJSON *rec = cJSON_GetObjectItem(root, "recognized");
    cJSON *ft = cJSON_GetObjectItem(rec, "family_text"),
          *mc = cJSON_GetObjectItem(rec, "model_class");
    int named = cJSON_IsString(mc) && mc->valuestring[0];
    /* (the report file's words and class name, text: escaped, the file may be anyone's) */
    char fam[128], cls[41];
    const char *fs = cJSON_IsString(ft) ? ft->valuestring : "not a recognized transformer";
    escape_term(fs, strlen(fs), fam, sizeof fam);
    escape_term(named ? mc->valuestring : "", named ? strlen(mc->valuestring) : 0, cls, sizeof cls);
    if (cJSON_IsString(ft) || cJSON_IsFalse(fa))
        snprintf(run->model, sizeof run->model, "%s%s%s%s%s", fam, named ? " (" : "", cls,
                 named ? ")" : "", cJSON_IsFalse(fa) ? "; no formula applies" : "");
    if (!model && cJSON_IsFalse(fa)) {
        /* an older report: no transformer formula applied (a convolutional network, a shape it
         * did not know), then predictions scale what was measured with the micro-batch, with
         * the optimizer state it measured */
        run->has_shape = 1;
        run->shape.generic = 1;
        cJSON *bpp = cJSON_GetObjectItem(cJSON_GetObjectItem(rec, "optimizer"),
                                         "state_bytes_per_trainable_param");
        if (cJSON_IsNumber(bpp) && bpp->valuedouble >= 0 && bpp->valuedouble < 1e6) {
            run->shape.opt_set = 1;
            run->shape.opt_bpp = bpp->valuedouble;
        }
    }
    cJSON *note = cJSON_GetObjectItem(root, "config_note");
    if (model && c->v[CFG_compile].i && !run->shape.compile) /* the model's "ran as eager" */
        c->v[CFG_compile].i = 0;
    else if (!model && cJSON_IsString(note) && strstr(note->valuestring, "eager") &&
             config_set(c, "compile", "False", CONFIG_SRC_FILE, where, err, errlen))
        return -1;
    run->partial = run->cut = cJSON_IsObject(cJSON_GetObjectItem(root, "oom"));
    /* a trace that ends before the run's first optimizer step, no OOM (model.c) */
    const cJSON *st = cJSON_GetObjectItem(cJSON_GetObjectItem(root, "run"), "status"),
                *its = cJSON_GetObjectItem(root, "iterations"),
                *se = cJSON_GetObjectItem(cJSON_GetObjectItem(root, "run"), "stopped_early");
    if (cJSON_IsString(se)) /* (the capture stopped early: as the trace says it) */
        run->stopped = !strcmp(se->valuestring, reader_trailer_key(VT_TRAILER_DISK_FULL))
                           ? ADVICE_STOPPED_DISK_FULL
                           : ADVICE_STOPPED_OUTPUT_ERROR;
    if (!run->partial && cJSON_IsString(st) &&
        (!strcmp(st->valuestring, "truncated") || run->stopped) && cJSON_IsNumber(its) &&
        its->valuedouble == 0)
        run->partial = run->cut = run->cut_unstepped = 1;
    run->from_json = 1;
    const cJSON *lk = cJSON_GetObjectItem(cJSON_GetObjectItem(rec, "training_loop"), "kind");
    const char *targs = advice_targs(c, cJSON_IsString(lk) ? lk->valuestring : NULL);
    snprintf(run->targs, sizeof run->targs, "%s", targs ? targs : "");
    const cJSON *file = cJSON_GetObjectItem(cJSON_GetObjectItem(root, "run"), "file");
    if (cJSON_IsString(file))
        escape_term(file->valuestring, strlen(file->valuestring), run->trace, sizeof run->trace);
    cJSON *cb = cJSON_GetObjectItem(pr, "capacity_bytes"),
          *cn = cJSON_GetObjectItem(pr, "capacity_name"),
          *lb = cJSON_GetObjectItem(pr, "largest_batch_size_at_most"),
          *fw = cJSON_GetObjectItem(pr, "first_forward_note");
    run->cap = cJSON_IsNumber(cb) && cb->valuedouble > 0 ? (uint64_t)cb->valuedouble : 0;
    snprintf(run->capname, sizeof run->capname, "%s",
             cJSON_IsString(cn) ? cn->valuestring : "the traced run's card");
    run->lower_bounds = cJSON_IsTrue(lb);
    run->calib.went_on =
        cJSON_IsTrue(cJSON_GetObjectItem(cJSON_GetObjectItem(root, "oom_caught"), "oom_is_caught"));
    run->caught = run->lower_bounds && !run->partial &&
                  cJSON_IsTrue(cJSON_GetObjectItem(cJSON_GetObjectItem(root, "oom_caught"),
                                                   "peak_in_its_pass"));
    /* the report's largest is null where the run does not measure the growth */
    run->growth_unmeasured = cJSON_IsNull(cJSON_GetObjectItem(pr, "largest_batch_size")) ||
                             cJSON_IsFalse(cJSON_GetObjectItem(pr, "batch_growth_measured"));
    if (cJSON_IsString(fw))
        snprintf(run->forward_note, sizeof run->forward_note, "%s", fw->valuestring);
    const cJSON *up = cJSON_GetObjectItem(pr, "unreached_pass"), /* (older reports: none) */
        *un = cJSON_GetObjectItem(up, "note"), *us = cJSON_GetObjectItem(up, "largest_counts");
    if (cJSON_IsString(un) && cJSON_IsString(us)) {
        snprintf(run->unreached, sizeof run->unreached, "%s", un->valuestring);
        snprintf(run->unreached_short, sizeof run->unreached_short, "%s", us->valuestring);
    }
    const cJSON *tp =
        cJSON_GetObjectItem(cJSON_GetObjectItem(root, "recognized"), "trainable_params");
    run->trainable = cJSON_IsNumber(tp) && tp->valuedouble > 0 && tp->valuedouble < 1e15
                         ? (uint64_t)tp->valuedouble
                         : 0;
    run->rest_untold = cJSON_IsTrue(cJSON_GetObjectItem(cJSON_GetObjectItem(root, "recognized"),
                                                        "trainable_params_rest_untold"));
    const cJSON *te = /* (present only where it is not the weights' own: 0 then) */
        cJSON_GetObjectItem(cJSON_GetObjectItem(root, "recognized"), "trainable_element_bytes");
    run->trained_elem = cJSON_IsNumber(te) && (te->valuedouble == 2 || te->valuedouble == 4)
                            ? (unsigned)te->valuedouble
                            : 0;
    /* (fp32 adapters beside 16-bit weights: their gradients at 4 B, as the trace route has) */
    run->shape.trained32 = run->shape.params16 && run->trained_elem == 4;
    const cJSON *ip = cJSON_GetObjectItem(
        cJSON_GetObjectItem(cJSON_GetObjectItem(root, "inferred"), "params"), "value");
    run->params = cJSON_IsNumber(ip) && ip->valuedouble > 0 && ip->valuedouble < 1e15
                      ? (uint64_t)ip->valuedouble
                      : 0;
    const cJSON *ut =
        cJSON_GetObjectItem(cJSON_GetObjectItem(root, "recognized"), "untyped_weight_bytes");
    run->untyped = cJSON_IsNumber(ut) && ut->valuedouble > 0 && ut->valuedouble < 1e18
                       ? (uint64_t)ut->valuedouble
                       : 0;
    const cJSON *c16 = cJSON_GetObjectItem(
        cJSON_GetObjectItem(cJSON_GetObjectItem(root, "inferred"), "cast16_bytes"), "value");
    run->cast16 = cJSON_IsNumber(c16) && c16->valuedouble > 0 && c16->valuedouble < 1e18
                      ? (uint64_t)c16->valuedouble
                      : 0;
    const cJSON *ds = cJSON_GetObjectItem(
        cJSON_GetObjectItem(cJSON_GetObjectItem(root, "config"), "dtype"), "source");
    run->dtype_unknown = cJSON_IsString(ds) && !strcmp(ds->valuestring, "unknown");
    const cJSON *n; /* the report's note of an assumed LoRA share (model_notes.c) */
    cJSON_ArrayForEach(n, cJSON_GetObjectItem(pr, "notes"))
    {
        if (cJSON_IsString(n) && !strncmp(n->valuestring, "LoRA: no gradient was measured", 30))
            run->lora_assumed = 1;
        if (cJSON_IsString(n) &&
            !strncmp(n->valuestring, OPTIM_NOTE_PREFIX, strlen(OPTIM_NOTE_PREFIX)))
            snprintf(run->optim_note, sizeof run->optim_note, "%s", n->valuestring);
    }
    const cJSON *ran = cJSON_GetObjectItem(pr, "largest_batch_size_ran");
    run->ran_batch = cJSON_IsNumber(ran) && ran->valuedouble >= 1 ? (uint64_t)ran->valuedouble : 0;
    /* a run that went on from an out-of-memory failure to its end (as load_trace has it); an
     * older report without the count: its row "none"'s words */
    const cJSON *rec_oom = cJSON_GetObjectItem(root, "oom_recovered");
    if (cJSON_IsNumber(rec_oom))
        run->retried = !run->partial && rec_oom->valuedouble >= 1;
    else
        cJSON_ArrayForEach(n, cJSON_GetObjectItem(root, "advice"))
        {
            const cJSON *t = cJSON_GetObjectItem(n, "note");
            if (cJSON_IsString(t) && strstr(t->valuestring, ADVICE_RETRY_TEXT))
                run->retried = 1;
        }
    if (!model) /* said, never a different answer in silence */
        fprintf(stderr,
                "vramtrace predict: note: --from %s has no prediction.calibration (a report's "
                "JSON of an older vramtrace, or made by hand): calibrated again from its measured "
                "breakdown alone, without the report's own model (the state at an out-of-memory "
                "failure, a cut-short forward's extrapolation, the recognized optimizer state, "
                "trainable share and block), so it can differ from `predict --from TRACE`; "
                "`vramtrace report --json TRACE` writes it\n",
                path);
    return 0;
}

int predict_from_load(const char *path, nano_config *c, predict_run *run, char *err, size_t errlen)
{
    memset(run, 0, sizeof *run);
    FILE *fp = notes_open_read("--from ", path, err, errlen); /* "Is a directory", ... */
    if (!fp)
        return -1;
    char magic[VT_MAGIC_LEN];
    size_t nmagic = fread(magic, 1, sizeof magic, fp);
    if (nmagic == sizeof magic && !memcmp(magic, VT_MAGIC, VT_MAGIC_LEN)) {
        int rc = load_trace(path, fp, magic, c, run, err, errlen);
        fclose(fp);
        return rc;
    }
    if (nmagic == 0) { /* as every command says it of an empty trace */
        fclose(fp);
        snprintf(err, errlen,
                 "--from %s: an empty file (a trace the traced process wrote nothing to, or is "
                 "still starting)",
                 path);
        return -3;
    }
    size_t cap_b = 1 << 16, n = nmagic; /* what was read is the JSON's start (no rewind: a FIFO) */
    char *buf = malloc(cap_b);
    if (buf)
        memcpy(buf, magic, nmagic);
    size_t got;
    while (fp && buf && (got = fread(buf + n, 1, cap_b - n - 1, fp)) > 0) {
        n += got;
        if (n + 1 >= cap_b && cap_b < (64u << 20)) {
            char *nb = realloc(buf, cap_b * 2);
            if (!nb) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = nb;
            cap_b *= 2;
        } else if (n + 1 >= cap_b) {
            break;
        }
    }
    if (fp)
        fclose(fp);
    if (!buf) {
        snprintf(err, errlen, "--from %s: out of memory reading it", path);
        return -1;
    }
    buf[n] = '\0';
    cJSON *root = cJSON_Parse(buf);
    free(buf);
    if (!cJSON_IsObject(cJSON_GetObjectItem(root, "config")) ||
        !cJSON_IsObject(cJSON_GetObjectItem(root, "formula"))) {
        cJSON_Delete(root);
        snprintf(err, errlen,
                 "--from %s: neither a trace nor the JSON of `vramtrace report --json TRACE`",
                 path);
        return -3;
    }
    int rc = load_json(path, root, c, run, err, errlen);
    cJSON_Delete(root);
    if (rc == 0 && cat_breakdown_total(&run->measured) == 0) {
        snprintf(err, errlen, "--from %s: the report has no measured bytes to calibrate with",
                 path);
        rc = -1;
    }
    return rc;
}

int predict_print_ran(const predict_run *run, const gpt_shape *s, const gpt_shape *m, uint64_t card,
                      const char *mb)
{
    if (!run->ran_batch || s->B != run->ran_batch || card != run->cap || !advice_same_run(s, m) ||
        s->A != m->A || s->dtype_bytes != m->dtype_bytes)
        return 0;
    char pk[48] = "";
    if (run->ran_peak)
        snprintf(pk, sizeof pk, " (its process peak %.2f GiB)",
                 (double)run->ran_peak / 1073741824.0);
    printf("none keeps %d %% free on this card, but the run's own %s of %llu ran on it with less "
           "free%s\n",
           ADVICE_HEADROOM_PCT, mb, (unsigned long long)run->ran_batch, pk);
    return 1;
}

int predict_run_as_ran(const predict_run *run, const gpt_shape *s, const gpt_shape *m,
                       uint64_t card)
{
    return run->retried && card == run->cap && advice_same_run(s, m) && s->A == m->A &&
           s->dtype_bytes == m->dtype_bytes && s->unfused_attention == m->unfused_attention &&
           s->no_kv_cache == m->no_kv_cache;
}

/* same_value: key k holds the same value in a and b (whatever its type) */
static int same_value(const nano_config *a, const nano_config *b, int k)
{
    return a->v[k].i == b->v[k].i && a->v[k].f == b->v[k].f && !strcmp(a->v[k].s, b->v[k].s);
}

int predict_from_fixed(const predict_run *run, const nano_config *run_cfg, const nano_config *c,
                       int ckpt, int unfused, char *err, size_t errlen)
{
    const gpt_shape *ts = &run->shape;
    if (!run->has_shape || !ts->generic)
        return 0;
    const char *opt = NULL;
    for (int k = 0; !opt && k < CFG_COUNT; k++)
        if (k != CFG_batch_size && k != CFG_gradient_accumulation_steps &&
            !same_value(run_cfg, c, k))
            opt = c->v[k].where;
    if (!opt && ckpt && !ts->checkpointing)
        opt = "--checkpointing";
    if (!opt && unfused)
        opt = "--no-flash";
    if (opt) { /* (the run's own numbers had been printed, as if the option changed nothing) */
        snprintf(err, errlen,
                 "%.160s: the traced run has no formula this changes (%.160s): predict --from it "
                 "scales what it measured with the micro-batch%s alone; trace a run with it",
                 opt, run->model[0] ? run->model : "no formula applies",
                 ts->no_training ? "" : " and the accumulation");
        return -1;
    }
    const config_value *a = &c->v[CFG_gradient_accumulation_steps];
    if (ts->no_training && a->i > 1 && !same_value(run_cfg, c, CFG_gradient_accumulation_steps)) {
        /* (it had added a step's gradients that a forward-only run never makes) */
        snprintf(err, errlen,
                 "%.160s: the traced run made forwards only (no backward pass, no optimizer "
                 "step): it has no gradients to accumulate",
                 a->where);
        return -1;
    }
    return 0;
}

void predict_weights_doc(const nano_config *c, const gpt_shape *s, const predict_run *run, int own,
                         char *out, size_t n)
{
    int dtype_unknown = run && run->dtype_unknown, ema = run && run->calib.ema;
    uint64_t untyped = run ? run->untyped : 0, cast16 = run ? run->cast16 : 0;
    /* the weights cast to 16 bits are the trained ones, 2 B each (a QLoRA's LoRA layers
     * .to(bfloat16): "the trained ones may be fp32" had been said of them) */
    uint64_t tb = own && run && run->trainable <= UINT64_MAX / 4 ? 2 * run->trainable : 0;
    int trained16 = tb && cast16 + tb / 64 >= tb && cast16 <= tb + tb / 64;
    /* (it had read "fp32 under AMP, 16-bit in pure 16-bit training" for every run) */
    const char *doc = formula_param_bytes(s) == 2
                          ? trained16 ? "16-bit"
                            : s->lora_rank || formula_train_frac(s) < 0.99
                                ? "16-bit (the trained ones may be fp32: LoRA's adapters)"
                                : "16-bit (pure 16-bit training)"
                      : s->dtype_bytes >= 4 ? "fp32 (fp32 compute)"
                      : !config_known(c, CFG_dtype) || dtype_unknown /* (no autocast seen) */
                          ? "fp32 assumed (the trace does not give their dtype)"
                          : "fp32 (autocast computes in 16 bits from them)";
    /* the packed 4-bit ones, 2 elements a byte: among those that take no gradient (pk), among
     * the rest said 16-bit (pk16) */
    char ub[32], pb[32], pk[96] = "", pk16[96] = "";
    if (run && run->calib.packed) {
        card_format_bytes(run->calib.packed, pb, sizeof pb);
        snprintf(pk, sizeof pk, " (%s of them packed two 4-bit elements a byte)", pb);
        snprintf(pk16, sizeof pk16, " but for %s packed two 4-bit elements a byte", pb);
    }
    if (untyped) /* (weights that take no gradient: their dtype is not in the trace) */
        snprintf(out, n,
                 "model weights: the trained ones %s, and %s that take no gradient%s, of a dtype "
                 "the trace does not give",
                 (run->trained_elem ? (int)run->trained_elem : formula_param_bytes(s)) == 2
                     ? "16-bit"
                     : "fp32",
                 card_format_bytes(untyped, ub, sizeof ub), untyped >= run->calib.packed ? pk : "");
    else if (cast16) /* (made on the program's lines that cast to 16 bits: report.h) */
        snprintf(out, n, "model weights: %s made by casts to 16 bits%s, the rest %s%s",
                 card_format_bytes(cast16, ub, sizeof ub), trained16 ? " (the trained ones)" : "",
                 doc, pk16);
    else if (own && run->trained_elem == 4 && formula_param_bytes(s) == 2)
        /* (LoRA's fp32 adapters beside a 16-bit or packed 4-bit base: it had said "16-bit (the
         * trained ones may be fp32: LoRA's adapters)" of a QLoRA's, its packed base unsaid) */
        snprintf(out, n, "model weights%s: the trained ones fp32, the rest 16-bit%s",
                 ema ? " and their EMA copy" : "", pk16);
    else /* (an EMA copy kept: the row, calibrated on it, holds both; it had said "model
          * weights" beside twice their bytes) */
        snprintf(out, n, "model weights%s, %s", ema ? " and their EMA copy" : "", doc);
}
