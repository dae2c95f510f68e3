/* fuzz_views.c — libFuzzer target for the commands that draw a replay: `flame` at the peak,
 * the OOM and over the run, `export` to Perfetto JSON, memory_viz and HTML, and `diff` of the
 * trace with itself as text and JSON. The input is a trace (structure-aware mutator,
 * harness.c; corpus in tests/fuzz/corpus/trace/). */
#include <stdint.h>

#include "commands.h"
#include "harness.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *path = (char *)harness_file(data, size);
    harness_cmd(cmd_flame, "flame", path, NULL);
    harness_cmd(cmd_flame, "flame", "--at", "oom", path, NULL);
    harness_cmd(cmd_flame, "flame", "--at", "all", path, NULL);
    harness_cmd(cmd_export, "export", "--perfetto", "/dev/null", "--memory-viz", "/dev/null",
                "--html", "/dev/null", path, NULL);
    harness_cmd(cmd_diff, "diff", path, path, NULL);
    harness_cmd(cmd_diff, "diff", "--json", "--top", "3", path, path, NULL);
    return 0;
}
