/* pyframe.h — a Python frame made by hand for the unit tests that read stacks
 * (test_phases.c, test_modules.c): file, qualname, line 1, nothing else. */
#ifndef VT_TEST_PYFRAME_H
#define VT_TEST_PYFRAME_H

#include <string.h>

#include "tables.h"

static inline tables_frame py(const char *file, const char *qualname)
{
    tables_frame f;
    memset(&f, 0, sizeof f);
    f.kind = TABLES_FRAME_PYTHON;
    f.file = file;
    f.function = qualname;
    f.line = 1;
    return f;
}

#endif
