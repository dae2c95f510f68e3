/* fuzz_dump.c — libFuzzer target for `vramtrace dump`: the input is a trace (structure-aware
 * mutator, harness.c), dumped with its stacks resolved and with --no-resolve (`make fuzz`;
 * corpus in tests/fuzz/corpus/trace/). */
#include <stdint.h>

#include "commands.h"
#include "harness.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *path = (char *)harness_file(data, size);
    harness_cmd(cmd_dump, "dump", path, NULL);
    harness_cmd(cmd_dump, "dump", "--no-resolve", path, NULL);
    return 0;
}
