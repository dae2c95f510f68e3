/* fuzz_trace.c — libFuzzer target for the trace reader through the whole report path: the
 * input is a trace file; it is replayed, the report is built and written as JSON and as text
 * (`make fuzz`; corpus in tests/fuzz/corpus/trace/). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "report.h"
#include "report_views.h"

static int memfd = -1;
static FILE *devnull;
static char path[64];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (memfd < 0) {
        memfd = memfd_create("vt-fuzz-trace", MFD_CLOEXEC);
        devnull = fopen("/dev/null", "w");
        if (memfd < 0 || !devnull)
            abort();
        snprintf(path, sizeof path, "/proc/self/fd/%d", memfd);
    }
    if (ftruncate(memfd, 0) < 0 || pwrite(memfd, data, size, 0) != (ssize_t)size)
        abort();
    report_ctx c;
    char err[512];
    if (report_of_trace(path, &c, err, sizeof err) == 0) {
        char *out = NULL;
        size_t len = 0;
        FILE *m = open_memstream(&out, &len);
        if (m) {
            report_json(m, &c);
            fclose(m);
            free(out);
        }
        report_text(devnull, &c);
    }
    report_free(&c);
    return 0;
}
