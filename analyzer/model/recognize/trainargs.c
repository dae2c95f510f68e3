/* trainargs.c — a Trainer script's own training arguments (trainargs.h): a scan of its recorded
 * source for TrainingArguments(...) calls and the like, strings and comments followed so that
 * neither ends a call nor starts one, and what their literal keywords add to the
 * configuration. */
#include "trainargs.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scriptflags.h"

/* lines: a line counter over src, moved forward (or restarted) to the position asked. */
typedef struct lines {
    const char *s;
    size_t pos;
    int line;
} lines;

static int line_at(lines *l, size_t pos)
{
    if (pos < l->pos) {
        l->pos = 0;
        l->line = 1;
    }
    for (; l->pos < pos; l->pos++)
        l->line += l->s[l->pos] == '\n';
    return l->line;
}

static int ident_start(char c)
{
    return isalpha((unsigned char)c) || c == '_';
}

static int ident_char(char c)
{
    return isalnum((unsigned char)c) || c == '_';
}

static int ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && !strcmp(s + a - b, suffix);
}

/* the kinds of callee, by the last part of its dotted name */
enum { CALLEE_OTHER, CALLEE_ARGS, CALLEE_CONFIG };

static int callee_kind(const char *name)
{
    const char *last = strrchr(name, '.') ? strrchr(name, '.') + 1 : name;
    if (ends_with(last, "TrainingArguments"))
        return CALLEE_ARGS;
    return ends_with(last, "Config") ? CALLEE_CONFIG : CALLEE_OTHER;
}

/* skip_blank: past white space and comments (inside brackets a line break is a blank). */
static size_t skip_blank(const char *s, size_t i, size_t b)
{
    while (i < b) {
        if (isspace((unsigned char)s[i]))
            i++;
        else if (s[i] == '#')
            i = scriptflags_skip_noncode(s, i, b);
        else if (s[i] == '\\' && i + 1 < b && (s[i + 1] == '\n' || s[i + 1] == '\r'))
            i++; /* a line continuation */
        else
            break;
    }
    return i;
}

/* value_text: s[a..b) with comments dropped and line breaks, continuations and tabs as blanks
 * (a run of them as one), strings as written, trimmed, into out; 0 when it does not fit. */
static int value_text(const char *s, size_t a, size_t b, char *out, size_t cap)
{
    size_t n = 0;
    a = skip_blank(s, a, b);
    for (size_t i = a; i < b;) {
        size_t past = scriptflags_skip_noncode(s, i, b);
        if (past != i && s[i] == '#') {
            i = past;
            continue;
        }
        int str = past != i; /* a string is copied as written */
        size_t end = str ? past : i + 1;
        for (; i < end; i++) {
            if (n + 1 >= cap)
                return 0;
            char c = s[i];
            if (!str && (isspace((unsigned char)c) || c == '\\')) {
                if (n > 0 && out[n - 1] == ' ')
                    continue; /* a run of blanks: one */
                c = ' ';
            }
            out[n++] = c;
        }
    }
    while (n > 0 && out[n - 1] == ' ')
        n--;
    out[n] = '\0';
    return 1;
}

/* positional: one positional argument s[a..b) of a call, counted (its text kept for the first
 * TARGS_POS_MAX), or an unpacking (*args, **kwargs) */
static void positional(const char *s, size_t a, size_t b, targs_call *call)
{
    if (s[a] == '*') {
        call->starred = 1;
        return;
    }
    if (call->npos < TARGS_POS_MAX && !value_text(s, a, b, call->pos[call->npos], 64))
        call->pos[call->npos][0] = '\0';
    call->npos++;
}

/* keyword: one argument s[a..b) of a call: kept when it is `name=value`, else counted as a
 * positional one (nothing: a trailing comma). */
static void keyword(const char *s, size_t a, size_t b, targs_call *call, lines *ln)
{
    a = skip_blank(s, a, b);
    size_t k = a;
    if (k >= b)
        return;
    if (!ident_start(s[k])) {
        positional(s, a, b, call);
        return;
    }
    while (k < b && ident_char(s[k]))
        k++;
    size_t e = skip_blank(s, k, b);
    if (e >= b || s[e] != '=' || (e + 1 < b && s[e + 1] == '=')) {
        positional(s, a, b, call);
        return;
    }
    if (call->nkw >= TARGS_KW_MAX || k - a >= sizeof call->kw[0].name)
        return;
    targs_kw *kw = &call->kw[call->nkw++];
    memcpy(kw->name, s + a, k - a);
    kw->name[k - a] = '\0';
    kw->line = line_at(ln, a);
    if (!value_text(s, e + 1, b, kw->value, sizeof kw->value)) {
        kw->value[0] = '\0';
        kw->too_long = 1;
    }
}

/* args: the keywords of the call opened at s[i - 1] == '(' into call; the index after its ')',
 * *closed = 0 when it does not close before len. */
static size_t args(const char *s, size_t i, size_t len, targs_call *call, lines *ln, int *closed)
{
    int depth = 0;
    size_t start = i;
    *closed = 0;
    while (i < len) {
        size_t past = scriptflags_skip_noncode(s, i, len);
        if (past != i) {
            i = past;
            continue;
        }
        char c = s[i];
        if (c == '(' || c == '[' || c == '{')
            depth++;
        else if ((c == ')' || c == ']' || c == '}') && depth > 0)
            depth--;
        else if (c == ')' || (c == ',' && depth == 0)) {
            keyword(s, start, i, call, ln);
            start = i + 1;
            if (c == ')') {
                *closed = 1;
                return i + 1;
            }
        }
        i++;
    }
    return len;
}

int trainargs_call(const char *src, size_t len, size_t open, targs_call *call)
{
    lines ln = {src, 0, 1};
    int closed = 0;
    memset(call, 0, sizeof *call);
    if (src && open < len && src[open] == '(')
        args(src, open + 1, len, call, &ln, &closed);
    return closed;
}

const targs_kw *trainargs_find(const targs_call *call, const char *name)
{
    for (int i = 0; i < call->nkw; i++)
        if (!strcmp(call->kw[i].name, name))
            return &call->kw[i];
    return NULL;
}

int trainargs_parse(const char *src, size_t len, targs_call *out, int max)
{
    lines ln = {src, 0, 1};
    int n = 0, after_def = 0; /* after_def: the last word was `class` or `def` */
    for (size_t i = 0; src && i < len && n < max;) {
        size_t past = scriptflags_skip_noncode(src, i, len);
        if (past != i) {
            i = past;
            after_def = 0;
            continue;
        }
        if (!ident_start(src[i])) {
            if (!isspace((unsigned char)src[i]))
                after_def = 0;
            i++;
            continue;
        }
        size_t j = i; /* a dotted name: transformers.TrainingArguments */
        for (;;) {
            while (j < len && ident_char(src[j]))
                j++;
            if (j + 1 < len && src[j] == '.' && ident_start(src[j + 1]))
                j++;
            else
                break;
        }
        size_t k = j;
        while (k < len && (src[k] == ' ' || src[k] == '\t'))
            k++;
        char name[sizeof out->name];
        int fits = j - i < sizeof name;
        if (fits) {
            memcpy(name, src + i, j - i);
            name[j - i] = '\0';
        }
        int kind = fits ? callee_kind(name) : CALLEE_OTHER;
        if (k < len && src[k] == '(' && kind != CALLEE_OTHER && !after_def) {
            targs_call *c = &out[n];
            memset(c, 0, sizeof *c);
            memcpy(c->name, name, strlen(name) + 1);
            c->line = line_at(&ln, i);
            int closed;
            i = args(src, k + 1, len, c, &ln, &closed);
            /* a *Config is training arguments when it sets the micro-batch or accumulation */
            n += closed &&
                 (kind == CALLEE_ARGS || trainargs_find(c, "per_device_train_batch_size") ||
                  trainargs_find(c, "gradient_accumulation_steps"));
            after_def = 0;
            continue;
        }
        after_def = fits && (!strcmp(name, "class") || !strcmp(name, "def"));
        i = j;
    }
    return n;
}

/* assignment: s[k] starts `=` or an augmented assignment (+= //= >>= ...), not `==`, `<=`. */
static int assignment(const char *s, size_t k, size_t len)
{
    if (k < len && s[k] == '=')
        return k + 1 >= len || s[k + 1] != '=';
    if (k + 1 >= len || !s[k])
        return 0;
    if (strchr("+-*/%@&|^", s[k]) && s[k + 1] == '=')
        return 1;
    return k + 2 < len && s[k + 2] == '=' && s[k] == s[k + 1] && strchr("/*<>", s[k]);
}

int trainargs_assigned(const char *src, size_t len, const char *name)
{
    size_t nl = strlen(name);
    lines ln = {src, 0, 1};
    for (size_t i = 0; src && nl && i < len;) {
        size_t past = scriptflags_skip_noncode(src, i, len);
        if (past != i) {
            i = past;
            continue;
        }
        if (src[i] != '.' || len - i - 1 < nl || memcmp(src + i + 1, name, nl) != 0 ||
            (i + 1 + nl < len && ident_char(src[i + 1 + nl]))) {
            i++;
            continue;
        }
        size_t k = i + 1 + nl;
        while (k < len && (src[k] == ' ' || src[k] == '\t'))
            k++;
        if (assignment(src, k, len))
            return line_at(&ln, i);
        i = k;
    }
    return 0;
}

/* ---- into the configuration ------------------------------------------------------------- */

static int same_value(pyval a, pyval b)
{
    if (a.k != b.k)
        return 0;
    if (a.k == PYV_FLOAT)
        return a.f == b.f;
    if (a.k == PYV_STR)
        return !strcmp(a.s, b.s);
    return a.i == b.i;
}

/* the script, as notes and sources name it */
typedef struct script {
    const char *base; /* its file name */
    const char *src;
    size_t len;
    const targs_call *calls;
    int n;
} script;

/* one_value: the single literal value the script's calls give keyword kw: 1 with *v, *at (the
 * call whose keyword is said) and *agree (how many calls give it); 0 when none does; -1 after a
 * note when a value is not a literal, the calls disagree or the script assigns it again. */
static int one_value(nano_config *c, const script *sc, const char *kw, pyval *v, int *at,
                     int *agree)
{
    char msg[300];
    int found = 0;
    for (int i = 0; i < sc->n; i++) {
        const targs_kw *k = trainargs_find(&sc->calls[i], kw);
        if (!k)
            continue;
        pyval x =
            k->too_long ? (pyval){PYV_ERR, 0, 0, "", NULL} : pyexpr_eval(k->value, NULL, NULL);
        if (x.k == PYV_ERR || x.k == PYV_NONE) {
            snprintf(msg, sizeof msg, "%.60s:%d %.48s(%s=%.40s%s): not a literal, not read%s%s",
                     sc->base, k->line, sc->calls[i].name, kw, k->too_long ? "..." : k->value,
                     strlen(k->value) > 40 ? "..." : "", x.why ? ": " : "", x.why ? x.why : "");
            config_note(c, msg);
            return -1;
        }
        if (found && !same_value(x, *v)) {
            const targs_kw *f = trainargs_find(&sc->calls[*at], kw);
            snprintf(msg, sizeof msg,
                     "%.60s: %s is %.20s at line %d and %.20s at line %d: which call ran is not "
                     "known (not read)",
                     sc->base, kw, f->value, f->line, k->value, k->line);
            config_note(c, msg);
            return -1;
        }
        if (!found)
            *v = x, *at = i, *agree = 0;
        found = 1;
        ++*agree;
    }
    int line = found ? trainargs_assigned(sc->src, sc->len, kw) : 0;
    if (line) {
        snprintf(msg, sizeof msg,
                 "%.60s:%d assigns .%s: the value %.48s(%s=...) gives may not be the run's "
                 "(not read)",
                 sc->base, line, kw, sc->calls[*at].name, kw);
        config_note(c, msg);
        return -1;
    }
    return found;
}

/* where: "train.py:12 TrainingArguments(bf16=True) (the script's own)" */
static void where_of(const script *sc, int at, const char *kw, int agree, char *out, size_t len)
{
    const targs_call *call = &sc->calls[at];
    const targs_kw *k = trainargs_find(call, kw);
    char calls[48] = "";
    if (agree > 1)
        snprintf(calls, sizeof calls, "; its %d calls agree", agree);
    snprintf(out, len, "%.60s:%d %.48s(%s=%.63s) (the script's own%s)", sc->base, k->line,
             call->name, kw, k->value, calls);
}

/* the integer keys a keyword sets */
static const struct {
    const char *kw;
    config_key key;
} int_keys[] = {{"per_device_train_batch_size", CFG_batch_size},
                {"gradient_accumulation_steps", CFG_gradient_accumulation_steps}};

static int given_to_program(const config_value *v)
{
    return v->src == CONFIG_SRC_ARG || v->src == CONFIG_SRC_FLAG; /* the command line wins */
}

/* apply_precision: bf16=True / fp16=True: the dtype, when no argument gave it. */
static void apply_precision(nano_config *c, const script *sc)
{
    if (given_to_program(&c->v[CFG_dtype]))
        return;
    pyval b, f;
    int ab = 0, af = 0, nb = 0, nf = 0;
    int rb = one_value(c, sc, "bf16", &b, &ab, &nb), rf = one_value(c, sc, "fp16", &f, &af, &nf);
    int on_b = rb == 1 && b.k == PYV_BOOL && b.i, on_f = rf == 1 && f.k == PYV_BOOL && f.i;
    if (rb < 0 || rf < 0 || on_b == on_f) {
        if (on_b && on_f)
            config_note(c, "the script's training arguments set both bf16=True and fp16=True "
                           "(the Trainer refuses that): its precision is not read");
        return;
    }
    pyval s = {PYV_STR, 0, 0, "", NULL};
    snprintf(s.s, sizeof s.s, "%s", on_b ? "bfloat16" : "float16");
    char where[256], err[300];
    where_of(sc, on_b ? ab : af, on_b ? "bf16" : "fp16", on_b ? nb : nf, where, sizeof where);
    if (config_set_value(c, CFG_dtype, s, s.s, CONFIG_SRC_FILE, where, err, sizeof err) != 0)
        config_note(c, err);
}

static void apply_calls(nano_config *c, const script *sc)
{
    snprintf(c->targs_call, sizeof c->targs_call, "%s", sc->calls[0].name);
    for (size_t i = 0; i < sizeof int_keys / sizeof int_keys[0]; i++) {
        pyval v;
        int at = 0, agree = 0;
        config_value *cv = &c->v[int_keys[i].key];
        if (given_to_program(cv))
            continue; /* the command line wins: the script's calls are not read for it */
        if (one_value(c, sc, int_keys[i].kw, &v, &at, &agree) != 1)
            continue;
        char where[256], err[300], msg[400];
        const targs_kw *k = trainargs_find(&sc->calls[at], int_keys[i].kw);
        where_of(sc, at, int_keys[i].kw, agree, where, sizeof where);
        if (config_set_value(c, int_keys[i].key, v, k->value, CONFIG_SRC_FILE, where, err,
                             sizeof err) != 0) {
            snprintf(msg, sizeof msg, "%s (not read)", err);
            config_note(c, msg);
            continue;
        }
        snprintf(cv->flag, sizeof cv->flag, "%s", int_keys[i].kw);
        cv->flag_sep = '(';
        snprintf(cv->call, sizeof cv->call, "%s", sc->calls[at].name);
    }
    apply_precision(c, sc);
}

void config_apply_trainer_args(nano_config *c, int argc, const char *const *argv)
{
    const config_recfile *f = config_recorded_script(c, argc, argv);
    if (!f)
        return;
    targs_call *calls = malloc(TARGS_CALLS_MAX * sizeof *calls);
    if (!calls)
        return; /* out of memory: the command line and the trace say what they can */
    script sc = {strrchr(f->name, '/') ? strrchr(f->name, '/') + 1 : f->name, f->data, f->len,
                 calls, 0};
    sc.n = trainargs_parse(f->data, f->len, calls, TARGS_CALLS_MAX);
    if (sc.n > 0)
        apply_calls(c, &sc);
    free(calls);
}
