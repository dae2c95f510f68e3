/* predict_files.c — the files a user gives `vramtrace predict` on its command line
 * (predict_files.h): a nanoGPT config file read strictly (every line that sets a key is used,
 * or refused with its line and why, as the config reader notes it: model/recognize/nanogpt.c),
 * and a trace or a report's JSON, refused as a config file with the --from that reads it. */
#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "predict_files.h"
#include "vramtrace/trace_format.h"

/* not_config: a bare argument that is a trace or a report's JSON, not a config file: -1 with
 * "X is a trace: use --from X" in err; 0 otherwise (a file that cannot be read is left to the
 * config reader, which says why). */
static int not_config(const char *path, char *err, size_t errlen)
{
    struct stat st; /* a FIFO, a device: the config reader refuses it unread (never opened here:
                     * a FIFO's open waits for a writer) */
    if (stat(path, &st) || !S_ISREG(st.st_mode))
        return 0;
    FILE *f = fopen(path, "rb");
    char head[512] = "";
    size_t n = f ? fread(head, 1, sizeof head - 1, f) : 0;
    if (f)
        fclose(f);
    if (n >= VT_MAGIC_LEN && !memcmp(head, VT_MAGIC, VT_MAGIC_LEN)) {
        snprintf(err, errlen, "%s is a trace: use --from %s", path, path);
        return -1;
    }
    for (size_t k = 0; k < n; k++) /* a NUL or a control byte no text has: a binary file */
        if (!head[k] || ((unsigned char)head[k] < 0x20 && !isspace((unsigned char)head[k]))) {
            snprintf(err, errlen, "%s is not a text file: not a nanoGPT config file", path);
            return -1;
        }
    size_t i = 0;
    while (i < n && isspace((unsigned char)head[i]))
        i++;
    if (i < n && head[i] == '{') {
        snprintf(err, errlen,
                 "%s is JSON, not a nanoGPT config file: a report's JSON (vramtrace report "
                 "--json) is read with --from %s; a model's config.json is read when it parses "
                 "and has its model_type",
                 path, path);
        return -1;
    }
    return 0;
}

int predict_apply_file(nano_config *c, const char *path, char *err, size_t errlen)
{
    if (not_config(path, err, errlen) < 0)
        return -1;
    int before = c->nskipped;
    if (config_apply_file(c, path, NULL, err, errlen) < 0)
        return -1;
    size_t pl = strlen(path);
    int set = 0;
    for (int k = 0; k < CFG_COUNT; k++)
        set += c->v[k].src == CONFIG_SRC_FILE && !strncmp(c->v[k].where, path, pl) &&
               c->v[k].where[pl] == ':';
    if (!set && c->nskipped == before) { /* a log, a checkpoint: never a default prediction */
        snprintf(err, errlen,
                 "%s sets none of the settings predict reads (n_layer = 12, batch_size = 8, ...): "
                 "not a nanoGPT config file",
                 path);
        return -1;
    }
    if (c->nskipped > before) { /* a line that sets a key was not used: refused, never guessed */
        snprintf(err, errlen,
                 "%s; predict reads literals and arithmetic of literals and earlier keys: fix the "
                 "line, or give --%s=VALUE",
                 c->skipped, config_key_name((config_key)c->skipped_key));
        return -1;
    }
    return 0;
}
