/* harness.c — the trace fuzz targets' shared part (harness.h): the input file, quiet commands,
 * and the libFuzzer hooks of the structure-aware mutator (vtmutate.c). */
#include "harness.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "mem.h"
#include "vtmutate.h"

static int g_memfd = -1;
static char g_path[64];
static FILE *g_null;

const char *harness_file(const uint8_t *data, size_t size)
{
    if (g_memfd < 0) { /* once: what main() does, then the file */
        cJSON_Hooks hooks = {mem_malloc, mem_free};
        cJSON_InitHooks(&hooks);
        g_memfd = memfd_create("vt-fuzz", MFD_CLOEXEC);
        if (g_memfd < 0)
            abort();
        snprintf(g_path, sizeof g_path, "/proc/self/fd/%d", g_memfd);
    }
    if (ftruncate(g_memfd, 0) < 0 || pwrite(g_memfd, data, size, 0) != (ssize_t)size)
        abort();
    mem_reset();
    return g_path;
}

int harness_cmd(int (*fn)(int, char **), ...)
{
    char *argv[16];
    int argc = 0;
    va_list ap;
    va_start(ap, fn);
    for (char *w; argc < 15 && (w = va_arg(ap, char *));)
        argv[argc++] = w;
    va_end(ap);
    argv[argc] = NULL;
    if (!g_null && !(g_null = fopen("/dev/null", "w")))
        abort();
    /* the commands write to stdout / stderr; libFuzzer and the sanitizers keep their own */
    FILE *out = stdout, *err = stderr;
    stdout = stderr = g_null;
    int rc = fn(argc, argv);
    fflush(g_null);
    stdout = out;
    stderr = err;
    if (rc < 0 || rc > 3) {
        fprintf(stderr, "harness: %s returned %d\n", argv[0], rc);
        abort();
    }
    return rc;
}

size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max, unsigned seed)
{
    return vtmutate(data, size, max, seed);
}

size_t LLVMFuzzerCustomCrossOver(const uint8_t *a, size_t na, const uint8_t *b, size_t nb,
                                 uint8_t *out, size_t max, unsigned seed)
{
    return vtmutate_cross(a, na, b, nb, out, max, seed);
}
