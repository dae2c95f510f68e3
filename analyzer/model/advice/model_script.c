/* model_script.c — what the recorded script says of the run beyond its trace: a state carried
 * across batches (truncated BPTT: accumulating smaller micro-batches is another run, never "the
 * same final model"), and an evaluation pass the trace never reached (a run that died in its
 * first step, its validation every 2 steps to come: the largest micro-batch had been said as if
 * the step were the whole loop, and its validation at its own batch ran out of memory).
 * Interface: model_script.h. */
#include "model_script.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "advice.h"
#include "config.h"
#include "model_notes.h"
#include "phases.h"
#include "pysrc.h"
#include "scriptflags.h"
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

void model_carried(model_result *m, const run_facts *f)
{
    m->rec.carried[0] = '\0';
    for (int i = 0; f->files && i < f->files->n && !m->rec.carried[0]; i++) {
        const config_recfile *cf = script(f, i);
        char name[48];
        uint32_t at = cf ? scriptpass_carried(cf->data, cf->len, name, sizeof name) : 0;
        if (at)
            snprintf(m->rec.carried, sizeof m->rec.carried, "%.40s, %.60s:%u", name,
                     pysrc_name(cf->name), (unsigned)at);
    }
}

/* argv_value: the value the command line gives flag (--flag N, --flag=N), else -1 */
static long long argv_value(const run_facts *f, const char *flag)
{
    size_t n = strlen(flag);
    for (int i = 1; f->argv && i < f->argc; i++) {
        const char *a = f->argv[i], *v = NULL;
        if (strncmp(a, flag, n))
            continue;
        if (a[n] == '=')
            v = a + n + 1;
        else if (!a[n] && i + 1 < f->argc)
            v = f->argv[i + 1];
        char *end;
        long long x = v ? strtoll(v, &end, 10) : -1;
        if (v && end != v && !*end && x >= 0)
            return x;
    }
    return -1;
}

/* script_eval_flag: the recorded script's argparse flag that sets an evaluation's own batch
 * (--val_batch_size, default=64): its value as the run had it (the command line's, else its
 * default; 0 turns the pass off: --eval-batch-size 0, "none") and *argv 1 where the command
 * line gave it, its spelling and value in flag; -1 where the script has none */
static long long script_eval_flag(const run_facts *f, const config_recfile *cf, char *flag,
                                  size_t n, int *argv)
{
    static script_flag fl[SCRIPT_FLAGS_MAX];
    int k = scriptflags_parse(cf->data, cf->len, fl, SCRIPT_FLAGS_MAX);
    for (int i = 0; i < k; i++)
        for (int j = 0; j < fl[i].nnames; j++) {
            char key[64];
            config_arg_key(fl[i].names[j], key, sizeof key);
            if (strncmp(fl[i].names[j], "--", 2) || !fl[i].has_default || fl[i].def < 0 ||
                !model_names_evaluation(key) || !strstr(key, "batch") || strstr(key, "batches"))
                continue;
            long long v = fl[i].def;
            *argv = 0;
            for (int q = 0; q < fl[i].nnames; q++)
                if (argv_value(f, fl[i].names[q]) >= 0)
                    v = argv_value(f, fl[i].names[q]), *argv = 1;
            snprintf(flag, n, "%.48s %lld", fl[i].names[j], v);
            return v;
        }
    return -1;
}

void model_unreached(model_result *m, const run_facts *f)
{
    m->unreached[0] = m->unreached_where[0] = m->unreached_flag[0] = '\0';
    m->unreached_flag_argv = 0;
    /* (an evaluation-only run is one; a run with no advice advises nothing) */
    if (m->shape.no_training || m->advice_none[0] || (f->phase_seen & (1u << PHASE_EVAL)))
        return;
    const config_recfile *cf = NULL;
    uint32_t at = 0;
    char fn[80] = "", def[80] = "";
    for (int i = 0; f->files && i < f->files->n && !at; i++)
        if ((cf = script(f, i)) != NULL)
            at = scriptpass_eval(cf->data, cf->len, fn, sizeof fn, def, sizeof def);
    if (!at)
        return;
    snprintf(m->unreached_where, sizeof m->unreached_where, "%.60s:%u", pysrc_name(cf->name),
             (unsigned)at);
    char own[200];
    long long v = script_eval_flag(f, cf, m->unreached_flag, sizeof m->unreached_flag,
                                   &m->unreached_flag_argv);
    if (v == 0) { /* (the flag turns the pass off: sim_hf.py's --eval-batch-size, default 0) */
        m->unreached_where[0] = m->unreached_flag[0] = '\0';
        return;
    }
    if (v < 0 && model_eval_batch_flag(f, m->unreached_flag, sizeof m->unreached_flag))
        m->unreached_flag_argv = 1; /* (a flag the script's argparse does not show) */
    if (m->unreached_flag_argv)
        snprintf(own, sizeof own, "its own batch %s on the command line", m->unreached_flag);
    else if (v > 0)
        snprintf(own, sizeof own,
                 "its own batch %s: %.60s's argparse default, not on the command line",
                 m->unreached_flag, pysrc_name(cf->name));
    else
        snprintf(own, sizeof own,
                 "its batch not known: no flag of the command line or of the script's argparse "
                 "names one");
    /* (no flag: the kind the def around it names, a no_grad sample()'s; none: an evaluation) */
    const char *dw = advice_pass_word(def[0] ? def : NULL);
    const char *pass = m->unreached_flag[0] ? advice_pass_word(m->unreached_flag)
                       : strcmp(dw, "evaluation") && strcmp(dw, "no-grad") ? dw
                                                                           : "evaluation";
    snprintf(m->unreached, sizeof m->unreached,
             "the program's %s pass (%s%s%s; %s) did not run %s: what it needs is not measured, "
             "so every what-if here and the largest %s count the training step only",
             pass, fn[0] ? fn : "", fn[0] ? ", def at " : "", m->unreached_where, own,
             f->has_oom && !f->oom_went_on ? "before the out-of-memory error"
             : f->truncated                ? "before the trace's end"
                                           : "in this run",
             model_batch_word(m));
    snprintf(m->unreached_short, sizeof m->unreached_short,
             "the training step only: the %s pass at %s did not run", pass, m->unreached_where);
    if (m->nnotes < (int)(sizeof m->notes / sizeof m->notes[0]))
        snprintf(m->notes[m->nnotes++], sizeof m->notes[0], "%s", m->unreached);
}
