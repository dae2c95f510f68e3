/* family.c — which kind of model was trained (recognize.h): the model classes and files on the
 * trace's Python stacks first (a transformer decoder, an encoder, a vision transformer, a
 * convolutional network), the repeating blocks of the parameters when no frame names the model;
 * and recognize_run, which puts the three parts together. */
#include <stdio.h>
#include <string.h>

#include "recognize.h"

static const char *const fam_keys[] = {
#define VT_FAMILY_KEY(e, key, words) key,
    VT_FAMILIES(VT_FAMILY_KEY)
#undef VT_FAMILY_KEY
};
static const char *const fam_words[] = {
#define VT_FAMILY_WORDS(e, key, words) words,
    VT_FAMILIES(VT_FAMILY_WORDS)
#undef VT_FAMILY_WORDS
};

const char *family_key(model_family f)
{
    return (unsigned)f < FAM_COUNT ? fam_keys[f] : "?";
}
const char *family_words(model_family f)
{
    return (unsigned)f < FAM_COUNT ? fam_words[f] : "?";
}
/* X(enum suffix, JSON key, words): what the evidence tells of a family where it does not tell
 * the family itself (the JSON's family is this key, never the family the formulas take: a GradCache
 * encoder read from its sizes had been "decoder_transformer" where the text said "an encoder or a
 * classifier", a Mamba's "decoder_transformer" where it said "a transformer or another kind", a
 * speech encoder's "vision_transformer" where it said "the trace does not tell which") */
#define VT_FAMILY_TOLD(X)                                                                          \
    X(CONV_STEM, "conv_stem_transformer",                                                          \
      "a transformer with a convolutional input stem (a vision transformer's patches or an "       \
      "audio encoder's subsampled frames: the trace does not tell which)")                         \
    X(BLOCKS_LM, "language_model",                                                                 \
      "a language model of repeating blocks (a transformer or another kind, as a state-space "     \
      "model: the tensor sizes do not tell)")                                                      \
    X(SIZES_LM, "transformer_language_model",                                                      \
      "a transformer language model (a decoder or an encoder: the tensor sizes do not tell)")      \
    X(SIZES_NO_HEAD, "transformer",                                                                \
      "a transformer with no output layer over its vocabulary (an encoder or a classifier: no "    \
      "B·T×V logits)")                                                                             \
    X(SIZES_ENDED, "transformer",                                                                  \
      "a transformer (a language model or not: no B·T×V logits over the token batch read, and "  \
      "the tensor sizes do not tell)")                                                             \
    X(SIZES_CUT, "transformer",                                                                    \
      "a transformer (a language model or not: the run ended before its first forward's end, "     \
      "and the tensor sizes do not tell)")                                                         \
    X(DECODER_NO_HEAD, "decoder_transformer",                                                      \
      "a decoder transformer with no output layer over its vocabulary (no B·T×V logits)")          \
    X(ENCODER_NO_HEAD, "encoder_transformer",                                                      \
      "an encoder transformer with no output layer over its vocabulary (no B·T×V logits: no "    \
      "masked language model)")

enum {
    TOLD_NONE = -1,
#define VT_TOLD_ENUM(e, key, words) TOLD_##e,
    VT_FAMILY_TOLD(VT_TOLD_ENUM)
#undef VT_TOLD_ENUM
};
static const struct {
    const char *key, *words;
} told[] = {
#define VT_TOLD_ROW(e, key, words) {key, words},
    VT_FAMILY_TOLD(VT_TOLD_ROW)
#undef VT_TOLD_ROW
};

/* told_of: which of VT_FAMILY_TOLD r's evidence says, TOLD_NONE for its family's own words */
static int told_of(const run_recognition *r)
{
    if (r->family == FAM_VISION_TRANSFORMER && r->conv_stem)
        return TOLD_CONV_STEM;
    if (r->family_by_sizes && r->family == FAM_DECODER && r->family_width_program && r->lm_head > 0)
        return TOLD_BLOCKS_LM;
    if (r->family_by_sizes && r->family == FAM_DECODER)
        return r->lm_head > 0   ? TOLD_SIZES_LM
               : r->lm_head < 0 ? TOLD_SIZES_NO_HEAD
               : r->lm_ended    ? TOLD_SIZES_ENDED
                                : TOLD_SIZES_CUT;
    if (r->lm_head < 0 && r->family == FAM_DECODER)
        return TOLD_DECODER_NO_HEAD;
    if (r->lm_head < 0 && r->family == FAM_ENCODER)
        return TOLD_ENCODER_NO_HEAD;
    return TOLD_NONE;
}

const char *family_text(const run_recognition *r)
{
    int k = told_of(r);
    return k == TOLD_NONE ? family_words(r->family) : told[k].words;
}

const char *family_told_key(const run_recognition *r)
{
    int k = told_of(r);
    return k == TOLD_NONE ? family_key(r->family) : told[k].key;
}

int family_transformer(model_family f)
{
    return f == FAM_DECODER || f == FAM_ENCODER || f == FAM_VISION_TRANSFORMER;
}

static int ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && !strcmp(s + a - b, suffix);
}

/* X(family, file part or NULL, qualname suffix or NULL) — the evidence that names a family,
 * strongest first: a model class of the kind, then the library file it comes from. A diffusion
 * U-Net and an encoder-decoder come first: the one's blocks are Conv2d and attention (not a plain
 * CNN), the other's halves may be models of the other kinds (EncoderDecoderModel over BERT and
 * GPT-2). */
#define VT_FAMILY_EVIDENCE(X)                                                                      \
    X(DIFFUSION_UNET, NULL, "UNet2DConditionModel.forward")                                        \
    X(DIFFUSION_UNET, NULL, "UNet2DModel.forward")                                                 \
    X(DIFFUSION_UNET, "/diffusers/models/unets/", NULL)                                            \
    X(ENCODER_DECODER, NULL, "T5ForConditionalGeneration.forward")                                 \
    X(ENCODER_DECODER, NULL, "BartForConditionalGeneration.forward")                               \
    X(ENCODER_DECODER, NULL, "EncoderDecoderModel.forward")                                        \
    X(ENCODER_DECODER, "/models/t5/", NULL)                                                        \
    X(ENCODER_DECODER, "/models/mt5/", NULL)                                                       \
    X(ENCODER_DECODER, "/models/umt5/", NULL)                                                      \
    X(ENCODER_DECODER, "/models/bart/", NULL)                                                      \
    X(ENCODER_DECODER, "/models/mbart/", NULL)                                                     \
    X(ENCODER_DECODER, "/models/pegasus/", NULL)                                                   \
    X(ENCODER_DECODER, "/models/marian/", NULL)                                                    \
    X(ENCODER_DECODER, "/models/whisper/", NULL)                                                   \
    X(DECODER, NULL, "ForCausalLM.forward")                                                        \
    X(DECODER, NULL, "LMHeadModel.forward")                                                        \
    X(ENCODER, NULL, "ForMaskedLM.forward")                                                        \
    X(ENCODER, NULL, "BertModel.forward")                                                          \
    X(ENCODER, NULL, "RobertaModel.forward")                                                       \
    X(VISION_TRANSFORMER, NULL, "VisionTransformer.forward")                                       \
    X(VISION_TRANSFORMER, NULL, "ViTForImageClassification.forward")                               \
    X(VISION_TRANSFORMER, NULL, "ViTModel.forward")                                                \
    X(VISION_TRANSFORMER, NULL, "PatchEmbed.forward")                                              \
    X(DECODER, "/models/gpt2/", NULL)                                                              \
    X(DECODER, "/models/llama/", NULL)                                                             \
    X(DECODER, "/models/mistral/", NULL)                                                           \
    X(ENCODER, "/models/bert/", NULL)                                                              \
    X(ENCODER, "/models/roberta/", NULL)                                                           \
    X(ENCODER, "/models/distilbert/", NULL)                                                        \
    X(VISION_TRANSFORMER, "/models/vit/", NULL)                                                    \
    X(VISION_TRANSFORMER, "vision_transformer.py", NULL)                                           \
    X(VISION_TRANSFORMER, "/models/deit/", NULL)                                                   \
    X(CONVNET, "/models/resnet/", NULL)                                                            \
    X(CONVNET, "/models/convnext/", NULL)                                                          \
    X(CONVNET, "torchvision/models/", NULL)                                                        \
    X(CONVNET, "torch/nn/modules/conv.py", "Conv2d.forward")                                       \
    X(CONVNET, "torch/nn/modules/conv.py", "Conv3d.forward")

static const struct {
    model_family fam;
    const char *file, *suffix;
} evidence[] = {
#define VT_EVIDENCE_ROW(f, file, suffix) {FAM_##f, file, suffix},
    VT_FAMILY_EVIDENCE(VT_EVIDENCE_ROW)
#undef VT_EVIDENCE_ROW
};

/* class_of: "GPT2LMHeadModel" from "GPT2LMHeadModel.forward" (the part before the last '.'). */
static void class_of(const char *qual, char *out, size_t len)
{
    const char *dot = strrchr(qual, '.');
    size_t n = dot ? (size_t)(dot - qual) : strlen(qual);
    if (n >= len)
        n = len - 1;
    memcpy(out, qual, n);
    out[n] = '\0';
}

/* own_forward: a forward of one of the program's own nn.Module classes (in a file of neither
 * torch nor an installed package) */
static int own_forward(const tables_code *c)
{
    const char *f = c->filename.s ? c->filename.s : "", *q = c->qualname.s ? c->qualname.s : "";
    return ends_with(q, ".forward") && !strchr(q, '<') && !strstr(f, "torch/") &&
           !strstr(f, "-packages/");
}

/* CONV_FILE: torch.nn's convolution layers (Conv1d / 2d / 3d and their transposes) */
#define CONV_FILE "torch/nn/modules/conv.py"

/* conv_callers: the code ids of the program's own forwards that call a convolution layer (the
 * nearest own forward outside a frame of CONV_FILE on any stack), up to n into ids; the count.
 * A model that holds such a module holds the layer too, but its other modules need not: CLIP's
 * image tower calls its one patch convolution, its Block and Attn call none. */
static size_t conv_callers(const tables *t, uint32_t *ids, size_t n)
{
    size_t pos = 0, k = 0;
    const tables_stack *st;
    while (t && (st = tables_stack_next(t, &pos))) {
        int in_conv = 0;
        for (unsigned i = st->n_native; i < (unsigned)st->n_native + st->n_python; i++) {
            const tables_code *c = tables_code_get(t, VT_PYFRAME_CODE(st->frames[i]));
            if (!c)
                continue;
            if (c->filename.s && strstr(c->filename.s, CONV_FILE)) {
                in_conv = 1;
                continue;
            }
            if (!in_conv || !own_forward(c))
                continue;
            size_t j = 0;
            while (j < k && ids[j] != c->code_id)
                j++;
            if (j == k && k < n)
                ids[k++] = c->code_id;
            break;
        }
    }
    return k;
}

/* own_modules: the program's own nn.Module classes (own_forward), up to four in their order on
 * the stacks, ", "-joined into out; those of ids alone where n_ids > 0; 0 when there is none. A
 * layer is no model: a GAN's Generator and Discriminator are what its Conv2d layers were trained
 * in. */
static int own_modules(const tables *t, const uint32_t *ids, size_t n_ids, char *out, size_t len)
{
    size_t pos = 0, n = 0;
    const tables_code *c;
    out[0] = '\0';
    while (t && n < 4 && (c = tables_code_next(t, &pos))) {
        const char *q = c->qualname.s ? c->qualname.s : "";
        char cls[96];
        size_t j = 0;
        while (j < n_ids && ids[j] != c->code_id)
            j++;
        if (!own_forward(c) || (n_ids && j == n_ids))
            continue;
        class_of(q, cls, sizeof cls);
        size_t have = strlen(out), k = strlen(cls);
        const char *dup = strstr(out, cls); /* once each (a whole name between separators) */
        if (dup && (dup == out || dup[-1] == ' ') && (dup[k] == '\0' || dup[k] == ','))
            continue;
        snprintf(out + have, len - have, "%s%s", have ? ", " : "", cls);
        n++;
    }
    return n > 0;
}

/* patch_conv: torch's convolution layers whose outputs were under 5 % of the activations live
 * at the moment that held the most (recognize_input.act_bytes), in a run whose attention kernels
 * ran, are a convolution at the input, a vision transformer's patch embedding, not the layers of
 * a convolutional network (a ResNet's convolutions make a third or more of them): a CLIP's two
 * towers, whose one Conv2d (16×16 patches) holds 0.4 % of the weights, had been "a convolutional
 * network" with the transformer formulas set aside. 1 when so, the family and its evidence said
 * (own: the program's modules that call the layers, NULL: none named) */
static int patch_conv(const recognize_input *in, const char *layer, const char *own,
                      run_recognition *out)
{
    if (!in->attention || !in->act_bytes || in->conv_act_bytes >= in->act_bytes / 20)
        return 0;
    char share[48] = "none";
    if (in->conv_act_bytes)
        snprintf(share, sizeof share, "%.1f %%",
                 100.0 * (double)in->conv_act_bytes / (double)in->act_bytes);
    out->family = FAM_VISION_TRANSFORMER;
    const infer_result *ir = in->inferred; /* (an image batch, a patch grid: a vision model's) */
    out->conv_stem =
        !ir || (!ir->v[INFER_image_size].known && !ir->v[INFER_token_dtype_bytes].known);
    snprintf(out->family_where, sizeof out->family_where,
             "attention kernels ran; the %.40s layers (torch's conv.py%s%.120s) made %s of the "
             "activations live %.40s: a convolution at the input (%s), not the layers of a "
             "convolutional network",
             layer,
             !own               ? ""
             : strchr(own, ',') ? ", called in the program's own modules "
                                : ", called in the program's own module ",
             own ? own : "", share, in->act_at ? in->act_at : "at the peak",
             out->conv_stem ? "a patch embedding or a subsampling of frames: no image batch and "
                              "no patch grid's position embedding seen"
                            : "a patch embedding");
    return 1;
}

/* from_shapes: no frame names the model: repeating parameter blocks with an embedding of V×d
 * looked up from a B·T int64 token batch are a transformer (the decoder's formula is used: the
 * sizes cannot tell a decoder from an encoder), whether or not T was read apart (a model with no
 * position ids has none to read it from: a Llama-like one of its own had been "a model vramtrace
 * does not recognize"); a language model where its forward made B·T×V
 * logits, none where its forward ended without (INFER_lm_logits: an encoder classifier's). */
static void from_shapes(const recognize_input *in, run_recognition *out)
{
    const infer_result *ir = in->inferred;
    if (!ir || !ir->v[INFER_n_layer].known || !ir->v[INFER_n_embd].known ||
        !ir->v[INFER_vocab_size].known ||
        (!ir->v[INFER_tokens].known &&
         (!ir->v[INFER_block_size].known || !ir->v[INFER_batch_size].known)))
        return;
    out->family = FAM_DECODER;
    out->family_by_sizes = 1;
    const infer_value *lg = &ir->v[INFER_lm_logits];
    /* why the sizes speak: no frame at all, or the classes on the stacks are of no kind known (a
     * program's own Decoder and Block are named there: "no frame names the model class" had
     * been said of them) */
    char own[200], why[300];
    if (!out->python_frames)
        snprintf(why, sizeof why, "no Python frame names the model class");
    else if (own_modules(in->t, NULL, 0, own, sizeof own))
        snprintf(why, sizeof why,
                 "no class on the Python stacks is of a kind vramtrace knows: the program's "
                 "own %s",
                 own);
    else
        snprintf(why, sizeof why, "no class on the Python stacks is of a kind vramtrace knows");
    snprintf(out->family_where, sizeof out->family_where,
             "from the tensor sizes: %lld repeating blocks of width %lld, a %lld×%lld "
             "embedding%s (%.230s)",
             (long long)ir->v[INFER_n_layer].value, (long long)ir->v[INFER_n_embd].value,
             (long long)ir->v[INFER_vocab_size].value, (long long)ir->v[INFER_n_embd].value,
             !lg->known && in->backward_done > 0
                 ? ", B·T×V logits over the token batch read not seen (a backward followed)"
             : !lg->known ? ", B·T×V logits not seen (the first forward did not end)"
             : lg->value  ? " and B·T×V logits"
                          : ", no B·T×V logits in a first forward that ended",
             why);
}

void recognize_family_width(run_recognition *r, long long d, long long V, const char *why)
{
    char *p = strstr(r->family_where, " repeating blocks of width ");
    const char *e = p ? strstr(p, " embedding") : NULL;
    if (!r->family_by_sizes || !e)
        return;
    char buf[sizeof r->family_where];
    snprintf(buf, sizeof buf, "%.*s repeating blocks of width %lld (%.60s), a %lld×%lld%s",
             (int)(p - r->family_where), r->family_where, d, why, V, d, e);
    snprintf(r->family_where, sizeof r->family_where, "%s", buf);
    r->family_width_program = 1;
}

/* nanogpt_parts: nanoGPT's own classes beside its GPT in file f (its model.py): its LayerNorm (a
 * bias that can be off) and its MLP, whose forwards are on the stacks of an eager run. A GPT in a
 * file named model.py is not enough: minGPT's (mingpt/model.py) and many others' are there too */
static int nanogpt_parts(const tables *t, const char *f)
{
    static const char *const parts[] = {"LayerNorm.forward", "MLP.forward"};
    for (size_t i = 0; i < sizeof parts / sizeof *parts; i++) {
        size_t pos = 0;
        const tables_code *c;
        int seen = 0;
        while (!seen && (c = tables_code_next(t, &pos)))
            seen = c->qualname.s && !strcmp(c->qualname.s, parts[i]) && c->filename.s &&
                   !strcmp(c->filename.s, f);
        if (!seen)
            return 0;
    }
    return 1;
}

/* gpt_file: the base name of the file of the first GPT.forward on the stacks into out, where it
 * is not nanoGPT's model.py (a program's own class that is named GPT, as many are: nanoGPT's
 * had been said of one); 0 for nanoGPT's model.py (with its own classes beside it, or a
 * configurator's run, model_build), or no file */
static int gpt_file(const tables *t, char *out, size_t len)
{
    size_t pos = 0;
    const tables_code *c;
    while (t && (c = tables_code_next(t, &pos))) {
        const char *f = c->filename.s ? c->filename.s : "", *q = c->qualname.s ? c->qualname.s : "";
        if (strcmp(q, "GPT.forward"))
            continue;
        const char *base = strrchr(f, '/') ? strrchr(f, '/') + 1 : f;
        snprintf(out, len, "%s", base);
        return *base && (strcmp(base, "model.py") || !nanogpt_parts(t, f));
    }
    return 0;
}

/* lm_head: whether the model makes logits over its vocabulary (run_recognition.lm_head): what
 * the trace shows first; else a recognized token model's class (a language model's head, an
 * encoder's masked-LM head: the formulas' own); else not known */
static void lm_head(const recognize_input *in, run_recognition *out)
{
    const infer_value *lg = in->inferred ? &in->inferred->v[INFER_lm_logits] : NULL;
    out->lm_ended = 0;
    if (lg && lg->known)
        out->lm_head = lg->value ? 1 : -1;
    else
        out->lm_head =
            !out->family_by_sizes && (out->family == FAM_DECODER || out->family == FAM_ENCODER ||
                                      out->family == FAM_ENCODER_DECODER)
                ? 1
                : 0;
    out->lm_ended = !out->lm_head && in->backward_done > 0;
}

static void family_of(const recognize_input *in, run_recognition *out)
{
    const tables *t = in->t;
    size_t pos = 0;
    out->python_frames = t && tables_code_next(t, &pos) != NULL;
    out->family = FAM_UNKNOWN;
    out->family_by_sizes = out->conv_stem = 0;
    out->family_where[0] = out->model_class[0] = '\0';
    /* GPT.forward (with torch.compile the blocks' frames are fused away: the model's own
     * forward is what stays on the stacks) */
    out->nanogpt = tables_code_find(t, NULL, "GPT.forward", NULL, NULL, 0);
    out->huggingface = tables_code_find(t, "/transformers/", NULL, NULL, NULL, 0);
    out->batchnorm = tables_code_find(t, "torch/nn/modules/batchnorm.py", NULL, NULL, NULL, 0) ||
                     tables_code_find(t, "torch/nn/functional.py", "batch_norm", NULL, NULL, 0);
    if (out->nanogpt) {
        out->family = FAM_DECODER;
        snprintf(out->model_class, sizeof out->model_class, "GPT");
        char file[120];
        if (gpt_file(t, file, sizeof file)) /* (model_build says nanoGPT's where it runs) */
            snprintf(out->family_where, sizeof out->family_where,
                     "the program's own model class GPT on the Python stacks (GPT.forward in "
                     "%s)",
                     file);
        else
            snprintf(out->family_where, sizeof out->family_where, "%s", RECOGNIZE_NANOGPT_CLASS);
        return;
    }
    for (size_t i = 0; i < sizeof evidence / sizeof evidence[0]; i++) {
        char q[256] = "";
        size_t fpos = 0;
        const tables_code *c;
        int hit = 0;
        /* the file that held the evidence, for the sentence */
        char file[120] = "";
        while (t && (c = tables_code_next(t, &fpos))) {
            const char *f = c->filename.s ? c->filename.s : "";
            const char *qq = c->qualname.s ? c->qualname.s : "";
            if ((evidence[i].file && !strstr(f, evidence[i].file)) ||
                (evidence[i].suffix && !ends_with(qq, evidence[i].suffix)) ||
                strstr(f, "/peft/")) /* peft wraps the model: a feature, not the model */
                continue;
            snprintf(q, sizeof q, "%s", qq);
            const char *base = strrchr(f, '/');
            snprintf(file, sizeof file, "%s", base ? base + 1 : f);
            hit = 1;
            break;
        }
        if (!hit)
            continue;
        out->family = evidence[i].fam;
        if (evidence[i].suffix && evidence[i].file) { /* torch.nn's layer: no model class */
            char layer[64], own[200];
            class_of(q, layer, sizeof layer);
            uint32_t ids[16];
            size_t n_ids = conv_callers(t, ids, sizeof ids / sizeof ids[0]);
            int named = n_ids && own_modules(t, ids, n_ids, own, sizeof own);
            if (patch_conv(in, layer, named ? own : NULL, out))
                return;
            if (named)
                snprintf(out->family_where, sizeof out->family_where,
                         "%s layers (torch's %s) in the program's own modules %s", layer, file,
                         own);
            else
                snprintf(out->family_where, sizeof out->family_where,
                         "%s layers on the Python stacks (torch's %s), in no model class of a "
                         "known kind",
                         layer, file);
            return;
        }
        if (evidence[i].suffix)
            class_of(q, out->model_class, sizeof out->model_class);
        snprintf(out->family_where, sizeof out->family_where, "%s %s on the Python stacks (%s)",
                 evidence[i].suffix ? "the model class" : "the library's code",
                 evidence[i].suffix ? out->model_class : evidence[i].file, file);
        return;
    }
    from_shapes(in, out);
}

void recognize_family(const recognize_input *in, run_recognition *out)
{
    family_of(in, out);
    lm_head(in, out);
}
