/* cmdline.c — which kind of program a traced command line runs (nanoGPT configurator, a plain
 * argparse script, flags spelled as Hugging Face's TrainingArguments) and, for the non-nanoGPT
 * kinds, the known flag spellings mapped onto the model's keys with the flag and separator that
 * carried each. */
#include "config.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "namewords.h"
#include "vramtrace/trace_format.h"

/* X(spelling, key) — flag names (dashes dropped, '-' as '_', lower case) of argparse scripts
 * and the Hugging Face Trainer, and the model key each one sets. */
#define VT_FLAG_SPELLINGS(X)                                                                       \
    X("batch_size", CFG_batch_size)                                                                \
    X("batch", CFG_batch_size)                                                                     \
    X("bs", CFG_batch_size)                                                                        \
    X("micro_batch_size", CFG_batch_size)                                                          \
    X("per_device_train_batch_size", CFG_batch_size)                                               \
    X("train_batch_size", CFG_batch_size)                                                          \
    X("grad_accum", CFG_gradient_accumulation_steps)                                               \
    X("grad_accum_steps", CFG_gradient_accumulation_steps)                                         \
    X("gradient_accumulation_steps", CFG_gradient_accumulation_steps)                              \
    X("accum_steps", CFG_gradient_accumulation_steps)                                              \
    X("accumulation_steps", CFG_gradient_accumulation_steps)                                       \
    X("accum", CFG_gradient_accumulation_steps)                                                    \
    X("grad_acc_steps", CFG_gradient_accumulation_steps)                                           \
    X("accumulate_grad_batches", CFG_gradient_accumulation_steps)                                  \
    X("accum_iter", CFG_gradient_accumulation_steps)                                               \
    X("seq_len", CFG_block_size)                                                                   \
    X("seq_length", CFG_block_size)                                                                \
    X("sequence_length", CFG_block_size)                                                           \
    X("max_seq_length", CFG_block_size)                                                            \
    X("max_seq_len", CFG_block_size)                                                               \
    X("block_size", CFG_block_size)                                                                \
    X("context_length", CFG_block_size)                                                            \
    X("ctx", CFG_block_size)                                                                       \
    X("ctx_len", CFG_block_size)                                                                   \
    X("seqlen", CFG_block_size)                                                                    \
    X("n_layer", CFG_n_layer)                                                                      \
    X("n_layers", CFG_n_layer)                                                                     \
    X("num_layers", CFG_n_layer)                                                                   \
    X("num_hidden_layers", CFG_n_layer)                                                            \
    X("n_embd", CFG_n_embd)                                                                        \
    X("hidden_size", CFG_n_embd)                                                                   \
    X("d_model", CFG_n_embd)                                                                       \
    X("n_head", CFG_n_head)                                                                        \
    X("n_heads", CFG_n_head)                                                                       \
    X("num_heads", CFG_n_head)                                                                     \
    X("num_attention_heads", CFG_n_head)                                                           \
    X("vocab_size", CFG_vocab_size)                                                                \
    X("dtype", CFG_dtype)                                                                          \
    X("amp", CFG_dtype)                                                                            \
    X("precision", CFG_dtype)                                                                      \
    X("mixed_precision", CFG_dtype)                                                                \
    X("compile", CFG_compile)                                                                      \
    X("torch_compile", CFG_compile)                                                                \
    X("dropout", CFG_dropout)                                                                      \
    X("dropout_rate", CFG_dropout)                                                                 \
    X("hidden_dropout_prob", CFG_dropout)

static const struct {
    const char *name;
    config_key key;
} spellings[] = {
#define VT_SP_ROW(n, k) {n, k},
    VT_FLAG_SPELLINGS(VT_SP_ROW)
#undef VT_SP_ROW
};

void config_flag_name(const char *arg, char *out, size_t len)
{
    config_arg_key(arg, out, len);
    for (char *p = out; *p; p++)
        *p = (char)tolower((unsigned char)*p);
}

/* heads_words: a name that says the attention's heads in words of its own (--attn_heads,
 * --n_attention_heads, --heads): "heads" last, every word before it a count's or the attention's
 * (n, num, attn, attention, ...); not a grouped key / value count (--n_kv_heads), nor a head's
 * size (--head_dim), nor a bare --head. (The spellings list knows n_head and num_heads; a
 * program's own names had left H "unknown: no flag of the recorded gpt_ckpt_ramp.py sets it"
 * beside its --attn_heads.) */
static int heads_words(const char *name)
{
    static const char *const lead[] = {"n",    "num",       "number", "nb", "of",
                                       "attn", "attention", "self",   NULL};
    size_t n = strlen(name);
    if (n < 5 || strcmp(name + n - 5, "heads") || (n > 5 && name[n - 6] != '_'))
        return 0;
    for (const char *w = name; w < name + n - 5;) {
        size_t l = strcspn(w, "_");
        int ok = 0;
        for (int i = 0; lead[i] && !ok; i++)
            ok = strlen(lead[i]) == l && !strncmp(w, lead[i], l);
        if (!ok)
            return 0;
        w += l + 1;
    }
    return 1;
}

static int spelling_key(const char *name)
{
    for (size_t i = 0; i < sizeof spellings / sizeof spellings[0]; i++)
        if (!strcmp(spellings[i].name, name))
            return (int)spellings[i].key;
    return heads_words(name) ? CFG_n_head : -1;
}

int config_flag_key(const char *flag)
{
    char name[64];
    config_flag_name(flag, name, sizeof name);
    return spelling_key(name);
}

static int is_hf_flag(const char *name)
{
    static const char *const hf[] = {"per_device_train_batch_size", "model_name_or_path",
                                     "output_dir", "per_device_eval_batch_size", NULL};
    for (int i = 0; hf[i]; i++)
        if (!strcmp(name, hf[i]))
            return 1;
    return 0;
}

config_program config_detect_program(int argc, const char *const *argv)
{
    int plain = 0;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (!a || strncmp(a, "--", 2) != 0)
            continue;
        char name[64];
        config_flag_name(a, name, sizeof name);
        if (is_hf_flag(name))
            return PROG_HF_TRAINER;
        if (!strchr(a, '='))
            plain = 1; /* nanoGPT's configurator accepts only --key=value */
        else if (strchr(name, '_') == NULL && spelling_key(name) >= 0 && strcmp(name, "compile") &&
                 strcmp(name, "dtype") && strcmp(name, "dropout"))
            plain = 1; /* --batch=8, --amp=bf16: not nanoGPT spellings (its keys: compile,
                        * dtype, dropout) */
        else if (strchr(a + 2, '-') && strchr(a + 2, '-') < strchr(a, '='))
            plain = 1; /* --batch-size=8: argparse spelling */
    }
    return plain ? PROG_ARGPARSE : PROG_NANOGPT;
}

static int is_bool_word(const char *s)
{
    static const char *const w[] = {"true", "false", "True", "False", "1", "0", NULL};
    for (int i = 0; s && w[i]; i++)
        if (!strcmp(s, w[i]))
            return 1;
    return 0;
}

/* is_off_word: a mixed-precision switch's value that turns it off (--amp none) */
static int is_off_word(const char *s)
{
    static const char *const w[] = {"none", "no", "off", "false", "0", NULL};
    for (int i = 0; s && w[i]; i++)
        if (!strcasecmp(s, w[i]))
            return 1;
    return 0;
}

/* precision_word: a precision flag's value in the dtype's words: Lightning's ("32-true",
 * "bf16-mixed", "16-mixed", "bf16-true", "16", "32") as the compute dtype they mean; any other
 * value as it is */
static const char *precision_word(int k, const char *v)
{
    static const struct {
        const char *word, *dtype;
    } w[] = {{"32", "fp32"},        {"32-true", "fp32"},  {"bf16-mixed", "bf16"},
             {"bf16-true", "bf16"}, {"16-mixed", "fp16"}, {"16-true", "fp16"},
             {"16", "fp16"}};
    for (size_t i = 0; k == CFG_dtype && v && i < sizeof w / sizeof w[0]; i++)
        if (!strcmp(v, w[i].word))
            return w[i].dtype;
    return v;
}

/* apply_one: sets key k from text; a value the model cannot use becomes a note. */
static void apply_one(nano_config *c, config_key k, const char *flag, char sep, const char *text,
                      const char *where)
{
    char err[300] = "", val[64];
    if (config_key_type(k) == CONFIG_BOOL)
        snprintf(val, sizeof val, "%s",
                 (!strcmp(text, "1") || !strcasecmp(text, "true")) ? "True" : "False");
    else
        snprintf(val, sizeof val, "%s", text);
    if (config_set(c, config_key_name(k), val, CONFIG_SRC_ARG, where, err, sizeof err) != 0) {
        char msg[400];
        snprintf(msg, sizeof msg, "%s (ignored)", err);
        config_note(c, msg);
        return;
    }
    snprintf(c->v[k].flag, sizeof c->v[k].flag, "%.*s", (int)sizeof c->v[k].flag - 1, flag);
    c->v[k].flag_sep = sep;
    c->v[k].call[0] = '\0';
}

/* config_side_pass_name: a batch flag of a pass beside the training (an evaluation's, a
 * sampling's: --eval_batch_size, read as the evaluation's batch where the run's peak is there) */
int config_side_pass_name(const char *name)
{
    /* (by whole words, namewords.h: as substrings "interval" had been a validation's, a batch
     * sampler a sampling's) */
    return (namewords_kinds(name, strlen(name), "_-", 1) &
            (NW_EVAL | NW_TEST | NW_SAMPLE | NW_PREDICT | NW_INFER)) != 0;
}

/* note_unplaced: a batch flag no spelling places, kept for the unknown micro-batch's sentence
 * (config_unknown_text): "--mini_batch_size 4" (as many as fit, then "...") */
static void note_unplaced(char *list, size_t cap, const char *flag, const char *value)
{
    char one[64];
    snprintf(one, sizeof one, "%.40s%s%.16s", flag, value ? " " : "", value ? value : "");
    size_t have = strlen(list), need = strlen(one) + (have ? 2 : 0);
    if (have + need + 4 >= cap) {
        if (have && !strstr(list, "..."))
            snprintf(list + have, cap - have, ", ...");
        return;
    }
    snprintf(list + have, cap - have, "%s%s", have ? ", " : "", one);
}

/* an_integer: s is a literal integer ("2048"): a count a flag may give */
static int an_integer(const char *s)
{
    if (!s || !*s)
        return 0;
    for (s += *s == '-'; *s; s++)
        if (*s < '0' || *s > '9')
            return 0;
    return 1;
}

void config_apply_flags(nano_config *c, int argc, const char *const *argv)
{
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (!a || strncmp(a, "--", 2) != 0)
            continue; /* a bare word: a value of an unknown flag, or a positional: not a file */
        char name[64], flag[64], where[160];
        config_flag_name(a, name, sizeof name);
        const char *eq = strchr(a, '=');
        snprintf(flag, sizeof flag, "%.*s", (int)(eq ? (size_t)(eq - a) : strlen(a)), a);
        const char *next = i + 1 < argc ? argv[i + 1] : NULL;
        int has_next = next && strncmp(next, "--", 2) != 0;
        /* HF boolean precision flags: --bf16 / --fp16 [True] */
        if (!strcmp(name, "bf16") || !strcmp(name, "fp16")) {
            const char *v = eq ? eq + 1 : (has_next && is_bool_word(next)) ? next : "True";
            if (!eq && has_next && is_bool_word(next))
                i++;
            if (strcmp(v, "1") && strcasecmp(v, "true"))
                continue;
            snprintf(where, sizeof where, "%s", a);
            apply_one(c, CFG_dtype, flag, eq ? '=' : ' ', !strcmp(name, "bf16") ? "bf16" : "fp16",
                      where);
            continue;
        }
        int k = spelling_key(name);
        if (k < 0) {
            const char *v = eq ? eq + 1 : has_next ? next : NULL;
            if (strstr(name, "batch") && !config_side_pass_name(name))
                note_unplaced(c->batch_unplaced, sizeof c->batch_unplaced, flag, v);
            else if (an_integer(v) && !config_side_pass_name(name)) /* (--N_rand 2048) */
                note_unplaced(c->flags_unread, sizeof c->flags_unread, flag, v);
            if (!eq && has_next)
                i++; /* an unknown flag's value; ignored silently */
            continue;
        }
        const char *value = eq ? eq + 1 : has_next ? next : NULL;
        if (k == CFG_dtype && strcmp(name, "dtype") && is_off_word(value)) {
            /* --amp none: no autocast, a precision of no dtype: the parameters' own (the trace
             * tells it) */
            char msg[200];
            snprintf(msg, sizeof msg,
                     "%s%s%s: no autocast; the precision is the parameters' own (from "
                     "the trace)",
                     a, eq ? "" : " ", eq ? "" : value);
            config_note(c, msg);
            snprintf(c->amp_off, sizeof c->amp_off, "%.40s%s%.30s", a, eq ? "" : " ",
                     eq ? "" : value);
            i += !eq;
            continue;
        }
        if (eq) {
            apply_one(c, (config_key)k, flag, '=', precision_word(k, eq + 1), a);
        } else if (config_key_type((config_key)k) == CONFIG_BOOL) {
            int take = has_next && is_bool_word(next);
            snprintf(where, sizeof where, "%s%s%s", a, take ? " " : "", take ? next : "");
            apply_one(c, (config_key)k, flag, ' ', take ? next : "True", where);
            i += take;
        } else if (has_next) {
            snprintf(where, sizeof where, "%s %s", a, next);
            apply_one(c, (config_key)k, flag, ' ', precision_word(k, next), where);
            i++;
        }
    }
}

static int ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && !strcmp(s + a - b, suffix);
}

int config_script_index(int argc, const char *const *argv)
{
    for (int i = 0; argv && i < argc; i++)
        if (argv[i] && ends_with(argv[i], ".py") && strchr(argv[i], '=') == NULL)
            return i;
    return -1;
}

/* script_file: the command line's script as the trace recorded it, or NULL */
static const config_recfile *script_file(const nano_config *c, int argc, const char *const *argv)
{
    int si = c->files ? config_script_index(argc, argv) : -1;
    const config_recfile *f = si < 0 ? NULL : config_recorded_file(c->files, VT_FILE_ARG, argv[si]);
    return f && f->data && !f->flags ? f : NULL;
}

const config_recfile *config_recorded_script(const nano_config *c, int argc,
                                             const char *const *argv)
{
    return c->program == PROG_NANOGPT ? NULL : script_file(c, argc, argv);
}

static int source_has(const config_recfile *f, const char *what)
{
    return memmem(f->data, f->len, what, strlen(what)) != NULL;
}

/* script_program: what the recorded script's own source says of a command line nanoGPT's
 * configurator would accept (config files and --key=value, or nothing at all): nanoGPT's when
 * it reads its configuration through a configurator (upstream's exec of configurator.py), a
 * plain script's when it defines argparse flags (an empty command line had been taken for
 * nanoGPT's: "change: --n_layer=9" to a script with no such flag), else one with flags
 * vramtrace cannot know (hard-coded values, flags defined elsewhere). */
/* count_of: occurrences of w in s[0..n) */
static int count_of(const char *s, size_t n, const char *w)
{
    int k = 0;
    size_t wl = strlen(w);
    for (size_t i = 0; i + wl <= n; i++)
        if (!memcmp(s + i, w, wl))
            k++, i += wl - 1;
    return k;
}

/* uses_configurator: a line of code (not in a docstring, not a comment) runs or imports a
 * configurator: upstream nanoGPT's exec(open('configurator.py').read()), an import of one. The
 * word alone had been taken for it: a docstring saying "no configurator" made minGPT's layout
 * nanoGPT's command line ("configuration (nanoGPT)"). */
static int uses_configurator(const config_recfile *f)
{
    int in_doc = 0;
    for (size_t i = 0; i < f->len;) {
        const char *line = f->data + i;
        const char *nl = memchr(line, '\n', f->len - i);
        size_t n = nl ? (size_t)(nl - line) : f->len - i;
        i += n + 1;
        int quotes = count_of(line, n, "\"\"\"") + count_of(line, n, "'''");
        int was = in_doc;
        if (quotes % 2)
            in_doc = !in_doc;
        if (was || quotes)
            continue; /* (a docstring's line, or one that opens or closes one) */
        const char *code = line;
        while (code < line + n && (*code == ' ' || *code == '\t'))
            code++;
        const char *hash = memchr(code, '#', (size_t)(line + n - code));
        size_t cn = (size_t)((hash ? hash : line + n) - code);
        if (!count_of(code, cn, "configurator"))
            continue;
        if (count_of(code, cn, "exec(") || !strncmp(code, "import ", 7) ||
            !strncmp(code, "from ", 5))
            return 1;
    }
    return 0;
}

static config_program script_program(const config_recfile *f)
{
    if (uses_configurator(f))
        return PROG_NANOGPT;
    return source_has(f, "add_argument(") ? PROG_ARGPARSE : PROG_UNKNOWN;
}

int config_from_cmdline(nano_config *c, int argc, const char *const *argv, const char *cwd,
                        char *err, size_t errlen)
{
    if (!argv || argc <= 0)
        return 0;                                    /* no PROCESS record: nothing to apply */
    int start = config_script_index(argc, argv) + 1; /* none: everything after argv[0] */
    if (start == 0)
        start = 1;
    c->program = config_detect_program(argc - start, argv + start);
    const config_recfile *sf = c->program == PROG_NANOGPT ? script_file(c, argc, argv) : NULL;
    if (sf) /* the script's own source decides */
        c->program = script_program(sf);
    if (c->program != PROG_NANOGPT) {
        config_apply_flags(c, argc - start, argv + start);
        return 0;
    }
    return config_apply_args(c, argc - start, argv + start, cwd, CONFIG_SRC_ARG, 0, err, errlen);
}
