/* cli.c — the one option parser of every `vramtrace` command (cli.h): a cli_opt table turned
 * into getopt_long's tables, and the same table printed as the options part of --help. */
#include "cli.h"

#include <string.h>
#include <unistd.h>

#define CLI_HELP_COLUMN 22

void cli_init(cli *c, const char *cmd, const cli_opt *opts, int flags)
{
    memset(c, 0, sizeof *c);
    c->cmd = cmd;
    c->opts = opts;
    c->flags = flags;
    size_t nl = 0, ns = 0;
    /* '+': stop at the first operand; ':': a missing value returns ':' (reported here). */
    if (flags & CLI_STOP_AT_OPERAND)
        c->shorts[ns++] = '+';
    c->shorts[ns++] = ':';
    for (const cli_opt *o = opts; o->key && nl < CLI_MAX_OPTS; o++) {
        if (o->name)
            c->longs[nl++] =
                (struct option){o->name, o->arg ? required_argument : no_argument, NULL, o->key};
        if (o->key > 0 && o->key < CLI_LONG_ONLY) {
            c->shorts[ns++] = (char)o->key;
            if (o->arg)
                c->shorts[ns++] = ':';
        }
    }
    c->shorts[ns] = '\0';
    optind = 0; /* glibc: a full reset, also of the state inside a cluster such as -qh */
    opterr = 0;
}

/* opt_word: how the user spelled the option that getopt just rejected, for messages: the
 * word itself for an unknown long option (optopt 0), "--name" for a known long option given
 * wrongly, else "-x" (a short option, also inside a cluster such as -qx). */
static const char *opt_word(const cli *c, char **argv, char *buf, size_t len)
{
    const char *w = optind > 0 ? argv[optind - 1] : NULL;
    if (optopt == 0)
        return w ? w : "?";
    size_t n = w ? strcspn(w, "=") : 0;
    if (w && !strncmp(w, "--", 2))
        for (const cli_opt *o = c->opts; o->key; o++)
            if (o->key == optopt && o->name && strlen(o->name) == n - 2 &&
                !strncmp(o->name, w + 2, n - 2)) {
                snprintf(buf, len, "--%s", o->name);
                return buf;
            }
    snprintf(buf, len, "-%c", optopt > 0 && optopt < CLI_LONG_ONLY ? optopt : '?');
    return buf;
}

/* alias: the option whose long name is name (n bytes) with '_' for '-' ("grad_accum" for
 * "grad-accum"), or NULL */
static const cli_opt *alias(const cli *c, const char *name, size_t n)
{
    for (const cli_opt *o = c->opts; o->key; o++) {
        if (!o->name || strlen(o->name) != n || !memchr(name, '_', n))
            continue;
        size_t i = 0;
        while (i < n && (name[i] == o->name[i] || (name[i] == '_' && o->name[i] == '-')))
            i++;
        if (i == n)
            return o;
    }
    return NULL;
}

/* unknown_long: getopt did not know the long option w ("--NAME" or "--NAME=VALUE"): a
 * "--KEY=VALUE" or "--KEY VALUE" of the command's keys (CLI_KEY_VALUE), an option spelled with
 * '_' for '-' (its key, c->arg set), or 0 when it is neither */
static int unknown_long(cli *c, int argc, char **argv, const char *w)
{
    const char *name = w + 2, *eq = strchr(name, '=');
    size_t n = eq ? (size_t)(eq - name) : strlen(name);
    int key = (c->flags & CLI_KEY_VALUES) && n && c->is_key && c->is_key(name, n);
    const cli_opt *o = key ? NULL : alias(c, name, n);
    if (!o && (c->flags & CLI_KEY_VALUES) && n && eq) {
        c->key_value = name; /* (an unknown key: the command says so) */
        return CLI_KEY_VALUE;
    }
    if (!o && !key)
        return 0;
    const char *sp = c->cmd[0] ? " " : "";
    if (o && !o->arg && eq) {
        fprintf(stderr, "vramtrace%s%s: --%s takes no value (see vramtrace%s%s --help)\n", sp,
                c->cmd, o->name, sp, c->cmd);
        return CLI_ERROR;
    }
    const char *v = eq ? eq + 1 : NULL;
    if (!eq && (key || o->arg)) {
        /* (a key's value is never a file: "--compile run.vt" lacks its value, run.vt is the
         * trace, as the key's --KEY=VALUE spelling would show) */
        if (optind < argc && key && access(argv[optind], F_OK) == 0) {
            fprintf(stderr,
                    "vramtrace%s%s: %s needs a value, not the file %s (see vramtrace%s%s --help)\n",
                    sp, c->cmd, w, argv[optind], sp, c->cmd);
            return CLI_ERROR;
        }
        if (optind >= argc) {
            fprintf(stderr, "vramtrace%s%s: %s needs a value (see vramtrace%s%s --help)\n", sp,
                    c->cmd, w, sp, c->cmd);
            return CLI_ERROR;
        }
        v = argv[optind++]; /* (getopt goes on after it) */
    }
    if (key) {
        int k = snprintf(c->kv, sizeof c->kv, "%.*s=%s", (int)n, name, v);
        if (k < 0 || (size_t)k >= sizeof c->kv) {
            fprintf(stderr, "vramtrace%s%s: %s: value too long\n", sp, c->cmd, w);
            return CLI_ERROR;
        }
        c->key_value = c->kv;
        return CLI_KEY_VALUE;
    }
    optarg = (char *)v;
    return o->key;
}

int cli_next(cli *c, int argc, char **argv)
{
    c->arg = NULL;
    c->key_value = NULL;
    int k = getopt_long(argc, argv, c->shorts, c->longs, NULL);
    if (k == -1) {
        c->optind = optind;
        return CLI_END;
    }
    char buf[64];
    const char *sp = c->cmd[0] ? " " : ""; /* main's own options: "vramtrace: ..." */
    if (k == ':') {
        fprintf(stderr, "vramtrace%s%s: %s needs a value (see vramtrace%s%s --help)\n", sp, c->cmd,
                opt_word(c, argv, buf, sizeof buf), sp, c->cmd);
        return CLI_ERROR;
    }
    if (k == '?') {
        const char *w = argv[optind - 1];
        if (optopt == 0 && w && !strncmp(w, "--", 2) && w[2] && w[2] != '=') {
            int u = unknown_long(c, argc, argv, w);
            if (u == CLI_KEY_VALUE || u == CLI_ERROR)
                return u;
            k = u ? u : k;
        }
    }
    if (k == '?') {
        const char *w = argv[optind - 1];
        if (optopt != 0 && w && !strncmp(w, "--", 2) && strchr(w, '=')) {
            fprintf(stderr, "vramtrace%s%s: %.*s takes no value (see vramtrace%s%s --help)\n", sp,
                    c->cmd, (int)(strchr(w, '=') - w), w, sp, c->cmd);
            return CLI_ERROR;
        }
        fprintf(stderr, "vramtrace%s%s: unknown option %s (see vramtrace%s%s --help)\n", sp, c->cmd,
                opt_word(c, argv, buf, sizeof buf), sp, c->cmd);
        return CLI_ERROR;
    }
    c->arg = optarg;
    for (int j = 0; optarg && j < CLI_MAX_OPTS && c->opts[j].key; j++) {
        if (c->opts[j].key != k)
            continue;
        if (c->given[j] && strcmp(c->given[j], optarg)) { /* --card 12GiB --card 24GiB */
            fprintf(stderr,
                    "vramtrace%s%s: %s%s given twice (%s, then %s): give one (see vramtrace%s%s "
                    "--help)\n",
                    sp, c->cmd, c->opts[j].name ? "--" : "-",
                    c->opts[j].name ? c->opts[j].name : (char[]){(char)k, 0}, c->given[j], optarg,
                    sp, c->cmd);
            return CLI_ERROR;
        }
        c->given[j] = optarg;
        break;
    }
    return k;
}

void cli_print_options(FILE *out, const cli_opt *opts)
{
    fprintf(out, "options:\n");
    for (const cli_opt *o = opts; o->key; o++) {
        char left[64];
        int n;
        if (o->key < CLI_LONG_ONLY && o->name)
            n = snprintf(left, sizeof left, "-%c, --%s", o->key, o->name);
        else if (o->name)
            n = snprintf(left, sizeof left, "--%s", o->name);
        else
            n = snprintf(left, sizeof left, "-%c", o->key);
        if (o->arg && n > 0 && (size_t)n < sizeof left)
            snprintf(left + n, sizeof left - (size_t)n, " %s", o->arg);
        int w = fprintf(out, "  %s", left);
        const char *h = o->help;
        int pad = w < CLI_HELP_COLUMN ? CLI_HELP_COLUMN - w : 1;
        if (w >= CLI_HELP_COLUMN) { /* a long left part: help on the next line */
            fprintf(out, "\n");
            pad = CLI_HELP_COLUMN;
        }
        while (h) {
            const char *nl = strchr(h, '\n');
            int len = nl ? (int)(nl - h) : (int)strlen(h);
            fprintf(out, "%*s%.*s\n", pad, "", len, h);
            h = nl ? nl + 1 : NULL;
            pad = CLI_HELP_COLUMN;
        }
    }
}
