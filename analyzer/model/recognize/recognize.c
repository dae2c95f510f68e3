/* recognize.c — recognize_run (recognize.h): what was trained and what was on, its three parts
 * in order (family.c, then optim.c and features.c, which read what family.c found). */
#include <string.h>

#include "recognize.h"

void recognize_run(const recognize_input *in, run_recognition *out)
{
    memset(out, 0, sizeof *out);
    recognize_family(in, out);
    recognize_optim(in, out);
    recognize_features(in, out);
}
