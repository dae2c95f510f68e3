/* infer.c — the model and the step from the trace's own tensors (infer.h).
 * Placeholder until the inference lands: it reads nothing and says nothing is known. */
#include "infer.h"

#include <string.h>

static const char *const names[] = {
#define VT_INFER_NAME(k, doc) #k,
    VT_INFER_KEYS(VT_INFER_NAME)
#undef VT_INFER_NAME
};

int infer_model(const char *path, infer_result *out, char *err, size_t errlen)
{
    (void)path;
    (void)err;
    (void)errlen;
    memset(out, 0, sizeof *out);
    return 0;
}

const char *infer_key_name(infer_key k)
{
    return (unsigned)k < INFER_COUNT ? names[k] : "?";
}
