/* cfgsrc.c — configuration sources beyond the traced command line (cfgsrc.h): recorded config
 * files, a Hugging Face config.json, values inferred from the trace, report options. No file
 * is opened here: a trace's files are the ones it recorded. */
#include "cfgsrc.h"

#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

void cfgsrc_files(const tables *t, int minor, config_recfile *buf, int cap, config_files *out)
{
    memset(out, 0, sizeof *out);
    out->f = buf;
    out->recorded = minor >= 2;
    size_t n = t ? tables_n_files(t) : 0;
    for (size_t i = 0; i < n && out->n < cap; i++) {
        const tables_file *tf = tables_file_at(t, i);
        buf[out->n++] = (config_recfile){tf->name.s, tf->contents.s, tf->contents.len, tf->flags,
                                         (int)tf->kind};
    }
}

/* X(json key, config key) — GPT-2 then Llama spellings of a Hugging Face config.json. */
#define VT_HF_KEYS(X)                                                                              \
    X("n_layer", CFG_n_layer)                                                                      \
    X("num_hidden_layers", CFG_n_layer)                                                            \
    X("n_embd", CFG_n_embd)                                                                        \
    X("hidden_size", CFG_n_embd)                                                                   \
    X("n_head", CFG_n_head)                                                                        \
    X("num_attention_heads", CFG_n_head)                                                           \
    X("vocab_size", CFG_vocab_size)                                                                \
    X("n_positions", CFG_block_size)                                                               \
    X("max_position_embeddings", CFG_block_size)

/* from_positions: whether block_size came from config.json's maximum context */
static int from_positions(const config_value *v)
{
    return v->src == CONFIG_SRC_FILE &&
           (strstr(v->where, ": n_positions") || strstr(v->where, ": max_position_embeddings"));
}

/* A name and the key it sets: the rows of VT_HF_KEYS and VT_CFGSRC_OPTIONS. */
typedef struct name_key {
    const char *name;
    config_key key;
} name_key;
#define VT_NAME_KEY_ROW(n, k) {n, k},
static const name_key hf_keys[] = {VT_HF_KEYS(VT_NAME_KEY_ROW)};
static const name_key report_options[] = {VT_CFGSRC_OPTIONS(VT_NAME_KEY_ROW)};
#undef VT_NAME_KEY_ROW

static void apply_hf_one(nano_config *c, const config_recfile *rf)
{
    const name_key *map = hf_keys;
    char msg[300];
    cJSON *root = rf->flags ? NULL : cJSON_ParseWithLength(rf->data, rf->len);
    if (!cJSON_IsObject(root)) {
        snprintf(msg, sizeof msg, "%.200s: %s (not used)", rf->name,
                 rf->flags ? "not recorded (larger than 256 KiB or unreadable when traced)"
                           : "not a JSON object");
        config_note(c, msg);
        cJSON_Delete(root);
        return;
    }
    for (size_t i = 0; i < sizeof hf_keys / sizeof hf_keys[0]; i++) {
        config_value *v = &c->v[map[i].key];
        const cJSON *j = cJSON_GetObjectItemCaseSensitive(root, map[i].name);
        if (!cJSON_IsNumber(j) || (!config_unset(v) && v->src != CONFIG_SRC_TRACE))
            continue;
        if (map[i].key == CFG_block_size && !config_unset(v))
            continue; /* a maximum context never replaces a known T */
        double d = j->valuedouble;
        char val[32], where[200], err[300];
        if (!(d >= 1 && d <= (double)(1ll << 40)) || d != (double)(long long)d) {
            snprintf(msg, sizeof msg, "%.160s: %s = %g is not a positive integer (not used)",
                     rf->name, map[i].name, d);
            config_note(c, msg);
            continue;
        }
        snprintf(val, sizeof val, "%lld", (long long)d);
        snprintf(where, sizeof where, "%.160s: %s", rf->name, map[i].name);
        if (config_set(c, config_key_name(map[i].key), val, CONFIG_SRC_FILE, where, err,
                       sizeof err) < 0)
            config_note(c, err);
    }
    c->nfiles++;
    cJSON_Delete(root);
}

void cfgsrc_apply_hf(nano_config *c, const config_files *f)
{
    for (int i = 0; f && i < f->n; i++)
        if (f->f[i].kind == VT_FILE_DIR_CONFIG)
            apply_hf_one(c, &f->f[i]);
}

void cfgsrc_apply_inferred(nano_config *c, const infer_result *ir)
{
    static const struct {
        infer_key from;
        config_key to;
    } map[] = {{INFER_batch_size, CFG_batch_size},
               {INFER_block_size, CFG_block_size},
               {INFER_gradient_accumulation_steps, CFG_gradient_accumulation_steps},
               {INFER_n_layer, CFG_n_layer},
               {INFER_n_head, CFG_n_head},
               {INFER_bias, CFG_bias},
               {INFER_n_embd, CFG_n_embd},
               {INFER_vocab_size, CFG_vocab_size}};
    for (size_t i = 0; ir && i < sizeof map / sizeof map[0]; i++) {
        const infer_value *iv = &ir->v[map[i].from];
        config_value *v = &c->v[map[i].to];
        if (!iv->known || iv->value < (map[i].to == CFG_bias ? 0 : 1) || iv->value > (1ll << 40))
            continue;
        if (map[i].to == CFG_batch_size && ir->images_one_label)
            continue; /* (one int64 beside the images: one timestep for a batch of 4 had been B = 1)
                       */
        if (!config_unset(v) && !(map[i].to == CFG_block_size && from_positions(v)))
            continue;
        /* (as long as the inference's own words: a frozen teacher's beside its student's blocks
         * took 330 characters, cut at 200 mid-parenthesis) */
        char def[32], how[sizeof iv->where + 32], where[sizeof how + 64];
        _Static_assert(sizeof c->v[0].where >= sizeof ir->v[0].where, "an inference fits");
        config_value_text(c, map[i].to, def, sizeof def);
        /* infer.c says B·T for the micro-batch: name B itself first */
        if (map[i].to == CFG_batch_size && strncmp(iv->where, "B =", 3) != 0)
            snprintf(how, sizeof how, "micro-batch %lld: %s", (long long)iv->value, iv->where);
        else
            snprintf(how, sizeof how, "%s", iv->where);
        if (v->src == CONFIG_SRC_DEFAULT && v->i == iv->value)
            continue; /* predict's nanoGPT default is what the trace shows: it stays one */
        if (v->src == CONFIG_SRC_FILE) {
            snprintf(where, sizeof where, "%s (config.json's maximum is %s)", how, def);
        } else {
            snprintf(where, sizeof where, "%s", how);
        }
        config_from_trace(v, iv->value, where);
    }
}

void config_from_trace(config_value *v, long long i, const char *where)
{
    v->i = i;
    v->src = CONFIG_SRC_TRACE;
    v->flag[0] = '\0';
    v->flag_sep = 0;
    v->call[0] = '\0';
    snprintf(v->where, sizeof v->where, "%.*s", (int)sizeof v->where - 1, where);
}

/* py_str_assign: the quoted value of the top-level line `name = '...'` (or `name: T = '...'`)
 * in data[0..len) into out; "" when absent or not a plain string. */
static void py_str_assign(const char *data, size_t len, const char *name, char *out, size_t olen)
{
    size_t nl = strlen(name);
    out[0] = '\0';
    for (size_t i = 0; i + nl < len; i++) {
        if ((i > 0 && data[i - 1] != '\n') || memcmp(data + i, name, nl) != 0 ||
            (data[i + nl] != ' ' && data[i + nl] != ':' && data[i + nl] != '='))
            continue;
        const char *p = data + i + nl, *end = data + len;
        while (p < end && *p != '=' && *p != '\n')
            p++;
        if (p >= end || *p != '=')
            continue;
        for (p++; p < end && *p == ' '; p++)
            ;
        if (p >= end || (*p != '\'' && *p != '"'))
            return;
        char q = *p++;
        size_t n = 0;
        while (p + n < end && p[n] != q && p[n] != '\n' && n + 1 < olen)
            n++;
        if (p + n >= end || p[n] != q)
            return;
        memcpy(out, p, n);
        out[n] = '\0';
        return;
    }
}

void cfgsrc_versions(nano_config *c, const config_files *f)
{
    for (int i = 0; f && i < f->n; i++)
        if (f->f[i].kind == VT_FILE_TORCH_VERSION && !f->f[i].flags) {
            py_str_assign(f->f[i].data, f->f[i].len, "__version__", c->torch_version,
                          sizeof c->torch_version);
            py_str_assign(f->f[i].data, f->f[i].len, "cuda", c->cuda_version,
                          sizeof c->cuda_version);
        }
}

int cfgsrc_option_key(const char *name)
{
    for (size_t i = 0; name && i < sizeof report_options / sizeof report_options[0]; i++)
        if (!strcmp(report_options[i].name, name))
            return (int)report_options[i].key;
    return -1;
}
