/* replay_phase.h — the phase of each allocation (replay_phase.c's rules), inline in the pass
 * (replay.c): its call, with the registers it saved and restored, had cost 0.8 % of
 * g_compile_b8_12gib's instructions. Not an interface: replay.c and replay_phase.c include it. */
#ifndef VT_ANALYZER_REPLAY_PHASE_H
#define VT_ANALYZER_REPLAY_PHASE_H

#include "replay_state.h"

/* replay_facts_slow: the facts of stack id (not yet computed, or past the cache): computed and
 * kept. */
const struct stack_fx *replay_facts_slow(state *s, uint32_t id);
/* facts_of: the facts of stack id (> 0), computed once per stack. */
static inline __attribute__((always_inline)) const struct stack_fx *facts_of(state *s, uint32_t id)
{
    if (id < s->nfacts && s->facts[id].f.phase != 255)
        return &s->facts[id];
    return replay_facts_slow(s, id);
}
/* replay_phase_init_made: a tensor made before the first forward, e (its stack's): an optimizer's
 * constructor's (stack_facts.opt_init: Adagrad's sums) is the optimizer's state, phase optimizer
 * (classify.c's optimizer_state), its bytes in replay_result.optim_ctor_bytes; else a parameter,
 * its size noted (replay_phase_note_init, replay_phase_half_add). */
void replay_phase_init_made(state *s, livemap_entry *e, uint32_t stack);
/* replay_phase_vocab: at the first forward, from the tensors made before it (the parameters). */
void replay_phase_vocab(state *s);
/* replay_phase_init_input: the flag an allocation of flags ef and size bytes made after a batch
 * went onto the device, before the first forward, outside a module's construction, takes: EF_INPUT
 * (the step's input), or 0 for the program's own cast of twice a parameter's size (an fp32 master
 * of a 16-bit weight, nn.Parameter(p.detach().float()): a parameter as masters made before) */
uint8_t replay_phase_init_input(const state *s, uint8_t ef, uint64_t size);

/* replay_phase_event: the phase of an event. Allocations: the autograd engine's threads (the
 * event's backward flag) are the backward; on the main thread the stack says optimizer
 * (torch/optim, GradScaler.step), backward (Tensor.backward), eval, data or compile; anything else
 * is the forward (eager or compiled), or init before the first forward. Frees carry no stack: the
 * autograd threads' are backward, the main thread's belong to the last allocation's phase
 * (after a backward: the backward is over). A step is one contiguous optimizer stretch: an
 * allocation under the optimizer, or the main thread freeing a parameter-sized tensor made by
 * backward (zero_grad) — fused optimizers allocate nothing after their first step. */
static inline __attribute__((always_inline)) uint8_t
replay_phase_event(state *s, const reader_event *ev, int is_alloc, uint8_t *loss)
{
    uint8_t *tp = &s->thread_phase[ev->thread & 1023];
    *loss = 0;
    if (!is_alloc || reader_api_gives_back(ev->api)) /* (empty_cache, a teardown's: a free's) */
        return replay_phase_free(s, ev);
    if (ev->backward) {
        if (s->last_alloc_phase != PHASE_BACKWARD) {
            s->bwd++, s->in_opt = 0;
            replay_bwd_begin(s);
        }
        s->last_alloc_phase = PHASE_BACKWARD;
        if (ev->stack_id)
            *loss = facts_of(s, ev->stack_id)->ef & (uint8_t)~EF_INPUT;
        return *tp = PHASE_BACKWARD;
    }
    static const struct stack_fx stackless = {{PHASE_OTHER, 0, 0, 0, 0, 0, 0}, 0};
    const struct stack_fx *f = &stackless;
    uint8_t p;
    if (ev->stack_id || s->no_python) {
        if (ev->stack_id)
            f = facts_of(s, ev->stack_id);
        p = f->f.phase;
        /* a run recorded without Python frames (native ones, or no stack at all): init until
         * its first forward began (an operator only a model's forward runs, in native frames;
         * the main thread's first free of a tensor made shortly before: replay_phase_init_freed),
         * its first backward pass or step; the forward from then on (an optimizer's state too:
         * nothing tells it apart). With them, a stack that names no phase is init until the
         * first forward or step, the forward after */
        if (p == PHASE_OTHER || p == PHASE_INIT) {
            if (s->no_python && f->f.model_op) /* (a GPT-2's first forward had counted its
                                                * embeddings and first matmul, 271 MiB, as
                                                * parameters until its first free) */
                s->pyless_fwd = 1;
            if (s->no_python)
                p = s->bwd || s->iter || s->pyless_fwd ? PHASE_FORWARD : PHASE_INIT;
            else
                p = !s->seen_forward && s->iter == 0 ? PHASE_INIT : PHASE_FORWARD;
        } else if (p == PHASE_FORWARD) { /* (a forward's own frames: replay_bwd_begin) */
            s->fwd_bwd = s->bwd;
        }
    } else {
        return *tp; /* an allocation that took no stack: its thread's phase */
    }
    *loss = f->ef;
    /* after a batch went onto the device, before the first forward: the step has begun, and
     * what the loop makes then outside a module's construction (a diffusion step's noise and
     * noisy images, under a scheduler's add_noise) is the step's input, not a parameter */
    if (p == PHASE_INIT && (f->ef & EF_INPUT))
        s->init_input = 1;
    else if (p == PHASE_INIT && s->init_input && f->f.phase != PHASE_INIT)
        *loss |= replay_phase_init_input(s, f->ef, ev->size);
    /* on the calling thread under torch's backward, before the engine runs: the backward's
     * starting gradient (torch.autograd's _make_grads: ones_like of the loss); no parameter's
     * gradient (the engine's threads make those), nor is its free one zero_grad frees (a scalar
     * loss's is 4 bytes: a loop's running loss made before the first forward, a Trainer's, has
     * that size, taken for a parameter's) */
    if (p == PHASE_BACKWARD && !f->f.engine)
        *loss |= EF_LOSS;
    if (p == PHASE_FORWARD && !s->seen_forward)
        s->seen_forward = 1;
    /* the vocabulary from the parameters, at the first forward: an evaluation's too (Lightning's
     * sanity check evaluates before the first training forward; its logits, freed before that,
     * had been classified with no vocabulary, temporaries, where the snapshot's classification
     * at the end said logits/loss), once parameters were made and not for its data (a held-out
     * batch loaded before the model is built, under a function named load_eval_data, had fixed
     * the vocabulary at none for the whole run) */
    if (!s->vocab_done &&
        (p == PHASE_FORWARD || (p == PHASE_EVAL && s->ninit && !(f->ef & EF_INPUT))))
        replay_phase_vocab(s);
    if (p == PHASE_OPTIMIZER && !s->in_opt)
        replay_phase_step(s);
    else if (p != PHASE_OPTIMIZER)
        s->in_opt = 0;
    if (p == PHASE_BACKWARD && s->last_alloc_phase != PHASE_BACKWARD) {
        s->bwd++;
        replay_bwd_begin(s);
    }
    if (p != PHASE_BACKWARD && s->last_alloc_phase == PHASE_BACKWARD) {
        s->bwd_end_tensors = s->level[L_TENSOR] + s->level[L_INNER];
        /* (not one an OOM cut short, which the program caught to go on: a smaller batch's
         * retry, accelerate's find_executable_batch_size) */
        s->r->backward_ended += s->bwd_oom != s->bwd;
    }
    s->last_alloc_phase = p;
    return *tp = p;
}

#endif
