/* demangle.c — C++ symbol demangling for native frames (tables.h: demangle), through
 * __cxa_demangle from libstdc++'s archive (linked statically: the demangler's objects alone, so
 * the analyzer never loads libstdc++.so). No C++ source needed. */
#include <stdlib.h>
#include <string.h>

#include "mem.h"
#include "tables.h"

/* The Itanium C++ ABI entry point, declared here so the analyzer stays C. */
extern char *__cxa_demangle(const char *mangled, char *out, size_t *len, int *status);

int demangle(const char *name, size_t len, char **out)
{
    *out = NULL;
    if (len < 2 || name[0] != '_' || name[1] != 'Z')
        return 0;
    char small[256];
    char *z = len < sizeof small ? small : malloc(len + 1);
    if (!z)
        return -1;
    memcpy(z, name, len);
    z[len] = 0;
    int status = -1;
    char *d = __cxa_demangle(z, NULL, NULL, &status);
    if (z != small)
        free(z);
    if (status != 0) {
        free(d);
        if (status == -1) { /* the demangler's own allocation failed: not "not a C++ name" */
            mem_note_failure();
            return -1;
        }
        return 0;
    }
    *out = d;
    return 0;
}
