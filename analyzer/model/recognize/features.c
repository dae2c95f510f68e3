/* features.c — what was on in the run (recognize.h): activation checkpointing (frames under
 * torch.utils.checkpoint), torch.compile (dynamo tracing, AOT autograd, inductor or the code it
 * generated — not dynamo's disable() wrappers, which checkpointing and optimizers use in eager
 * runs), CUDA graphs, LoRA adapters (peft), transformers' KV cache, an EMA copy of the weights
 * (VT_EMA_CODE); off only when Python frames were recorded. */
#include <stdio.h>
#include <string.h>

#include "recognize.h"

static const char *const feat_keys[] = {
#define VT_FEATURE_KEY(e, key, words) key,
    VT_FEATURES(VT_FEATURE_KEY)
#undef VT_FEATURE_KEY
};
static const char *const feat_words[] = {
#define VT_FEATURE_WORDS(e, key, words) words,
    VT_FEATURES(VT_FEATURE_WORDS)
#undef VT_FEATURE_WORDS
};

const char *feature_key(feature_id f)
{
    return (unsigned)f < FEATURE_COUNT ? feat_keys[f] : "?";
}
const char *feature_words(feature_id f)
{
    return (unsigned)f < FEATURE_COUNT ? feat_words[f] : "?";
}
const char *feature_state_word(int state)
{
    return state == FEAT_ON ? "on" : state == FEAT_OFF ? "off" : "unknown";
}

static const struct {
    const char *file, *prefix, *words;
} ema_code[] = {
#define VT_EMA_ENTRY(file, prefix, words) {file, prefix, words},
    VT_EMA_CODE(VT_EMA_ENTRY)
#undef VT_EMA_ENTRY
};
#define N_EMA_CODE (sizeof ema_code / sizeof ema_code[0])

int recognize_ema_code(const char *file, const char *qualname)
{
    const char *q = qualname ? qualname : "";
    /* Python 3.10 names the function alone: a class's __init__ (the copy), to() (moved) */
    int bare = !strchr(q, '.') && (!strcmp(q, "__init__") || !strcmp(q, "to"));
    for (size_t i = 0; file && i < N_EMA_CODE; i++)
        if (strstr(file, ema_code[i].file) &&
            (!strncmp(q, ema_code[i].prefix, strlen(ema_code[i].prefix)) || bare))
            return (int)i + 1;
    return 0;
}

int recognize_ema_files(const tables *t)
{
    const char *files[N_EMA_CODE + 1];
    for (size_t i = 0; i < N_EMA_CODE; i++)
        files[i] = ema_code[i].file;
    files[N_EMA_CODE] = NULL;
    return tables_code_file_has(t, files);
}

const char *recognize_ema_words(int which)
{
    return which >= 1 && (size_t)which <= N_EMA_CODE ? ema_code[which - 1].words : "";
}

static void set(recog_feature *f, int state, const char *where)
{
    f->state = state;
    snprintf(f->where, sizeof f->where, "%.*s", (int)sizeof f->where - 1, where);
}

/* compile_code: a code object of torch.compile at work: inductor, AOT autograd, the code
 * inductor generated, or dynamo beyond eval_frame.py (whose _fn also wraps disable()). */
static int compile_code(const tables *t, char *file, size_t len)
{
    static const char *const parts[] = {"torch/_inductor/", "torchinductor_",
                                        "torch/_functorch/_aot_autograd/", "torch/_functorch/aot_",
                                        NULL};
    size_t pos = 0;
    const tables_code *c;
    while (t && (c = tables_code_next(t, &pos))) {
        const char *f = c->filename.s ? c->filename.s : "";
        int hit = 0;
        for (const char *const *p = parts; *p && !hit; p++)
            hit = strstr(f, *p) != NULL;
        if (!hit && strstr(f, "torch/_dynamo/"))
            hit = !strstr(f, "/eval_frame.py") && !strstr(f, "/external_utils.py") &&
                  !strstr(f, "/decorators.py");
        if (hit) {
            const char *base = strstr(f, "torch");
            snprintf(file, len, "%s", base ? base : f);
            return 1;
        }
    }
    return 0;
}

/* the training loops a framework runs, the first found on the Python stacks wins (Hugging
 * Face's Trainer runs under Accelerate: it comes first) */
static const struct {
    const char *key, *words, *file;
} loops[] = {
    {"lightning", "Lightning's Trainer", "lightning/pytorch/trainer/"},
    {"lightning", "Lightning's Trainer", "pytorch_lightning/trainer/"},
    {"hf_trainer", "Hugging Face's Trainer", "transformers/trainer.py"},
    {"accelerate", "Accelerate (its Accelerator)", "accelerate/accelerator.py"},
};

const char *recognize_loop_words(const char *loop)
{
    for (size_t i = 0; i < sizeof loops / sizeof loops[0]; i++)
        if (!strcmp(loop, loops[i].key))
            return loops[i].words;
    return !strcmp(loop, "own") ? "the script's own" : "unknown";
}

/* recognize_loop: which loop ran the steps, from the Python stacks */
static void recognize_loop(const tables *t, int frames, run_recognition *out)
{
    char q[120];
    for (size_t i = 0; i < sizeof loops / sizeof loops[0]; i++)
        if (tables_code_find(t, loops[i].file, NULL, NULL, q, sizeof q)) {
            snprintf(out->loop, sizeof out->loop, "%s", loops[i].key);
            snprintf(out->loop_where, sizeof out->loop_where,
                     "%s's code on the Python stacks (%.100s)", loops[i].file, q);
            return;
        }
    if (frames) {
        snprintf(out->loop, sizeof out->loop, "own");
        snprintf(out->loop_where, sizeof out->loop_where,
                 "no Trainer of Lightning or Hugging Face, no Accelerate on the Python stacks");
    }
}

/* recognize_ema: an EMA of the weights when its code ran (made tensors, on a recorded stack),
 * with the bytes of its copy among the parameters at the moment explained */
static void recognize_ema(const recognize_input *in, int frames, run_recognition *out)
{
    size_t pos = 0;
    const tables_code *c;
    int which = in->ema_which;
    int may = !which && in->t && recognize_ema_files(in->t); /* (each file once) */
    while (may && !which && (c = tables_code_next(in->t, &pos)))
        which = recognize_ema_code(c->filename.s, c->qualname.s);
    char msg[sizeof out->feat[0].where];
    out->ema_bytes = which ? in->ema_bytes : 0;
    if (which && in->ema_bytes)
        snprintf(msg, sizeof msg,
                 "EMA copy of the weights (%s): %.1f MiB live %.40s, among the parameters (no "
                 "gradient or optimizer state follows it)",
                 recognize_ema_words(which), (double)in->ema_bytes / 1048576.0,
                 in->kv_cache_at ? in->kv_cache_at : "");
    else if (which)
        snprintf(msg, sizeof msg, "%s's code made tensors, none of them among the parameters %.40s",
                 recognize_ema_words(which), in->kv_cache_at ? in->kv_cache_at : "");
    /* weights made before training that took no gradient: room for a copy the program keeps
     * of the trained ones (in 16 bits at least), which no code of a known EMA says (where no
     * backward told the trained ones, what no code of a known EMA ran says stands) */
    uint64_t trained = (uint64_t)out->trainable * out->state_elem; /* (LoRA's fp32 over 16 bits) */
    uint64_t rest = in->param_bytes > trained ? in->param_bytes - trained : 0;
    int room = out->trainable && rest >= (uint64_t)out->trainable * 2;
    if (which) {
        set(&out->feat[FEATURE_EMA], FEAT_ON, msg);
    } else if (frames && room && out->feat[FEATURE_LORA].state == FEAT_ON) {
        /* peft's LoRA: the weights with no gradient are the frozen base it adapts (a LoRA run
         * had been told they "can hold a copy the program keeps itself", its OOM run "off") */
        /* beside it a copy of its weights but the adapters (the extra bytes the trained
         * ones'): a frozen reference model's, a teacher's (GRPO's had been called the base) */
        uint64_t x = in->beside_extra, cb = in->beside_bytes;
        if (in->beside_tensors && cb < rest && x + x / 64 >= trained && x <= trained + trained / 64)
            snprintf(msg, sizeof msg,
                     "no code of an EMA of the weights ran (diffusers' EMAModel, timm's ModelEma, "
                     "AveragedModel, torch_ema); of the %.1f MiB of weights that take no "
                     "gradient, %.1f MiB are the frozen base under peft's LoRA adapters, "
                     "%.1f MiB a copy of it without them (%zu tensors: a frozen reference model, "
                     "a teacher)",
                     (double)rest / 1048576.0, (double)(rest - cb) / 1048576.0,
                     (double)cb / 1048576.0, in->beside_tensors);
        else
            snprintf(msg, sizeof msg,
                     "no code of an EMA of the weights ran (diffusers' EMAModel, timm's ModelEma, "
                     "AveragedModel, torch_ema); the %.1f MiB of weights that take no gradient "
                     "are the frozen base model under peft's LoRA adapters",
                     (double)rest / 1048576.0);
        set(&out->feat[FEATURE_EMA], FEAT_OFF, msg);
    } else if (frames && out->grads_cut == 2 && rest) {
        /* (a step of a new kind cut short: a GAN's generator step after its critic's) */
        snprintf(msg, sizeof msg,
                 "not recognised: no code of a known EMA ran (diffusers' EMAModel, timm's "
                 "ModelEma, AveragedModel, torch_ema); the run died in a step of a kind no "
                 "earlier one ran, its backward passes had made the gradients of %.2f M weights: "
                 "whether the other %.1f MiB train, are frozen or hold a copy is not known",
                 (double)out->trainable / 1e6, (double)rest / 1048576.0);
        set(&out->feat[FEATURE_EMA], FEAT_UNKNOWN, msg);
    } else if (frames && in->passes_shared && rest) { /* (PCGrad's other heads: "take no
                                                       * gradient ... can hold a copy") */
        snprintf(msg, sizeof msg,
                 "not recognised: no code of a known EMA ran (diffusers' EMAModel, timm's "
                 "ModelEma, AveragedModel, torch_ema); the gradients of one backward pass were "
                 "of %.2f M weights: whether the other %.1f MiB train (another pass's of the "
                 "same forward), are frozen or hold a copy is not known",
                 (double)out->trainable / 1e6, (double)rest / 1048576.0);
        set(&out->feat[FEATURE_EMA], FEAT_UNKNOWN, msg);
    } else if (frames && out->grads_cut && rest) {
        /* the backward the error cut short had not reached them: they may train (a DLRM out of
         * memory partway through its first backward had been told 5078.2 MiB of its weights,
         * all trained, "take no gradient") */
        snprintf(msg, sizeof msg,
                 "not recognised: no code of a known EMA ran (diffusers' EMAModel, timm's "
                 "ModelEma, AveragedModel, torch_ema); the backward the out-of-memory error cut "
                 "short had made the gradients of %.2f M weights: whether the other %.1f MiB "
                 "train (not reached yet), are frozen or hold a copy is not known",
                 (double)out->trainable / 1e6, (double)rest / 1048576.0);
        set(&out->feat[FEATURE_EMA], FEAT_UNKNOWN, msg);
    } else if (frames && (!out->trainable || out->trainable_lower) && in->copy_tensors) {
        /* no gradient says which weights train (no backward ran), and a run of the weights
         * repeats the sizes of the one made before it: a copy (an own EMA made before the first
         * forward ran out of memory had been said "off") */
        char said[400]; /* (set cuts it to its row's room; the numbers are short) */
        snprintf(said, sizeof said,
                 "not recognised: no code of a known EMA ran (diffusers' EMAModel, timm's "
                 "ModelEma, AveragedModel, torch_ema); no backward told which weights train, "
                 "and %zu weight tensors (%.1f MiB) repeat %s the sizes of the %zu before "
                 "them: a copy (an EMA's) or a second model of that shape",
                 in->copy_tensors, (double)in->copy_bytes / 1048576.0,
                 in->copy_reordered == 1 ? "in another order (copy.deepcopy made them)"
                 : in->copy_reordered == 2
                     ? "in another order (made by code apart from the model's)"
                     : "in order",
                 in->copy_tensors);
        set(&out->feat[FEATURE_EMA], FEAT_UNKNOWN, said);
    } else if (frames && room && rest / 4 > out->trainable + out->trainable / 50) {
        /* more than an fp32 copy of the trained weights: not one copy (a 1-block student's
         * 56.23 M beside its 735.10 M teacher, a linear probe on a frozen ViT, had been told
         * their 2804.2 MiB "can hold a copy the program keeps itself") */
        snprintf(msg, sizeof msg,
                 "not recognised: no code of a known EMA ran (diffusers' EMAModel, timm's "
                 "ModelEma, AveragedModel, torch_ema); %.1f MiB of weights take no gradient, "
                 "%.*fx an fp32 copy of the %.2f M that do: besides any copy of them kept, "
                 "frozen weights (a teacher's, a reference model's, a backbone's), buffers "
                 "or more copies",
                 (double)rest / 1048576.0, rest / 4 < out->trainable * 10 ? 1 : 0,
                 (double)rest / 4.0 / (double)out->trainable, (double)out->trainable / 1e6);
        set(&out->feat[FEATURE_EMA], FEAT_UNKNOWN, msg);
    } else if (frames && room) { /* (a program's own EMA had been said "off") */
        snprintf(msg, sizeof msg,
                 "not recognised: no code of a known EMA ran (diffusers' EMAModel, timm's "
                 "ModelEma, AveragedModel, torch_ema); %.1f MiB of weights take no gradient, "
                 "which can hold a copy the program keeps itself",
                 (double)rest / 1048576.0);
        set(&out->feat[FEATURE_EMA], FEAT_UNKNOWN, msg);
    } else if (frames) {
        set(&out->feat[FEATURE_EMA], FEAT_OFF,
            "no code of an EMA of the weights ran (diffusers' EMAModel, timm's ModelEma, "
            "AveragedModel, torch_ema)");
    }
}

void recognize_features(const recognize_input *in, run_recognition *out)
{
    const tables *t = in->t;
    char q[160] = "", msg[320];
    int frames = out->python_frames;
    memset(out->feat, 0, sizeof out->feat);

    if (tables_code_find(t, "torch/utils/checkpoint.py", NULL, NULL, q, sizeof q)) {
        snprintf(msg, sizeof msg, "Python frames under torch.utils.checkpoint (%.100s)", q);
        set(&out->feat[FEATURE_CHECKPOINTING], FEAT_ON, msg);
    } else if (frames) {
        set(&out->feat[FEATURE_CHECKPOINTING], FEAT_OFF,
            "no Python frame under torch.utils.checkpoint");
    }

    char file[160];
    if (compile_code(t, file, sizeof file)) {
        snprintf(msg, sizeof msg, "Python frames of torch.compile at work (%.140s)", file);
        set(&out->feat[FEATURE_COMPILE], FEAT_ON, msg);
    } else if (in->compile_phase) {
        set(&out->feat[FEATURE_COMPILE], FEAT_ON, "allocations while torch.compile compiled");
    } else if (frames && in->forward_seen) {
        set(&out->feat[FEATURE_COMPILE], FEAT_OFF,
            "forwards ran, never under torch.compile's dynamo / inductor code: eager");
    }

    if (tables_code_find(t, "torch/cuda/graphs.py", NULL, NULL, q, sizeof q) ||
        tables_code_find(t, "cudagraph_trees.py", NULL, NULL, q, sizeof q)) {
        snprintf(msg, sizeof msg, "Python frames of CUDA graph capture (%.100s)", q);
        set(&out->feat[FEATURE_CUDA_GRAPHS], FEAT_ON, msg);
    } else if (frames) {
        set(&out->feat[FEATURE_CUDA_GRAPHS], FEAT_OFF, "no Python frame of CUDA graph capture");
    }

    if (tables_code_find(t, "/peft/", NULL, NULL, q, sizeof q)) {
        const char *cw = in->inferred ? in->inferred->cast16_where : "";
        if (!out->trainable && in->adapters16 >= 2) { /* (no gradient: their 16-bit casts) */
            out->trainable = in->adapters16 / 2;
            snprintf(out->trainable_where, sizeof out->trainable_where,
                     "the LoRA adapters made under peft's code, each cast to 16 bits on the "
                     "program's lines (%.100s) before training: with LoRA only they train (no "
                     "gradient was measured)",
                     cw[0] ? cw : "its casts");
        } else if ((!out->trainable || out->trainable_by_kept) && in->adapter_bytes >= 4) {
            /* no gradient measured: the adapters' own fp32 weights, not the weights whose sizes
             * a kept 16-bit copy matched (a QLoRA's fp32 adapters, no autocast, out of memory in
             * its first forward: a rotary cos/sin cast read as their copies had counted its
             * 4-bit projections' absmax beside them, 25.17 M of its 16.78 M, then dropped for
             * the program's freeze: AdamW's state costed on 1 % of the weights, 520.6 MiB of
             * its 128.0) */
            out->trainable = in->adapter_bytes / 4, out->trainable_by_kept = 0;
            snprintf(out->trainable_where, sizeof out->trainable_where,
                     "the LoRA adapters' fp32 weights, made under peft's code: with LoRA only "
                     "they train (no gradient was measured)");
        }
        /* of the parameters the weights count (P: 16-bit ones at 2 B, LoRA's fp32 at 4) */
        const infer_value *pv = in->inferred ? &in->inferred->v[INFER_params] : NULL;
        double all =
            pv && pv->known && pv->value > 0 ? (double)pv->value : (double)in->param_bytes / 4.0;
        if (out->trainable && all >= 1.0) /* (no gradient made yet: the adapters counted) */
            snprintf(msg, sizeof msg, "peft's code on the Python stacks (%.60s); %.2f %% of the %s",
                     q, 100.0 * (double)out->trainable / all,
                     in->has_cat_peaks && !in->grad_peak
                         ? "parameters are its adapters, which train (no gradient made yet)"
                         : "parameters have gradients");
        else
            snprintf(msg, sizeof msg, "peft's code on the Python stacks (%.100s)", q);
        set(&out->feat[FEATURE_LORA], FEAT_ON, msg);
    } else if (frames) {
        set(&out->feat[FEATURE_LORA], FEAT_OFF, "no peft code on the Python stacks");
    }
    /* transformers' models fill a KV cache in every forward while config.use_cache is on
     * (DynamicCache: each layer's keys and values copied by torch.cat); training never reads it */
    if (tables_code_find(t, "transformers/cache_utils.py", NULL, NULL, q, sizeof q)) {
        /* what use_cache=False saves of it: not the copies that replaced their inputs
         * (model_kv_kept) */
        static const char replaced[] = "replaced the keys and values they copied, which the "
                                       "attention keeps for its backward without them";
        double kept = in->kv_cache_replaced > 1 ? 1 : in->kv_cache_replaced;
        if (!in->kv_cache_bytes) {
            snprintf(msg, sizeof msg,
                     "transformers' KV cache filled in the forward (%.60s), none of it live "
                     "%.40s; use_cache=False (the model's config) makes none",
                     q, in->kv_cache_at ? in->kv_cache_at : "");
        } else {
            int n = snprintf(msg, sizeof msg,
                             "transformers' KV cache filled in the forward (%.60s): %.1f MiB of it "
                             "live %.40s; use_cache=False (the model's config) makes none",
                             q, (double)in->kv_cache_bytes / 1048576.0,
                             in->kv_cache_at ? in->kv_cache_at : "");
            size_t room = n >= 0 && (size_t)n < sizeof msg ? sizeof msg - (size_t)n : 0;
            /* (not measured: the share a backward under way freed so far, if any, taken; what
             * is saved then at most what that leaves) */
            static const char unmeasured[] = "the run ended before its first backward pass did, "
                                             "which shows how much of its copies the attention "
                                             "keeps";
            if (room && kept >= 0.995) /* (a backward under way freed them all: no more) */
                snprintf(msg + n, room, " but saves nothing: its copies %s", replaced);
            else if (room && in->kv_cache_unmeasured && kept > 0)
                snprintf(msg + n, room, " but saves at most %.1f MiB: %s",
                         (double)in->kv_cache_bytes * (1 - kept) / 1048576.0, unmeasured);
            else if (room && in->kv_cache_unmeasured)
                snprintf(msg + n, room, " but saves at most that: %s", unmeasured);
            else if (room && kept > 0)
                snprintf(msg + n, room, " but saves %.1f MiB: %.0f %% of its copies %s",
                         (double)in->kv_cache_bytes * (1 - kept) / 1048576.0, 100 * kept, replaced);
        }
        set(&out->feat[FEATURE_KV_CACHE], FEAT_ON, msg);
    } else if (frames && out->feat[FEATURE_COMPILE].state == FEAT_ON &&
               tables_code_find(t, "transformers/", NULL, NULL, NULL, 0)) {
        /* a transformers model under torch.compile: its forward runs as a compiled graph, in
         * which the cache's code leaves no Python frame (its eager runs kept one: 144 MiB) */
        set(&out->feat[FEATURE_KV_CACHE], FEAT_UNKNOWN,
            "not seen: under torch.compile the model's forward runs as a compiled graph, where "
            "transformers' cache code leaves no Python frame (use_cache=False makes none)");
    } else if (frames) {
        set(&out->feat[FEATURE_KV_CACHE], FEAT_OFF, "no code of transformers' KV cache ran");
    }
    recognize_ema(in, frames, out);
    recognize_loop(t, frames, out);
}
