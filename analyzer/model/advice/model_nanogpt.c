/* model_nanogpt.c — whether a run is nanoGPT's, so that nanoGPT's defaults fill what its command
 * line leaves out (model.c's configuration; every other program's values come from it or the
 * trace). Interface: model_nanogpt.h. */
#include <stdio.h>
#include <string.h>

#include "model_nanogpt.h"

/* script_is_train_py: the traced script is a file named train.py (nanoGPT's entry point). */
static int script_is_train_py(int argc, const char *const *argv)
{
    for (int i = 0; argv && i < argc; i++) {
        const char *a = argv[i];
        size_t n = a ? strlen(a) : 0;
        if (n >= 3 && !strcmp(a + n - 3, ".py"))
            return (n == 8 || (n > 8 && a[n - 9] == '/')) && !strcmp(a + n - 8, "train.py");
    }
    return 0;
}

/* model_nanogpt_run (model_nanogpt.h): nanoGPT's defaults apply: its configurator's command line
 * (config files and
 * --key=value only) and nanoGPT's model classes on the Python stacks; with no Python frames the
 * script's name train.py stands for them; with no trace (predict) the configuration is nanoGPT's.
 */
int model_nanogpt_run(const nano_config *c, const run_facts *f, char *why, size_t len)
{
    why[0] = '\0';
    if (c->program != PROG_NANOGPT)
        return 0;
    if (!f->recog)
        return 1;
    if (f->recog->nanogpt)
        return 1;
    if (f->recog->python_frames && f->peak_process) {
        snprintf(
            why, len,
            "its command line looks like nanoGPT's, but nanoGPT's model class (GPT.forward) is not "
            "on its Python stacks: nanoGPT's defaults are not assumed");
        return 0;
    }
    if (f->argv && script_is_train_py(f->argc, f->argv)) {
        snprintf(why, len,
                 "%s: nanoGPT's train.py is assumed from the script's name and command "
                 "line",
                 f->recog->python_frames ? "no allocation was recorded to show the model's classes"
                                         : "no Python frames were recorded");
        return 1;
    }
    return 0;
}
