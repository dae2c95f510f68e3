/* fuzz_trace.c — libFuzzer target for the report path: the input is a trace (changed as one by
 * the structure-aware mutator, harness.c); it is replayed, the report is built and written as
 * JSON and as text, and `predict --from` calibrates with it (`make fuzz`; corpus in
 * tests/fuzz/corpus/trace/). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "commands.h"
#include "harness.h"
#include "report.h"
#include "report_views.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static FILE *devnull;
    if (!devnull && !(devnull = fopen("/dev/null", "w")))
        abort();
    const char *path = harness_file(data, size);
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
    harness_cmd(cmd_predict, "predict", "--from", path, NULL);
    return 0;
}
