/* config_view.c — the run's configuration in the views (config_view.h): a table for the text
 * report, a "config" object for JSON, each value with its source (argument, config file, the
 * trace, nanoGPT's default for nanoGPT only, or unknown). Resolving it is model/advice/model.c.
 * A value, a place, a note may quote the trace's bytes: escaped for the terminal, made valid
 * UTF-8 for JSON (jsonw.h). */
#include "config_view.h"

#include <string.h>

#include "escape.h"
#include "jsonw.h"

/* columns: the terminal columns of UTF-8 text s (its bytes less continuation bytes) */
static int columns(const char *s)
{
    int n = 0;
    for (; *s; s++)
        n += ((unsigned char)*s & 0xC0) != 0x80;
    return n;
}

void config_print(FILE *out, const nano_config *c, int transformer)
{
    int nd = 0, nf = 0, na = 0, ni = 0, nu = 0, nh = 0;
    for (int k = 0; k < CFG_COUNT; k++) {
        config_source s = c->v[k].src;
        if (!config_key_shown(c, (config_key)k, transformer)) {
            nh++; /* (JSON's config has every key) */
            continue;
        }
        nd += s == CONFIG_SRC_DEFAULT;
        nf += s == CONFIG_SRC_FILE;
        na += s == CONFIG_SRC_ARG || s == CONFIG_SRC_FLAG;
        ni += s == CONFIG_SRC_TRACE;
        nu += s == CONFIG_SRC_UNKNOWN;
    }
    fprintf(out,
            "configuration (%s): %d from arguments/flags, %d from files (config files "
            "or the script's own), %d inferred from the trace",
            config_program_name(c->program), na, nf, ni);
    if (nd)
        fprintf(out, ", %d nanoGPT defaults", nd);
    fprintf(out, ", %d unknown", nu);
    if (nh) /* the counts are of the rows below, not of every key */
        fprintf(out,
                "; %d more not shown here (of a transformer's shape, which this model's "
                "what-ifs do not use; JSON config has them)",
                nh);
    fputc('\n', out);
    if (nd == CFG_COUNT && c->program == PROG_NANOGPT)
        fprintf(out, "  note: no nanoGPT setting was found on the command line; the formulas "
                     "assume train.py's "
                     "defaults below (override them, e.g. batch_size=8)\n");
    /* each row named as the program names it (config_key_said: nanoGPT's keys for nanoGPT, else
     * words that fit any program and the program's own flag), in a column as wide as the widest
     * shown (28 at least: nanoGPT's table as it was) */
    char name[CFG_COUNT][160];
    int width = 28;
    for (int k = 0; k < CFG_COUNT; k++) {
        char said[160];
        const char *s = config_key_said(c, (config_key)k, said, sizeof said);
        /* what came from the trace (a flag, a value, where it was set, a config file's line in a
         * note, the recorded versions) is escaped: a command line may hold terminal escapes */
        escape_term(s, strlen(s), name[k], sizeof name[k]);
        if (config_key_shown(c, (config_key)k, transformer) && columns(name[k]) > width)
            width = columns(name[k]);
    }
    for (int k = 0; k < CFG_COUNT; k++) {
        char buf[40];
        const config_value *v = &c->v[k];
        if (!config_key_shown(c, (config_key)k, transformer))
            continue;
        const char *val = config_value_text(c, (config_key)k, buf, sizeof buf);
        fprintf(out, "  %s%*s ", name[k], width - columns(name[k]), "");
        escape_term_fputs(out, val, strlen(val));
        char why[sizeof v->where + 64]; /* (the recorded script's name: from the trace, escaped) */
        const char *src = v->src == CONFIG_SRC_UNKNOWN
                              ? config_unknown_text(c, (config_key)k, why, sizeof why)
                          : v->src != CONFIG_SRC_DEFAULT ? config_source_name(v->src)
                                                         : "default (nanoGPT train.py)";
        fprintf(out, "%*s %s", (int)(strlen(val) < 10 ? 10 - strlen(val) : 0), "",
                v->src == CONFIG_SRC_UNKNOWN ? "unknown: " : "");
        escape_term_fputs(out, src, strlen(src));
        if (v->src != CONFIG_SRC_UNKNOWN && v->where[0]) { /* (an unknown's: its reason above) */
            fputs("  ", out);
            escape_term_fputs(out, v->where, strlen(v->where));
        }
        fputc('\n', out);
    }
    if (c->torch_version[0]) {
        fputs("  recorded: PyTorch ", out);
        escape_term_fputs(out, c->torch_version, strlen(c->torch_version));
        if (c->cuda_version[0]) {
            fputs(", built for CUDA ", out);
            escape_term_fputs(out, c->cuda_version, strlen(c->cuda_version));
        }
        fputc('\n', out);
    }
    for (int i = 0; i < config_notes_kept(c); i++) {
        fputs("  note: ", out);
        escape_term_fputs(out, c->warnings[i], strlen(c->warnings[i]));
        fputc('\n', out);
    }
    if (c->nwarnings > config_notes_kept(c))
        fprintf(out, "  note: %d more notes not kept (the first %d are above)\n",
                c->nwarnings - config_notes_kept(c), config_notes_kept(c));
}

/* hidden_where: where a key the text report does not show got its value from the trace: the
 * tensors read as a transformer's (T5's decoder blocks alone, 12 of its 24, and its targets'
 * 128 tokens where its inputs had 512 had been given as the model's n_layer and block_size,
 * unqualified) */
static void hidden_where(const nano_config *c, config_key k, char *out, size_t n)
{
    snprintf(out, n,
             "not shown (a transformer's shape, which this model's what-ifs do not use): read "
             "from its tensors as a transformer's, it may be one part's, not the model's (an "
             "encoder-decoder has two stacks of blocks and two sequence lengths): %s",
             c->v[k].where);
}

void config_add_json(cJSON *root, const nano_config *c, int transformer)
{
    cJSON *cfg = cJSON_AddObjectToObject(root, "config");
    cJSON_AddStringToObject(root, "config_program", config_program_name(c->program));
    for (int k = 0; k < CFG_COUNT; k++) {
        const config_value *v = &c->v[k];
        /* keyed by nanoGPT's names (the contract), each with its words for any program */
        cJSON *e = cJSON_AddObjectToObject(cfg, config_key_name((config_key)k));
        int shown = config_key_shown(c, (config_key)k, transformer);
        if (v->src == CONFIG_SRC_UNKNOWN) {
            cJSON_AddNullToObject(e, "value");
            cJSON_AddStringToObject(e, "source", config_source_name(v->src));
            jsonw_add_c(e, "where", v->where);
            if (!shown)
                cJSON_AddFalseToObject(e, "shown");
            if (v->unplaced[0]) /* the script's flags its name says, none read as it */
                jsonw_add_c(e, "unplaced", v->unplaced);
            cJSON_AddStringToObject(e, "label", config_key_label((config_key)k));
            continue;
        }
        switch (config_key_type((config_key)k)) {
        case CONFIG_FLOAT:
            cJSON_AddNumberToObject(e, "value", v->f);
            break;
        case CONFIG_BOOL:
            cJSON_AddBoolToObject(e, "value", v->i != 0);
            break;
        case CONFIG_STR:
            jsonw_add_c(e, "value", v->s);
            break;
        case CONFIG_INT:
            cJSON_AddNumberToObject(e, "value", (double)v->i);
            break;
        }
        cJSON_AddStringToObject(e, "source", config_source_name(v->src));
        if (!shown && v->src == CONFIG_SRC_TRACE) { /* (the trace's reading: said as one) */
            char why[sizeof v->where + 256];
            hidden_where(c, (config_key)k, why, sizeof why);
            jsonw_add_c(e, "where", why);
        } else
            jsonw_add_c(e, "where", v->where);
        if (!shown) /* (a value the command line or a file gave is the program's own) */
            cJSON_AddFalseToObject(e, "shown");
        if (v->flag[0]) { /* how the program takes it: predict --from a report speaks it */
            jsonw_add_c(e, "flag", v->flag);
            cJSON_AddStringToObject(e, "flag_sep",
                                    v->flag_sep == '='   ? "="
                                    : v->flag_sep == '(' ? "("
                                                         : " ");
            if (v->flag_sep == '(') /* a keyword of the script's call */
                jsonw_add_c(e, "call", v->call);
        }
        if (v->unplaced[0]) /* the script's flags its name says, none read as it */
            jsonw_add_c(e, "unplaced", v->unplaced);
        cJSON_AddStringToObject(e, "label", config_key_label((config_key)k));
    }
    cJSON_AddNumberToObject(root, "config_files_missing", c->nfiles_missing);
    if (c->script_read[0]) /* (what predict --from says of a change no flag carries) */
        jsonw_add_c(root, "config_script_read", c->script_read);
    if (c->targs_call[0])
        jsonw_add_c(root, "config_targs_call", c->targs_call);
    if (c->batch_unplaced[0]) /* (an unknown micro-batch's reason names them) */
        jsonw_add_c(root, "config_batch_flags_unplaced", c->batch_unplaced);
    /* (where no batch flag names an unknown micro-batch: the other integer flags, --N_rand) */
    if (c->flags_unread[0] && !c->batch_unplaced[0] && !config_known(c, CFG_batch_size))
        jsonw_add_c(root, "config_flags_unread", c->flags_unread);
    if (c->torch_version[0]) /* the recorded versions: a trace's bytes */
        jsonw_add_c(root, "torch_version", c->torch_version);
    else
        cJSON_AddNullToObject(root, "torch_version");
    if (c->cuda_version[0])
        jsonw_add_c(root, "cuda_version", c->cuda_version);
    else
        cJSON_AddNullToObject(root, "cuda_version");
    if (c->nwarnings) {
        cJSON *w = cJSON_AddArrayToObject(root, "config_warnings");
        for (int i = 0; i < config_notes_kept(c); i++)
            cJSON_AddItemToArray(w, jsonw_item(c->warnings[i], strlen(c->warnings[i])));
        cJSON_AddNumberToObject(root, "config_warnings_cut", c->nwarnings - config_notes_kept(c));
    }
}
