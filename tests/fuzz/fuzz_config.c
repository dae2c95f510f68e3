/* fuzz_config.c — libFuzzer target for the nanoGPT config evaluator (config.c, pyexpr.c): the
 * input is a config file, read as config_apply_file reads one; then each of its lines is
 * given as a --batch_size=... and a --dtype=... argument, as a traced command line would
 * (`make fuzz`; corpus in tests/fuzz/corpus/config/). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "pyexpr.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    nano_config c;
    char err[512];
    config_init(&c);
    FILE *fp = fmemopen((void *)data, size, "r");
    if (fp) {
        config_apply_stream(&c, fp, "fuzz.py", err, sizeof err);
        fclose(fp);
    }
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    char *save = NULL;
    for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char *arg = malloc(strlen(line) + 16);
        if (!arg)
            break;
        const char *argv[3] = {"train.py", arg, NULL};
        sprintf(arg, "--batch_size=%s", line);
        config_from_cmdline(&c, 2, argv, NULL, err, sizeof err);
        sprintf(arg, "--dtype=%s", line);
        config_from_cmdline(&c, 2, argv, NULL, err, sizeof err);
        pyexpr_eval(line, NULL, NULL);
        free(arg);
    }
    config_validate(&c, err, sizeof err);
    char buf[64];
    for (int k = 0; k < CFG_COUNT; k++)
        config_value_text(&c, (config_key)k, buf, sizeof buf);
    free(text);
    return 0;
}
