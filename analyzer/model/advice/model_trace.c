/* model_trace.c — what the trace shows of a run beyond its configuration (model_trace.h), for
 * model_build: B or T from the token batch, the precision and torch.compile when nothing gave
 * them, a gated-MLP decoder's block, a run with no forward (model_first_forward.c: a first
 * forward that ran out of memory, or ran under no_grad). */
#include "model_trace.h"

#include <stdio.h>
#include <string.h>

#include "autocastsrc.h"
#include "cards.h"
#include "formula.h"
#include "model_chunked.h"
#include "model_seq.h"
#include "scriptflags.h"

/* set_trace: key k from the trace (src TRACE, where), the flag that carried nothing. */
static void set_trace(nano_config *c, config_key k, long long v, const char *where)
{
    config_from_trace(&c->v[k], v, where);
}

/* t_over_batch: T from the n tokens of a token batch (what: which, in words; why: more said, or
 * "") over the micro-batch the program gave, where nothing else says T and it divides them;
 * 1 when set */
static int t_over_batch(nano_config *c, long long n, const char *what, const char *why)
{
    const config_value *b = &c->v[CFG_batch_size];
    if (c->v[CFG_block_size].src != CONFIG_SRC_UNKNOWN || config_unset(b) || b->i <= 0 || n % b->i)
        return 0;
    char where[320];
    snprintf(where, sizeof where, "T = %lld: B·T = %lld tokens in %s over the micro-batch %lld%s",
             n / b->i, n, what, b->i, why);
    set_trace(c, CFG_block_size, n / b->i, where);
    return 1;
}

/* given: a value the program gave (its command line, its files or script, vramtrace's options) */
static int given(const config_value *v)
{
    return v->src == CONFIG_SRC_ARG || v->src == CONFIG_SRC_FILE || v->src == CONFIG_SRC_FLAG;
}

/* positions_divide: the trace's T is the forward's own arange(T) (infer_tokens.c) and divides
 * the first forward's n tokens: the tokens' length, whatever the batch flag says. A batch flag
 * that disagrees is not the first forward's batch, and model_batch_seen says B = n / T. (A
 * ramp-up 4 -> 8 -> 16 at --batch_size 16 had been told "T = 64: B·T = 1024 tokens ... over the
 * micro-batch 16; the trace's T = 256 from the position ids does not agree", every ratio per
 * token 4x off; one whose first step ran out of memory, 40 -> 80 -> 160 at --batch_size 160,
 * as much, and advised --batch_size 80, whose ramp runs the 40 that failed.) */
static int positions_divide(const config_value *t, long long n)
{
    return t->src == CONFIG_SRC_TRACE && strstr(t->where, "from the position ids") && t->i > 0 &&
           n % t->i == 0;
}

/* first_clause: the length of where up to its first " (" or ":" (at most 80) */
static int first_clause(const char *where)
{
    size_t n = strcspn(where, "(:");
    while (n > 0 && where[n - 1] == ' ')
        n--;
    return (int)(n < 80 ? n : 80);
}

/* eval_tokens: an evaluation's B·T (n) gives T over that evaluation's own batch eval_b (its flag
 * on the command line: eval_flag), never over the training's micro-batch (a Lightning run cut in
 * its sanity check, --val_batch_size 8 beside --batch-size 4: its 8192 tokens had said T = 2048
 * where its position ids said 1024). With no batch of its own given, the program's B divides it
 * only where nothing else says T (an evaluation script's --batch-size is its own), said; the
 * trace's T stands. B is never read from it: the evaluation's batch is not the training's. */
static void eval_tokens(nano_config *c, long long n, uint64_t eval_b, const char *eval_flag)
{
    config_value *t = &c->v[CFG_block_size];
    char where[320];
    long long e = (long long)eval_b;
    if (e > 0 && n % e == 0 &&
        (t->src == CONFIG_SRC_UNKNOWN || (t->src == CONFIG_SRC_TRACE && n / e != t->i))) {
        snprintf(where, sizeof where,
                 "T = %lld: B·T = %lld tokens in an evaluation's token batch over its own batch "
                 "%lld (%s)%s%.*s%s",
                 n / e, n, e, eval_flag, t->src == CONFIG_SRC_TRACE ? "; the trace's " : "",
                 t->src == CONFIG_SRC_TRACE ? first_clause(t->where) : 0, t->where,
                 t->src == CONFIG_SRC_TRACE ? " does not agree" : "");
        set_trace(c, CFG_block_size, n / e, where);
    } else if (!e) {
        t_over_batch(c, n, "an evaluation's token batch",
                     " (the command line gives the evaluation no batch of its own)");
    }
}

/* complete_tokens: B·T measured (the token batch) gives T from the program's B, or B from T; an
 * evaluation's, T from its own batch (eval_tokens). */
/* joined_tokens: the token batch (n tokens) joins f->tokens_joined tensors along its first
 * dimension: its sequences are each part's, the batch flag's B need not count them (a DPO loop's
 * --batch_size 2 pairs, each a chosen and a rejected sequence of 1024 tokens, 4096 tokens in all,
 * had been "T = 2048: B·T = 4096 tokens in the token batch over the micro-batch 2"). T not known,
 * said with what it is if each part holds B sequences; 1 when so. */
static int joined_tokens(nano_config *c, const run_facts *f, long long n)
{
    config_value *b = &c->v[CFG_batch_size], *t = &c->v[CFG_block_size];
    long long k = f->tokens_joined;
    if (k < 2 || t->src != CONFIG_SRC_UNKNOWN || config_unset(b) || b->i <= 0)
        return 0;
    int w = snprintf(t->where, sizeof t->where,
                     "the token batch (%lld tokens) is %d tensors joined along its first "
                     "dimension (%.100s): how many sequences each holds, so T, is not known",
                     n, (int)k, f->tokens_joined_at);
    if (w > 0 && (size_t)w < sizeof t->where && n % (k * b->i) == 0)
        snprintf(t->where + w, sizeof t->where - (size_t)w,
                 " (T = %lld if each holds the micro-batch's %lld)", n / (k * b->i), b->i);
    return 1;
}

void model_complete_tokens(nano_config *c, const run_facts *f, uint64_t eval_b,
                           const char *eval_flag)
{
    const infer_result *ir = f->inferred;
    if (!ir || !ir->v[INFER_tokens].known || ir->v[INFER_tokens].value <= 0)
        return;
    long long n = ir->v[INFER_tokens].value;
    config_value *b = &c->v[CFG_batch_size], *t = &c->v[CFG_block_size];
    char where[320];
    if (ir->tokens_eval) {
        eval_tokens(c, n, eval_b, eval_flag);
        return;
    }
    if (joined_tokens(c, f, n))
        return;
    if (model_chunked_tokens(c, n))
        return;
    if (t_over_batch(c, n, "the token batch", ""))
        return;
    if (b->src == CONFIG_SRC_UNKNOWN && !config_unset(t) && t->i > 0 && n % t->i == 0) {
        snprintf(where, sizeof where,
                 "B = %lld: B·T = %lld tokens in the token batch over T = %lld", n / t->i, n, t->i);
        set_trace(c, CFG_batch_size, n / t->i, where);
    } else if (given(b) && t->src == CONFIG_SRC_TRACE && b->i > 0 && n % b->i == 0 &&
               n / b->i != t->i && !positions_divide(t, n)) {
        /* the program's B against the trace's T: the B·T measured (the token batch, the
         * logits) decides; a T read from another tensor (position ids) gives way, said */
        snprintf(where, sizeof where,
                 "T = %lld: B·T = %lld tokens in the token batch over the micro-batch %lld; the "
                 "trace's %.*s does not agree",
                 n / b->i, n, b->i, first_clause(t->where), t->where);
        set_trace(c, CFG_block_size, n / b->i, where);
    } else if (given(t) && b->src == CONFIG_SRC_TRACE && t->i > 0 && n % t->i == 0 &&
               n / t->i != b->i) {
        snprintf(where, sizeof where,
                 "B = %lld: B·T = %lld tokens in the token batch over T = %lld; the trace's %.*s "
                 "does not agree",
                 n / t->i, n, t->i, first_clause(b->where), b->where);
        set_trace(c, CFG_batch_size, n / t->i, where);
    }
}

/* where_add: text after v's where (cut at its end) */
static void where_add(config_value *v, const char *text)
{
    size_t w = strlen(v->where);
    snprintf(v->where + w, sizeof v->where - w, "%s", text);
}

/* flag_said: how the program gave b ("--batch 256", "TrainingArguments(per_device_train_batch_
 * size=8)"), else "the micro-batch given (N)" */
static void flag_said(const config_value *b, char *out, size_t len)
{
    if (b->flag_sep == '(')
        snprintf(out, len, "%.40s(%.40s=%lld)", b->call, b->flag, b->i);
    else if (b->flag[0])
        snprintf(out, len, "%.40s%c%lld", b->flag, b->flag_sep == '=' ? '=' : ' ', b->i);
    else
        snprintf(out, len, "the micro-batch given (%lld)", b->i);
}

void model_batch_seen(nano_config *c, const run_facts *f)
{
    const infer_result *ir = f->inferred;
    config_value *b = &c->v[CFG_batch_size];
    const config_value *t = &c->v[CFG_block_size];
    if (!ir || !given(b) || b->i <= 0) {
        model_seq_unknown(c, f); /* (no flag: B or T, not known which, where the tokens changed) */
        return;
    }
    long long T = !config_unset(t) && t->i > 0 ? t->i : 0, b0 = 0, now = 0;
    char first[96], flag[128], where[448];
    if (ir->v[INFER_tokens].known && !ir->tokens_eval && T && ir->v[INFER_tokens].value % T == 0) {
        long long n = ir->v[INFER_tokens].value;
        b0 = n / T;
        if (model_seq_changed(c, f, n, T)) /* (the flag ran the first forward: T changed) */
            return;
        now = f->tokens_now && f->tokens_now % (uint64_t)T == 0 ? (long long)f->tokens_now / T : 0;
        snprintf(first, sizeof first, "its token batch, %lld tokens over T = %lld", n, T);
    } else if (!ir->v[INFER_tokens].known && ir->v[INFER_image_size].known &&
               ir->v[INFER_batch_size].known && !ir->images_one_label) {
        b0 = ir->v[INFER_batch_size].value;
        now = (long long)f->images_now;
        snprintf(first, sizeof first, "its image batch, %lld images of %lld\u00d7%lld", b0,
                 (long long)ir->v[INFER_image_size].value,
                 (long long)ir->v[INFER_image_size].value);
    }
    if (model_chunked_seen(c, b0, now, T, first))
        return;
    if (b0 == b->i && now == b->i && c->batch_global[0]) { /* (the script's B·A over A) */
        snprintf(where, sizeof where,
                 "; the trace agrees: %lld in its first forward (%s) and at the moment explained",
                 b0, first);
        where_add(b, where);
    }
    if (b0 <= 0 || (b0 == b->i && (!now || now == b->i)))
        return; /* nothing read, or what the program gave */
    flag_said(b, flag, sizeof flag);
    if (now && now != b0 && now == b->i && T && !positions_divide(t, b0 * T) &&
        ir->v[INFER_tokens].known && model_seq_either(c, f, b0 * T, T)) {
        /* (a T no position ids gave: a ramp-up, or a warm-up of T, both said) */
    } else if (now && now != b0 && now == b->i) { /* a ramp-up: the flag is the step's */
        snprintf(where, sizeof where,
                 "; the micro-batch changed during the run: %lld in its first forward (%s), %lld "
                 "at the moment explained",
                 b0, first, now);
        where_add(b, where);
    } else if (now && now != b0) {              /* a ramp-up whose step explained is neither */
        if (b->flag[0] && b->flag_sep != '(') { /* (its flag is not this B's) */
            snprintf(c->batch_other, sizeof c->batch_other, "%s", b->flag);
            c->batch_other_v = b->i;
        }
        snprintf(where, sizeof where,
                 "B = %lld: the batch at the moment explained (its inputs then); the micro-batch "
                 "changed during the run (%lld in its first forward: %s), and %.60s is not that "
                 "step's",
                 now, b0, first, flag);
        set_trace(c, CFG_batch_size, now, where);
    } else if (now == b0 && b0 > b->i && b0 % b->i == 0 && b->flag[0] && b->flag_sep != '(') {
        /* every forward took a whole multiple of the flag: each of its samples k sequences (a
         * batch concatenated with itself, two views of each): the flag is the micro-batch */
        char fl[sizeof b->flag], sep = b->flag_sep;
        long long k = b0 / b->i;
        snprintf(fl, sizeof fl, "%s", b->flag);
        snprintf(c->batch_other, sizeof c->batch_other, "%s", b->flag); /* (B: the trace's) */
        c->batch_other_v = b->i;
        snprintf(where, sizeof where,
                 "B = %lld sequences: %lld \u00d7 %.60s, in the first forward (%s) and at the "
                 "moment explained: the flag is the micro-batch, each of its samples %lld times in "
                 "the forward",
                 b0, k, flag, first, k);
        set_trace(c, CFG_batch_size, now, where);    /* (now: b0) */
        snprintf(b->flag, sizeof b->flag, "%s", fl); /* (the what-ifs spelled through it, / k) */
        b->flag_sep = sep;
        c->batch_per = (int)k;
    } else if (now) { /* every forward read took b0: the flag is not the micro-batch */
        if (b->flag[0] && b->flag_sep != '(') {
            snprintf(c->batch_other, sizeof c->batch_other, "%s", b->flag);
            c->batch_other_v = b->i;
        }
        const config_value *a = &c->v[CFG_gradient_accumulation_steps];
        int times = b->i > b0 && b->i % b0 == 0;
        char why[160] = "";
        if (times && a->src == CONFIG_SRC_TRACE && a->i == b->i / b0)
            snprintf(why, sizeof why,
                     " but %lld times it, one for each of the %lld backward passes of an "
                     "optimizer step: the optimizer's batch",
                     a->i, a->i);
        else if (times && f->has_oom)
            /* the run stopped at its error: the flag may be a step's it did not reach (a ramp-up
             * whose first step ran out of memory) */
            snprintf(why, sizeof why,
                     " (%lld times it: a later step's batch, or the optimizer's if the program "
                     "accumulates as many micro-batches; not known)",
                     b->i / b0);
        else if (times)
            snprintf(why, sizeof why,
                     " (%lld times it: the optimizer's batch if the program "
                     "accumulates as many micro-batches; not known)",
                     b->i / b0);
        snprintf(where, sizeof where,
                 "B = %lld: the first forward's inputs (%s) and the moment explained's: %.60s is "
                 "not the micro-batch%s",
                 b0, first, flag, why);
        set_trace(c, CFG_batch_size, b0, where);
    } else { /* the moment explained shows no batch: which is not known */
        snprintf(where, sizeof where,
                 "; the first forward ran %lld (%s): the batch changed during the run, or the "
                 "flag is not the micro-batch",
                 b0, first);
        where_add(b, where);
    }
}

/* from_trace_dtype: the precision the trace shows when nothing gave it. */
void model_trace_dtype(nano_config *c, const run_facts *f, uint64_t untyped)
{
    config_value *dv = &c->v[CFG_dtype];
    const infer_result *ir = f->inferred;
    if (!config_unset(dv))
        return;
    const char *s = NULL, *why = NULL;
    char buf[320], src_where[100];
    int src16, by_weights;
    /* autocast's copies of weights at the moment explained, or over the run where that moment
     * came after them (a U-Net's peak late in its backward): at least a d×d weight's 16-bit copy
     * (model_fp32_compute's measure: a smaller one is a tensor the program converted itself) */
    uint64_t d = ir && ir->v[INFER_n_embd].known ? (uint64_t)ir->v[INFER_n_embd].value : 0;
    int copies = f->at_peak.bytes[CAT_AUTOCAST] > 0 ||
                 (f->has_cat_peaks && f->cat_peak[CAT_AUTOCAST] >= (d ? 2 * d * d : 1u << 20));
    if (f->grad_scaler) {
        s = "float16";
        why = "an enabled GradScaler allocated (scale / unscale_): fp16 mixed precision";
    } else if (ir && ir->master_bytes && ir->v[INFER_param_dtype_bytes].known &&
               ir->v[INFER_param_dtype_bytes].value == 2 && dv->src == CONFIG_SRC_UNKNOWN) {
        /* the program's own fp32 master weights beside its 16-bit ones: its casts of them (a
         * master's .grad = p.grad.float()) are no autocast copies to argue the dtype from */
        s = "16-bit";
        why = "16-bit parameters, the program's own fp32 master copies of them beside them: "
              "16-bit compute (bfloat16 or float16: the sizes do not tell)";
    } else if ((copies || f->at_oom.bytes[CAT_AUTOCAST] > 0) &&
               (src16 = autocast_src_dtype(f->files, src_where, sizeof src_where)) != 0) {
        /* the dtype its autocast calls name: the copies are 16-bit either way, and a program
         * may scale its loss by hand with no GradScaler (it had been said bfloat16 for that) */
        s = src16 == 2 ? "bfloat16" : "float16";
        snprintf(buf, sizeof buf, "16-bit autocast weight copies, and %.140s in the script",
                 src_where);
        why = buf;
    } else if (f->iterations > 0 && copies && scriptflags_amp16(c->amp_value) == 1) {
        /* the script's own flag says float16: steps with no GradScaler do not make it bfloat16
         * (a loss scaled by hand, or not at all: a textual inversion's fit run had been bfloat16,
         * its run out of memory float16 from the same flag's default fp16) */
        s = "float16";
        snprintf(buf, sizeof buf,
                 "16-bit autocast weight copies, and %.140s; no GradScaler over %d optimizer "
                 "step%s (its loss scaled by hand, or not scaled)",
                 c->amp_where, f->iterations, f->iterations == 1 ? "" : "s");
        why = buf;
    } else if (f->iterations > 0 && copies) {
        s = "bfloat16";
        snprintf(buf, sizeof buf,
                 "16-bit autocast weight copies, no GradScaler over %d optimizer step%s",
                 f->iterations, f->iterations == 1 ? "" : "s");
        why = buf;
    } else if ((copies || f->at_oom.bytes[CAT_AUTOCAST] > 0) && scriptflags_amp16(c->amp_value)) {
        /* no step to tell: the script's own autocast flag says which 16 bits */
        s = scriptflags_amp16(c->amp_value) == 2 ? "bfloat16" : "float16";
        snprintf(buf, sizeof buf, "16-bit autocast weight copies in the forward, and %.140s",
                 c->amp_where);
        why = buf;
    } else if (copies || f->at_oom.bytes[CAT_AUTOCAST] > 0) {
        s = "16-bit";
        why = "16-bit autocast weight copies in the forward (no optimizer step ran to tell "
              "float16 with a GradScaler from bfloat16)";
    } else if (ir && ir->elem_by_head && dv->src == CONFIG_SRC_UNKNOWN) {
        s = "16-bit";
        why = "16-bit logits from a frozen head and no 16-bit copy of a weight (autocast makes "
              "those of fp32 weights): the frozen model computes in 16 bits (bfloat16 or "
              "float16: the sizes do not tell); the trained weights' dtype the trace does not give";
    } else if (ir && ir->v[INFER_param_dtype_bytes].known &&
               ir->v[INFER_param_dtype_bytes].value == 2 && dv->src == CONFIG_SRC_UNKNOWN) {
        s = "16-bit";
        why = "16-bit parameters (no fp32 master weights for autocast to copy) and 16-bit logits: "
              "16-bit training (bfloat16 or float16: the sizes do not tell)";
    } else if (ir && ir->v[INFER_logits_dtype_bytes].known &&
               ir->v[INFER_logits_dtype_bytes].value == 2 && dv->src == CONFIG_SRC_UNKNOWN) {
        s = "bfloat16";
        why = "16-bit logits in the forward and no GradScaler: bf16 mixed precision";
    } else if (untyped && model_fp32_compute(f, &by_weights) && by_weights) {
        /* fp32 gradients and no autocast copy say the trained weights are fp32, not the rest:
         * a QLoRA's 4-bit base dequantized to bf16 in every matmul had been "fp32 compute" */
        char ub[32]; /* (in a unit that shows them: a DQN's 2.6 MB target had been "0.00 GiB") */
        /* (16-bit where the program's lines cast them so, their gradients' bytes: a QLoRA's
         * bf16 adapters had been said fp32) */
        int t16 = f->recog && f->recog->state_elem == 2;
        snprintf(dv->where, sizeof dv->where,
                 "the trained weights are %s and autocast made no "
                 "16-bit copy of a weight, but %s of weights take no gradient and the "
                 "trace does not give their dtype (frozen weights: a 4-bit or 16-bit base, an "
                 "encoder cast to 16 bits; buffers): what the forward computes in is not known",
                 t16 ? "16-bit (made by casts to 16 bits on the program's lines, their "
                       "gradients' bytes)"
                     : "fp32 (their gradients' size)",
                 card_format_bytes(untyped, ub, sizeof ub));
        return;
    } else if ((why = model_fp32_compute(f, &by_weights)) != NULL) {
        s = "float32";
    }
    if (!s)
        return;
    snprintf(dv->s, sizeof dv->s, "%s", s);
    dv->src = CONFIG_SRC_TRACE;
    snprintf(dv->where, sizeof dv->where, "%s", why);
}

/* from_trace_compile: torch.compile on or off, as the trace shows it, when nothing gave it; a
 * compile=True that ran eager becomes a note (the formulas use eager). */
void model_trace_compile(model_result *m, const run_facts *f, int nanogpt)
{
    config_value *cv = &m->cfg.v[CFG_compile];
    int state = m->rec.feat[FEATURE_COMPILE].state;
    const char *where = m->rec.feat[FEATURE_COMPILE].where;
    if (!f->recog) { /* no recognition: the report's own frame summary */
        state = f->compile_frames == MODEL_COMPILE_SEEN       ? FEAT_ON
                : f->compile_frames == MODEL_COMPILE_NOT_SEEN ? FEAT_OFF
                                                              : FEAT_UNKNOWN;
        where = state == FEAT_ON ? "compiled: Python frames under torch._dynamo / torch._inductor"
                                 : "no Python frame under torch._dynamo / torch._inductor";
    }
    if (state != FEAT_UNKNOWN && config_unset(cv) &&
        !(cv->src == CONFIG_SRC_DEFAULT && (cv->i != 0) == (state == FEAT_ON) && nanogpt &&
          !m->cfg.nfiles_missing)) {
        set_trace(&m->cfg, CFG_compile, state == FEAT_ON, where);
        m->shape.compile = state == FEAT_ON;
        return;
    }
    if (state == FEAT_UNKNOWN && m->shape.compile && !f->has_oom && !m->shape.generic) {
        /* no Python frames: a complete run that kept eager's 12*N*V of logits/loss ran eager */
        double nv = (double)m->shape.B * (double)m->shape.T * (double)m->shape.V;
        if (nv > 0 && (double)f->at_peak.bytes[CAT_LOGITS] > 10.0 * nv) {
            state = FEAT_OFF;
            where = "logits/loss kept about 12*B*T*V bytes, as eager does";
            if (config_unset(cv)) {
                set_trace(&m->cfg, CFG_compile, 0, where);
                m->shape.compile = 0;
                return;
            }
        }
    }
    if (cv->i && state == FEAT_OFF) {
        /* (named as the program names it: nanoGPT's compile=True, another's flag: a ViT's
         * --compile had been told "compile=True") */
        char kb[96], said[112];
        if (m->cfg.program == PROG_NANOGPT || cv->src == CONFIG_SRC_DEFAULT)
            snprintf(said, sizeof said, "%s",
                     cv->src != CONFIG_SRC_DEFAULT ? "compile=True"
                                                   : "compile (nanoGPT's default True assumed)");
        else
            snprintf(said, sizeof said, "%s on",
                     config_key_said(&m->cfg, CFG_compile, kb, sizeof kb));
        m->shape.compile = 0;
        snprintf(m->note, sizeof m->note, "%s ran as eager (%.100s): the formulas use eager mode",
                 said, where);
    }
}

/* model_bert_block: an encoder of BERT's layout (transformers' Bert*, Roberta*, XLMRoberta*
 * classes: post-LayerNorm BertLayer blocks, a GELU MLP, an MLM head) has its own block in the
 * refined formula (formula.h), measured in eager 16-bit; otherwise a GPT-2 block stands in, said.
 */
static void model_bert_block(model_result *m, const run_facts *f)
{
    static const char *const bert[] = {"Bert", "Roberta", "XLMRoberta", NULL};
    const char *cls = m->rec.model_class;
    gpt_shape *s = &m->shape;
    for (int i = 0; bert[i]; i++)
        if (!strncmp(cls, bert[i], strlen(bert[i]))) {
            s->bert = 1;
            break;
        }
    /* its masked-LM model's parameters, as predict counts them from a config: with its position
     * and token-type tables' rows from the weights (two embeddings outside the blocks) */
    const infer_result *ir = f->inferred;
    if (s->bert && strstr(cls, "ForMaskedLM") && ir && /* (predict's test of a config's) */
        ir->v[INFER_position_rows].known && ir->v[INFER_token_type_rows].known) {
        s->pos_rows = (uint64_t)ir->v[INFER_position_rows].value;
        s->type_rows = (uint64_t)ir->v[INFER_token_type_rows].value;
    }
    if (formula_bert_block(s))
        snprintf(m->formula_block, sizeof m->formula_block,
                 "refined: %.40s's block (BERT's encoder layer: post-LayerNorm, the fp32 residual "
                 "cast for q, k and v each; its masked-LM loss keeps 10*B*T*V): %s bytes per "
                 "block; basic: the usual GPT-2 rule of thumb",
                 cls, formula_block_text(s));
    else
        snprintf(m->formula_block, sizeof m->formula_block,
                 "both formulas are a GPT-2 block's (pre-LayerNorm, a decoder's loss); %.40s's "
                 "blocks %s: the ratios say by how much",
                 cls,
                 s->bert ? "are measured in eager 16-bit autocast only (docs/formula.md)"
                         : "are an encoder's of another layout");
}

/* gated_block: a decoder whose class is one of the gated-MLP families (SwiGLU / GeGLU MLP of
 * its own width, RMSNorm, rotary positions): with the MLP's width from the trace's weights the
 * refined formula is its block's (formula.h), else both formulas, a GPT-2 block's, are not its
 * shape and the note says so. */
void model_gated_block(model_result *m, const run_facts *f, int nanogpt)
{
    static const char *const gated[] = {"Llama", "Mistral", "Mixtral", "Qwen",
                                        "Gemma", "Phi3",    "Olmo",    NULL};
    const run_recognition *r = &m->rec;
    if (!nanogpt && r->family == FAM_ENCODER && r->model_class[0]) {
        model_bert_block(m, f);
        return;
    }
    if (nanogpt || r->family != FAM_DECODER || !r->model_class[0])
        return;
    if (!strncmp(r->model_class, "GPT2", 4)) { /* transformers' GPT-2 classes */
        gpt_shape *s = &m->shape;
        s->hf_gpt2 = 1;
        if (formula_hf_gpt2_block(s))
            snprintf(m->formula_block, sizeof m->formula_block,
                     "refined: %.40s's block (Hugging Face GPT-2: its GELU, written in Python, "
                     "keeps %s; the KV cache apart): %s bytes per block; basic: the usual GPT-2 "
                     "rule of thumb",
                     r->model_class,
                     s->dtype_bytes >= 4   ? "its input, tanh, 1 + tanh, 0.5*x and its output, "
                                             "all fp32"
                     : formula_params16(s) ? "tanh, 1 + tanh, 0.5*x and its output, in 16 bits "
                                             "as the weights are"
                                           : "pow, tanh and their sum in fp32",
                     formula_block_text(s));
        else
            snprintf(m->formula_block, sizeof m->formula_block,
                     "refined: a GPT-2 block with a fused GELU (docs/formula.md) stands in for "
                     "%.40s compiled (Hugging Face GPT-2's own block is measured eager only)",
                     r->model_class);
        return;
    }
    const infer_result *ir = f->inferred;
    for (int i = 0; gated[i]; i++)
        if (strstr(r->model_class, gated[i]) && ir && ir->v[INFER_mlp_width].known &&
            ir->v[INFER_mlp_width].value > 0) {
            gpt_shape *s = &m->shape;
            s->gated = 1;
            s->I = (uint64_t)ir->v[INFER_mlp_width].value;
            s->kv = ir->v[INFER_kv_width].known ? (uint64_t)ir->v[INFER_kv_width].value : 0;
            s->untied = ir->v[INFER_untied_head].known && ir->v[INFER_untied_head].value;
            char kvw[24] = "";
            if (formula_kv_grouped(s))
                snprintf(kvw, sizeof kvw, "%llu", (unsigned long long)s->kv);
            snprintf(m->formula_block, sizeof m->formula_block,
                     "refined: %.40s's gated block (MLP width I = %llu, RMSNorm, rotary "
                     "positions%s%s%s): %s bytes per block; basic: the usual GPT-2 rule of thumb",
                     r->model_class, (unsigned long long)s->I,
                     formula_kv_grouped(s) ? ", grouped key / value kv = " : "", kvw,
                     s->untied ? ", an untied head" : "", formula_block_text(s));
            return;
        } else if (strstr(r->model_class, gated[i])) {
            snprintf(m->formula_block, sizeof m->formula_block,
                     "both formulas are a GPT-2 block's (4d GELU MLP, LayerNorm, learned "
                     "positions); %.40s's blocks (a gated MLP of their own width, RMSNorm, rotary "
                     "positions) keep other tensors: the ratios say by how much",
                     r->model_class);
            return;
        }
}

int model_no_forward(model_result *m, const run_facts *f)
{
    /* every allocation of init (no forward, backward, step or evaluation can have come: each
     * allocates in its phase), and no out-of-memory error */
    m->no_forward = !f->has_oom && f->phase_seen == 1u << PHASE_INIT;
    if (!m->no_forward)
        return 0;
    /* (not "every allocation came before one": a model the program applies by a function of its
     * own, OpenAI ES's policy(theta, x) over 1,024 forwards, has no module's forward frame) */
    snprintf(m->advice_none, sizeof m->advice_none,
             "the trace shows no forward pass of a module (no nn.Module forward, compiled graph or "
             "training framework's loop on any stack, and no backward: a model the program "
             "applies by a function of its own, as torch.func.functional_call or a policy(theta, "
             "x) does, is not told apart from its setup): nothing measured is known to grow with "
             "a batch, so nothing here tells what a configuration needs");
    m->formula_ok = 0;
    snprintf(m->formula_why, sizeof m->formula_why,
             "the trace shows no forward pass of a module: nothing to compare with a formula; "
             "the measured breakdown explains the peak");
    /* what the measurement says, of a run with no backward and no step seen (OpenAI ES's own
     * Adam updated twice: "it came before the run's first backward", "no optimizer state yet:
     * the run stopped before its first optimizer step" had been said) */
    if (m->reason_doc[CAT_GRADIENTS][0] && !m->measured.bytes[CAT_GRADIENTS])
        snprintf(m->reason_doc[CAT_GRADIENTS], sizeof m->reason_doc[CAT_GRADIENTS],
                 "no .grad alive over the run: the trace shows no backward pass");
    if (m->reason_doc[CAT_OPTIMIZER][0] && !m->measured.bytes[CAT_OPTIMIZER] && !f->iterations)
        snprintf(m->reason_doc[CAT_OPTIMIZER], sizeof m->reason_doc[CAT_OPTIMIZER],
                 "none measured: " NO_PASS_STEPS);
    for (int k = 0; k < FEATURE_COUNT; k++) /* (the absence of what no forward could show) */
        if (m->rec.feat[k].state == FEAT_OFF)
            m->rec.feat[k].state = FEAT_UNKNOWN, m->rec.feat[k].where[0] = '\0';
    return 1;
}

/* model_trace_state_moved: a run whose optimizer state sat in other rows (model_state_elsewhere: no
 * Python frames) calibrates with it in its own: the state the recognized optimizer keeps for the
 * trainable elements, taken from the activations (where such a run counts it), so a what-if keeps
 * it whatever the batch (a native-only GPT-2's checkpointing what-if had scaled it away: 3.76 GiB
 * for 5.31); said in the notes (m->state_moved) */
void model_trace_state_moved(model_result *m, const run_facts *f, cat_breakdown *meas)
{
    uint64_t train = m->rec.trainable ? m->rec.trainable : m->params_trace;
    if (!model_state_elsewhere(m, f) || !train)
        return;
    double want = formula_opt_bpp(&m->shape) * (double)train;
    uint64_t st =
        want < (double)meas->bytes[CAT_ACTIVATIONS] ? (uint64_t)want : meas->bytes[CAT_ACTIVATIONS];
    meas->bytes[CAT_ACTIVATIONS] -= st;
    meas->bytes[CAT_OPTIMIZER] += st;
    m->state_moved = st;
}
