/* predict_from.c — `vramtrace predict --from`: the run a trace or a `report --json` output
 * describes, read for predict (predict_from.h): its configuration as the report resolved it,
 * the measured peak by category, its calibration and recognized shape (a trace), its card. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

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
    if (report_of_stream(fp, path, magic, VT_MAGIC_LEN, &rep, rerr, sizeof rerr)) {
        snprintf(err, errlen, "--from %.200s: %.300s", path,
                 rerr[0] ? rerr : "cannot replay the trace");
        report_free(&rep);
        return -1;
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
    char where[160];
    snprintf(where, sizeof where, "--from %s", path);
    int rc = 0;
    c->program = m->cfg.program; /* its flags, and whether its accumulation is known */
    c->nfiles_missing = m->cfg.nfiles_missing;
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
    run->partial = rep.facts.has_oom;
    run->calib = m->calib;
    run->shape = m->shape;
    run->has_shape = 1;
    snprintf(run->model, sizeof run->model, "%s%s%s%s%s", family_words(m->rec.family),
             m->rec.model_class[0] ? " (" : "", m->rec.model_class,
             m->rec.model_class[0] ? ")" : "", m->formula_ok ? "" : "; no formula applies");
    run->cap = m->capacity;
    snprintf(run->capname, sizeof run->capname, "%s",
             m->capacity_name[0] ? m->capacity_name : "the traced run's card");
    report_free(&rep);
    if (rc == 0 && cat_breakdown_total(measured) == 0) {
        snprintf(err, errlen, "--from %s: the report has no measured bytes to calibrate with",
                 path);
        rc = -1;
    }
    return rc;
}

int predict_from_load(const char *path, nano_config *c, predict_run *run, char *err, size_t errlen)
{
    memset(run, 0, sizeof *run);
    cat_breakdown *measured = &run->measured;
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
    cJSON *cfg = root ? cJSON_GetObjectItem(root, "config") : NULL;
    cJSON *fo = root ? cJSON_GetObjectItem(root, "formula") : NULL;
    if (!cJSON_IsObject(cfg) || !cJSON_IsObject(fo)) {
        cJSON_Delete(root);
        snprintf(err, errlen,
                 "--from %s: neither a trace nor the JSON of `vramtrace report --json TRACE`",
                 path);
        return -1;
    }
    char where[160];
    snprintf(where, sizeof where, "--from %s", path);
    int rc = 0;
    cJSON *prog = cJSON_GetObjectItem(root, "config_program");
    if (cJSON_IsString(prog) && strcmp(prog->valuestring, "nanoGPT"))
        c->program = PROG_UNKNOWN; /* not nanoGPT: nothing of its spelling */
    /* the report resolved the run's configuration: what it did not know stays unknown here,
     * never nanoGPT's default (a nanoGPT-style run's too: its own script's defaults are the
     * report's to say) */
    config_forget_defaults(c);
    for (int k = 0; k < CFG_COUNT && rc == 0; k++) {
        cJSON *v =
            cJSON_GetObjectItem(cJSON_GetObjectItem(cfg, config_key_name((config_key)k)), "value");
        char text[64];
        if (cJSON_IsBool(v))
            snprintf(text, sizeof text, "%s", cJSON_IsTrue(v) ? "True" : "False");
        else if (cJSON_IsNumber(v))
            snprintf(text, sizeof text, "%.17g", v->valuedouble);
        else if (cJSON_IsString(v))
            snprintf(text, sizeof text, "%s", v->valuestring);
        else
            continue;
        rc = config_set(c, config_key_name((config_key)k), text, CONFIG_SRC_FILE, where, err,
                        errlen);
    }
    cJSON *note = cJSON_GetObjectItem(root, "config_note");
    if (rc == 0 && cJSON_IsString(note) && strstr(note->valuestring, "eager"))
        rc = config_set(c, "compile", "False", CONFIG_SRC_FILE, where, err, errlen);
    memset(measured, 0, sizeof *measured);
    for (int k = 0; k < CAT_COUNT; k++) {
        cJSON *m = cJSON_GetObjectItem(cJSON_GetObjectItem(fo, category_key((category)k)),
                                       "measured_bytes");
        if (cJSON_IsNumber(m) && m->valuedouble > 0)
            measured->bytes[k] = (uint64_t)m->valuedouble;
    }
    /* what the report recognized: no transformer formula applied (a convolutional network, a
     * shape it did not know), then predictions scale what was measured with the micro-batch,
     * with the optimizer state it measured */
    cJSON *fa = cJSON_GetObjectItem(root, "formula_applies");
    cJSON *rec = cJSON_GetObjectItem(root, "recognized");
    cJSON *ft = cJSON_GetObjectItem(rec, "family_text"),
          *mc = cJSON_GetObjectItem(rec, "model_class");
    if (cJSON_IsFalse(fa)) {
        run->has_shape = 1;
        run->shape.generic = 1;
        cJSON *bpp = cJSON_GetObjectItem(cJSON_GetObjectItem(rec, "optimizer"),
                                         "state_bytes_per_trainable_param");
        if (cJSON_IsNumber(bpp) && bpp->valuedouble >= 0 && bpp->valuedouble < 1e6) {
            run->shape.opt_set = 1;
            run->shape.opt_bpp = bpp->valuedouble;
        }
        snprintf(run->model, sizeof run->model, "%.100s%s%.40s%s; no formula applies",
                 cJSON_IsString(ft) ? ft->valuestring : "not a recognized transformer",
                 cJSON_IsString(mc) && mc->valuestring[0] ? " (" : "",
                 cJSON_IsString(mc) ? mc->valuestring : "",
                 cJSON_IsString(mc) && mc->valuestring[0] ? ")" : "");
    }
    cJSON *oom = cJSON_GetObjectItem(root, "oom");
    run->partial = cJSON_IsObject(oom);
    cJSON *pr = cJSON_GetObjectItem(root, "prediction");
    cJSON *cb = cJSON_GetObjectItem(pr, "capacity_bytes"),
          *cn = cJSON_GetObjectItem(pr, "capacity_name");
    run->cap = cJSON_IsNumber(cb) && cb->valuedouble > 0 ? (uint64_t)cb->valuedouble : 0;
    snprintf(run->capname, sizeof run->capname, "%s",
             cJSON_IsString(cn) ? cn->valuestring : "the traced run's card");
    cJSON_Delete(root);
    if (rc == 0 && cat_breakdown_total(measured) == 0) {
        snprintf(err, errlen, "--from %s: the report has no measured bytes to calibrate with",
                 path);
        rc = -1;
    }
    return rc;
}
