/* predict_args.c — `vramtrace predict`'s command line: presets, config files, a Hugging Face
 * config.json, flags and nanoGPT's --key=value spelling, in order (predict_args.h). */
#include "predict_args.h"

#include <stdio.h>
#include <string.h>

#include "predict_files.h"
#include "predict_usage.h"

/* set: applies key=value with the source tag "flag". -1 with err on a bad value or key. */
static int set(nano_config *c, const char *key, const char *value, const char *where, char *err,
               size_t errlen)
{
    int rc = config_set(c, key, value, CONFIG_SRC_FLAG, where, err, errlen);
    if (rc == 1) {
        snprintf(err, errlen, "unknown option or key '%s' (see vramtrace predict --help)", where);
        return -1;
    }
    return rc;
}

/* contradict: on / off (1 / 2) of flag pair k said against what was said before, in err: -1 */
static int contradict(int *seen, int k, int v, const char *on, char *err, size_t errlen)
{
    if (seen[k] && seen[k] != v) {
        snprintf(err, errlen, "--%s and --%s contradict each other: give one", on,
                 k == 2 ? "untied-head"
                 : k    ? "no-bias"
                        : "no-compile");
        return -1;
    }
    seen[k] = v;
    return 0;
}

/* find_model: the name given with --model (either spelling; the first), or NULL */
static const char *find_model(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help"))
            return NULL; /* (help, whatever the rest) */
        if (!strncmp(argv[i], "--model=", 8))
            return argv[i] + 8;
        if (!strcmp(argv[i], "--model") && i + 1 < argc)
            return argv[i + 1];
    }
    return NULL;
}

int predict_parse(int argc, char **argv, nano_config *c, predict_args *a, char *err, size_t errlen)
{
    int seen[3] = {0, 0, 0}, froms = 0;     /* compile, bias, tied: 1 on, 2 off (said once) */
    const char *given[CFG_COUNT + 2] = {0}; /* each key's value, --model's, --card's (said once) */
    /* --model first, wherever it is: what the command line gives besides, flags and files, wins
     * over its preset in any order (--n-layer 3 before --model gpt2 had been replaced by 12) */
    const char *model = find_model(argc, argv);
    if (model && predict_model_preset(c, &a->block, model, err, errlen) < 0)
        return -1;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (!strcmp(arg, "-h") || !strcmp(arg, "--help")) {
            predict_usage(stdout);
            return 1;
        }
        if (arg[0] != '-' || arg[1] != '-') {
            if (arg[0] == '-') {
                snprintf(err, errlen, "unknown option %s (see vramtrace predict --help)", arg);
                return -1;
            }
            int hf = predict_hf_config(c, &a->block, arg, err, errlen);
            if (hf < 0 || (!hf && predict_apply_file(c, arg, err, errlen) < 0))
                return -1;
            continue;
        }
        char key[64];
        const char *eq = config_arg_key(arg, key, sizeof key);
        int bk = predict_block_key(key);
        if (bk) { /* the block's options: --mlp-width, --kv-heads, --tied-head, --untied-head */
            if (bk == 1 && contradict(seen, 2, key[0] == 't' ? 1 : 2, "tied-head", err, errlen))
                return -1;
            const char *bv = bk == 2 && !eq && i + 1 < argc ? argv[++i] : eq;
            if (predict_block_option(&a->block, key, bv, err, errlen) < 0)
                return -1;
            continue;
        }
        if (predict_train_key(key)) { /* --optimizer, --lora-rank, --lora-targets */
            const char *tv = !eq && i + 1 < argc ? argv[++i] : eq;
            if (predict_train_option(&a->train, key, tv, err, errlen) < 0)
                return -1;
            continue;
        }
        /* flags without a value */
        int flag = !strcmp(key, "json") || !strcmp(key, "no_flash") ||
                   !strcmp(key, "checkpointing") || !strcmp(key, "no_bias") ||
                   !strcmp(key, "no_compile");
        if (flag && eq) { /* (as every command's parser says it: cli.c) */
            snprintf(err, errlen, "%.*s takes no value (see vramtrace predict --help)",
                     (int)(eq - 1 - arg), arg);
            return -1;
        }
        if (!eq && (flag || !strcmp(key, "bias") || !strcmp(key, "compile"))) {
            int pair = strstr(key, "compile") ? 0 : strstr(key, "bias") ? 1 : -1;
            if (pair >= 0 && contradict(seen, pair, strncmp(key, "no_", 3) ? 1 : 2,
                                        pair ? "bias" : "compile", err, errlen))
                return -1;
            if (!strcmp(key, "json"))
                a->json = 1;
            else if (!strcmp(key, "no_flash"))
                a->unfused = 1;
            else if (!strcmp(key, "checkpointing"))
                a->checkpointing = 1;
            else if (set(c, !strncmp(key, "no_", 3) ? key + 3 : key,
                         !strncmp(key, "no_", 3) ? "False" : "True", arg, err, errlen) < 0)
                return -1;
            continue;
        }
        if (strcmp(key, "model") && strcmp(key, "card") && strcmp(key, "from") &&
            strcmp(key, "grad_accum") && config_find_key(key) < 0) { /* before its value */
            snprintf(err, errlen, "unknown option %s (see vramtrace predict --help)", arg);
            return -1;
        }
        const char *val = eq;
        if (!val) {
            if (i + 1 >= argc) {
                snprintf(err, errlen, "option '%s' needs a value (e.g. %s %s)", arg, arg,
                         !strcmp(key, "model")  ? "gpt2"
                         : !strcmp(key, "card") ? "rtx4070"
                         : !strcmp(key, "from") ? "run.vt"
                         : config_find_key(key) >= 0
                             ? config_key_example((config_key)config_find_key(key))
                             : "8");
                return -1;
            }
            val = argv[++i];
        }
        if (!strcmp(key, "grad_accum"))
            snprintf(key, sizeof key, "gradient_accumulation_steps");
        int gk = !strcmp(key, "model")  ? CFG_COUNT
                 : !strcmp(key, "card") ? CFG_COUNT + 1
                                        : config_find_key(key);
        if (gk >= 0 && given[gk] && strcmp(given[gk], val)) { /* --batch-size 4 --batch-size 8 */
            snprintf(err, errlen, "%.40s given twice (%.40s, then %.40s): give one", arg, given[gk],
                     val);
            return -1;
        }
        if (gk >= 0)
            given[gk] = val;
        char where[160];
        snprintf(where, sizeof where, "%s%s%s", arg, eq ? "" : " ", eq ? "" : val);
        if (!strcmp(key, "model")) {
            /* (applied before the loop: find_model) */
        } else if (!strcmp(key, "card")) {
            char why[400];
            if (card_parse(val, &a->card, why, sizeof why) < 0) {
                snprintf(err, errlen, "--card: %s", why); /* as report says it */
                return -1;
            }
            a->have_card = 1;
        } else if (!strcmp(key, "from")) {
            if (froms++ && strcmp(a->from, val)) { /* (the same file twice: taken) */
                snprintf(err, errlen, "--from given twice: one traced run calibrates a prediction");
                return -1;
            }
            a->from = val; /* loaded before the other options (find_from) */
        } else if (set(c, key, val, where, err, errlen) < 0) {
            return -1;
        }
    }
    /* a gated MLP given here (--mlp-width: a Llama's, Mistral's, Qwen's) is no model nanoGPT
     * trains: transformers trains it eager unless told, and the program is not nanoGPT (as for
     * a config.json): it had been given nanoGPT's compile True, "fits" at B=12 where the H100
     * run of that Llama 160M ran out of memory, and nanoGPT's --batch_size=N spellings */
    if (!a->from && !strncmp(a->block.from, "--mlp-width", 11)) {
        if (c->v[CFG_compile].src == CONFIG_SRC_DEFAULT &&
            set(c, "compile", "False", "a gated MLP (--mlp-width): trained eager unless told", err,
                errlen) < 0)
            return -1;
        c->program = PROG_UNKNOWN;
    }
    return config_validate(c, err, errlen);
}
