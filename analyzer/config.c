/* config.c — nanoGPT configuration from a command line (config.h): train.py defaults, config
 * files (`key = expr` lines, evaluated by a small Python-expression subset) and --key=value
 * overrides, in order, with the source of every value kept for the report. */
#include "config.h"

#include <cjson/cJSON.h>

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct key_info {
    const char *name;
    config_type type;
    const char *def;
} key_info;

static const key_info keys[] = {
#define VT_CFG_INFO(k, t, d, doc) {#k, t, d},
    VT_CONFIG_KEYS(VT_CFG_INFO)
#undef VT_CFG_INFO
};

/* nanoGPT train.py / sample.py keys the memory model does not need: accepted, ignored. */
static const char *const tolerated[] = {
    "out_dir", "eval_interval", "log_interval", "eval_iters", "eval_only",
    "always_save_checkpoint", "init_from", "wandb_log", "wandb_project", "wandb_run_name",
    "dataset", "learning_rate", "max_iters", "weight_decay", "beta1", "beta2", "grad_clip",
    "decay_lr", "warmup_iters", "lr_decay_iters", "min_lr", "backend", "device", "seed",
    "start", "num_samples", "max_new_tokens", "temperature", "top_k",
    /* examples/gpt/train.py and examples/sim/sim_train.py */
    "compile_mode", "num_workers", "allocator", NULL};

/* ---- a tiny Python expression evaluator -------------------------------------------- */

typedef enum { PV_ERR, PV_INT, PV_FLOAT, PV_BOOL, PV_STR, PV_NONE } pv_kind;
typedef struct pyval {
    pv_kind k;
    long long i;
    double f;
    char s[64];
} pyval;

typedef struct parser {
    const char *p;
    const nano_config *c; /* earlier keys may be referenced by name */
} parser;

static pyval pv_err(void)
{
    pyval v = {PV_ERR, 0, 0, ""};
    return v;
}

static void skip_ws(parser *ps)
{
    while (*ps->p == ' ' || *ps->p == '\t')
        ps->p++;
}

static double pv_num(pyval v)
{
    return v.k == PV_FLOAT ? v.f : (double)v.i;
}

static int pv_numeric(pyval v)
{
    return v.k == PV_INT || v.k == PV_FLOAT || v.k == PV_BOOL;
}

static pyval parse_expr(parser *ps);

/* parse_atom: number, string, True/False/None, a known key's value, or (expr). */
static pyval parse_atom(parser *ps)
{
    skip_ws(ps);
    const char *p = ps->p;
    pyval v = pv_err();
    if (*p == '(') {
        ps->p++;
        v = parse_expr(ps);
        skip_ws(ps);
        if (*ps->p != ')')
            return pv_err();
        ps->p++;
        return v;
    }
    if (*p == '\'' || *p == '"') {
        char q = *p++;
        size_t n = 0;
        while (*p && *p != q) {
            if (n + 1 >= sizeof v.s)
                return pv_err();
            v.s[n++] = *p++;
        }
        if (*p != q)
            return pv_err();
        v.s[n] = '\0';
        v.k = PV_STR;
        ps->p = p + 1;
        return v;
    }
    if (isdigit((unsigned char)*p) || (*p == '.' && isdigit((unsigned char)p[1]))) {
        char num[64];
        size_t n = 0;
        int isfloat = 0;
        while (isalnum((unsigned char)*p) || *p == '.' || *p == '_' ||
               ((*p == '-' || *p == '+') && n > 0 && (num[n - 1] == 'e' || num[n - 1] == 'E'))) {
            if (*p == '.' || *p == 'e' || *p == 'E')
                isfloat = 1;
            if (*p != '_') {
                if (n + 1 >= sizeof num)
                    return pv_err();
                num[n++] = *p;
            }
            p++;
        }
        num[n] = '\0';
        char *end = NULL;
        errno = 0;
        if (isfloat) {
            v.f = strtod(num, &end);
            v.k = PV_FLOAT;
        } else {
            v.i = strtoll(num, &end, 10);
            v.k = PV_INT;
        }
        if (errno || !end || *end)
            return pv_err();
        ps->p = p;
        return v;
    }
    if (isalpha((unsigned char)*p) || *p == '_') {
        char id[48];
        size_t n = 0;
        while (isalnum((unsigned char)*p) || *p == '_') {
            if (n + 1 >= sizeof id)
                return pv_err();
            id[n++] = *p++;
        }
        id[n] = '\0';
        ps->p = p;
        if (!strcmp(id, "True") || !strcmp(id, "False")) {
            v.k = PV_BOOL;
            v.i = id[0] == 'T';
            return v;
        }
        if (!strcmp(id, "None")) {
            v.k = PV_NONE;
            return v;
        }
        for (int k = 0; ps->c && k < CFG_COUNT; k++) {
            if (strcmp(id, keys[k].name))
                continue;
            const config_value *cv = &ps->c->v[k];
            switch (keys[k].type) {
            case CONFIG_INT: v.k = PV_INT; v.i = cv->i; break;
            case CONFIG_BOOL: v.k = PV_BOOL; v.i = cv->i; break;
            case CONFIG_FLOAT: v.k = PV_FLOAT; v.f = cv->f; break;
            case CONFIG_STR: v.k = PV_STR; snprintf(v.s, sizeof v.s, "%s", cv->s); break;
            }
            return v;
        }
        return pv_err(); /* a call, a module, an unknown name: not a literal */
    }
    return pv_err();
}

static pyval parse_unary(parser *ps);

/* parse_power: atom ['**' unary] (right-associative, binds tighter than unary minus on
 * its left, as in Python). */
static pyval parse_power(parser *ps)
{
    pyval a = parse_atom(ps);
    skip_ws(ps);
    if (a.k != PV_ERR && ps->p[0] == '*' && ps->p[1] == '*') {
        ps->p += 2;
        pyval b = parse_unary(ps);
        if (!pv_numeric(a) || !pv_numeric(b))
            return pv_err();
        if (a.k != PV_FLOAT && b.k != PV_FLOAT && b.i >= 0) {
            long long r = 1;
            for (long long i = 0; i < b.i && i < 64; i++)
                r *= a.i;
            a.k = PV_INT;
            a.i = r;
        } else {
            a.f = pow(pv_num(a), pv_num(b));
            a.k = PV_FLOAT;
        }
    }
    return a;
}

static pyval parse_unary(parser *ps)
{
    skip_ws(ps);
    if (*ps->p == '-' || *ps->p == '+') {
        int neg = *ps->p == '-';
        ps->p++;
        pyval v = parse_unary(ps);
        if (!pv_numeric(v))
            return pv_err();
        if (v.k == PV_BOOL)
            v.k = PV_INT;
        if (neg) {
            v.i = -v.i;
            v.f = -v.f;
        }
        return v;
    }
    return parse_power(ps);
}

/* binop: applies + - * / // % to two values with Python's int/float rules. */
static pyval binop(pyval a, pyval b, const char *op)
{
    if (a.k == PV_STR && b.k == PV_STR && !strcmp(op, "+")) {
        if (strlen(a.s) + strlen(b.s) >= sizeof a.s)
            return pv_err();
        strcat(a.s, b.s);
        return a;
    }
    if (!pv_numeric(a) || !pv_numeric(b))
        return pv_err();
    pyval r = pv_err();
    int fl = a.k == PV_FLOAT || b.k == PV_FLOAT;
    if (!strcmp(op, "/")) {
        if (pv_num(b) == 0)
            return pv_err();
        r.k = PV_FLOAT;
        r.f = pv_num(a) / pv_num(b);
    } else if (!strcmp(op, "//") || !strcmp(op, "%")) {
        if (pv_num(b) == 0)
            return pv_err();
        double q = floor(pv_num(a) / pv_num(b));
        if (fl) {
            r.k = PV_FLOAT;
            r.f = op[1] ? q : pv_num(a) - q * pv_num(b);
        } else {
            r.k = PV_INT;
            r.i = op[1] ? (long long)q : a.i - (long long)q * b.i;
        }
    } else if (fl) {
        r.k = PV_FLOAT;
        r.f = op[0] == '+' ? pv_num(a) + pv_num(b) : op[0] == '-' ? pv_num(a) - pv_num(b) : pv_num(a) * pv_num(b);
    } else {
        r.k = PV_INT;
        r.i = op[0] == '+' ? a.i + b.i : op[0] == '-' ? a.i - b.i : a.i * b.i;
    }
    return r;
}

static pyval parse_term(parser *ps)
{
    pyval a = parse_unary(ps);
    for (;;) {
        skip_ws(ps);
        const char *p = ps->p;
        const char *op = NULL;
        if (p[0] == '/' && p[1] == '/')
            op = "//";
        else if (p[0] == '*' && p[1] != '*')
            op = "*";
        else if (p[0] == '/')
            op = "/";
        else if (p[0] == '%')
            op = "%";
        if (!op || a.k == PV_ERR)
            return a;
        ps->p += strlen(op);
        a = binop(a, parse_unary(ps), op);
    }
}

static pyval parse_expr(parser *ps)
{
    pyval a = parse_term(ps);
    for (;;) {
        skip_ws(ps);
        char c = *ps->p;
        if ((c != '+' && c != '-') || a.k == PV_ERR)
            return a;
        ps->p++;
        a = binop(a, parse_term(ps), c == '+' ? "+" : "-");
    }
}

/* eval_text: the whole of text as one expression; PV_ERR if anything is left over. */
static pyval eval_text(const char *text, const nano_config *c)
{
    parser ps = {text, c};
    pyval v = parse_expr(&ps);
    skip_ws(&ps);
    while (*ps.p == '\r' || *ps.p == '\n' || *ps.p == ' ')
        ps.p++;
    return *ps.p ? pv_err() : v;
}

/* ---- setting values ----------------------------------------------------------------- */

void config_init(nano_config *c)
{
    memset(c, 0, sizeof *c);
    for (int k = 0; k < CFG_COUNT; k++) {
        config_value *v = &c->v[k];
        switch (keys[k].type) {
        case CONFIG_INT: v->i = strtoll(keys[k].def, NULL, 10); break;
        case CONFIG_FLOAT: v->f = strtod(keys[k].def, NULL); break;
        case CONFIG_BOOL: v->i = !strcmp(keys[k].def, "True"); break;
        case CONFIG_STR: snprintf(v->s, sizeof v->s, "%s", keys[k].def); break;
        }
        v->src = CONFIG_SRC_DEFAULT;
    }
}

static int find_key(const char *name)
{
    for (int k = 0; k < CFG_COUNT; k++)
        if (!strcmp(name, keys[k].name))
            return k;
    return -1;
}

static int is_tolerated(const char *name)
{
    for (int i = 0; tolerated[i]; i++)
        if (!strcmp(name, tolerated[i]))
            return 1;
    return 0;
}

/* set_value: stores an evaluated value into key k after type and range checks. */
static int set_value(nano_config *c, int k, pyval v, const char *text, config_source src,
                     const char *where, char *err, size_t errlen)
{
    config_value nv = c->v[k];
    const char *name = keys[k].name;
    switch (keys[k].type) {
    case CONFIG_INT:
        if (v.k != PV_INT) {
            snprintf(err, errlen, "%s: %s = %s is not an integer (give a whole number, e.g. %s=%s)",
                     where, name, text, name, keys[k].def);
            return -1;
        }
        if (v.i < 1 || v.i > (1ll << 40)) {
            snprintf(err, errlen, "%s: %s = %s is out of range (must be a positive integer)", where,
                     name, text);
            return -1;
        }
        nv.i = v.i;
        break;
    case CONFIG_FLOAT:
        if (v.k != PV_FLOAT && v.k != PV_INT) {
            snprintf(err, errlen, "%s: %s = %s is not a number (e.g. %s=0.1)", where, name, text, name);
            return -1;
        }
        nv.f = pv_num(v);
        if (k == CFG_dropout && !(nv.f >= 0 && nv.f < 1)) {
            snprintf(err, errlen, "%s: dropout = %s is out of range (must be 0 <= dropout < 1)", where, text);
            return -1;
        }
        break;
    case CONFIG_BOOL:
        if (v.k != PV_BOOL) {
            snprintf(err, errlen, "%s: %s = %s is not a boolean (write True or False)", where, name, text);
            return -1;
        }
        nv.i = v.i;
        break;
    case CONFIG_STR: {
        if (v.k != PV_STR) {
            snprintf(err, errlen, "%s: %s = %s is not a string (e.g. %s='bfloat16')", where, name, text, name);
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
            if (strcmp(s, "float16") && strcmp(s, "bfloat16") && strcmp(s, "float32")) {
                snprintf(err, errlen, "%s: dtype = %s is unknown (use float32, bfloat16 or float16)", where, text);
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
    int k = find_key(key);
    if (k < 0)
        return 1;
    pyval v = eval_text(value, NULL); /* literal_eval: no names */
    /* literal_eval failing on a bare word gives the word itself as a string (nanoGPT). */
    if (v.k == PV_ERR) {
        v.k = PV_STR;
        snprintf(v.s, sizeof v.s, "%s", value);
    }
    return set_value(c, k, v, value, src, where, err, errlen);
}

static void warn(nano_config *c, const char *msg)
{
    if (c->nwarnings < (int)(sizeof c->warnings / sizeof c->warnings[0]))
        snprintf(c->warnings[c->nwarnings], sizeof c->warnings[0], "%.*s", (int)sizeof c->warnings[0] - 1, msg);
    c->nwarnings++;
}

/* ---- files and argument lists --------------------------------------------------------- */

int config_apply_file(nano_config *c, const char *path, const char *cwd, char *err, size_t errlen)
{
    char full[4096];
    if (cwd && *cwd && path[0] != '/')
        snprintf(full, sizeof full, "%s/%s", cwd, path);
    else
        snprintf(full, sizeof full, "%s", path);
    FILE *fp = fopen(full, "r");
    if (!fp) {
        snprintf(err, errlen, "config file %s: %s (run from the training directory or give the path)",
                 full, strerror(errno));
        return -1;
    }
    char line[1024];
    int lineno = 0, rc = 0;
    while (fgets(line, sizeof line, fp)) {
        lineno++;
        if (line[0] == ' ' || line[0] == '\t') /* inside a block: not a top-level literal */
            continue;
        /* cut a comment that is outside quotes */
        char q = 0;
        for (char *p = line; *p; p++) {
            if (q) {
                if (*p == q)
                    q = 0;
            } else if (*p == '\'' || *p == '"') {
                q = *p;
            } else if (*p == '#') {
                *p = '\0';
                break;
            }
        }
        char *p = line;
        if (!isalpha((unsigned char)*p) && *p != '_')
            continue;
        char name[48];
        size_t n = 0;
        while ((isalnum((unsigned char)*p) || *p == '_') && n + 1 < sizeof name)
            name[n++] = *p++;
        name[n] = '\0';
        while (*p == ' ' || *p == '\t')
            p++;
        if (p[0] != '=' || p[1] == '=')
            continue;
        p++;
        char *e = p + strlen(p);
        while (e > p && isspace((unsigned char)e[-1]))
            *--e = '\0';
        while (*p == ' ' || *p == '\t')
            p++;
        int k = find_key(name);
        if (k < 0)
            continue; /* other keys are exec'd by nanoGPT; they do not change memory */
        pyval v = eval_text(p, c);
        if (v.k == PV_ERR)
            continue; /* not a literal: nanoGPT would compute it; we cannot */
        char where[160];
        snprintf(where, sizeof where, "%s:%d", path, lineno);
        if (set_value(c, k, v, p, CONFIG_SRC_FILE, where, err, errlen) < 0) {
            rc = -2;
            break;
        }
    }
    fclose(fp);
    if (rc == 0)
        c->nfiles++;
    return rc;
}

int config_apply_args(nano_config *c, int argc, const char *const *argv, const char *cwd,
                      config_source src, int strict, char *err, size_t errlen)
{
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (!a)
            continue;
        const char *eq = strchr(a, '=');
        if (!eq) {
            if (a[0] == '-') {
                char msg[200];
                snprintf(msg, sizeof msg, "argument '%s' is neither a config file nor --key=value", a);
                if (strict) {
                    snprintf(err, errlen, "%s (nanoGPT spells overrides --key=value)", msg);
                    return -1;
                }
                warn(c, msg);
                continue;
            }
            char ferr[512];
            int frc = config_apply_file(c, a, cwd, ferr, sizeof ferr);
            if (frc < 0) {
                if (strict || frc == -2) {
                    snprintf(err, errlen, "%s", ferr);
                    return -1;
                }
                warn(c, ferr);
            }
            continue;
        }
        if (strncmp(a, "--", 2) != 0) {
            char msg[200];
            snprintf(msg, sizeof msg, "argument '%s' has '=' but does not start with --", a);
            if (strict) {
                snprintf(err, errlen, "%s (write --key=value)", msg);
                return -1;
            }
            warn(c, msg);
            continue;
        }
        char key[64];
        config_arg_key(a, key, sizeof key); /* --batch-size=8 means --batch_size=8 */
        int rc = config_set(c, key, eq + 1, src, a, err, errlen);
        if (rc < 0)
            return -1;
        if (rc == 1 && !is_tolerated(key)) {
            char msg[200];
            snprintf(msg, sizeof msg, "unknown config key '%s' in '%s'", key, a);
            if (strict) {
                snprintf(err, errlen, "%s (nanoGPT keys: batch_size, block_size, "
                         "gradient_accumulation_steps, n_layer, n_head, n_embd, dropout, bias, dtype, compile, ...)", msg);
                return -1;
            }
            warn(c, msg);
        }
    }
    return 0;
}

static int ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && !strcmp(s + a - b, suffix);
}

int config_from_cmdline(nano_config *c, int argc, const char *const *argv, const char *cwd,
                        char *err, size_t errlen)
{
    int start = argc > 0 ? 1 : 0;
    for (int i = 0; i < argc; i++) {
        if (argv[i] && ends_with(argv[i], ".py") && strchr(argv[i], '=') == NULL) {
            start = i + 1;
            break;
        }
    }
    return config_apply_args(c, argc - start, argv + start, cwd, CONFIG_SRC_ARG, 0, err, errlen);
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

int config_validate(const nano_config *c, char *err, size_t errlen)
{
    long long d = c->v[CFG_n_embd].i, h = c->v[CFG_n_head].i;
    if (h <= 0 || d % h != 0) {
        snprintf(err, errlen, "n_embd = %lld is not divisible by n_head = %lld (nanoGPT asserts "
                 "n_embd %% n_head == 0; change one of them)", d, h);
        return -1;
    }
    return 0;
}

const char *config_key_name(config_key k)
{
    return (unsigned)k < CFG_COUNT ? keys[k].name : "?";
}

const char *config_source_name(config_source s)
{
    switch (s) {
    case CONFIG_SRC_DEFAULT: return "default";
    case CONFIG_SRC_FILE: return "file";
    case CONFIG_SRC_ARG: return "argument";
    case CONFIG_SRC_FLAG: return "flag";
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
    switch (keys[k].type) {
    case CONFIG_INT: snprintf(buf, len, "%lld", v->i); break;
    case CONFIG_FLOAT: snprintf(buf, len, v->f == floor(v->f) ? "%.1f" : "%g", v->f); break;
    case CONFIG_BOOL: snprintf(buf, len, "%s", v->i ? "True" : "False"); break;
    case CONFIG_STR: snprintf(buf, len, "%s", v->s); break;
    }
    return buf;
}

int config_dtype_bytes(const nano_config *c)
{
    return strcmp(c->v[CFG_dtype].s, "float32") == 0 ? 4 : 2;
}

void config_print(FILE *out, const nano_config *c)
{
    int nd = 0, nf = 0, na = 0;
    for (int k = 0; k < CFG_COUNT; k++) {
        config_source s = c->v[k].src;
        nd += s == CONFIG_SRC_DEFAULT;
        nf += s == CONFIG_SRC_FILE;
        na += s == CONFIG_SRC_ARG || s == CONFIG_SRC_FLAG;
    }
    fprintf(out, "configuration (nanoGPT): %d from arguments/flags, %d from config files, %d defaults\n", na, nf, nd);
    if (nd == CFG_COUNT)
        fprintf(out, "  note: no nanoGPT setting was found on the command line; the formulas assume train.py's "
                     "defaults below (override them, e.g. batch_size=8)\n");
    for (int k = 0; k < CFG_COUNT; k++) {
        char buf[40];
        const config_value *v = &c->v[k];
        fprintf(out, "  %-28s %-10s %s%s%s\n", keys[k].name, config_value_text(c, (config_key)k, buf, sizeof buf),
                v->src == CONFIG_SRC_DEFAULT ? "default (nanoGPT train.py)" : config_source_name(v->src),
                v->where[0] ? "  " : "", v->where);
    }
    for (int i = 0; i < c->nwarnings && i < 4; i++)
        fprintf(out, "  note: %s\n", c->warnings[i]);
}

void config_add_json(cJSON *root, const nano_config *c)
{
    cJSON *cfg = cJSON_AddObjectToObject(root, "config");
    for (int k = 0; k < CFG_COUNT; k++) {
        const config_value *v = &c->v[k];
        cJSON *e = cJSON_AddObjectToObject(cfg, keys[k].name);
        switch (keys[k].type) {
        case CONFIG_FLOAT: cJSON_AddNumberToObject(e, "value", v->f); break;
        case CONFIG_BOOL: cJSON_AddBoolToObject(e, "value", v->i != 0); break;
        case CONFIG_STR: cJSON_AddStringToObject(e, "value", v->s); break;
        case CONFIG_INT: cJSON_AddNumberToObject(e, "value", (double)v->i); break;
        }
        cJSON_AddStringToObject(e, "source", config_source_name(v->src));
        cJSON_AddStringToObject(e, "where", v->where);
    }
    if (c->nwarnings) {
        cJSON *w = cJSON_AddArrayToObject(root, "config_warnings");
        for (int i = 0; i < c->nwarnings && i < 4; i++)
            cJSON_AddItemToArray(w, cJSON_CreateString(c->warnings[i]));
    }
}
