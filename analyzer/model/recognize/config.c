/* config.c — the run's configuration as a store of keys (config.h): each value with its type,
 * its source and where it came from; setting a value checks its type and range. Reading
 * nanoGPT's configurator is nanogpt.c; which program a command line runs is cmdline.c. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct key_info {
    const char *name;
    config_type type;
    const char *def;
    long long most; /* an integer's largest (config.h) */
} key_info;

static const key_info keys[] = {
#define VT_CFG_INFO(k, t, d, most, label, doc) {#k, t, d, most},
    VT_CONFIG_KEYS(VT_CFG_INFO)
#undef VT_CFG_INFO
};

/* ---- setting values ----------------------------------------------------------------- */

void config_init(nano_config *c)
{
    memset(c, 0, sizeof *c);
    for (int k = 0; k < CFG_COUNT; k++) {
        config_value *v = &c->v[k];
        switch (keys[k].type) {
        case CONFIG_INT:
            v->i = strtoll(keys[k].def, NULL, 10);
            break;
        case CONFIG_FLOAT:
            v->f = strtod(keys[k].def, NULL);
            break;
        case CONFIG_BOOL:
            v->i = !strcmp(keys[k].def, "True");
            break;
        case CONFIG_STR:
            snprintf(v->s, sizeof v->s, "%s", keys[k].def);
            break;
        }
        v->src = CONFIG_SRC_DEFAULT;
    }
    c->program = PROG_NANOGPT;
}

int config_find_key(const char *name)
{
    for (int k = 0; k < CFG_COUNT; k++)
        if (!strcmp(name, keys[k].name))
            return k;
    return -1;
}

int config_key_named(const char *name, size_t n)
{
    for (int k = 0; k < CFG_COUNT; k++)
        if (strlen(keys[k].name) == n && !strncmp(name, keys[k].name, n))
            return 1;
    return 0;
}

int config_set_value(nano_config *c, int k, pyval v, const char *text, config_source src,
                     const char *where, char *err, size_t errlen)
{
    config_value nv = c->v[k];
    /* a refused value names its key as its writer does: vramtrace's overrides (src FLAG) and
     * nanoGPT by the key, with nanoGPT's spelling as the example; another program's value (its
     * flag or file in where) in words for any program */
    int own = src == CONFIG_SRC_FLAG || c->program == PROG_NANOGPT;
    const char *name = own ? keys[k].name : config_key_label((config_key)k);
    switch (keys[k].type) {
    case CONFIG_INT:
        if (v.k != PYV_INT) {
            snprintf(err, errlen, "%s: %s = %s is not an integer (give a whole number%s%s%s%s)",
                     where, name, text, own ? ", e.g. " : "", own ? name : "", own ? "=" : "",
                     own ? keys[k].def : "");
            return -1;
        }
        if (v.i < 1 || v.i > keys[k].most) {
            snprintf(err, errlen,
                     "%s: %s = %s is out of range (must be a positive integer, at most %lld)",
                     where, name, text, keys[k].most);
            return -1;
        }
        nv.i = v.i;
        break;
    case CONFIG_FLOAT:
        if (v.k != PYV_FLOAT && v.k != PYV_INT) {
            snprintf(err, errlen, "%s: %s = %s is not a number (e.g. %s%s0.1)", where, name, text,
                     own ? name : "", own ? "=" : "");
            return -1;
        }
        nv.f = pyexpr_num(v);
        if (k == CFG_dropout && !(nv.f >= 0 && nv.f < 1)) {
            snprintf(err, errlen, "%s: dropout = %s is out of range (must be 0 <= dropout < 1)",
                     where, text);
            return -1;
        }
        break;
    case CONFIG_BOOL:
        if (v.k != PYV_BOOL) {
            snprintf(err, errlen, "%s: %s = %s is not a boolean (write True or False)", where, name,
                     text);
            return -1;
        }
        nv.i = v.i;
        break;
    case CONFIG_STR: {
        if (v.k != PYV_STR) {
            snprintf(err, errlen, "%s: %s = %s is not a string (e.g. %s%s'bfloat16')", where, name,
                     text, own ? name : "", own ? "=" : "");
            return -1;
        }
        const char *s = v.s;
        if (k == CFG_dtype) {
            if (!strcmp(s, "fp16") || !strcmp(s, "half"))
                s = "float16";
            else if (!strcmp(s, "bf16"))
                s = "bfloat16";
            else if (!strcmp(s, "fp32") || !strcmp(s, "float"))
                s = "float32";
            /* "16-bit": autocast seen, float16 or bfloat16 not told apart (a trace) */
            if (strcmp(s, "float16") && strcmp(s, "bfloat16") && strcmp(s, "float32") &&
                strcmp(s, "16-bit")) {
                snprintf(err, errlen,
                         "%s: dtype = %s is unknown (use float32, bfloat16 or float16)", where,
                         text);
                return -1;
            }
        }
        snprintf(nv.s, sizeof nv.s, "%.*s", (int)sizeof nv.s - 1, s);
        break;
    }
    }
    nv.src = src;
    snprintf(nv.where, sizeof nv.where, "%s", where);
    c->v[k] = nv;
    return 0;
}

int config_set(nano_config *c, const char *key, const char *value, config_source src,
               const char *where, char *err, size_t errlen)
{
    int k = config_find_key(key);
    if (k < 0)
        return 1;
    pyval v = pyexpr_eval(value, NULL, NULL); /* literal_eval: no names */
    /* a flag's number past 64 bits: its range (an expression keeps its reason) */
    int flag_digits = src == CONFIG_SRC_FLAG && value[strspn(value, "+-")] &&
                      !value[strspn(value, "+-0123456789")];
    int int_range = flag_digits && keys[k].type == CONFIG_INT;
    if ((v.k == PYV_ERR && v.why) || (int_range && v.k != PYV_INT)) {
        const char *more = strlen(value) > 60 ? "..." : "";
        /* (a flag's value refused is never said "not used": the command stops) */
        if (int_range)
            snprintf(err, errlen,
                     "%s: %s = %.60s%s is out of range (must be a positive integer, at most %lld)",
                     where, key, value, more, keys[k].most);
        else if (flag_digits && k == CFG_dropout)
            snprintf(err, errlen,
                     "%s: dropout = %.60s%s is out of range (must be 0 <= dropout < 1)", where,
                     value, more);
        else /* (as config_set_value names it) */
            snprintf(err, errlen, "%s = %.60s%s is %s: %s",
                     src == CONFIG_SRC_FLAG || c->program == PROG_NANOGPT
                         ? key
                         : config_key_label((config_key)k),
                     value, more, src == CONFIG_SRC_FLAG ? "refused" : "not used", v.why);
        return -1;
    }
    /* literal_eval failing on a bare word gives the word itself as a string (nanoGPT). */
    if (v.k == PYV_ERR) {
        v.k = PYV_STR;
        snprintf(v.s, sizeof v.s, "%s", value);
    }
    return config_set_value(c, k, v, value, src, where, err, errlen);
}

/* differs: two values of one key are not the same value */
static int differs(const config_value *a, const config_value *b)
{
    return a->i != b->i || a->f != b->f || strcmp(a->s, b->s);
}

int config_overrides(nano_config *c, int n, const char *const *given, const char *const *said,
                     char *err, size_t errlen)
{
    for (int i = 0; given && i < n; i++) {
        const char *as = said && said[i] ? said[i] : given[i]; /* (as the user typed it) */
        char key[64];
        const char *val = config_arg_key(given[i], key, sizeof key);
        if (!val) {
            snprintf(err, errlen, "override '%s' is not key=value (e.g. batch_size=8)", given[i]);
            return -1;
        }
        int k = config_find_key(key);
        config_value was = k >= 0 ? c->v[k] : (config_value){0};
        int rc = config_set(c, key, val, CONFIG_SRC_FLAG, given[i], err, errlen);
        if (rc < 0)
            return -1;
        if (rc == 1) {
            snprintf(err, errlen,
                     "override '%s': unknown key '%s' (keys: batch_size, block_size, "
                     "gradient_accumulation_steps, n_layer, n_head, n_embd, vocab_size, dropout, "
                     "bias, dtype, compile)",
                     given[i], key);
            return -1;
        }
        if (was.src == CONFIG_SRC_FLAG && differs(&was, &c->v[k])) { /* two of its spellings */
            const char *prev = given[i];
            for (int j = 0; j < i; j++) { /* the earlier spelling of it */
                char kj[64];
                if (config_arg_key(given[j], kj, sizeof kj) && !strcmp(kj, key))
                    prev = said && said[j] ? said[j] : given[j];
            }
            snprintf(err, errlen, "%s given twice (%.100s, then %.100s): give one", key, prev, as);
            return -1;
        }
        snprintf(c->v[k].where, sizeof c->v[k].where, "given on vramtrace's command line (%.150s)",
                 as);
        /* the program's own value, another one: said, never dropped in silence (ResNet-50's
         * --batch-size 128 had become 64 with no word, its bytes measured at 128) */
        if ((was.src == CONFIG_SRC_ARG || was.src == CONFIG_SRC_FILE) && differs(&was, &c->v[k])) {
            char note[400];
            snprintf(note, sizeof note,
                     "%s: the program's own value (%.80s) left unused: %.60s given on vramtrace's "
                     "command line; the measured bytes are the program's",
                     config_key_word(c, (config_key)k), was.where[0] ? was.where : "its source",
                     as);
            config_note(c, note);
        }
    }
    return 0;
}

int config_notes_kept(const nano_config *c)
{
    return c->nwarnings < CONFIG_NOTES_MAX ? c->nwarnings : CONFIG_NOTES_MAX;
}

void config_note_key(nano_config *c, config_key k, const char *rest)
{
    char said[160], msg[400];
    snprintf(msg, sizeof msg, "%s%s", config_key_said(c, k, said, sizeof said), rest);
    config_note(c, msg);
}

void config_note(nano_config *c, const char *msg)
{
    if (c->nwarnings < (int)(sizeof c->warnings / sizeof c->warnings[0]))
        snprintf(c->warnings[c->nwarnings], sizeof c->warnings[0], "%.*s",
                 (int)sizeof c->warnings[0] - 1, msg);
    c->nwarnings++;
}

const config_recfile *config_recorded_file(const config_files *f, int kind, const char *name)
{
    for (int i = 0; f && i < f->n; i++)
        if (f->f[i].kind == kind && !strcmp(f->f[i].name, name))
            return &f->f[i];
    return NULL;
}

const char *config_arg_key(const char *arg, char *key, size_t len)
{
    while (*arg == '-')
        arg++;
    const char *eq = strchr(arg, '=');
    size_t kl = eq ? (size_t)(eq - arg) : strlen(arg);
    if (kl >= len)
        kl = len - 1;
    memcpy(key, arg, kl);
    key[kl] = '\0';
    for (char *p = key; *p; p++)
        if (*p == '-')
            *p = '_';
    return eq ? eq + 1 : NULL;
}

void config_reset(nano_config *c, config_key k)
{
    nano_config d;
    if ((unsigned)k >= CFG_COUNT)
        return;
    config_init(&d);
    c->v[k] = d.v[k];
}

void config_forget_defaults(nano_config *c)
{
    for (int k = 0; k < CFG_COUNT; k++)
        if (c->v[k].src == CONFIG_SRC_DEFAULT) {
            memset(&c->v[k], 0, sizeof c->v[k]);
            c->v[k].src = CONFIG_SRC_UNKNOWN;
        }
}

int config_unset(const config_value *v)
{
    return v->src == CONFIG_SRC_DEFAULT || v->src == CONFIG_SRC_UNKNOWN;
}

int config_known(const nano_config *c, config_key k)
{
    return (unsigned)k < CFG_COUNT && c->v[k].src != CONFIG_SRC_UNKNOWN;
}

int config_validate(const nano_config *c, char *err, size_t errlen)
{
    long long d = c->v[CFG_n_embd].i, h = c->v[CFG_n_head].i;
    if (!config_known(c, CFG_n_embd) || !config_known(c, CFG_n_head))
        return 0;
    if (h <= 0 || d % h != 0) {
        /* (a value nothing gave is nanoGPT's default: said, so that the error does not read as
         * the user's head count or width) */
        const char *dflt = " (nanoGPT's default: not given)";
        char dn[160], hn[160]; /* (nanoGPT's keys and its assert for nanoGPT alone) */
        int nano = c->program == PROG_NANOGPT;
        snprintf(err, errlen,
                 "%s = %lld%s is not divisible by %s = %lld%s (%s; change one of them)",
                 config_key_said(c, CFG_n_embd, dn, sizeof dn), d,
                 c->v[CFG_n_embd].src == CONFIG_SRC_DEFAULT ? dflt : "",
                 config_key_said(c, CFG_n_head, hn, sizeof hn), h,
                 c->v[CFG_n_head].src == CONFIG_SRC_DEFAULT ? dflt : "",
                 nano ? "nanoGPT asserts n_embd % n_head == 0"
                      : "attention splits the width into heads of equal size");
        return -1;
    }
    return 0;
}

/* each key's meaning, its value as nanoGPT writes it (its default) and its name for any program */
static const struct {
    const char *doc, *example, *label;
} key_words[] = {
#define VT_CFG_WORDS(k, t, d, most, label, doc) {doc, d, label},
    VT_CONFIG_KEYS(VT_CFG_WORDS)
#undef VT_CFG_WORDS
};

const char *config_key_doc(config_key k)
{
    return (unsigned)k < CFG_COUNT ? key_words[k].doc : "?";
}

const char *config_key_example(config_key k)
{
    return (unsigned)k < CFG_COUNT ? key_words[k].example : "8";
}

const char *config_key_label(config_key k)
{
    return (unsigned)k < CFG_COUNT ? key_words[k].label : "?";
}

const char *config_key_word(const nano_config *c, config_key k)
{
    return c->program == PROG_NANOGPT ? config_key_name(k) : config_key_label(k);
}

const char *config_key_said(const nano_config *c, config_key k, char *buf, size_t n)
{
    if ((unsigned)k >= CFG_COUNT || c->program == PROG_NANOGPT) /* (its config keys) */
        return config_key_name(k);
    const config_value *v = &c->v[k];
    if (!v->flag[0])
        snprintf(buf, n, "%s", key_words[k].label);
    else if (v->flag_sep == '(') /* a keyword of the script's call (where names the call) */
        snprintf(buf, n, "%s (%s=)", key_words[k].label, v->flag);
    else
        snprintf(buf, n, "%s (%s)", key_words[k].label, v->flag);
    return buf;
}

const char *config_program_name(config_program p)
{
    switch (p) {
    case PROG_NANOGPT:
        return "nanoGPT";
    case PROG_ARGPARSE:
        return "an argparse script";
    case PROG_HF_TRAINER:
        return "flags spelled as Hugging Face's TrainingArguments";
    default:
        return "a program vramtrace has no flag spellings for";
    }
}

int config_key_shown(const nano_config *c, config_key k, int transformer)
{
    config_source s = c->v[k].src;
    int tkey = k == CFG_block_size || k == CFG_n_layer || k == CFG_n_head || k == CFG_n_embd ||
               k == CFG_vocab_size || k == CFG_dropout || k == CFG_bias;
    if (transformer == CONFIG_SHOW_NO_VOCAB && k == CFG_vocab_size)
        tkey = 1, transformer = CONFIG_SHOW_OTHER;
    return transformer || !tkey || s == CONFIG_SRC_FILE || s == CONFIG_SRC_ARG ||
           s == CONFIG_SRC_FLAG || (k == CFG_block_size && c->t_blocks);
}

const char *config_key_name(config_key k)
{
    return (unsigned)k < CFG_COUNT ? keys[k].name : "?";
}

config_type config_key_type(config_key k)
{
    return (unsigned)k < CFG_COUNT ? keys[k].type : CONFIG_STR;
}

const char *config_batch_flags(const nano_config *c)
{
    return c->batch_unplaced[0] ? c->batch_unplaced : c->v[CFG_batch_size].unplaced;
}

const char *config_unknown_text(const nano_config *c, config_key k, char *buf, size_t n)
{
    const config_value *v = (unsigned)k < CFG_COUNT ? &c->v[k] : NULL;
    if (v && v->where[0]) /* (the reason the reading that left it unknown gave: model_seq.c) */
        snprintf(buf, n, "%s", v->where);
    else if (k == CFG_dtype && c->amp_off[0]) /* (not "the command line does not give it") */
        snprintf(buf, n,
                 "%s turns autocast off, and the trace does not show the parameters' own "
                 "precision",
                 c->amp_off);
    else if (k == CFG_batch_size && c->batch_unplaced[0]) /* (--mini_batch_size 4: given) */
        snprintf(buf, n,
                 "the command line gives %s, none a flag vramtrace reads as the micro-batch: "
                 "which one, if any, each forward took is not known",
                 c->batch_unplaced);
    else if (c->script_read[0] && v && v->flag[0] && v->flag_sep == ' ') /* (default=None, say) */
        snprintf(buf, n,
                 "its flag %s is not on the command line and has no number for a default in "
                 "the recorded %s",
                 v->flag, c->script_read);
    else if (c->script_read[0] && v && v->unplaced[0]) /* (--encoder-layers: its own name) */
        snprintf(buf, n, "the recorded %s defines %s, %s vramtrace does not read as the %s%s",
                 c->script_read, v->unplaced, strstr(v->unplaced, ", --") ? "flags" : "a flag",
                 key_words[k].label,
                 k == CFG_batch_size && strstr(v->unplaced, "a cap on tokens")
                     ? ": under a cap on a batch's tokens, B is the cap over the samples' "
                       "length, and changes as the length does"
                     : "");
    else if (k == CFG_batch_size && c->flags_unread[0]) /* (--N_rand 2048: given, by its name) */
        snprintf(buf, n,
                 "the command line gives %s, %s vramtrace does not read: whether %s the "
                 "micro-batch (rays, samples or items per step) is not known",
                 c->flags_unread, strchr(c->flags_unread, ',') ? "flags" : "a flag",
                 strchr(c->flags_unread, ',') ? "one of them sets" : "it sets");
    else if (c->script_read[0]) /* (the trace holds the script: not "the trace does not give it") */
        snprintf(buf, n,
                 "the command line does not give it, and no flag of the recorded %s sets it",
                 c->script_read);
    else
        snprintf(buf, n, "neither the command line nor the trace gives it");
    return buf;
}

const char *config_source_name(config_source s)
{
    switch (s) {
    case CONFIG_SRC_DEFAULT:
        return "default";
    case CONFIG_SRC_FILE:
        return "file";
    case CONFIG_SRC_ARG:
        return "argument";
    case CONFIG_SRC_FLAG:
        return "flag";
    case CONFIG_SRC_TRACE:
        return "inferred";
    case CONFIG_SRC_UNKNOWN:
        return "unknown";
    }
    return "?";
}

char *config_value_text(const nano_config *c, config_key k, char *buf, size_t len)
{
    if ((unsigned)k >= CFG_COUNT) {
        snprintf(buf, len, "?");
        return buf;
    }
    const config_value *v = &c->v[k];
    if (v->src == CONFIG_SRC_UNKNOWN) {
        snprintf(buf, len, "unknown");
        return buf;
    }
    switch (keys[k].type) {
    case CONFIG_INT:
        snprintf(buf, len, "%lld", v->i);
        break;
    case CONFIG_FLOAT:
        snprintf(buf, len, v->f == floor(v->f) ? "%.1f" : "%g", v->f);
        break;
    case CONFIG_BOOL:
        snprintf(buf, len, "%s", v->i ? "True" : "False");
        break;
    case CONFIG_STR:
        snprintf(buf, len, "%s", v->s);
        break;
    }
    return buf;
}

int config_dtype_bytes(const nano_config *c)
{
    if (!config_known(c, CFG_dtype))
        return 0;
    return strcmp(c->v[CFG_dtype].s, "float32") == 0 ? 4 : 2;
}
