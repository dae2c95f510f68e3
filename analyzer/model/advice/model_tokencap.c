/* model_tokencap.c — the token budget of a run out of memory whose micro-batch is not known
 * (model_oom.h): fairseq's --max-tokens and its kind make each batch B = the budget over its
 * samples' length, so B changes from step to step and no micro-batch what-if applies; lowering
 * the budget is the lever on what grows with a batch. The trace does not show how many tokens
 * each batch held (a batch of filterbank frames is bytes, not tokens), so no value of it is
 * predicted: the flag is named, with its value, and a rerun measures. Read from the recorded
 * script's flags; nothing is executed. */
#include "model_oom.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scriptflags.h"

int model_token_lever(const model_result *m, const run_facts *f, char *out, size_t n)
{
    out[0] = '\0';
    if (!f->has_oom || config_known(&m->cfg, CFG_batch_size))
        return 0;
    const config_recfile *rf = config_recorded_script(&m->cfg, f->argc, f->argv);
    script_flag *fl = rf ? malloc(SCRIPT_FLAGS_MAX * sizeof *fl) : NULL;
    int k = fl ? scriptflags_parse(rf->data, rf->len, fl, SCRIPT_FLAGS_MAX) : 0;
    for (int i = 0; i < k && !out[0]; i++) {
        const char *nm = NULL; /* (its long spelling, a cap on tokens by its name) */
        char key[64];
        for (int j = 0; j < fl[i].nnames && !nm; j++) {
            config_flag_name(fl[i].names[j], key, sizeof key); /* ("max_tokens") */
            nm = !strncmp(fl[i].names[j], "--", 2) && scriptflags_token_cap(key) ? fl[i].names[j]
                                                                                 : NULL;
        }
        const char *v = NULL;
        int eq = 0;
        if (!nm ||
            (!scriptflags_given_value(&fl[i], f->argc, f->argv, &v, &eq) && !fl[i].has_default))
            continue;
        char val[64];
        if (v)
            snprintf(val, sizeof val, "%.24s on the command line", v);
        else
            snprintf(val, sizeof val, "its default %lld", fl[i].def);
        uint64_t grows = f->at_oom.bytes[CAT_ACTIVATIONS] + f->at_oom.bytes[CAT_LOGITS];
        snprintf(out, n,
                 "%s (%s), by its name a cap on each batch's tokens (a batch then holds as many "
                 "samples as fit under it, so its micro-batch changes with their length): "
                 "lowering it is the lever on what grows with a batch (%.2f GiB of activations and "
                 "logits were live at the "
                 "failure); vramtrace does not read it, so no value of it is predicted: a rerun "
                 "with a lower %s measures one",
                 nm, val, (double)grows / 1073741824.0, nm);
    }
    free(fl);
    return out[0] != '\0';
}
