/* scriptflags.c — the traced script's own argparse flags (scriptflags.h): a scan of its recorded
 * source for add_argument calls, strings and comments followed so that neither ends a call nor
 * starts one, and what they add to the configuration; and a nanoGPT-style script's own top-level
 * defaults (config_nanogpt_script). */
#include "scriptflags.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mem.h"
#include "vramtrace/trace_format.h"

/* skip_string: s[i] opens a string literal ('...', "...", or tripled); the index after it (len
 * when it does not close; a one-line string ends at its line's end). */
static size_t skip_string(const char *s, size_t i, size_t len)
{
    char q = s[i];
    int triple = i + 2 < len && s[i + 1] == q && s[i + 2] == q;
    for (i += triple ? 3 : 1; i < len; i++) {
        if (s[i] == '\\') {
            i++;
            continue;
        }
        if (!triple && s[i] == '\n')
            return i;
        if (s[i] == q && (!triple || (i + 2 < len && s[i + 1] == q && s[i + 2] == q)))
            return i + (triple ? 3 : 1);
    }
    return len;
}

static size_t skip_comment(const char *s, size_t i, size_t len)
{
    while (i < len && s[i] != '\n')
        i++;
    return i;
}

size_t scriptflags_skip_noncode(const char *s, size_t i, size_t len)
{
    if (s[i] == '"' || s[i] == '\'')
        return skip_string(s, i, len);
    return s[i] == '#' ? skip_comment(s, i, len) : i;
}

/* literal: the text of the plain string literal s[a..b) ("--batch-size"), 0 when it is not one
 * or does not fit. */
static int literal(const char *s, size_t a, size_t b, char *out, size_t cap)
{
    if (b - a < 2 || (s[a] != '"' && s[a] != '\'') || s[b - 1] != s[a] || b - a - 2 >= cap)
        return 0;
    for (size_t i = a + 1; i + 1 < b; i++)
        if (s[i] == '\\' || s[i] == s[a])
            return 0; /* escapes, or two strings side by side: not a flag's name */
    memcpy(out, s + a + 1, b - a - 2);
    out[b - a - 2] = '\0';
    return 1;
}

/* choices_list: the string literals of a list s[a..b) (after its '['), each followed by '\0' in
 * out; "" when an element is not a plain string literal or they do not fit */
static void choices_list(const char *s, size_t a, size_t b, char *out, size_t cap)
{
    size_t n = 0;
    out[0] = '\0';
    while (a < b) {
        while (a < b && (isspace((unsigned char)s[a]) || s[a] == ','))
            a++;
        if (a < b && s[a] == ']')
            break;
        size_t e = a + 1;
        while (e < b && s[e] != s[a])
            e++;
        if (a >= b || (s[a] != '"' && s[a] != '\'') || e >= b ||
            !literal(s, a, e + 1, out + n, cap - n - 1)) {
            out[0] = '\0';
            return;
        }
        n += strlen(out + n) + 1;
        out[n] = '\0';
        a = e + 1;
    }
}

/* piece: one argument s[a..b) of a call: an option string, default=, choices=, action=. */
static void piece(const char *s, size_t a, size_t b, script_flag *f)
{
    while (a < b && isspace((unsigned char)s[a]))
        a++;
    while (b > a && isspace((unsigned char)s[b - 1]))
        b--;
    char text[64];
    if (a < b && (s[a] == '"' || s[a] == '\'')) {
        if (literal(s, a, b, text, sizeof f->names[0]) && text[0] == '-' &&
            f->nnames < SCRIPT_FLAG_NAMES)
            memcpy(f->names[f->nnames++], text, strlen(text) + 1); /* fits: literal's cap */
        return;
    }
    size_t k = a;
    while (k < b && (isalnum((unsigned char)s[k]) || s[k] == '_'))
        k++;
    size_t e = k;
    while (e < b && isspace((unsigned char)s[e]))
        e++;
    if (k == a || e >= b || s[e] != '=' || (e + 1 < b && s[e + 1] == '='))
        return;
    size_t v = e + 1;
    while (v < b && isspace((unsigned char)s[v]))
        v++;
    if (k - a == 7 && !strncmp(s + a, "default", 7) && v < b && (s[v] == '"' || s[v] == '\'')) {
        if (!literal(s, v, b, f->sdef, sizeof f->sdef))
            f->sdef[0] = '\0';
    } else if (k - a == 7 && !strncmp(s + a, "default", 7) && b - v < sizeof text) {
        memcpy(text, s + v, b - v);
        text[b - v] = '\0';
        char *end;
        long long d = strtoll(text, &end, 10);
        if (end != text && !*end && (isdigit((unsigned char)text[0]) || text[0] == '-'))
            f->has_default = 1, f->def = d;
        double x = strtod(text, &end); /* a number of any kind: a float key's default */
        if (end != text && !*end && b - v < sizeof f->ndef && isfinite(x) &&
            (isdigit((unsigned char)text[0]) || text[0] == '-' || text[0] == '.'))
            memcpy(f->ndef, text, b - v + 1);
    } else if (k - a == 7 && !strncmp(s + a, "choices", 7) && v < b && s[v] == '[') {
        choices_list(s, v + 1, b, f->choices, sizeof f->choices);
    } else if (k - a == 4 && !strncmp(s + a, "dest", 4)) {
        if (!literal(s, v, b, f->dest, sizeof f->dest))
            f->dest[0] = '\0';
    } else if (k - a == 6 && !strncmp(s + a, "action", 6)) {
        f->store_true = literal(s, v, b, text, sizeof text) && !strcmp(text, "store_true");
    }
}

/* call: the arguments of a call opened at s[i - 1] == '('; the index after its ')'. */
static size_t call(const char *s, size_t i, size_t len, script_flag *f)
{
    int depth = 0;
    size_t start = i;
    while (i < len) {
        char c = s[i];
        size_t past = scriptflags_skip_noncode(s, i, len);
        if (past != i) {
            i = past;
            continue;
        }
        if (c == '(' || c == '[' || c == '{')
            depth++;
        else if ((c == ')' || c == ']' || c == '}') && depth > 0)
            depth--;
        else if (c == ')' || (c == ',' && depth == 0)) {
            piece(s, start, i, f);
            start = i + 1;
            if (c == ')')
                return i + 1;
        }
        i++;
    }
    return len;
}

int scriptflags_parse(const char *src, size_t len, script_flag *out, int max)
{
    static const char word[] = ".add_argument";
    const size_t wl = sizeof word - 1;
    int n = 0;
    for (size_t i = 0; src && i < len && n < max;) {
        size_t past = scriptflags_skip_noncode(src, i, len);
        if (past != i) {
            i = past;
            continue;
        }
        if (src[i] != '.' || len - i < wl || memcmp(src + i, word, wl) != 0) {
            i++;
            continue;
        }
        size_t j = i + wl;
        while (j < len && (src[j] == ' ' || src[j] == '\t'))
            j++;
        if (j >= len || src[j] != '(') {
            i = j;
            continue;
        }
        memset(&out[n], 0, sizeof out[n]);
        i = call(src, j + 1, len, &out[n]);
        n += out[n].nnames > 0;
    }
    return n;
}

/* a switch that turns activation checkpointing on, by its name (dashes dropped, '-' as '_') */
static int checkpointing_switch(const char *key)
{
    static const char *const names[] = {"gradient_checkpointing",   "grad_checkpointing",
                                        "activation_checkpointing", "checkpointing",
                                        "checkpoint_activations",   NULL};
    for (int i = 0; names[i]; i++)
        if (!strcmp(key, names[i]))
            return 1;
    return 0;
}

/* a switch that turns transformers' KV cache off (use_cache=False), by its name */
static int nocache_switch(const char *key)
{
    static const char *const names[] = {"no_cache",      "no_kv_cache",      "no_use_cache",
                                        "disable_cache", "disable_kv_cache", NULL};
    for (int i = 0; names[i]; i++)
        if (!strcmp(key, names[i]))
            return 1;
    return 0;
}

/* a mixed-precision (autocast) flag, by its name: not --dtype, the model's own precision */
static int amp_switch(const char *key)
{
    static const char *const names[] = {"amp", "mixed_precision", "precision", "autocast", NULL};
    for (int i = 0; names[i]; i++)
        if (!strcmp(key, names[i]))
            return 1;
    return 0;
}

int scriptflags_amp16(const char *v)
{
    return !strcmp(v, "bf16") || !strcmp(v, "bfloat16") || !strcmp(v, "bf16-mixed") ? 2
           : !strcmp(v, "fp16") || !strcmp(v, "float16") || !strcmp(v, "16-mixed")  ? 1
                                                                                    : 0;
}

/* flag_named: k (an argument's key) is one of fl's names (--amp, -a, --mixed-precision) */
static int flag_named(const script_flag *fl, const char *k)
{
    char nk[64];
    for (int j = 0; j < fl->nnames; j++) {
        config_flag_name(fl->names[j], nk, sizeof nk);
        if (!strcmp(nk, k))
            return 1;
    }
    return 0;
}

int scriptflags_given(const script_flag *fl, int argc, const char *const *argv)
{
    char k[64];
    for (int i = config_script_index(argc, argv) + 1; i > 0 && i < argc; i++) {
        config_flag_name(argv[i], k, sizeof k);
        if (argv[i][0] == '-' && flag_named(fl, k))
            return 1;
    }
    return 0;
}

int scriptflags_given_value(const script_flag *fl, int argc, const char *const *argv,
                            const char **v, int *eq)
{
    char k[64];
    *v = NULL, *eq = 0;
    for (int i = config_script_index(argc, argv) + 1; i > 0 && i < argc; i++) {
        const char *x = config_arg_key(argv[i], k, sizeof k);
        config_flag_name(argv[i], k, sizeof k); /* (in lower case, as flag_named's names) */
        if (argv[i][0] != '-' || !flag_named(fl, k))
            continue;
        *eq = x != NULL;
        *v = x ? x : i + 1 < argc ? argv[i + 1] : NULL;
        return i;
    }
    return 0;
}

/* alias_value: key k's value from the command line after the script where it gives fl under
 * another of its names than the one the spellings know ("--rows 12" for add_argument(
 * "--batch_size", "--rows")), or under a name no spelling knows whose dest= is the key's
 * (add_argument("--rows", dest="batch_size")): set as an argument, with the flag that carried it;
 * 1 when set. Its default had been taken, or the key left unknown, as if the command line had not
 * given it. */
static int alias_value(nano_config *c, int k, const script_flag *fl, const char *lng, int argc,
                       const char *const *argv)
{
    int eq;
    const char *v;
    int i = scriptflags_given_value(fl, argc, argv, &v, &eq);
    if (i <= 0 || !v)
        return 0;
    char where[200], err[200], flag[48];
    snprintf(flag, sizeof flag, "%.*s", (int)strcspn(argv[i], "="), argv[i]);
    if (strcmp(flag, lng) || !fl->dest[0])
        snprintf(where, sizeof where, "%.60s%s%.40s (its argparse's other name for %.40s)", flag,
                 eq ? "=" : " ", v, lng);
    else /* (the flag itself, a name no spelling knows: its dest= is the key's) */
        snprintf(where, sizeof where, "%.60s%s%.40s (its argparse's dest=\"%.40s\")", flag,
                 eq ? "=" : " ", v, fl->dest);
    if (config_set(c, config_key_name((config_key)k), v, CONFIG_SRC_ARG, where, err, sizeof err) !=
        0)
        return 0;
    snprintf(c->v[k].flag, sizeof c->v[k].flag, "%s", flag);
    c->v[k].flag_sep = eq ? '=' : ' ';
    return 1;
}

/* amp_value: the run's value of the autocast flag fl (any of its names), from the command line
 * after the script, else its argparse default, into c (amp_value, amp_where); none for a switch
 * (store_true: no value) */
static void amp_value(nano_config *c, const script_flag *fl, const char *lng, const char *base,
                      int argc, const char *const *argv)
{
    int eq;
    const char *v;
    int i = fl->store_true ? 0 : scriptflags_given_value(fl, argc, argv, &v, &eq);
    if (i > 0 && !v)
        return;
    if (i > 0) {
        snprintf(c->amp_value, sizeof c->amp_value, "%s", v);
        snprintf(c->amp_where, sizeof c->amp_where, "%.60s%s%.40s on the command line", argv[i],
                 eq ? "" : " ", eq ? "" : v);
        return;
    }
    if (fl->sdef[0] && !fl->store_true) {
        snprintf(c->amp_value, sizeof c->amp_value, "%s", fl->sdef);
        snprintf(c->amp_where, sizeof c->amp_where,
                 "%.60s: %.40s, default=\"%.20s\" (its argparse; not on the command line)", base,
                 lng, fl->sdef);
    }
}

/* bias_switch: the script's --bias is a switch (action="store_true"): on where the command line
 * after the script gives it, else off, argparse's default for a switch (an MoE GPT's bias row had
 * said "no flag of the recorded moe_routed.py sets it"); the trace's own reading stays in JSON
 * inferred.bias */
static void bias_switch(nano_config *c, const script_flag *fl, const char *lng, const char *base,
                        int argc, const char *const *argv)
{
    char where[200], err[200];
    config_value *v = &c->v[CFG_bias];
    int on = scriptflags_given(fl, argc, argv);
    if (v->src == CONFIG_SRC_ARG || v->src == CONFIG_SRC_FILE)
        return;
    if (on)
        snprintf(where, sizeof where, "%.40s on the command line (a switch of %.60s)", lng, base);
    else
        snprintf(where, sizeof where,
                 "%.60s: %.40s, a switch (action=\"store_true\"), not on the command line: off",
                 base, lng);
    if (config_set(c, "bias", on ? "True" : "False", on ? CONFIG_SRC_ARG : CONFIG_SRC_FILE, where,
                   err, sizeof err) == 0) {
        snprintf(v->flag, sizeof v->flag, "%s", lng);
        v->flag_sep = ' ';
    }
}

/* add_one: "--encoder-layers (default 12; not on the command line)" after the key's list (as
 * many as fit, then "...") */
static void add_one(config_value *v, const char *one)
{
    size_t have = strlen(v->unplaced), need = strlen(one) + (have ? 2 : 0);
    if (have + need + 5 >= sizeof v->unplaced) {
        if (have && !strstr(v->unplaced, "..."))
            snprintf(v->unplaced + have, sizeof v->unplaced - have, ", ...");
        return;
    }
    snprintf(v->unplaced + have, sizeof v->unplaced - have, "%s%s", have ? ", " : "", one);
}

/* name_unplaced: each of the script's flags fl[0..n) that no spelling places and whose name says
 * a key (scriptflags_words_key) is added to that key's unplaced list, with its value on the
 * command line or its default: a key left unknown names them (config_unknown_text), a change no
 * placed flag carries says they are not read as it (advice) */
static void name_unplaced(nano_config *c, const script_flag *fl, int n, int argc,
                          const char *const *argv)
{
    for (int i = 0; i < n; i++) {
        const script_flag *f = &fl[i];
        const char *lng = f->names[0];
        for (int j = 0; j < f->nnames; j++)
            if (!strncmp(f->names[j], "--", 2)) {
                lng = f->names[j];
                break;
            }
        char key[64], dn[64];
        config_flag_name(lng, key, sizeof key);
        snprintf(dn, sizeof dn, "--%.40s", f->dest);
        if (f->store_true || config_flag_key(lng) >= 0 || (f->dest[0] && config_flag_key(dn) >= 0))
            continue; /* a switch, or one a spelling placed (--d_model: no choice of model) */
        int model = scriptflags_model_choice(key); /* (--model gpt2) */
        if (!model && (f->sdef[0] || f->choices[0]))
            continue; /* a word's flag */
        int k = model ? CFG_n_layer : scriptflags_words_key(key);
        if (k < 0 || !strcmp(c->v[k].flag, lng))
            continue; /* (or the key's own flag: a physical batch, config_script_physical) */
        const char *v;
        int eq;
        char one[128];
        if (scriptflags_given_value(f, argc, argv, &v, &eq) > 0 && v)
            snprintf(one, sizeof one, "%.40s (%.24s on the command line", lng, v);
        else if (f->ndef[0] || f->sdef[0])
            snprintf(one, sizeof one, "%.40s (default %.24s; not on the command line", lng,
                     f->ndef[0] ? f->ndef : f->sdef);
        else
            snprintf(one, sizeof one, "%.40s (not on the command line", lng);
        size_t w = strlen(one);
        snprintf(one + w, sizeof one - w, "%s)",
                 model ? "; by its name a choice of model"
                 : k == CFG_batch_size && scriptflags_token_cap(key)
                     ? "; a cap on tokens by its name"
                     : "");
        /* a choice of model: its shape's keys, each (the table that maps it is the program's) */
        static const config_key shape[] = {CFG_n_layer,    CFG_n_head,  CFG_n_embd,
                                           CFG_vocab_size, CFG_dropout, CFG_bias};
        for (size_t j = 0; j < (model ? sizeof shape / sizeof *shape : 1); j++)
            add_one(&c->v[model ? (int)shape[j] : k], one);
    }
}

/* the run took the width flag's default, and the weights' sizes gave another d (a Mamba's
 * d_inner, 2·d: its in_proj is 2·d_inner×d = d_inner², read as a d×d projection): the
 * program's own default is the width it built (V is read again over it: model_width_vocab) */
static void width_from_default(nano_config *c, const char *lng, long long def, const char *base)
{
    config_value *v = &c->v[CFG_n_embd];
    long long d = v->i;
    char val[32], where[300], err[200];
    snprintf(val, sizeof val, "%lld", def);
    snprintf(where, sizeof where,
             "%.60s: %.40s, default=%lld (its argparse; not on the command line); the weights' "
             "sizes alone gave %lld (a block's parameter of that size squared)",
             base, lng, def, d);
    if (def <= 0 || config_set(c, "n_embd", val, CONFIG_SRC_FILE, where, err, sizeof err) != 0)
        return;
    snprintf(v->flag, sizeof v->flag, "%s", lng);
    v->flag_sep = ' ';
}

void config_apply_script(nano_config *c, int argc, const char *const *argv)
{
    const config_recfile *f = config_recorded_script(c, argc, argv);
    if (!f)
        return;
    const char *base = strrchr(f->name, '/') ? strrchr(f->name, '/') + 1 : f->name;
    script_flag *fl = malloc(SCRIPT_FLAGS_MAX * sizeof *fl);
    if (!fl)
        return; /* out of memory: the command line's own flags only */
    int n = scriptflags_parse(f->data, f->len, fl, SCRIPT_FLAGS_MAX);
    if (n > 0 && n < SCRIPT_FLAGS_MAX) /* an argparse script, all of its flags read */
        snprintf(c->script_read, sizeof c->script_read, "%s", base);
    for (int i = 0; i < n; i++) {
        const char *lng = fl[i].names[0];
        for (int j = 0; j < fl[i].nnames; j++)
            if (!strncmp(fl[i].names[j], "--", 2)) {
                lng = fl[i].names[j];
                break;
            }
        char key[64];
        config_flag_name(lng, key, sizeof key);
        if (fl[i].store_true && checkpointing_switch(key) && !c->ckpt_flag[0]) {
            snprintf(c->ckpt_flag, sizeof c->ckpt_flag, "%s", lng);
            continue;
        }
        if (fl[i].store_true && nocache_switch(key) && !c->nocache_flag[0]) {
            snprintf(c->nocache_flag, sizeof c->nocache_flag, "%s", lng);
            continue;
        }
        if (fl[i].store_true && !strcmp(key, "bias")) { /* (no spelling: nanoGPT's --bias=) */
            bias_switch(c, &fl[i], lng, base, argc, argv);
            continue;
        }
        if (amp_switch(key) && !c->amp_value[0])
            amp_value(c, &fl[i], lng, base, argc, argv);
        if (amp_switch(key) && !c->amp_flag[0])
            for (const char *ch = fl[i].choices; *ch; ch += strlen(ch) + 1)
                if (scriptflags_amp16(ch) == 2) {
                    snprintf(c->amp_flag, sizeof c->amp_flag, "%s %s", lng, ch);
                    break;
                }
        int k = config_flag_key(lng);
        if (k < 0 && fl[i].dest[0]) { /* add_argument("--rows", dest="batch_size"): the key */
            char dn[64];
            snprintf(dn, sizeof dn, "--%.40s", fl[i].dest);
            k = config_flag_key(dn);
        }
        config_type ty = k < 0 ? CONFIG_STR : config_key_type((config_key)k);
        if (ty != CONFIG_INT && ty != CONFIG_FLOAT)
            continue; /* precision and compile: the trace says what ran */
        config_value *v = &c->v[k];
        char other[64], global[64];
        config_flag_name(c->batch_other, other, sizeof other);
        config_flag_name(c->batch_global, global, sizeof global);
        int not_micro = k == CFG_batch_size && ((c->batch_other[0] && flag_named(&fl[i], other)) ||
                                                (c->batch_global[0] && flag_named(&fl[i], global)));
        /* the command line under another of the flag's names beats the trace's inference, as it
         * does under the name the spellings know (-b 12 for --batch-size: a video model's clips,
         * which the trace read as B from the labels) */
        if ((v->src == CONFIG_SRC_UNKNOWN || (v->src == CONFIG_SRC_TRACE && !not_micro)) &&
            alias_value(c, k, &fl[i], lng, argc, argv))
            continue;
        if (v->src == CONFIG_SRC_UNKNOWN &&
            (ty == CONFIG_INT ? fl[i].has_default : fl[i].ndef[0] != '\0')) {
            char val[32], where[200], err[200];
            if (ty == CONFIG_INT)
                snprintf(val, sizeof val, "%lld", fl[i].def);
            else
                snprintf(val, sizeof val, "%s", fl[i].ndef);
            snprintf(where, sizeof where,
                     "%.60s: %.40s, default=%.24s (its argparse; not on the "
                     "command line)",
                     base, lng, val);
            if (config_set(c, config_key_name((config_key)k), val, CONFIG_SRC_FILE, where, err,
                           sizeof err) != 0)
                continue;
        }
        if (not_micro)
            continue; /* another batch than the micro-batch (the trace's, the script's use) */
        if (k == CFG_batch_size && v->src == CONFIG_SRC_TRACE && fl[i].has_default &&
            fl[i].def != v->i && !scriptflags_given(&fl[i], argc, argv)) {
            /* the run took its default, which the trace shows is not the micro-batch */
            size_t w = strlen(v->where);
            snprintf(v->where + w, sizeof v->where - w,
                     "; %.40s (its default %lld here) is not the micro-batch", lng, fl[i].def);
            continue;
        }
        if (k == CFG_n_embd && v->src == CONFIG_SRC_TRACE && fl[i].has_default &&
            !scriptflags_given(&fl[i], argc, argv) && fl[i].def != v->i) {
            width_from_default(c, lng, fl[i].def, base);
            continue;
        }
        if (!v->flag[0] && v->src != CONFIG_SRC_ARG) {
            snprintf(v->flag, sizeof v->flag, "%s", lng);
            v->flag_sep = ' ';
        }
    }
    name_unplaced(c, fl, n, argc, argv);
    free(fl);
}

void config_nanogpt_script(nano_config *c, int argc, const char *const *argv)
{
    int si = config_script_index(argc, argv);
    const config_recfile *f =
        si < 0 || !c->files ? NULL : config_recorded_file(c->files, VT_FILE_ARG, argv[si]);
    const char *name = si < 0 ? "the script" : argv[si];
    const char *base = strrchr(name, '/') ? strrchr(name, '/') + 1 : name;
    nano_config *sc = NULL; /* the script's own top-level assignments, read on their own */
    if (f && !f->flags && f->data && f->len && (sc = malloc(sizeof *sc))) {
        config_init(sc);
        sc->files = c->files;
        FILE *fp = mem_fmemopen(f->data, f->len);
        char err[512];
        if (!fp || config_apply_stream(sc, fp, base, err, sizeof err) == -1) {
            free(sc); /* unreadable: as if not recorded */
            sc = NULL;
        }
        if (fp)
            fclose(fp);
    }
    int forgot = 0;
    for (int k = 0; k < CFG_COUNT; k++) {
        config_value *v = &c->v[k];
        if (v->src != CONFIG_SRC_DEFAULT)
            continue;
        if (sc && sc->v[k].src == CONFIG_SRC_FILE) { /* the script assigns it: its value */
            *v = sc->v[k];
            char where[sizeof v->where];
            snprintf(where, sizeof where, "%.*s (the script's own)", (int)sizeof where - 20,
                     sc->v[k].where);
            snprintf(v->where, sizeof v->where, "%s", where);
            continue;
        }
        memset(v, 0, sizeof *v);
        v->src = CONFIG_SRC_UNKNOWN;
        forgot++;
    }
    if (forgot && !sc) {
        char msg[300];
        snprintf(msg, sizeof msg,
                 "%.120s: not recorded (%s): nanoGPT's defaults are not assumed, the trace "
                 "and the command line say what they can",
                 name,
                 f                                ? "larger than 256 KiB or unreadable when traced"
                 : c->files && c->files->recorded ? "not a regular .py file when traced"
                                                  : "trace from an older vramtrace");
        config_note(c, msg);
    }
    free(sc);
}
