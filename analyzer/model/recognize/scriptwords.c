/* scriptwords.c — the key a script's flag says in words of its own where no spelling places it
 * (--encoder-layers: the layers; --encoder-embed-dim: the width; --max-tokens: a cap on a batch's
 * tokens), so that a key left unknown names the flags rather than saying the script has none for
 * it (scriptflags.c). Nothing is placed: a name's words say what a flag may set, not what the
 * program does with it (--encoder-layers is an encoder's layers alone, a part of an
 * encoder-decoder's; another program's --update-freq need not be the accumulation). */
#include <string.h>

#include "namewords.h"
#include "scriptflags.h"

/* has_word: w is one of name's '_'-separated words (prefix 1: a word starts with w) */
static int has_word(const char *name, const char *w, int prefix)
{
    return namewords_has(name, strlen(name), "_", w, prefix);
}

static int any_word(const char *name, const char *const *ws)
{
    for (int i = 0; ws[i]; i++)
        if (has_word(name, ws[i], 0))
            return 1;
    return 0;
}

int scriptflags_token_cap(const char *name)
{
    /* (not a side pass's cap, in any form of its words, nor a generation's new tokens) */
    unsigned side = NW_EVAL | NW_TEST | NW_SAMPLE | NW_GEN | NW_PREDICT | NW_INFER;
    return has_word(name, "tokens", 0) &&
           (has_word(name, "max", 0) || has_word(name, "batch", 0)) && !has_word(name, "new", 0) &&
           !(namewords_kinds(name, strlen(name), "_", 1) & side);
}

int scriptflags_model_choice(const char *name)
{
    static const char *const m[] = {"model", "arch", "architecture", "backbone", NULL};
    static const char *const not_m[] = {"dir",   "output",   "save",    "ckpt", "checkpoint",
                                        "ema",   "teacher",  "ref",     "eval", "lr",
                                        "dtype", "parallel", "compile", "seed", NULL};
    return any_word(name, m) && !any_word(name, not_m) && scriptflags_words_key(name) < 0;
}

int scriptflags_words_key(const char *name)
{
    static const char *const not_l[] = {"freeze", "frozen", "decay", "skip", "lr", "drop", NULL};
    static const char *const l[] = {"layers", "nlayers", "depth", "blocks", NULL};
    static const char *const t[] = {"seq",     "seqlen",    "len", "length",
                                    "context", "positions", "ctx", NULL};
    static const char *const d[] = {"dim",  "width",     "embed",  "emb",
                                    "embd", "embedding", "hidden", NULL};
    static const char *const not_d[] = {"ffn",  "mlp",  "intermediate", "head", "kv",
                                        "lora", "rank", "latent",       "proj", NULL};
    static const char *const a[] = {"accum", "accumulation", "accumulate", NULL};
    if (has_word(name, "drop", 1))
        return CFG_dropout;
    if (has_word(name, "heads", 0))
        return has_word(name, "kv", 0) ? -1 : CFG_n_head;
    if (any_word(name, l))
        return any_word(name, not_l) ? -1 : CFG_n_layer;
    if (any_word(name, a) || strstr(name, "update_freq"))
        return CFG_gradient_accumulation_steps;
    if (scriptflags_token_cap(name) || has_word(name, "batch", 0) || has_word(name, "bs", 0))
        return config_side_pass_name(name) ? -1 : CFG_batch_size;
    if (has_word(name, "vocab", 0))
        return CFG_vocab_size;
    if (has_word(name, "bias", 0))
        return CFG_bias;
    if (any_word(name, t) || has_word(name, "resolution", 0) || strstr(name, "image_size") ||
        strstr(name, "img_size") || strstr(name, "input_size"))
        return CFG_block_size; /* (an image's side sets a vision transformer's patch tokens) */
    if (any_word(name, d))
        return any_word(name, not_d) ? -1 : CFG_n_embd;
    return -1;
}
