/* writer_pack_codes.c — what a stack is for the packer's step rule (writer_pack_live.c), from
 * the CODE and STACK records (and whether the run has stacks at all, its CONFIG record): an
 * optimizer's (a frame under optim/, clip_grad, GradScaler's step, an EMA of the weights'
 * update), a backward call's, or neither; as the analyzer's phases.c sorts frames. Its input is
 * the records themselves; it calls nothing but the C library. */
#include <string.h>

#include "vramtrace/trace_format.h"
#include "writer_internal.h"
#include "writer_mem.h"

/* what a code object is: an optimizer's, a backward call, GradScaler's, GradScaler.scale (which
 * makes the loss's scaled copy and, the first time, the scale: the forward's) */
enum { CODE_OPT = 1, CODE_BWD = 2, CODE_GS = 4, CODE_GS_SCALE = 8 };

static struct codes {
    uint8_t *code_opt;  /* by code id: CODE_* bits */
    uint8_t *stack_opt; /* by stack id: 1 optimizer, 2 backward (the analyzer's phases.c rule) */
    uint32_t ncode, nstack;
    int no_python; /* the run was recorded without Python frames (its CONFIG record) */
} K;

static uint8_t *grow_bytes(uint8_t **a, uint32_t *n, uint32_t id)
{
    if (id >= *n) {
        uint32_t m = *n ? *n : 1024;
        while (m <= id)
            m *= 2;
        uint8_t *na = vt__wm_realloc(*a, m);
        if (!na)
            return NULL;
        memset(na + *n, 0, m - *n);
        *a = na;
        *n = m;
    }
    return &(*a)[id];
}

/* contains: needle in the n bytes at s (not NUL-terminated) */
static int contains(const char *s, uint32_t n, const char *needle)
{
    size_t k = strlen(needle);
    for (uint32_t i = 0; i + k <= n; i++)
        if (!memcmp(s + i, needle, k))
            return 1;
    return 0;
}

/* last_is: the qualname's last name is name ("step", "EMAModel.step") */
static int last_is(const char *q, uint32_t n, const char *name)
{
    size_t k = strlen(name);
    return n >= k && !memcmp(q + n - k, name, k) && (n == k || q[n - k - 1] == '.');
}

/* ema_update: an EMA of the weights' update, after the optimizer step (the analyzer's phases.c
 * rule): the step's, not the next forward's */
static int ema_update(const char *file, uint32_t flen, const char *qual, uint32_t qlen)
{
    return (contains(file, flen, "diffusers/training_utils.py") && last_is(qual, qlen, "step")) ||
           ((contains(file, flen, "timm/utils/model_ema.py") ||
             contains(file, flen, "torch_ema/ema.py")) &&
            last_is(qual, qlen, "update"));
}

/* vt__pl_meta: a CODE record tells whether the code object is an optimizer's (a file under
 * optim/, clip_grad, GradScaler but its scale) or a backward call; a STACK record whether any
 * of its Python frames is. rec: header + payload, size bytes. */
void vt__pl_meta(const char *rec, uint32_t size)
{
    uint16_t type;
    memcpy(&type, rec, 2);
    if (type == VT_REC_CONFIG && size >= 8 + sizeof(vt_rec_config)) {
        vt_rec_config c;
        memcpy(&c, rec + 8, sizeof c);
        K.no_python = !(c.stack_mode & VT_STACKS_PYTHON);
    } else if (type == VT_REC_CODE && size >= 8 + sizeof(vt_rec_code) + 8) {
        vt_rec_code c;
        memcpy(&c, rec + 8, sizeof c);
        uint32_t at = 8 + sizeof c, flen, qlen = 0;
        memcpy(&flen, rec + at, 4);
        if (flen > size - at - 4)
            return;
        const char *file = rec + at + 4, *qual = "";
        at += 4 + flen;
        if (at + 4 <= size) {
            memcpy(&qlen, rec + at, 4);
            if (qlen <= size - at - 4)
                qual = rec + at + 4;
            else
                qlen = 0;
        }
        uint8_t *p = grow_bytes(&K.code_opt, &K.ncode, c.code_id);
        if (!p)
            return;
        int gs = contains(file, flen, "grad_scaler.py");
        int scale = qlen >= 6 && !memcmp(qual + qlen - 6, ".scale", 6);
        *p = 0;
        if (contains(file, flen, "/optim/") || contains(file, flen, "/optim.py") ||
            contains(file, flen, "torch/nn/utils/clip_grad") || ema_update(file, flen, qual, qlen))
            *p |= CODE_OPT;
        if (gs)
            *p |= scale ? CODE_GS | CODE_GS_SCALE : CODE_GS;
        if ((qlen >= 8 && !memcmp(qual + qlen - 8, "backward", 8)) ||
            contains(qual, qlen, "_engine_run_backward"))
            *p |= CODE_BWD;
    } else if (type == VT_REC_STACK && size >= 16) {
        vt_rec_stack s;
        memcpy(&s, rec + 8, sizeof s);
        if (16u + 8u * ((uint32_t)s.n_native + s.n_python) > size)
            return;
        uint8_t *p = grow_bytes(&K.stack_opt, &K.nstack, s.stack_id), any = 0;
        for (unsigned i = 0; p && i < s.n_python; i++) {
            uint64_t f;
            memcpy(&f, rec + 16 + 8u * (s.n_native + i), 8);
            uint32_t code = VT_PYFRAME_CODE(f);
            if (code < K.ncode)
                any |= K.code_opt[code];
        }
        /* the optimizer's: an optimizer frame, or GradScaler's under no GradScaler.scale (its
         * lazily made scale is the loss's); else a backward's; the optimizer's first */
        int opt = (any & CODE_OPT) || ((any & CODE_GS) && !(any & CODE_GS_SCALE));
        if (p)
            *p = opt ? 1 : (any & CODE_BWD) ? 2 : 0;
    }
}

int vt__pl_stack_kind(uint32_t stack)
{
    return stack < K.nstack ? K.stack_opt[stack] : 0;
}

int vt__pl_no_python(void)
{
    return K.no_python;
}

void vt__pl_codes_reset(void)
{
    vt__wm_free(K.code_opt);
    vt__wm_free(K.stack_opt);
    memset(&K, 0, sizeof K);
}

void vt__pl_codes_forget(void)
{
    memset(&K, 0, sizeof K);
}
