/* predict_files.c — the files a user gives `vramtrace predict` on its command line
 * (predict_files.h): a nanoGPT config file read strictly (every line that sets a key is used,
 * or refused with its line and why), and a trace or a report's JSON, refused as a config file
 * with the --from that reads it. The config reader itself is model/recognize/nanogpt.c. */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "predict_files.h"
#include "vramtrace/trace_format.h"

/* not_config: a bare argument that is a trace or a report's JSON, not a config file: -1 with
 * "X is a trace: use --from X" in err; 0 otherwise (a file that cannot be read is left to the
 * config reader, which says why). */
static int not_config(const char *path, char *err, size_t errlen)
{
    FILE *f = fopen(path, "rb");
    char head[64] = "";
    size_t n = f ? fread(head, 1, sizeof head - 1, f) : 0;
    if (f)
        fclose(f);
    if (n >= VT_MAGIC_LEN && !memcmp(head, VT_MAGIC, VT_MAGIC_LEN)) {
        snprintf(err, errlen, "%s is a trace: use --from %s", path, path);
        return -1;
    }
    size_t i = 0;
    while (i < n && isspace((unsigned char)head[i]))
        i++;
    if (i < n && head[i] == '{') {
        snprintf(err, errlen,
                 "%s is JSON, not a nanoGPT config file: a report's JSON (vramtrace report "
                 "--json) is read with --from %s",
                 path, path);
        return -1;
    }
    return 0;
}

/* candidate: the key a config file's line sets, found as nanogpt.c finds it (a top-level
 * `key = expr` line outside a docstring, the comment cut; in_doc carries the docstring state
 * from line to line), or -1 when the line sets no configuration key. */
static int candidate(char *line, int *in_doc)
{
    int triples = 0;
    for (const char *t = line; (t = strstr(t, "\"\"\"")); t += 3)
        triples++;
    for (const char *t = line; (t = strstr(t, "'''")); t += 3)
        triples++;
    int was_doc = *in_doc;
    if (triples % 2)
        *in_doc = !*in_doc;
    if (was_doc || triples || line[0] == ' ' || line[0] == '\t')
        return -1;
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
    char name[48];
    size_t n = 0;
    const char *p = line;
    if (!isalpha((unsigned char)*p) && *p != '_')
        return -1;
    while ((isalnum((unsigned char)*p) || *p == '_') && n + 1 < sizeof name)
        name[n++] = *p++;
    name[n] = '\0';
    while (*p == ' ' || *p == '\t')
        p++;
    if (p[0] != '=' || p[1] == '=')
        return -1;
    return config_find_key(name);
}

/* check_file: every line of the config file path (one the user gave predict) that sets a key
 * was used. Each such line is applied alone, in order, to a copy of c (the configuration before
 * the file): a line the config reader skipped (a call, an unknown name, "8x") is refused with
 * the file, the line and why. Returns 0, or -1 with err. */
static int check_file(const nano_config *c, const char *path, char *err, size_t errlen)
{
    static nano_config t; /* large: not on the stack */
    char line[1024], copy[1024], ferr[512], want[1100];
    int lineno = 0, in_doc = 0, rc = 0;
    FILE *f = fopen(path, "r");
    if (!f)
        return 0; /* the reader said why already */
    t = *c;
    snprintf(want, sizeof want, "%s:1", path);
    while (rc == 0 && fgets(line, sizeof line, f)) {
        lineno++;
        size_t len = strlen(line);
        if (len && line[len - 1] != '\n' && !feof(f)) { /* over-long: the reader skips it too */
            int ch;
            while ((ch = fgetc(f)) != EOF && ch != '\n')
                ;
            continue;
        }
        snprintf(copy, sizeof copy, "%s", line);
        int k = candidate(copy, &in_doc);
        if (k < 0)
            continue;
        FILE *one = fmemopen(line, len, "r");
        int before = t.nwarnings,
            arc = one ? config_apply_stream(&t, one, path, ferr, sizeof ferr) : -1;
        if (one)
            fclose(one);
        if (arc < 0)
            continue; /* a bad value: the reader's own error says it */
        if (!strcmp(t.v[k].where, want)) {
            snprintf(t.v[k].where, sizeof t.v[k].where, "%s:%d", path, lineno);
            continue;
        }
        while (len && (line[len - 1] == '\n' || line[len - 1] == '\r'))
            line[--len] = '\0';
        const char *why = t.nwarnings > before && t.nwarnings <= 4
                              ? strstr(t.warnings[t.nwarnings - 1], "skipped: ")
                              : NULL;
        snprintf(err, errlen,
                 "%s:%d: '%.80s' cannot be evaluated: %s; predict reads literals and arithmetic "
                 "of literals and earlier keys: fix the line, or give --%s=VALUE",
                 path, lineno, line,
                 why ? why + 9
                     : "not a literal nor arithmetic (a call, an unknown name, a typo "
                       "such as 8x)",
                 config_key_name((config_key)k));
        rc = -1;
    }
    fclose(f);
    return rc;
}

int predict_apply_file(nano_config *c, const char *path, char *err, size_t errlen)
{
    static nano_config before; /* large: not on the stack */
    if (not_config(path, err, errlen) < 0)
        return -1;
    before = *c;
    if (config_apply_file(c, path, NULL, err, errlen) < 0)
        return -1;
    return check_file(&before, path, err, errlen);
}
