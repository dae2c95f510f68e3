/* config_view.c — the run's nanoGPT configuration in the views (config_view.h): a table for the
 * text report, a "config" object for JSON. Parsing and resolving it is model/config.c. */
#include "config_view.h"

static const char *program_name(config_program p)
{
    switch (p) {
    case PROG_NANOGPT:
        return "nanoGPT";
    case PROG_ARGPARSE:
        return "a plain argparse script";
    case PROG_HF_TRAINER:
        return "Hugging Face Trainer arguments";
    default:
        return "unknown program";
    }
}

void config_print(FILE *out, const nano_config *c)
{
    int nd = 0, nf = 0, na = 0, ni = 0;
    for (int k = 0; k < CFG_COUNT; k++) {
        config_source s = c->v[k].src;
        nd += s == CONFIG_SRC_DEFAULT;
        nf += s == CONFIG_SRC_FILE;
        na += s == CONFIG_SRC_ARG || s == CONFIG_SRC_FLAG;
        ni += s == CONFIG_SRC_TRACE;
    }
    fprintf(out,
            "configuration (%s): %d from arguments/flags, %d from config files, %d inferred "
            "from the trace, %d %s\n",
            program_name(c->program), na, nf, ni, nd,
            c->program == PROG_NANOGPT ? "defaults" : "not given (assumed)");
    if (nd == CFG_COUNT && c->program == PROG_NANOGPT)
        fprintf(out, "  note: no nanoGPT setting was found on the command line; the formulas "
                     "assume train.py's "
                     "defaults below (override them, e.g. batch_size=8)\n");
    for (int k = 0; k < CFG_COUNT; k++) {
        char buf[40];
        const config_value *v = &c->v[k];
        fprintf(out, "  %-28s %-10s %s%s%s\n", config_key_name((config_key)k),
                config_value_text(c, (config_key)k, buf, sizeof buf),
                v->src != CONFIG_SRC_DEFAULT ? config_source_name(v->src)
                : c->program != PROG_NANOGPT
                    ? "not given: assumed, the program's own value is unknown"
                : c->nfiles_missing
                    ? "nanoGPT train.py's default assumed: a config file the trace did not record "
                      "may set it"
                    : "default (nanoGPT train.py)",
                v->where[0] ? "  " : "", v->where);
    }
    if (c->torch_version[0])
        fprintf(out, "  recorded: PyTorch %s%s%s\n", c->torch_version,
                c->cuda_version[0] ? ", built for CUDA " : "", c->cuda_version);
    for (int i = 0; i < c->nwarnings && i < 4; i++)
        fprintf(out, "  note: %s\n", c->warnings[i]);
}

void config_add_json(cJSON *root, const nano_config *c)
{
    cJSON *cfg = cJSON_AddObjectToObject(root, "config");
    cJSON_AddStringToObject(root, "config_program", program_name(c->program));
    for (int k = 0; k < CFG_COUNT; k++) {
        const config_value *v = &c->v[k];
        cJSON *e = cJSON_AddObjectToObject(cfg, config_key_name((config_key)k));
        switch (config_key_type((config_key)k)) {
        case CONFIG_FLOAT:
            cJSON_AddNumberToObject(e, "value", v->f);
            break;
        case CONFIG_BOOL:
            cJSON_AddBoolToObject(e, "value", v->i != 0);
            break;
        case CONFIG_STR:
            cJSON_AddStringToObject(e, "value", v->s);
            break;
        case CONFIG_INT:
            cJSON_AddNumberToObject(e, "value", (double)v->i);
            break;
        }
        cJSON_AddStringToObject(e, "source", config_source_name(v->src));
        cJSON_AddStringToObject(e, "where", v->where);
    }
    cJSON_AddItemToObject(root, "torch_version",
                          c->torch_version[0] ? cJSON_CreateString(c->torch_version)
                                              : cJSON_CreateNull());
    cJSON_AddItemToObject(root, "cuda_version",
                          c->cuda_version[0] ? cJSON_CreateString(c->cuda_version)
                                             : cJSON_CreateNull());
    if (c->nwarnings) {
        cJSON *w = cJSON_AddArrayToObject(root, "config_warnings");
        for (int i = 0; i < c->nwarnings && i < 4; i++)
            cJSON_AddItemToArray(w, cJSON_CreateString(c->warnings[i]));
    }
}
