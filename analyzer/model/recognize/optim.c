/* optim.c — the optimizer, recognized from the state it created (recognize.h): bytes of state
 * per trainable parameter (the optimizer state's peak over the gradients' elements) say what it
 * keeps, whatever its class; the class on the Python stacks names it; with neither, the traced
 * command line's --optimizer / --optim, that flag's default in the script's argparse, or the
 * optimizers the script constructs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "config.h"
#include "pysrc.h"
#include "recognize.h"
#include "scriptflags.h"
#include "trainargs.h"

static const char *const opt_keys[] = {
#define VT_OPTIM_KEY(e, key, words, words16) key,
    VT_OPTIMS(VT_OPTIM_KEY)
#undef VT_OPTIM_KEY
};
static const char *const opt_words[] = {
#define VT_OPTIM_WORDS(e, key, words, words16) words,
    VT_OPTIMS(VT_OPTIM_WORDS)
#undef VT_OPTIM_WORDS
};
static const char *const opt_words16[] = {
#define VT_OPTIM_WORDS16(e, key, words, words16) words16,
    VT_OPTIMS(VT_OPTIM_WORDS16)
#undef VT_OPTIM_WORDS16
};

const char *optim_key(optim_kind k)
{
    return (unsigned)k < OPT_COUNT ? opt_keys[k] : "?";
}
const char *optim_words(optim_kind k)
{
    return (unsigned)k < OPT_COUNT ? opt_words[k] : "?";
}

/* kernel_family: a model family whose weights are mostly convolutions' kernels */
static int kernel_family(model_family f)
{
    return f == FAM_CONVNET || f == FAM_DIFFUSION_UNET;
}

int optim_factored_kernels(const run_recognition *r)
{
    return r->optim == OPT_FACTORED && (kernel_family(r->family) || r->optim_bpp >= 1.0);
}

const char *optim_text(const run_recognition *r)
{
    if (r->optim == OPT_NONE && r->optim_off_device)
        return "no state on the device";
    if (optim_factored_kernels(r))
        return "factored second moments (Adafactor) over each weight's last two dimensions: a "
               "k×k convolution's kernels keep 2/k states per weight (two at 1×1), a matrix "
               "under 1 B per parameter";
    return r->state_elem == 2 && (unsigned)r->optim < OPT_COUNT ? opt_words16[r->optim]
                                                                : optim_words(r->optim);
}

double optim_bound_bpp(const run_recognition *r, int pb)
{
    return r->optim == OPT_FACTORED ? (optim_factored_kernels(r) ? 2.0 * pb : 1.0)
           : r->optim == OPT_SGD    ? pb
                                    : 2.0;
}

double optim_kinds_bpp(const run_recognition *r, unsigned kinds, int pb)
{
    double most = kinds & (1u << OPT_SGD | 1u << OPT_MOMENTUM | 1u << OPT_ONE_STATE) ? pb
                  : kinds & 1u << OPT_EIGHT_BIT                                      ? 2
                                                                                     : 1;
    /* (Adafactor of a convolution's kernels: optim_bound_bpp's 2·pb, more than the others) */
    if (kinds & 1u << OPT_FACTORED && (kernel_family(r->family) || r->optim_bpp >= 1.0))
        most = 2.0 * pb;
    return most;
}

/* X(file part, class name, the state it usually keeps) — optimizers named by their code. */
#define VT_OPTIM_FILES(X)                                                                          \
    X("torch/optim/adamw.py", "AdamW", ADAM)                                                       \
    X("torch/optim/adam.py", "Adam / AdamW", ADAM)                                                 \
    X("torch/optim/sgd.py", "SGD", MOMENTUM)                                                       \
    X("torch/optim/_adafactor.py", "Adafactor", FACTORED)                                          \
    X("transformers/optimization.py", "Adafactor", FACTORED)                                       \
    X("bitsandbytes/optim/", "a bitsandbytes 8-bit optimizer", EIGHT_BIT)                          \
    X("torch/optim/rmsprop.py", "RMSprop", ONE_STATE)                                              \
    X("torch/optim/adagrad.py", "Adagrad", ONE_STATE)

static const struct {
    const char *file, *name;
    optim_kind usual;
} files[] = {
#define VT_OPTIM_FILE_ROW(f, n, k) {f, n, OPT_##k},
    VT_OPTIM_FILES(VT_OPTIM_FILE_ROW)
#undef VT_OPTIM_FILE_ROW
};

/* unmeasured: why r's optimizer state was not measured */
static const char *unmeasured(const run_recognition *r)
{
    return r->optim_unmeasured     ? r->optim_unmeasured
           : r->steps_unsure       ? "whether an optimizer step ran is not known"
           : optim_steps_unseen(r) ? "no step seen, and " OPTIM_UNSEEN_WHY
                                   : "no step ran";
}

/* named_optims: the optimizers whose code is on the Python stacks, one of each kind ("AdamW",
 * whose class may run Adam's code too), their names "and"-joined into out->optim_class; their
 * kind, OPT_OTHER for several (a program's SGD on its encoder and AdamW on its head: their
 * state together is neither's per parameter, and the first found had named it alone though
 * 98.6 % of the state was SGD's), OPT_UNKNOWN for none */
static optim_kind named_optims(const recognize_input *in, run_recognition *out)
{
    optim_kind named = OPT_UNKNOWN;
    unsigned kinds = 0, n = 0;
    size_t pos = 0;
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        if (kinds & 1u << files[i].usual ||
            !tables_code_find(in->t, files[i].file, NULL, NULL, NULL, 0))
            continue;
        kinds |= 1u << files[i].usual;
        named = n++ ? OPT_OTHER : files[i].usual;
        int w = snprintf(out->optim_class + pos, sizeof out->optim_class - pos, "%s%s",
                         n > 1 ? " and " : "", files[i].name);
        pos = w < 0 || (size_t)w >= sizeof out->optim_class - pos ? pos : pos + (size_t)w;
    }
    return named;
}

void recognize_optim(const recognize_input *in, run_recognition *out)
{
    out->optim = OPT_UNKNOWN;
    out->optim_bpp = -1;
    out->optim_unmeasured = NULL, out->steps_unsure = out->passes_lower = 0;
    out->optim_off_device = 0;
    out->optim_class[0] = out->optim_where[0] = '\0';
    out->steps_may_hide = in->iterations == 0 && in->backward_done > 0;
    optim_kind named = named_optims(in, out);
    /* the trainable parameters: gradients are made for them only (in the parameters' dtype) */
    out->trainable_where[0] = '\0';
    out->trainable_lower = out->beside_unused = out->grads_cut = out->rest_untold = 0;
    out->trainable_union = 0;
    out->param_elem = in->param_elem == 2 ? 2 : 4;
    unsigned e = in->state_elem == 2 || in->state_elem == 4 ? in->state_elem : out->param_elem;
    out->state_elem = e;
    e = recognize_trainable(in, out, e); /* (trainable.c; fp32 masters make it 4) */
    out->state_cut = 0;
    out->optim_ctor = in->optim_ctor > 0 && in->has_cat_peaks && in->optim_peak > 0;
    optim_ctor_said(in, out); /* (optim_ctor.c: no gradient to count the trainable by) */
    if (in->has_cat_peaks && in->state_cut && out->trainable > 0) {
        /* part of the state made when the first step ran out of memory: the kind the code names
         * (none: not known), not the part's bytes per parameter (AdamW's 7.04 B of its 8 at a
         * Llama 400M's OOM) */
        out->optim = named;
        out->state_cut = 1;
        snprintf(out->optim_where, sizeof out->optim_where,
                 "%s%s%.2f B of state per trainable parameter made when the out-of-memory error "
                 "stopped the first optimizer step (%llu B over %llu gradient elements), the "
                 "rest not made",
                 out->optim_class, out->optim_class[0] ? " on the Python stacks; " : "",
                 (double)in->optim_peak / (double)out->trainable,
                 (unsigned long long)in->optim_peak, (unsigned long long)out->trainable);
        return;
    }
    out->optim_own = 0;
    if (recognize_optim_passes(in, out, named)) /* (trainable.c) */
        return;
    if (in->has_cat_peaks && (in->iterations > 0 || out->optim_ctor) && out->trainable > 0) {
        out->optim_bpp = (double)in->optim_peak / (double)out->trainable;
        out->optim =
            in->passes_shared /* (over one pass's count: 9.96 B of AdamW's 8) */
                ? (named == OPT_OTHER ? OPT_UNKNOWN : named)
                : optim_by_state(out->optim_bpp * 4.0 / e, named, kernel_family(out->family));
        /* (the own optimizer class's weight copies: SAM's old_p beside SGD's momentum) */
        out->optim_own = in->optim_own < in->optim_peak ? in->optim_own : 0;
        if (out->optim_own && out->optim != OPT_NONE)
            out->optim = OPT_OTHER;
        snprintf(out->optim_where, sizeof out->optim_where,
                 "%s%.2f B of state per trainable parameter: %llu B of optimizer state over %llu "
                 "gradient elements%s%s%s",
                 in->passes_shared ? "at most " : "", out->optim_bpp,
                 (unsigned long long)in->optim_peak, (unsigned long long)out->trainable,
                 out->optim_class[0] ? " (" : "", out->optim_class,
                 !out->optim_class[0] ? ""
                 : named == OPT_OTHER ? " on the Python stacks: their states together)"
                                      : " on the Python stacks)");
        optim_ctor_said(in, out);      /* (made at its construction, before any step) */
        optim_layout_said(in, out, e); /* (optim_state.c: 8-bit pairs, or 2 B not told) */
        if (named == OPT_MOMENTUM && out->optim == OPT_NONE)
            snprintf(out->optim_class, sizeof out->optim_class, "SGD without momentum");
        /* no state measured where no Python frame was recorded: the step's allocations are not
         * told from the forward's (a fused AdamW's 949 MiB were counted as activations), so the
         * measurement says nothing of the optimizer */
        const tables_config *cf = tables_config_get(in->t);
        if (out->optim == OPT_NONE && tables_no_python(in->t)) {
            out->optim = OPT_UNKNOWN;
            out->optim_bpp = -1;
            out->optim_unmeasured = "no Python frames were recorded to tell its steps";
            snprintf(out->optim_where, sizeof out->optim_where,
                     "no Python frames were recorded (stacks: %s): an optimizer step's "
                     "allocations are not told from the others, so its state (none counted) "
                     "is not measured",
                     cf->stack_mode & VT_STACKS_NATIVE ? "native" : "none");
            return;
        }
        /* no state and none of an optimizer's code on any stack: a GradScaler may have skipped
         * every step (its fp16 gradients held inf / NaN), so the optimizer never ran */
        if (out->optim == OPT_NONE && named == OPT_UNKNOWN && in->grad_scaler &&
            !tables_code_find(in->t, "/optim/", NULL, NULL, NULL, 0) &&
            !tables_code_find(in->t, "/optim.py", NULL, NULL, NULL, 0)) {
            out->optim = OPT_UNKNOWN;
            out->steps_maybe_skipped = 1;
            snprintf(out->optim_where, sizeof out->optim_where,
                     "no state was made and nothing was allocated under an optimizer's code, "
                     "with a GradScaler on: an optimizer without state (plain SGD), or steps the "
                     "GradScaler skipped (fp16 gradients with inf / NaN, as first steps often "
                     "have)");
        }
        return;
    }
    if (named != OPT_UNKNOWN) {
        out->optim = named == OPT_OTHER ? OPT_UNKNOWN : named; /* (several: which, not known) */
        snprintf(out->optim_where, sizeof out->optim_where, "%s on the Python stacks (%s)",
                 out->optim_class,
                 !in->tensor_mode ? "segment mode does not measure its state"
                 : in->iterations == 0
                     ? "no optimizer step completed: its state is not measured"
                     : "no gradients were measured to count the trainable parameters: its state "
                       "per parameter is not known");
        return;
    }
    snprintf(out->optim_where, sizeof out->optim_where, "%s",
             in->iterations == 0 && optim_steps_unseen(out)
                 ? "no optimizer step seen before the trace ended, and " OPTIM_UNSEEN_WHY
             : in->iterations == 0 ? "no optimizer step ran before the trace ended"
             : !in->tensor_mode    ? "segment mode does not measure optimizer state"
                                   : "no gradients were measured");
}

/* X(value of --optimizer / --optim, case ignored, the kind) — optimizers a command line names
 * (Lion: one momentum, whatever code makes it: lion-pytorch's, bitsandbytes' 32-bit, a program's)
 */
#define VT_OPTIM_FLAGS(X)                                                                          \
    X("adamw", ADAM)                                                                               \
    X("adam", ADAM)                                                                                \
    X("adamw_torch", ADAM)                                                                         \
    X("adamw_torch_fused", ADAM)                                                                   \
    X("adafactor", FACTORED)                                                                       \
    X("adamw_8bit", EIGHT_BIT)                                                                     \
    X("adamw8bit", EIGHT_BIT)                                                                      \
    X("adamw_bnb_8bit", EIGHT_BIT)                                                                 \
    X("paged_adamw_8bit", EIGHT_BIT)                                                               \
    X("rmsprop", ONE_STATE)                                                                        \
    X("adagrad", ONE_STATE)                                                                        \
    X("lion", ONE_STATE)                                                                           \
    X("lion_32bit", ONE_STATE)                                                                     \
    X("paged_lion_32bit", ONE_STATE)                                                               \
    X("sgd", SGD)

/* an optimizer's name (a flag's value, a class) and its kind */
typedef struct optim_name {
    const char *name;
    optim_kind kind;
} optim_name;

/* flag_kind: the kind an --optimizer / --optim value names (VT_OPTIM_FLAGS), OPT_UNKNOWN if none */
static optim_kind flag_kind(const char *v)
{
    static const optim_name names[] = {
#define VT_OPTIM_FLAG_ROW(n, k) {n, OPT_##k},
        VT_OPTIM_FLAGS(VT_OPTIM_FLAG_ROW)
#undef VT_OPTIM_FLAG_ROW
    };
    for (size_t j = 0; j < sizeof names / sizeof names[0]; j++)
        if (!strcasecmp(v, names[j].name))
            return names[j].kind;
    return OPT_UNKNOWN;
}

/* optim_flag: a is the command line's --optimizer / --optim (not --optim_args, --optimizer-lr);
 * its value (after '=', else NULL) in *v */
static int optim_flag(const char *a, const char **v)
{
    char key[32];
    *v = config_arg_key(a, key, sizeof key);
    return !strncmp(a, "--", 2) && (!strcmp(key, "optimizer") || !strcmp(key, "optim"));
}

/* optim_args_given: the command line gives --optim_args (the Trainer's SGD then may keep a
 * momentum, in some versions) */
static int optim_args_given(int argc, const char *const *argv)
{
    char key[32];
    for (int i = 1; i < argc; i++) {
        if (strncmp(argv[i], "--", 2))
            continue;
        config_arg_key(argv[i], key, sizeof key);
        if (!strcmp(key, "optim_args"))
            return 1;
    }
    return 0;
}

void recognize_optim_cmdline(int argc, const char *const *argv, run_recognition *r)
{
    if (r->optim != OPT_UNKNOWN || r->optim_bpp >= 0 || !argv)
        return;
    /* the Hugging Face Trainer's --optim sgd (its TrainingArguments on the command line): the
     * Trainer makes torch.optim.SGD with the learning rate alone, no state, as for the same value
     * in the script (optim_trainargs) */
    int trainer = !strcmp(r->loop, "hf_trainer") && !optim_args_given(argc, argv);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v;
        if (!optim_flag(a, &v))
            continue;
        if (!v && !(v = i + 1 < argc ? argv[i + 1] : NULL))
            continue;
        optim_kind k = flag_kind(v);
        if (k == OPT_UNKNOWN)
            continue;
        int plain = k == OPT_SGD && trainer;
        r->optim = plain ? OPT_NONE : k;
        snprintf(r->optim_where, sizeof r->optim_where, "%.60s%s%.40s on the command line (%s%s%s)",
                 a, strchr(a, '=') ? "" : " ", strchr(a, '=') ? "" : v,
                 plain ? "the Trainer makes torch.optim.SGD with the learning rate alone: no "
                         "momentum, no state; "
                       : "",
                 r->optim_forwards_only ? OPTIM_FORWARDS_ONLY : unmeasured(r),
                 r->optim_forwards_only ? "" : ": its state not measured");
        return;
    }
}

/* optim_trainargs: the optimizer a Hugging Face Trainer script's own training arguments name
 * (TrainingArguments(optim="adamw_torch_fused"), a string literal every such call agrees on and
 * the script assigns nowhere else), f its recorded source (base: its name). optim="sgd" with no
 * optim_args is no state: the Trainer makes torch.optim.SGD with the learning rate alone, no
 * momentum (its run out of memory before its first step had AdamW's 8 B per parameter assumed:
 * 2.64 GiB for GPT-2 medium); with optim_args (a momentum there, in some versions) not taken */
static void optim_trainargs(const config_recfile *f, const char *base, run_recognition *r)
{
    targs_call *calls = malloc(TARGS_CALLS_MAX * sizeof *calls);
    int n = calls ? trainargs_parse(f->data, f->len, calls, TARGS_CALLS_MAX) : 0;
    const targs_kw *got = NULL;
    const char *callee = "";
    for (int i = 0; i < n; i++) {
        const targs_kw *k = trainargs_find(&calls[i], "optim");
        if (k && (k->too_long || (got && strcmp(got->value, k->value)))) {
            got = NULL; /* (not one value: which call ran is not known) */
            break;
        }
        if (k)
            got = k, callee = calls[i].name;
    }
    size_t len = got ? strlen(got->value) : 0;
    char v[64] = "";
    if (len >= 2 && (got->value[0] == '"' || got->value[0] == '\'') &&
        got->value[len - 1] == got->value[0] && !trainargs_assigned(f->data, f->len, "optim"))
        snprintf(v, sizeof v, "%.*s", (int)len - 2, got->value + 1);
    optim_kind k = v[0] ? flag_kind(v) : OPT_UNKNOWN;
    int plain = 0; /* optim="sgd" in calls that give no optim_args */
    for (int i = 0; k == OPT_SGD && i < n; i++)
        plain = !trainargs_find(&calls[i], "optim_args") && (i == 0 || plain);
    if (k != OPT_UNKNOWN && (k != OPT_SGD || plain)) { /* (SGD: momentum or none is not in a
                                                        * name, but in the Trainer's) */
        r->optim = k == OPT_SGD ? OPT_NONE : k;
        snprintf(r->optim_where, sizeof r->optim_where,
                 "%.60s:%d %.48s(optim=%s) (the script's own%s; %s: its state not measured)", base,
                 got->line, callee, got->value,
                 k == OPT_SGD ? "; the Trainer makes torch.optim.SGD with the learning rate "
                                "alone: no momentum, no state"
                              : "",
                 unmeasured(r));
    }
    free(calls);
}

void recognize_optim_default(const nano_config *c, int argc, const char *const *argv,
                             run_recognition *r)
{
    if (r->optim != OPT_UNKNOWN || r->optim_bpp >= 0 || !argv)
        return;
    for (int i = 1; i < argc; i++) { /* on the command line: that value decides, or nothing */
        const char *v;
        if (optim_flag(argv[i], &v))
            return;
    }
    const config_recfile *f = config_recorded_script(c, argc, argv);
    script_flag *fl = f ? malloc(SCRIPT_FLAGS_MAX * sizeof *fl) : NULL;
    if (!fl)
        return;
    int n = scriptflags_parse(f->data, f->len, fl, SCRIPT_FLAGS_MAX);
    const char *base = strrchr(f->name, '/') ? strrchr(f->name, '/') + 1 : f->name;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < fl[i].nnames; j++) {
            const char *name = fl[i].names[j];
            if (strcmp(name, "--optimizer") && strcmp(name, "--optim"))
                continue;
            optim_kind k = fl[i].sdef[0] ? flag_kind(fl[i].sdef) : OPT_UNKNOWN;
            if (k == OPT_UNKNOWN || k == OPT_SGD) /* SGD: momentum or none is not in a name */
                break;
            r->optim = k;
            snprintf(r->optim_where, sizeof r->optim_where,
                     "%.60s: %s, default=\"%s\" (its argparse; not on the command line; %s: its "
                     "state not measured)",
                     base, name, fl[i].sdef, unmeasured(r));
            free(fl);
            return;
        }
    free(fl);
    optim_trainargs(f, base, r);
}

/* X(class name, the kind) — optimizer classes a script constructs: Name( after no identifier
 * character (torch.optim.SGD(, optim.AdamW(, bnb.optim.AdamW8bit(, SGD( after an import) */
#define VT_OPTIM_CALLS(X)                                                                          \
    X("AdamW", ADAM)                                                                               \
    X("Adam", ADAM)                                                                                \
    X("SGD", SGD)                                                                                  \
    X("Adafactor", FACTORED)                                                                       \
    X("AdamW8bit", EIGHT_BIT)                                                                      \
    X("Adam8bit", EIGHT_BIT)                                                                       \
    X("PagedAdamW8bit", EIGHT_BIT)                                                                 \
    X("RMSprop", ONE_STATE)                                                                        \
    X("Adagrad", ONE_STATE)

/* call_at: the kind of an optimizer class constructed at s[i] (its name, then '(' ; not the end
 * of a longer identifier), with its name's length in *n; OPT_UNKNOWN when none */
static optim_kind call_at(const char *s, size_t len, size_t i, size_t *n)
{
    static const optim_name calls[] = {
#define VT_OPTIM_CALL_ROW(nm, k) {nm, OPT_##k},
        VT_OPTIM_CALLS(VT_OPTIM_CALL_ROW)
#undef VT_OPTIM_CALL_ROW
    };
    if (i > 0 && (s[i - 1] == '_' || (s[i - 1] >= '0' && s[i - 1] <= '9') ||
                  ((s[i - 1] | 32) >= 'a' && (s[i - 1] | 32) <= 'z')))
        return OPT_UNKNOWN;
    for (size_t k = 0; k < sizeof calls / sizeof calls[0]; k++) {
        if (s[i] != calls[k].name[0]) /* (most of a script's bytes begin no name: one test) */
            continue;
        size_t m = strlen(calls[k].name);
        if (i + m < len && !memcmp(s + i, calls[k].name, m) && s[i + m] == '(') {
            *n = m;
            return calls[k].kind;
        }
    }
    return OPT_UNKNOWN;
}

void recognize_optim_script(const config_files *fs, const tables *t, run_recognition *r)
{
    /* steps that made no state, maybe all skipped by a GradScaler: the kinds only (its row, the
     * none measured, kept) */
    int skipped = r->steps_maybe_skipped;
    optim_own_wraps(fs, t, r); /* (SAM over SGD: what SAM keeps itself is not the state measured) */
    /* steps measured to make no state on the device, no SGD's code named: the script's kinds */
    int none = r->optim == OPT_NONE && r->optim_bpp >= 0 && !strstr(r->optim_class, "SGD");
    if (!fs || (!none && (r->optim != OPT_UNKNOWN || (r->optim_bpp >= 0 && !skipped))))
        return;
    optim_kind kind = OPT_UNKNOWN;
    char where[200] = "";
    int calls = 0, bare = 0; /* constructions of the first kind seen; SGD's of them bare */
    int mom[3] = {0};   /* SGD calls whose momentum is not known, off, on (optim_sgd_momentum) */
    char said[80] = ""; /* what the first SGD call says of it */
    unsigned kinds = 0; /* every kind seen (1u << optim_kind) */
    unsigned own = 0;   /* the script's own classes constructed (1u << its index) */
    struct {
        const char *name, *file;
        int len;
        size_t line;
    } first[OPT_COUNT]; /* each kind's first construction, in the order seen */
    int nfirst = 0, ownfile = -1;
    char ownname[48] = ""; /* (the first construction's, a class of the script's own) */
    for (int f = 0; f < fs->n; f++) {
        const config_recfile *cf = &fs->f[f];
        if (cf->kind != VT_FILE_ARG || cf->flags || !cf->data)
            continue;
        /* a comment or a string is no call (a docstring's "torch.optim.AdamW(params)" of a
         * script that makes SGD had been a second kind): its calls found in its code alone
         * (pysrc.h), an SGD call's arguments read from the source itself */
        const char *s = cf->data;
        char *c = pysrc_clean(s, cf->len);
        if (!c)
            return; /* (out of memory: no kind said) */
        size_t n = 0;
        char owns[8][48]; /* (its own optimizer classes: their names say nothing of a state) */
        int nown = optim_own_classes(s, cf->len, owns, 8);
        for (size_t i = 0; i < cf->len; i++) {
            int o = optim_own_at(c, cf->len, i, owns, nown, &n);
            optim_kind k = o >= 0 ? OPT_OTHER : call_at(c, cf->len, i, &n);
            if (k == OPT_UNKNOWN || (o < 0 && optim_defined_at(c, i)))
                continue; /* (class AdamW8bit(Optimizer): no construction) */
            size_t line = pysrc_line_at(c, i);
            if ((!(kinds & 1u << k) || (o >= 0 && !(own & 1u << o))) && nfirst < OPT_COUNT) {
                first[nfirst].name = s + i, first[nfirst].len = (int)n;
                first[nfirst].file = cf->name ? cf->name : "the script";
                first[nfirst++].line = line;
            }
            kinds |= 1u << k;
            own |= o >= 0 ? 1u << o : 0;
            if (k == OPT_SGD) {
                char s1[80];
                mom[optim_sgd_momentum(s, cf->len, i + n, s1, sizeof s1) + 1]++;
                if (!said[0])
                    snprintf(said, sizeof said, "%s", s1);
            }
            if (kind == OPT_UNKNOWN) {
                snprintf(where, sizeof where, "%.*s( in %.80s:%zu%s", (int)n, s + i,
                         cf->name ? cf->name : "the script", line,
                         o >= 0 ? " (a class of the script's own)" : "");
                kind = k;
                if (o >= 0)
                    snprintf(ownname, sizeof ownname, "%s", owns[o]), ownfile = f;
            }
            calls += k == kind;
            bare += k == kind && k == OPT_SGD && optim_sgd_bare(s, cf->len, i + n);
            i += n;
        }
        free(c);
    }
    if (none) {
        optim_none_elsewhere(r, kinds, where); /* (optim_own.c) */
        return;
    }
    if (kind == OPT_UNKNOWN)
        return;
    /* several kinds, or several classes of the script's own: which one ran is not in the source */
    if (kinds != 1u << kind || (own & (own - 1)) || skipped) {
        /* "SGD( line 47, AdamW( line 49 of train.py", a file named at each kind when they
         * differ */
        int one_file = 1;
        for (int i = 1; i < nfirst; i++)
            one_file &= !strcmp(first[i].file, first[0].file);
        char *choices = r->optim_choices;
        size_t cap = sizeof r->optim_choices, at = 0;
        for (int i = 0; i < nfirst && at < cap; i++) {
            int w = one_file
                        ? snprintf(choices + at, cap - at, "%s%.*s( line %zu", i ? ", " : "",
                                   first[i].len, first[i].name, first[i].line)
                        : snprintf(choices + at, cap - at, "%s%.*s( at %.60s:%zu", i ? ", " : "",
                                   first[i].len, first[i].name, first[i].file, first[i].line);
            at = w < 0 ? cap : at + (size_t)w;
        }
        if (one_file && at < cap)
            snprintf(choices + at, cap - at, " of %.80s", first[0].file);
        r->optim_kinds = kinds;
        if (!skipped)
            snprintf(r->optim_where, sizeof r->optim_where,
                     "%s, and the script constructs several kinds (%.200s)",
                     r->optim_unmeasured     ? r->optim_unmeasured
                     : optim_steps_unseen(r) ? "no optimizer step seen, and " OPTIM_UNSEEN_WHY
                                             : "no optimizer step ran",
                     r->optim_choices);
        return;
    }
    if (kind == OPT_OTHER && calls == 1 && r->optim_bpp < 0 &&
        optim_host_said(fs, ownfile, ownname, where, unmeasured(r), r))
        return; /* (its own class, its state made on the host by its code: optim_host.c) */
    r->optim = kind;
    /* SGD: its momentum as the calls give it, every one alike (none: no state; SGD(params,
     * lr=0.1) had been counted a momentum buffer of 4 B per trainable parameter) */
    if (kind == OPT_SGD && !mom[0] && (!mom[1] || !mom[2])) {
        r->optim = mom[2] ? OPT_MOMENTUM : OPT_NONE;
        size_t at = strlen(where);
        snprintf(where + at, sizeof where - at, " (%s%s)", said,
                 calls > 1 ? ", and alike at each of its SGD calls" : "");
        if (r->optim == OPT_NONE)
            snprintf(r->optim_class, sizeof r->optim_class, "SGD without momentum"),
                snprintf(r->optim_source, sizeof r->optim_source, "%s", where);
    }
    r->sgd_bare = r->optim == OPT_NONE && bare == calls;
    if (r->optim == OPT_NONE) /* (known from the source: none to measure) */
        snprintf(r->optim_where, sizeof r->optim_where, "%s, %s: no momentum buffer, no state (%s)",
                 where, calls == 1 ? "the script's only optimizer" : "all the script's optimizers",
                 unmeasured(r));
    else if (calls == 1)
        snprintf(r->optim_where, sizeof r->optim_where,
                 "%s, the script's only optimizer (%s: its state not measured)", where,
                 unmeasured(r));
    else
        snprintf(r->optim_where, sizeof r->optim_where,
                 "%s, the first of the script's %d optimizers, all of this kind (%s: their state "
                 "not measured)",
                 where, calls, unmeasured(r));
}
