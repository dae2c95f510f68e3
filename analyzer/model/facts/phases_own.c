/* phases_own.c — whether a stack is a call of the program's own line that drew values onto the
 * device or copied a tensor there (phases.h: phases_own_draw), from the bits its frames say. */
#include <string.h>

#include "phases.h"
#include "phases_bits.h"

int phases_own_draw(const tables_frame *f, size_t n)
{
    /* the program's frames (the innermost Python frame not of torch, and its callers) say no
     * phase; torch's frames before them are an operator's own (a simulated torch's randn and
     * Tensor.to have Python frames, the real one's none), never a module's machinery (Module.to,
     * _apply: the weights moved); a native frame drew random values or copied a tensor */
    const uint32_t says = FB_INIT | FB_FWD | FB_BWD | FB_OPT | FB_GS | FB_DATA | FB_EVAL | FB_RUN |
                          FB_COMPILE | FB_KV | FB_LOSS;
    phases_acc a = PHASES_ACC_INIT;
    int lead = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t b = phases_acc_frame(&a, &f[i], NULL);
        if (f[i].kind != TABLES_FRAME_PYTHON)
            continue;
        if (!lead && (b & FB_TORCH_FILE)) {
            if (f[i].file && strstr(f[i].file, "/nn/"))
                return 0;
            continue;
        }
        if (!lead && (b & FB_LIBRARY))
            return 0; /* (a library's code of its own: not the program's line) */
        lead = 1;
        if (b & says)
            return 0;
    }
    return lead && (a.any & (FB_NOISE | FB_RAND | FB_TO_COPY)) && !(a.any & (FB_BWD | FB_LOSS));
}
