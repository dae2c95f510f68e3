/* predict_model.c — the model `vramtrace predict` is told about without a trace
 * (predict_model.h): a preset (--model gpt2, ...), a gated-MLP decoder's options and a Hugging
 * Face config.json. The formulas' blocks are formula.h's: GPT-2's (nanoGPT's), transformers' GPT-2,
 * the gated decoder's (Llama, Mistral, Qwen2: gate, up and down of width I, RMSNorm, rotary
 * positions, key / value heads of their own; no biases but Qwen2's on q, k and v and a Llama's
 * attention_bias, counted as parameters) and BERT's encoder with its masked-LM head. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cjson/cJSON.h>

#include "mem.h"
#include "predict_model.h"

#define HF_CONFIG_MAX (1u << 20) /* a model's config.json is a few KiB */

/* X(name, n_layer, n_head, n_embd, extra nanoGPT settings) — model presets. */
#define VT_PREDICT_MODELS(X)                                                                       \
    X("gpt2", 12, 12, 768, "")                                                                     \
    X("gpt2-medium", 24, 16, 1024, "")                                                             \
    X("gpt2-large", 36, 20, 1280, "")                                                              \
    X("gpt2-xl", 48, 25, 1600, "")                                                                 \
    X("shakespeare-char", 6, 6, 384,                                                               \
      "block_size=256 batch_size=64 gradient_accumulation_steps=1 dropout=0.2 vocab_size=65")

typedef struct model_preset {
    const char *name;
    int L, H, d;
    const char *extra;
} model_preset;

static const model_preset presets[] = {
#define VT_PM_ROW(n, l, h, d, e) {n, l, h, d, e},
    VT_PREDICT_MODELS(VT_PM_ROW)
#undef VT_PM_ROW
};

static int hf_preset(nano_config *c, predict_block *b, const char *name, char *err, size_t errlen);
static void preset_names(char *out, size_t n);

int predict_model_preset(nano_config *c, predict_block *b, const char *name, char *err,
                         size_t errlen)
{
    for (size_t i = 0; i < sizeof presets / sizeof presets[0]; i++) {
        const model_preset *p = &presets[i];
        if (strcmp(p->name, name))
            continue;
        char where[96], v[32];
        snprintf(where, sizeof where, "--model %s", name);
        snprintf(v, sizeof v, "%d", p->L);
        config_set(c, "n_layer", v, CONFIG_SRC_FLAG, where, err, errlen);
        snprintf(v, sizeof v, "%d", p->H);
        config_set(c, "n_head", v, CONFIG_SRC_FLAG, where, err, errlen);
        snprintf(v, sizeof v, "%d", p->d);
        config_set(c, "n_embd", v, CONFIG_SRC_FLAG, where, err, errlen);
        char extra[160];
        snprintf(extra, sizeof extra, "%s", p->extra);
        for (char *tok = strtok(extra, " "); tok; tok = strtok(NULL, " ")) {
            char *eq = strchr(tok, '=');
            *eq = '\0';
            /* its training settings (nanoGPT's config for it) where nothing else gave them: a
             * --batch-size before it, or a traced run's (--from), had been replaced by 64 */
            int k = config_find_key(tok);
            if ((k == CFG_batch_size || k == CFG_gradient_accumulation_steps) &&
                c->v[k].src != CONFIG_SRC_DEFAULT)
                continue;
            if (config_set(c, tok, eq + 1, CONFIG_SRC_FLAG, where, err, errlen) != 0)
                return -1;
        }
        return 0;
    }
    int hf = hf_preset(c, b, name, err, errlen);
    if (hf)
        return hf < 0 ? -1 : 0;
    char names[512];
    preset_names(names, sizeof names);
    snprintf(err, errlen,
             "unknown model '%.64s' (one of %s; or another model's Hugging Face config.json "
             "as an argument, or its shape: --n-layer, --n-head, --n-embd, ...)",
             name, names);
    return -1;
}

void predict_block_init(predict_block *b)
{
    memset(b, 0, sizeof *b);
    b->tied = -1;
}

/* count: a whole number 1..2^31 from s (the whole string), or 0 */
static uint64_t count(const char *s)
{
    char *end;
    errno = 0;
    unsigned long long v = s ? strtoull(s, &end, 10) : 0;
    return s && *s >= '0' && *s <= '9' && !*end && !errno && v >= 1 && v <= (1ull << 31) ? v : 0;
}

int predict_block_key(const char *key)
{
    return !strcmp(key, "mlp_width") || !strcmp(key, "kv_heads")      ? 2
           : !strcmp(key, "tied_head") || !strcmp(key, "untied_head") ? 1
                                                                      : 0;
}

int predict_block_option(predict_block *b, const char *key, const char *val, char *err,
                         size_t errlen)
{
    if (predict_block_key(key) == 1) {
        b->tied = key[0] == 't';
        return 0;
    }
    int width = !strcmp(key, "mlp_width");
    uint64_t v = count(val);
    if (!v) {
        snprintf(err, errlen, "--%s needs a whole number of at least 1, not '%s'",
                 width ? "mlp-width" : "kv-heads", val ? val : "");
        return -1;
    }
    if (width) {
        b->mlp_width = v;
        snprintf(b->from, sizeof b->from, "--mlp-width %llu", (unsigned long long)v);
    } else {
        b->kv_heads = v;
    }
    return 0;
}

/* ---- a Hugging Face config.json ------------------------------------------------------------ */

/* read_json: the JSON object in the regular file path (up to HF_CONFIG_MAX bytes), or NULL:
 * not JSON, too large, or not a regular file (left to the config reader, which says why) */
static cJSON *read_json(const char *path)
{
    struct stat st; /* a FIFO, a device: left to the config reader, which refuses it unread */
    if (stat(path, &st) || !S_ISREG(st.st_mode))
        return NULL;
    FILE *f = fopen(path, "rb");
    if (!f) {
        if (errno == ENOMEM) /* (glibc's own allocation: it had been read as not JSON) */
            mem_note_failure();
        return NULL;
    }
    char *buf = malloc(HF_CONFIG_MAX + 1);
    size_t n = buf ? fread(buf, 1, HF_CONFIG_MAX + 1, f) : 0;
    fclose(f);
    if (!buf)
        return NULL;
    size_t i = 0;
    while (i < n && (buf[i] == ' ' || buf[i] == '\t' || buf[i] == '\n' || buf[i] == '\r'))
        i++;
    cJSON *j = NULL;
    if (i < n && buf[i] == '{' && n <= HF_CONFIG_MAX) {
        buf[n] = '\0';
        j = cJSON_ParseWithLength(buf, n);
    }
    free(buf);
    return j;
}

/* num: key k of j as a whole number >= 1 (1 when found), else 0 */
static int num(const cJSON *j, const char *k, uint64_t *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, k);
    if (!cJSON_IsNumber(v) || v->valuedouble < 1 || v->valuedouble > 2147483648.0 ||
        v->valuedouble != (double)(uint64_t)v->valuedouble)
        return 0;
    *out = (uint64_t)v->valuedouble;
    return 1;
}

/* put: key = the whole number v into c, from path: source "file", or "flag" for a preset's
 * config (path "--model NAME ...": a file given to predict never begins with '-') */
static int put(nano_config *c, const char *path, const char *hf_key, const char *key,
               const char *value, char *err, size_t errlen)
{
    char where[320];
    snprintf(where, sizeof where, "%s: %s", path, hf_key);
    config_source src = path[0] == '-' ? CONFIG_SRC_FLAG : CONFIG_SRC_FILE;
    return config_set(c, key, value, src, where, err, errlen) ? -1 : 0;
}

/* shape: the four sizes of the model's keys (GPT-2's or Llama's names) into c; -1 with err when
 * one is missing */
static int shape(nano_config *c, const cJSON *j, const char *path, const char *const keys[4],
                 char *err, size_t errlen)
{
    static const char *const ours[4] = {"n_layer", "n_head", "n_embd", "vocab_size"};
    for (int k = 0; k < 4; k++) {
        uint64_t v;
        char s[24];
        if (!num(j, keys[k], &v)) {
            snprintf(err, errlen, "%s: no whole number '%s' (the model's %s)", path, keys[k],
                     ours[k]);
            return -1;
        }
        snprintf(s, sizeof s, "%llu", (unsigned long long)v);
        if (put(c, path, keys[k], ours[k], s, err, errlen) < 0)
            return -1;
    }
    return 0;
}

/* dropout: the config's dropout rate key k (a number in [0, 1)), into c; absent: left as is */
static int dropout(nano_config *c, const cJSON *j, const char *path, const char *k, char *err,
                   size_t errlen)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, k);
    if (!v)
        return 0;
    char s[32];
    if (!cJSON_IsNumber(v) || v->valuedouble < 0 || v->valuedouble >= 1) {
        snprintf(err, errlen, "%s: '%s' is not a dropout rate in [0, 1)", path, k);
        return -1;
    }
    snprintf(s, sizeof s, "%.17g", v->valuedouble);
    return put(c, path, k, "dropout", s, err, errlen);
}

/* gated: a Llama / Mistral config's block into b */
static int gated(predict_block *b, const cJSON *j, const char *path, const char *type, char *err,
                 size_t errlen)
{
    uint64_t I, H, d, kv, hd;
    if (!num(j, "intermediate_size", &I)) {
        snprintf(err, errlen, "%s: no whole number 'intermediate_size' (the MLP's width)", path);
        return -1;
    }
    num(j, "num_attention_heads", &H);
    num(j, "hidden_size", &d);
    /* a head of its own width (Gemma's 256 at d = 3072 over 16 heads) makes q, k, v other than
     * d wide: not the formula's block */
    if (num(j, "head_dim", &hd) && hd * H != d) {
        snprintf(err, errlen,
                 "%s: head_dim %llu x %llu heads is not hidden_size %llu: the formulas' blocks "
                 "have heads of hidden_size / num_attention_heads",
                 path, (unsigned long long)hd, (unsigned long long)H, (unsigned long long)d);
        return -1;
    }
    b->mlp_width = I;
    b->kv_heads = num(j, "num_key_value_heads", &kv) ? kv : 0;
    /* Qwen2's q, k and v have biases; a Llama's four projections when attention_bias is set */
    b->attn_bias = !strcmp(type, "qwen2")                                                ? 3
                   : cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, "attention_bias")) ? 4
                                                                                         : 0;
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(j, "tie_word_embeddings");
    b->tied = cJSON_IsBool(t) ? cJSON_IsTrue(t) : 0; /* transformers' Llama: untied unless said */
    snprintf(b->from, sizeof b->from, "%.120s: %s", path, type);
    return 0;
}

/* bert: a BERT / RoBERTa config's model into b and c: BertForMaskedLM's (post-LayerNorm blocks of
 * a 4d GELU MLP, biases, its position and token-type tables, the masked-LM head over the tied
 * embedding); its sequence its position table's rows unless block_size was given */
static int bert(nano_config *c, predict_block *b, const cJSON *j, const char *path,
                const char *type, char *err, size_t errlen)
{
    uint64_t I, d, pos, types;
    const cJSON *arch = cJSON_GetObjectItemCaseSensitive(j, "architectures"), *a;
    int mlm = !arch; /* none named: the masked-LM head, said in `from` */
    cJSON_ArrayForEach(a, arch) mlm |= cJSON_IsString(a) && strstr(a->valuestring, "ForMaskedLM");
    if (!mlm) {
        snprintf(err, errlen,
                 "%s: the formulas have BERT's masked-LM model only (BertForMaskedLM, "
                 "RobertaForMaskedLM): 'architectures' names another; trace a run of it and give "
                 "it with --from",
                 path);
        return -1;
    }
    const char *need[] = {"intermediate_size", "max_position_embeddings", "type_vocab_size"};
    uint64_t *got[] = {&I, &pos, &types};
    for (int k = 0; k < 3; k++)
        if (!num(j, need[k], got[k]) || *got[k] > (1u << 24)) {
            snprintf(err, errlen, "%s: no whole number '%s' (1 to 2^24)", path, need[k]);
            return -1;
        }
    if (!num(j, "hidden_size", &d) || I != 4 * d) {
        snprintf(err, errlen,
                 "%s: intermediate_size %llu is not 4 x hidden_size: the formulas' BERT block has "
                 "a 4d MLP",
                 path, (unsigned long long)I);
        return -1;
    }
    /* RoBERTa's positions begin after its padding index (pad_token_id, 1 unless said): a
     * sequence takes at most its table's rows less that index and one (512 of 514) */
    const cJSON *pad = cJSON_GetObjectItemCaseSensitive(j, "pad_token_id");
    int roberta = !strcmp(type, "roberta");
    uint64_t off = 0;
    if (roberta)
        off = 1 + (cJSON_IsNumber(pad) && pad->valuedouble >= 0 && pad->valuedouble < (double)pos
                       ? (uint64_t)pad->valuedouble
                       : 1);
    if (off >= pos) {
        snprintf(err, errlen,
                 "%s: max_position_embeddings %llu leaves no position after RoBERTa's padding "
                 "rows (pad_token_id and one)",
                 path, (unsigned long long)pos);
        return -1;
    }
    char s[24];
    snprintf(s, sizeof s, "%llu", (unsigned long long)(pos - off));
    if (c->v[CFG_block_size].src == CONFIG_SRC_DEFAULT &&
        put(c, path,
            off ? "max_position_embeddings less its padding rows" : "max_position_embeddings",
            "block_size", s, err, errlen) < 0)
        return -1;
    b->bert = roberta ? 2 : 1, b->pos_rows = pos, b->pos_off = off, b->type_rows = types;
    snprintf(b->from, sizeof b->from, "%.60s: %.8s%s", path, type,
             arch ? "" : " (the masked-LM head assumed: no 'architectures')");
    return 0;
}

/* hf_apply: the model of config j (its "model_type" mt) into c and b, as predict_hf_config says;
 * path names it in what is said (a file, or a preset: "--model bert-base") */
static int hf_apply(nano_config *c, predict_block *b, const cJSON *j, const cJSON *mt,
                    const char *path, char *err, size_t errlen)
{
    static const char *const gpt2_keys[4] = {"n_layer", "n_head", "n_embd", "vocab_size"};
    static const char *const llama_keys[4] = {"num_hidden_layers", "num_attention_heads",
                                              "hidden_size", "vocab_size"};
    const char *type = mt->valuestring;
    int rc = -1;
    if (!strcmp(type, "gpt2")) {
        /* transformers' GPT-2: biases, dropout 0.1 unless the config says otherwise */
        if (shape(c, j, path, gpt2_keys, err, errlen) == 0 &&
            put(c, path, "model_type", "bias", "True", err, errlen) == 0 &&
            put(c, path, "model_type", "dropout", "0.1", err, errlen) == 0 &&
            dropout(c, j, path, "resid_pdrop", err, errlen) == 0) {
            const cJSON *uc = cJSON_GetObjectItemCaseSensitive(j, "use_cache");
            uint64_t pos = 1024; /* GPT2Config's n_positions (n_ctx its older name) unless said */
            if (!num(j, "n_positions", &pos))
                num(j, "n_ctx", &pos);
            b->pos_rows = pos; /* its position table, whatever the sequence */
            b->hf_gpt2 = 1;
            b->no_kv_cache = cJSON_IsFalse(uc);
            snprintf(b->from, sizeof b->from, "%.120s: gpt2", path);
            /* a table shorter than the sequence nothing gave (1024): its rows, said as BERT's
             * are (a block_size no one gave is never refused) */
            char t[24];
            snprintf(t, sizeof t, "%llu", (unsigned long long)pos);
            rc = c->v[CFG_block_size].src == CONFIG_SRC_DEFAULT &&
                         pos < (uint64_t)c->v[CFG_block_size].i
                     ? put(c, path, "n_positions", "block_size", t, err, errlen)
                     : 0;
        }
    } else if (!strcmp(type, "llama") || !strcmp(type, "mistral") || !strcmp(type, "qwen2")) {
        if (shape(c, j, path, llama_keys, err, errlen) == 0 &&
            put(c, path, "model_type", "dropout", "0", err, errlen) == 0 &&
            dropout(c, j, path, "attention_dropout", err, errlen) == 0 &&
            gated(b, j, path, type, err, errlen) == 0) {
            b->hf_gated = 1;
            b->no_kv_cache = cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(j, "use_cache"));
            rc = 0;
        }
    } else if (!strcmp(type, "bert") || !strcmp(type, "roberta")) {
        /* BertConfig's dropout is hidden_dropout_prob, 0.1 unless the config says otherwise */
        if (shape(c, j, path, llama_keys, err, errlen) == 0 &&
            put(c, path, "model_type", "bias", "True", err, errlen) == 0 &&
            put(c, path, "model_type", "dropout", "0.1", err, errlen) == 0 &&
            dropout(c, j, path, "hidden_dropout_prob", err, errlen) == 0 &&
            bert(c, b, j, path, type, err, errlen) == 0)
            rc = 0;
    } else {
        snprintf(err, errlen,
                 "%s: model_type '%.40s' has no block in the formulas (without a trace: gpt2, "
                 "llama, mistral, qwen2, bert, roberta); trace a run of it and give it with --from",
                 path, type);
    }
    /* transformers trains eager unless it is told to compile; the program that trains it is
     * not nanoGPT (no --batch_size=N of its spelling is offered) */
    if (rc == 0)
        rc = put(c, path, "model_type", "compile", "False", err, errlen);
    if (rc == 0)
        c->program = PROG_UNKNOWN;
    return rc < 0 ? -1 : 1;
}

int predict_hf_config(nano_config *c, predict_block *b, const char *path, char *err, size_t errlen)
{
    cJSON *j = read_json(path);
    const cJSON *mt = j ? cJSON_GetObjectItemCaseSensitive(j, "model_type") : NULL;
    /* not a model's config: a report's JSON, or not JSON at all (0) */
    int rc = cJSON_IsString(mt) ? hf_apply(c, b, j, mt, path, err, errlen) : 0;
    cJSON_Delete(j);
    return rc;
}

int predict_block_apply(const predict_block *b, const nano_config *c, gpt_shape *s, char *err,
                        size_t errlen)
{
    if ((b->hf_gpt2 || b->bert) && s->T > b->pos_rows - b->pos_off) { /* (transformers raises) */
        snprintf(err, errlen, "%s %llu is past %s's position table (%s %llu%s)",
                 config_key_word(c, CFG_block_size), (unsigned long long)s->T, b->from,
                 b->bert ? "max_position_embeddings" : "n_positions",
                 (unsigned long long)b->pos_rows,
                 b->pos_off ? ", less RoBERTa's padding rows before its first position" : "");
        return -1;
    }
    if (b->hf_gpt2)
        s->hf_gpt2 = 1, s->no_kv_cache = b->no_kv_cache, s->pos_rows = b->pos_rows;
    if (b->bert)
        s->bert = b->bert, s->pos_rows = b->pos_rows, s->type_rows = b->type_rows;
    if (!b->mlp_width) {
        if (b->kv_heads || b->tied >= 0) {
            snprintf(err, errlen,
                     "--kv-heads and --tied-head / --untied-head describe a gated-MLP decoder: "
                     "give its --mlp-width too");
            return -1;
        }
        return 0;
    }
    static const config_key need[] = {CFG_n_layer, CFG_n_head, CFG_n_embd, CFG_vocab_size};
    for (size_t i = 0; i < sizeof need / sizeof need[0]; i++)
        if (c->v[need[i]].src == CONFIG_SRC_DEFAULT) {
            snprintf(err, errlen,
                     "%s: a gated-MLP decoder's %s is not nanoGPT's: give --%s (or a Hugging "
                     "Face config.json)",
                     b->from, config_key_name(need[i]), config_key_name(need[i]));
            return -1;
        }
    if (!s->H || s->d % s->H) {
        snprintf(err, errlen, "%s %llu is not divisible by %s %llu", config_key_word(c, CFG_n_embd),
                 (unsigned long long)s->d, config_key_word(c, CFG_n_head),
                 (unsigned long long)s->H);
        return -1;
    }
    if (b->kv_heads && (b->kv_heads > s->H || s->H % b->kv_heads)) {
        snprintf(err, errlen, "%llu key / value heads do not divide %s %llu",
                 (unsigned long long)b->kv_heads, config_key_word(c, CFG_n_head),
                 (unsigned long long)s->H);
        return -1;
    }
    s->gated = 1;
    s->I = b->mlp_width;
    s->kv = b->kv_heads && b->kv_heads != s->H ? b->kv_heads * (s->d / s->H) : 0;
    s->untied = b->tied != 1;
    s->attn_bias = b->attn_bias;
    s->bias = 0;
    return 0;
}

uint64_t predict_kv_cache(const predict_block *b, const gpt_shape *s)
{
    if (b->no_kv_cache || (!s->hf_gpt2 && !(b->hf_gated && s->gated)))
        return 0;
    uint64_t e = s->dtype_bytes >= 4 && !formula_params16(s) ? 4 : 2;
    if (!s->hf_gpt2) /* (fp32 keys and values after the rotary embedding but of 16-bit weights) */
        e = formula_params16(s) ? 2 : 4;
    return 2 * e * s->B * s->T * (s->hf_gpt2 || !s->kv ? s->d : s->kv) * s->L;
}

/* ---- Hugging Face models by name ----------------------------------------------------------- */

/* X(name, its model on the Hugging Face Hub, model_type, layers, heads, key / value heads,
 * hidden_size, intermediate_size, vocab_size, max_position_embeddings, tied head,
 * type_vocab_size) — models predict knows by name: their config.json's keys the formulas read,
 * as the Hub has them (a BERT's table rows and token types; a decoder's tied head, its key /
 * value heads), taken as that config.json would be (hf_apply) */
#define VT_PREDICT_HF_MODELS(X)                                                                    \
    X("bert-base", "bert-base-uncased", "bert", 12, 12, 0, 768, 3072, 30522, 512, 0, 2)            \
    X("bert-large", "bert-large-uncased", "bert", 24, 16, 0, 1024, 4096, 30522, 512, 0, 2)         \
    X("roberta-base", "roberta-base", "roberta", 12, 12, 0, 768, 3072, 50265, 514, 0, 1)           \
    X("roberta-large", "roberta-large", "roberta", 24, 16, 0, 1024, 4096, 50265, 514, 0, 1)        \
    X("tinyllama-1.1b", "TinyLlama/TinyLlama-1.1B-intermediate-step-1431k-3T", "llama", 22, 32, 4, \
      2048, 5632, 32000, 2048, 0, 0)                                                               \
    X("llama-2-7b", "meta-llama/Llama-2-7b-hf", "llama", 32, 32, 32, 4096, 11008, 32000, 4096, 0,  \
      0)                                                                                           \
    X("llama-3.1-8b", "meta-llama/Llama-3.1-8B", "llama", 32, 32, 8, 4096, 14336, 128256, 131072,  \
      0, 0)                                                                                        \
    X("llama-3.2-1b", "meta-llama/Llama-3.2-1B", "llama", 16, 32, 8, 2048, 8192, 128256, 131072,   \
      1, 0)                                                                                        \
    X("llama-3.2-3b", "meta-llama/Llama-3.2-3B", "llama", 28, 24, 8, 3072, 8192, 128256, 131072,   \
      1, 0)                                                                                        \
    X("mistral-7b", "mistralai/Mistral-7B-v0.1", "mistral", 32, 32, 8, 4096, 14336, 32000, 32768,  \
      0, 0)                                                                                        \
    X("qwen2.5-0.5b", "Qwen/Qwen2.5-0.5B", "qwen2", 24, 14, 2, 896, 4864, 151936, 32768, 1, 0)     \
    X("qwen2.5-1.5b", "Qwen/Qwen2.5-1.5B", "qwen2", 28, 12, 2, 1536, 8960, 151936, 131072, 1, 0)

typedef struct hf_model {
    const char *name, *hub, *type;
    int L, H, kv, d, I, V, pos, tied, types;
} hf_model;

static const hf_model hf_models[] = {
#define VT_HF_ROW(n, hub, t, l, h, kv, d, i, v, pos, tied, types)                                  \
    {n, hub, t, l, h, kv, d, i, v, pos, tied, types},
    VT_PREDICT_HF_MODELS(VT_HF_ROW)
#undef VT_HF_ROW
};

/* hf_json: model m's config as its config.json would have it (NULL out of memory) */
static cJSON *hf_json(const hf_model *m)
{
    int bert = m->types > 0;
    cJSON *j = cJSON_CreateObject();
    cJSON *arch = cJSON_AddArrayToObject(j, "architectures");
    const char *cls = !strcmp(m->type, "roberta")   ? "RobertaForMaskedLM"
                      : bert                        ? "BertForMaskedLM"
                      : !strcmp(m->type, "qwen2")   ? "Qwen2ForCausalLM"
                      : !strcmp(m->type, "mistral") ? "MistralForCausalLM"
                                                    : "LlamaForCausalLM";
    if (!arch || !cJSON_AddItemToArray(arch, cJSON_CreateString(cls)) ||
        !cJSON_AddStringToObject(j, "model_type", m->type) ||
        !cJSON_AddNumberToObject(j, "num_hidden_layers", m->L) ||
        !cJSON_AddNumberToObject(j, "num_attention_heads", m->H) ||
        !cJSON_AddNumberToObject(j, "hidden_size", m->d) ||
        !cJSON_AddNumberToObject(j, "intermediate_size", m->I) ||
        !cJSON_AddNumberToObject(j, "vocab_size", m->V) ||
        !cJSON_AddNumberToObject(j, "max_position_embeddings", m->pos) ||
        (bert ? !cJSON_AddNumberToObject(j, "type_vocab_size", m->types) ||
                    !cJSON_AddNumberToObject(j, "hidden_dropout_prob", 0.1)
              : !cJSON_AddNumberToObject(j, "num_key_value_heads", m->kv) ||
                    !cJSON_AddBoolToObject(j, "tie_word_embeddings", m->tied) ||
                    !cJSON_AddNumberToObject(j, "attention_dropout", 0))) {
        cJSON_Delete(j);
        return NULL;
    }
    return j;
}

/* hf_preset: model name's config applied as predict_hf_config applies a file: 1, -1 with err,
 * 0 when name is none of them */
static int hf_preset(nano_config *c, predict_block *b, const char *name, char *err, size_t errlen)
{
    for (size_t i = 0; i < sizeof hf_models / sizeof hf_models[0]; i++) {
        const hf_model *m = &hf_models[i];
        if (strcmp(m->name, name))
            continue;
        cJSON *j = hf_json(m);
        if (!j) {
            snprintf(err, errlen, "--model %s: out of memory", name);
            return -1;
        }
        char path[128];
        snprintf(path, sizeof path, "--model %s (%s)", m->name, m->hub);
        int rc =
            hf_apply(c, b, j, cJSON_GetObjectItemCaseSensitive(j, "model_type"), path, err, errlen);
        cJSON_Delete(j);
        return rc;
    }
    return 0;
}

/* model_name: the i-th name --model takes (nanoGPT's, then the Hub's), NULL past the last */
static const char *model_name(size_t i)
{
    size_t np = sizeof presets / sizeof presets[0], nh = sizeof hf_models / sizeof hf_models[0];
    return i < np ? presets[i].name : i < np + nh ? hf_models[i - np].name : NULL;
}

/* preset_names: every name --model takes, "a, b, ... or z" */
static void preset_names(char *out, size_t n)
{
    size_t len = 0;
    out[0] = '\0';
    for (size_t i = 0; model_name(i) && len < n; i++) {
        int w = snprintf(out + len, n - len, "%s%s", i ? (model_name(i + 1) ? ", " : " or ") : "",
                         model_name(i));
        len += w > 0 ? (size_t)w : 0;
    }
}

void predict_model_names(FILE *out, int col, int indent)
{
    for (size_t i = 0; model_name(i); i++) {
        int last = !model_name(i + 1);
        int w = (int)strlen(model_name(i)) + !last;
        if (i && col + 1 + w > 80)
            col = fprintf(out, "\n%*s", indent, "") - 1;
        else if (i)
            col += fprintf(out, " ");
        col += fprintf(out, "%s%s", model_name(i), last ? "\n" : ",");
    }
}
