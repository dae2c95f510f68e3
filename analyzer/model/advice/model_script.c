/* model_script.c — what the recorded script says of the run beyond its trace: a state carried
 * across batches (truncated BPTT: accumulating smaller micro-batches is another run, never "the
 * same final model"). Interface: model_script.h. */
#include "model_script.h"

#include <stdio.h>
#include <string.h>

#include "scriptpass.h"
#include "vramtrace/trace_format.h"

/* script: the i-th recorded script of the command line (a .py file recorded whole), else NULL */
static const config_recfile *script(const run_facts *f, int i)
{
    const config_recfile *cf = f->files && i < f->files->n ? &f->files->f[i] : NULL;
    size_t ln = cf && cf->name ? strlen(cf->name) : 0;
    if (!cf || cf->kind != VT_FILE_ARG || cf->flags || !cf->data || ln < 3 ||
        strcmp(cf->name + ln - 3, ".py"))
        return NULL;
    return cf;
}

static const char *base(const char *path)
{
    const char *b = strrchr(path, '/');
    return b ? b + 1 : path;
}

void model_carried(model_result *m, const run_facts *f)
{
    m->rec.carried[0] = '\0';
    for (int i = 0; f->files && i < f->files->n && !m->rec.carried[0]; i++) {
        const config_recfile *cf = script(f, i);
        char name[48];
        uint32_t at = cf ? scriptpass_carried(cf->data, cf->len, name, sizeof name) : 0;
        if (at)
            snprintf(m->rec.carried, sizeof m->rec.carried, "%.40s, %.60s:%u", name, base(cf->name),
                     (unsigned)at);
    }
}
