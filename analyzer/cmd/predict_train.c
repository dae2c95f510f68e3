/* predict_train.c — `vramtrace predict --optimizer NAME --lora-rank R --lora-targets LIST`
 * (predict_train.h): what trains and the optimizer's state, set on the shape as a trace's
 * recognized run sets them (model.c); the formulas count them (formula_train.c). */
#include "predict_train.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cards.h"
#include "formula_train.h"

/* the optimizers' names (--optimizer), the first of each its own in the JSON */
static const struct {
    const char *name;
    predict_opt opt;
} opts[] = {
    {"adamw", PREDICT_OPT_ADAMW},
    {"adam", PREDICT_OPT_ADAM},
    {"adamw8bit", PREDICT_OPT_ADAMW8BIT},
    {"adamw-8bit", PREDICT_OPT_ADAMW8BIT},
    {"sgd", PREDICT_OPT_SGD},
    {"sgd-momentum", PREDICT_OPT_MOMENTUM},
    {"adafactor", PREDICT_OPT_ADAFACTOR},
};

enum { KIND_GATED, KIND_GPT2, KIND_BERT };
static int kind(const gpt_shape *s)
{
    return s->gated ? KIND_GATED : s->bert && s->pos_rows ? KIND_BERT : KIND_GPT2;
}

/* a target's names, per block (gated, GPT-2, BERT): the short one and peft's module names */
#define QKV3 (LORA_Q | LORA_K | LORA_V)
/* every projection of a block (peft's "all-linear"), per block kind */
#define ALL_LINEAR                                                                                 \
    {                                                                                              \
        QKV3 | LORA_O | LORA_GATE | LORA_UP | LORA_DOWN, LORA_QKV | LORA_O | LORA_UP | LORA_DOWN,  \
            QKV3 | LORA_O | LORA_UP | LORA_DOWN                                                    \
    }
static const struct {
    const char *name;
    unsigned mask[3];
} names[] = {
    {"q", {LORA_Q, 0, LORA_Q}},
    {"k", {LORA_K, 0, LORA_K}},
    {"v", {LORA_V, 0, LORA_V}},
    {"o", {LORA_O, LORA_O, LORA_O}},
    {"qkv", {QKV3, LORA_QKV, QKV3}},
    {"gate", {LORA_GATE, 0, 0}},
    {"up", {LORA_UP, LORA_UP, LORA_UP}},
    {"down", {LORA_DOWN, LORA_DOWN, LORA_DOWN}},
    {"all", ALL_LINEAR},
    {"all-linear", ALL_LINEAR},
    {"q_proj", {LORA_Q, 0, 0}},
    {"k_proj", {LORA_K, 0, 0}},
    {"v_proj", {LORA_V, 0, 0}},
    {"o_proj", {LORA_O, 0, 0}},
    {"gate_proj", {LORA_GATE, 0, 0}},
    {"up_proj", {LORA_UP, 0, 0}},
    {"down_proj", {LORA_DOWN, 0, 0}},
    {"c_attn", {0, LORA_QKV, 0}},
    {"attn.c_proj", {0, LORA_O, 0}},
    {"c_fc", {0, LORA_UP, 0}},
    {"mlp.c_proj", {0, LORA_DOWN, 0}},
    {"c_proj", {0, LORA_O | LORA_DOWN, 0}}, /* peft matches the name's end: both of GPT-2's */
    {"query", {0, 0, LORA_Q}},
    {"key", {0, 0, LORA_K}},
    {"value", {0, 0, LORA_V}},
    {"attention.output.dense", {0, 0, LORA_O}},
    {"intermediate.dense", {0, 0, LORA_UP}},
};

/* each block's projections in order, as its module names say them (the text), and the short
 * names (the JSON) */
static const unsigned order[] = {LORA_Q, LORA_K,    LORA_V,  LORA_QKV,
                                 LORA_O, LORA_GATE, LORA_UP, LORA_DOWN};
static const char *const shorts[] = {"q", "k", "v", "qkv", "o", "gate", "up", "down"};
static const char *const modules[3][8] = {
    {"q_proj", "k_proj", "v_proj", "", "o_proj", "gate_proj", "up_proj", "down_proj"},
    {"", "", "", "c_attn", "attn.c_proj", "", "c_fc", "mlp.c_proj"},
    {"query", "key", "value", "", "attention.output.dense", "", "intermediate.dense",
     "output.dense"},
};
/* peft's default targets for each block (its mapping for llama, mistral, qwen2; gpt2; bert) */
static const unsigned peft_default[3] = {LORA_Q | LORA_V, LORA_QKV, LORA_Q | LORA_V};
static const char *const block_names[3] = {
    "q, k, v, o, gate, up, down, qkv, all (or peft's q_proj, ..., down_proj)",
    "qkv (c_attn), o (attn.c_proj), up (c_fc), down (mlp.c_proj), c_proj (o and down), all",
    ("q, k, v, o, up, down, qkv, all (or peft's query, key, value, attention.output.dense, "
     "intermediate.dense)"),
};

/* opt_name: the optimizer's own name (AdamW where none was given: the one assumed) */
static const char *opt_name(predict_opt o)
{
    for (size_t i = 0; i < sizeof opts / sizeof opts[0]; i++)
        if (opts[i].opt == o)
            return opts[i].name;
    return "adamw";
}

int predict_train_key(const char *key)
{
    return !strcmp(key, "optimizer") || !strcmp(key, "lora_rank") || !strcmp(key, "lora_targets");
}

int predict_train_given(const predict_train *t)
{
    return t->opt != PREDICT_OPT_NONE || t->lora_rank || t->targets[0];
}

/* twice: an option given a second time with another value; -1 with err */
static int twice(const char *opt, const char *was, const char *val, char *err, size_t errlen)
{
    snprintf(err, errlen, "--%s given twice (%s, then %s): give one", opt, was, val);
    return -1;
}

int predict_train_option(predict_train *t, const char *key, const char *val, char *err,
                         size_t errlen)
{
    int optimizer = !strcmp(key, "optimizer"), rank = !strcmp(key, "lora_rank");
    const char *opt = optimizer ? "optimizer" : rank ? "lora-rank" : "lora-targets";
    if (!val || !*val) {
        snprintf(err, errlen, "option '--%s' needs a value (e.g. --%s %s)", opt, opt,
                 optimizer ? "adafactor"
                 : rank    ? "8"
                           : "q,k,v,o");
        return -1;
    }
    if (optimizer) {
        char v[24];
        snprintf(v, sizeof v, "%s", val);
        for (char *p = v; *p; p++) /* nanoGPT's spelling: sgd_momentum */
            if (*p == '_')
                *p = '-';
        for (size_t i = 0; i < sizeof opts / sizeof opts[0] && strlen(val) < sizeof v; i++) {
            if (strcasecmp(v, opts[i].name))
                continue;
            if (t->opt != PREDICT_OPT_NONE && t->opt != opts[i].opt)
                return twice(opt, opt_name(t->opt), val, err, errlen);
            t->opt = opts[i].opt;
            return 0;
        }
        snprintf(err, errlen,
                 "--optimizer: unknown optimizer '%.40s' (adamw, adam, adamw8bit, sgd, "
                 "sgd-momentum, adafactor)",
                 val);
        return -1;
    }
    if (rank) {
        char *end;
        errno = 0;
        unsigned long long r = strtoull(val, &end, 10);
        if (*val < '0' || *val > '9' || *end || errno || r < 1 || r > 65536) {
            snprintf(err, errlen, "--lora-rank needs a whole number from 1 to 65536, not '%.40s'",
                     val);
            return -1;
        }
        if (t->lora_rank && t->lora_rank != r) {
            char was[24];
            snprintf(was, sizeof was, "%llu", (unsigned long long)t->lora_rank);
            return twice(opt, was, val, err, errlen);
        }
        t->lora_rank = r;
        return 0;
    }
    if (strlen(val) >= sizeof t->targets) {
        snprintf(err, errlen, "--lora-targets: a list of at most %zu characters",
                 sizeof t->targets - 1);
        return -1;
    }
    if (t->targets[0] && strcmp(t->targets, val))
        return twice(opt, t->targets, val, err, errlen);
    snprintf(t->targets, sizeof t->targets, "%s", val);
    return 0;
}

/* targets: t->targets (names split at commas and spaces) as the block's projections into *mask;
 * -1 with err for a name the block has no projection of */
static int targets(const predict_train *t, int k, unsigned *mask, char *err, size_t errlen)
{
    char list[sizeof t->targets];
    snprintf(list, sizeof list, "%s", t->targets);
    *mask = 0;
    for (char *save, *tok = strtok_r(list, ", ", &save); tok; tok = strtok_r(NULL, ", ", &save)) {
        unsigned m = 0;
        for (size_t i = 0; i < sizeof names / sizeof names[0] && !m; i++)
            if (!strcmp(tok, names[i].name))
                m = names[i].mask[k];
        if (!m && k == KIND_GPT2 && strchr("qkv", tok[0]) && !tok[1]) {
            snprintf(err, errlen,
                     "--lora-targets: GPT-2's q, k and v are one projection (c_attn): give qkv");
            return -1;
        }
        if (!m) {
            snprintf(err, errlen, "--lora-targets: no projection '%.40s' in %s blocks (%s)", tok,
                     k == KIND_GATED  ? "gated"
                     : k == KIND_BERT ? "BERT's"
                                      : "GPT-2's",
                     block_names[k]);
            return -1;
        }
        *mask |= m;
    }
    if (!*mask) {
        snprintf(err, errlen, "--lora-targets: no projection named (%s)", block_names[k]);
        return -1;
    }
    return 0;
}

int predict_train_apply(predict_train *t, gpt_shape *s, char *err, size_t errlen)
{
    int k = kind(s);
    if (t->targets[0] && !t->lora_rank) {
        snprintf(err, errlen, "--lora-targets names LoRA's projections: give its --lora-rank too");
        return -1;
    }
    if (t->lora_rank) {
        t->mask = peft_default[k];
        if (t->targets[0] && targets(t, k, &t->mask, err, errlen) < 0)
            return -1;
        s->lora_rank = t->lora_rank, s->lora_targets = t->mask;
    }
    /* the state per trainable parameter, as a trace's recognized optimizer sets it */
    int tb = formula_trained_bytes(s);
    switch (t->opt) {
    case PREDICT_OPT_ADAMW:
    case PREDICT_OPT_ADAM:
        s->opt_set = 1, s->opt_bpp = 2.0 * tb;
        break;
    case PREDICT_OPT_ADAMW8BIT: /* as the report's 8-bit AdamW what-if (advice_candidates.c) */
        s->opt_set = 1, s->opt_bpp = 2.0;
        break;
    case PREDICT_OPT_SGD:
        s->opt_set = 1, s->opt_bpp = 0;
        break;
    case PREDICT_OPT_MOMENTUM:
        s->opt_set = 1, s->opt_bpp = tb;
        break;
    case PREDICT_OPT_ADAFACTOR:
        s->opt_factored = 1;
        break;
    default:
        break;
    }
    return 0;
}

/* add: printf onto buf's end (cut at n) */
static void add(char *buf, size_t n, const char *fmt, ...)
{
    size_t k = strlen(buf);
    if (k + 1 >= n)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf + k, n - k, fmt, ap);
    va_end(ap);
}

/* listed: the projections of mask in the block's own module names, into buf */
static const char *listed(int k, unsigned mask, char *buf, size_t n)
{
    buf[0] = '\0';
    for (size_t i = 0; i < sizeof order / sizeof order[0]; i++)
        if (mask & order[i])
            add(buf, n, "%s%s", buf[0] ? ", " : "", modules[k][i]);
    return buf;
}

const char *predict_train_text(const predict_train *t, const gpt_shape *s, int traced, char *buf,
                               size_t n)
{
    buf[0] = '\0';
    /* (nothing given and no trace: the state counted is an assumption, said as the line below
     * says it beside LoRA; until 2026-12-04 it was said nowhere but in the basic formula's row) */
    if (!predict_train_given(t) && (traced || s->generic || s->no_training))
        return buf;
    int k = kind(s);
    if (t->lora_rank) {
        char on[200];
        add(buf, n,
            "trained: LoRA of rank %llu on %s of every block%s: %.2f M adapter parameters in "
            "fp32 (as peft keeps them), %.2f %% of all, their gradients and the optimizer's "
            "state alone; the model's %.2f M weights frozen (no gradient, no state)\n",
            (unsigned long long)t->lora_rank, listed(k, t->mask, on, sizeof on),
            t->targets[0]     ? ""
            : k == KIND_GATED ? " (peft's default for Llama, Mistral and Qwen2; --lora-targets)"
            : k == KIND_BERT  ? " (peft's default for BERT; --lora-targets)"
                              : " (peft's default for GPT-2; --lora-targets)",
            (double)formula_lora_params(s) / 1e6, 100.0 * formula_train_frac(s),
            (double)formula_params_exact(s) / 1e6);
        add(buf, n, "%s",
            formula_lora_block(s)
                ? "  (activations: the frozen weights keep no input for a gradient, each adapter "
                  "a 16-bit copy of its input and its B*T*R rows; docs/formula.md §3)\n"
                : "  (activations: counted as full fine-tuning keeps them, as if every weight "
                  "trained: the formula has LoRA's for a gated block in eager 16-bit autocast over "
                  "fp32 weights without checkpointing only)\n");
    }
    double bpp = formula_opt_bpp(s);
    switch (t->opt) {
    case PREDICT_OPT_NONE:
        add(buf, n,
            "optimizer: not given: AdamW's two states assumed, %.0f B per trainable parameter "
            "(--optimizer)\n",
            bpp);
        break;
    case PREDICT_OPT_ADAMW:
    case PREDICT_OPT_ADAM:
        add(buf, n, "optimizer: %s: two states, %.0f B per trainable parameter\n",
            t->opt == PREDICT_OPT_ADAM ? "Adam" : "AdamW", bpp);
        break;
    case PREDICT_OPT_ADAMW8BIT:
        add(buf, n,
            "optimizer: 8-bit AdamW (bitsandbytes): its two moments in 8 bits, 2 B of "
            "state per trainable parameter as the report's 8-bit AdamW what-if counts it "
            "(not measured on a GPU by vramtrace)\n");
        break;
    case PREDICT_OPT_SGD:
        add(buf, n, "optimizer: SGD without momentum: no state\n");
        break;
    case PREDICT_OPT_MOMENTUM:
        add(buf, n,
            "optimizer: SGD with momentum: a momentum buffer of each trainable parameter, in "
            "its dtype: %.0f B per trainable parameter\n",
            bpp);
        break;
    case PREDICT_OPT_ADAFACTOR: {
        uint64_t e = t->lora_rank ? formula_lora_factored(s) : formula_factored_elems(s);
        char b[32];
        add(buf, n,
            "optimizer: Adafactor (torch.optim.Adafactor, no first moment): a row and a column "
            "of each %s, in the gradients' dtype: %llu elements, %s (%.3f B per trainable "
            "parameter)\n",
            t->lora_rank ? "adapter matrix" : "matrix, every vector whole", (unsigned long long)e,
            card_format_bytes(e * (uint64_t)formula_trained_bytes(s), b, sizeof b), bpp);
        break;
    }
    }
    return buf;
}

void predict_train_json(cJSON *root, const predict_train *t, const gpt_shape *s)
{
    if (!predict_train_given(t))
        return;
    cJSON *o = cJSON_AddObjectToObject(root, "optimizer");
    cJSON_AddStringToObject(o, "name", opt_name(t->opt));
    cJSON_AddBoolToObject(o, "assumed", t->opt == PREDICT_OPT_NONE); /* AdamW: none given */
    cJSON_AddNumberToObject(o, "state_bytes_per_trainable_param", formula_opt_bpp(s));
    if (!t->lora_rank) {
        cJSON_AddNullToObject(root, "lora");
        return;
    }
    cJSON *l = cJSON_AddObjectToObject(root, "lora");
    cJSON_AddNumberToObject(l, "rank", (double)t->lora_rank);
    cJSON *a = cJSON_AddArrayToObject(l, "targets");
    for (size_t i = 0; i < sizeof order / sizeof order[0]; i++)
        if (t->mask & order[i])
            cJSON_AddItemToArray(a, cJSON_CreateString(shorts[i]));
    cJSON_AddBoolToObject(l, "targets_default", !t->targets[0]); /* peft's for the block */
    cJSON_AddNumberToObject(l, "adapter_parameters", (double)formula_lora_params(s));
    cJSON_AddNumberToObject(l, "adapter_bytes_per_parameter", 4); /* fp32 */
    cJSON_AddNumberToObject(l, "trainable_fraction", formula_train_frac(s));
    /* "lora": the formula's LoRA block; "full_fine_tuning": the full block stands in */
    cJSON_AddStringToObject(l, "activations", formula_lora_block(s) ? "lora" : "full_fine_tuning");
}

void predict_train_share(const gpt_shape *s, double tp, int frac_how)
{
    int assumed = frac_how == PREDICT_FRAC_ASSUMED;
    if (s->generic || s->train_frac <= 0 || s->train_frac >= 0.99)
        return;
    if (frac_how == PREDICT_FRAC_UNTOLD) /* (an MoE's expert no token was routed to had been "the
                                          * rest frozen") */
        printf("with a gradient: %.2f M parameters, %.2f %% of the model's (the rest had none "
               "where the gradients were most: frozen, or weights a step did not reach, as an "
               "expert its router did not choose or a branch not taken: not told apart): gradients "
               "and the optimizer's state for those alone\n",
               tp / 1e6, 100.0 * s->train_frac);
    else /* LoRA, frozen layers */
        printf("trained: %s%.2f M parameters, %.2f %% of the model's (%s): gradients and the "
               "optimizer's state for those alone\n",
               assumed ? "assumed " : "", tp / 1e6, 100.0 * s->train_frac,
               assumed ? "LoRA on, no gradient measured: its adapters, usually fewer; the rest "
                         "frozen"
                       : "the rest frozen: adapters such as LoRA trained alone, or frozen layers");
}
