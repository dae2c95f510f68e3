/* nanogpt.c — nanoGPT's configurator read the way train.py's configurator.py runs it
 * (config.h): each bare argument exec'd as a config file (`key = expr` lines, evaluated by a
 * small Python-expression subset), each `--key=value` overriding; later ones win. The key
 * store itself is config.c; which program a command line runs is cmdline.c. */
#include "config.h"
#include "mem.h"

#include "pyexpr.h"
#include "vramtrace/trace_format.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* CONFIG_FILE_MAX: a config file larger than this is not read (nanoGPT's are < 2 KB). */
#define CONFIG_FILE_MAX (1 << 20)

/* nanoGPT train.py / sample.py keys the memory model does not need: accepted, ignored. */
static const char *const tolerated[] = {
    "out_dir", "eval_interval", "log_interval", "eval_iters", "eval_only", "always_save_checkpoint",
    "init_from", "wandb_log", "wandb_project", "wandb_run_name", "dataset", "learning_rate",
    "max_iters", "weight_decay", "beta1", "beta2", "grad_clip", "decay_lr", "warmup_iters",
    "lr_decay_iters", "min_lr", "backend", "device", "seed", "start", "num_samples",
    "max_new_tokens", "temperature", "top_k",
    /* examples/gpt/train.py and examples/sim/sim_train.py */
    "compile_mode", "num_workers", "allocator", NULL};

/* lookup_key: a config file's reference to an earlier key (`n_embd = n_head * 64`). */
static int lookup_key(void *ctx, const char *name, pyval *v)
{
    const nano_config *c = ctx;
    int k = config_find_key(name);
    if (k < 0)
        return -1;
    const config_value *cv = &c->v[k];
    switch (config_key_type((config_key)k)) {
    case CONFIG_INT:
        v->k = PYV_INT;
        v->i = cv->i;
        break;
    case CONFIG_BOOL:
        v->k = PYV_BOOL;
        v->i = cv->i;
        break;
    case CONFIG_FLOAT:
        v->k = PYV_FLOAT;
        v->f = cv->f;
        break;
    case CONFIG_STR:
        v->k = PYV_STR;
        snprintf(v->s, sizeof v->s, "%s", cv->s);
        break;
    }
    return 0;
}

static int is_tolerated(const char *name)
{
    for (int i = 0; tolerated[i]; i++)
        if (!strcmp(name, tolerated[i]))
            return 1;
    return 0;
}

/* apply_recorded: a trace's config file from its FILE record, never from the disk. */
static int apply_recorded(nano_config *c, const char *path, char *err, size_t errlen)
{
    const config_recfile *rf = config_recorded_file(c->files, VT_FILE_ARG, path);
    if (!rf) {
        snprintf(err, errlen, "config file %s: not recorded (%s)", path,
                 c->files->recorded ? "it was not a regular .py/.json/.yaml/.toml file when traced"
                                    : "trace from an older vramtrace");
        c->nfiles_missing++;
        return -1;
    }
    if (rf->flags) {
        snprintf(err, errlen, "config file %s: not recorded (%s)", path,
                 rf->flags & VT_FILEF_TOO_LARGE ? "larger than 256 KiB" : "unreadable when traced");
        c->nfiles_missing++;
        return -1;
    }
    FILE *fp = rf->len ? mem_fmemopen(rf->data, rf->len) : NULL;
    if (!fp) {
        if (rf->len == 0) { /* an empty file sets nothing */
            c->nfiles++;
            return 0;
        }
        snprintf(err, errlen, "config file %s: %s", path, strerror(errno));
        return -1;
    }
    int rc = config_apply_stream(c, fp, path, err, errlen);
    fclose(fp);
    return rc;
}

int config_apply_file(nano_config *c, const char *path, const char *cwd, char *err, size_t errlen)
{
    if (c->files)
        return apply_recorded(c, path, err, errlen);
    char full[4096];
    if (cwd && *cwd && path[0] != '/')
        snprintf(full, sizeof full, "%s/%s", cwd, path);
    else
        snprintf(full, sizeof full, "%s", path);
    /* the path comes from an untrusted trace: only a regular file of sane size is read
     * (O_NONBLOCK: a FIFO does not block the open; /dev/zero is not a regular file) */
    int fd = open(full, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) < 0) {
        snprintf(err, errlen,
                 "config file %s: %s (run from the training directory or give the path)", full,
                 strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    if (!S_ISREG(st.st_mode) || st.st_size > CONFIG_FILE_MAX) {
        snprintf(err, errlen, "config file %s: %s (not read)", full,
                 S_ISREG(st.st_mode) ? "larger than 1 MiB" : "not a regular file");
        close(fd);
        return -1;
    }
    FILE *fp = fdopen(fd, "r");
    if (!fp) {
        snprintf(err, errlen, "config file %s: %s", full, strerror(errno));
        close(fd);
        return -1;
    }
    int rc = config_apply_stream(c, fp, path, err, errlen);
    fclose(fp);
    return rc;
}

int config_apply_stream(nano_config *c, FILE *fp, const char *path, char *err, size_t errlen)
{
    char line[1024];
    int lineno = 0, rc = 0;
    int in_doc = 0; /* inside a triple-quoted string */
    while (fgets(line, sizeof line, fp)) {
        lineno++;
        size_t len = strlen(line);
        if (len && line[len - 1] != '\n' && !feof(fp)) { /* an over-long line: skip all of it */
            int ch;
            while ((ch = fgetc(fp)) != EOF && ch != '\n')
                ;
            char msg[200];
            snprintf(msg, sizeof msg, "%.120s:%d: a line of more than %d characters, not read",
                     path, lineno, (int)sizeof line - 1);
            config_note(c, msg);
            continue;
        }
        int triples = 0;
        for (const char *t = line; (t = strstr(t, "\"\"\"")); t += 3)
            triples++;
        for (const char *t = line; (t = strstr(t, "'''")); t += 3)
            triples++;
        int was_doc = in_doc;
        if (triples % 2)
            in_doc = !in_doc;
        if (was_doc || triples)
            continue; /* a docstring line, or one that opens or closes one */
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
        int k = config_find_key(name);
        if (k < 0)
            continue; /* other keys are exec'd by nanoGPT; they do not change memory */
        pyval v = pyexpr_eval(p, lookup_key, c);
        char where[160];
        snprintf(where, sizeof where, "%s:%d", path, lineno);
        if (v.k == PYV_ERR) { /* not a literal: nanoGPT would compute it; we cannot: said */
            const char *why = v.why ? v.why
                                    : "not a literal nor arithmetic of literals and earlier keys "
                                      "(a call, an unknown name, a typo such as 8x)";
            /* why whole (the longest, the default above, is 102 characters): with a key's name
             * (27 at most) the note fits the 240 bytes of c->warnings, the first the 400 of
             * c->skipped */
            char msg[360];
            snprintf(msg, sizeof msg, "%.52s: %.40s = %.40s%s skipped: %.128s", where, name, p,
                     strlen(p) > 40 ? "..." : "", why);
            config_note(c, msg);
            if (!c->nskipped++) {
                snprintf(c->skipped, sizeof c->skipped,
                         "%.80s: '%.40s = %.60s' cannot be evaluated: %.128s", where, name, p, why);
                c->skipped_key = k;
            }
            continue;
        }
        char verr[512];
        if (config_set_value(c, k, v, p, CONFIG_SRC_FILE, where, verr, sizeof verr) < 0 &&
            rc == 0) {
            rc = -2; /* the first bad value is the error; later lines still apply */
            snprintf(err, errlen, "%s", verr);
        }
    }
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
                snprintf(msg, sizeof msg, "argument '%s' is neither a config file nor --key=value",
                         a);
                if (strict) {
                    snprintf(err, errlen, "%s (nanoGPT spells overrides --key=value)", msg);
                    return -1;
                }
                config_note(c, msg);
                continue;
            }
            char ferr[512];
            int frc = config_apply_file(c, a, cwd, ferr, sizeof ferr);
            if (frc < 0) {
                if (strict) {
                    snprintf(err, errlen, "%s", ferr);
                    return -1;
                }
                config_note(c, ferr);
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
            config_note(c, msg);
            continue;
        }
        char key[64];
        config_arg_key(a, key, sizeof key); /* --batch-size=8 means --batch_size=8 */
        int rc = config_set(c, key, eq + 1, src, a, err, errlen);
        if (rc < 0 && strict)
            return -1;
        if (rc < 0) { /* a value the model cannot use: a note, the value stays as it was */
            char msg[300];
            snprintf(msg, sizeof msg, "%s (not used)", err);
            config_note(c, msg);
            continue;
        }
        if (rc == 0 && src == CONFIG_SRC_ARG) { /* advice spells a change the same way */
            config_value *v = &c->v[config_find_key(key)];
            snprintf(v->flag, sizeof v->flag, "%.*s", (int)(eq - a > 47 ? 47 : eq - a), a);
            v->flag_sep = '=';
        }
        if (rc == 1 && !is_tolerated(key)) {
            char msg[200];
            snprintf(msg, sizeof msg, "unknown config key '%s' in '%s'", key, a);
            if (strict) {
                snprintf(err, errlen,
                         "%s (nanoGPT keys: batch_size, block_size, "
                         "gradient_accumulation_steps, n_layer, n_head, n_embd, dropout, bias, "
                         "dtype, compile, ...)",
                         msg);
                return -1;
            }
            config_note(c, msg);
        }
    }
    return 0;
}
