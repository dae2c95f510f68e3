/* commands.h — the `vramtrace` subcommands; main.c dispatches, each lives in cmd_<name>.c.
 * Contract for every cmd_*: argv[0] is the subcommand name; returns the process exit code
 * (0 ok, 1 findings such as --fail-if-oom, 2 usage or system error, 3 malformed trace);
 * never calls exit(); prints errors as "vramtrace <cmd>: what: why (what to do)". */
#ifndef VT_ANALYZER_COMMANDS_H
#define VT_ANALYZER_COMMANDS_H

#include "exit_codes.h"

/* X(name, function, one-line help) */
#define VT_COMMANDS(X)                                                                             \
    X(run, cmd_run, "run a command under the tracer: vramtrace run [opts] -- CMD ARGS...")         \
    X(dump, cmd_dump, "print every record of a trace as one JSON object per line")                 \
    X(report, cmd_report, "categories, peaks, formula comparison, OOM diagnosis, advice")          \
    X(predict, cmd_predict,                                                                        \
      "memory of a configuration: a transformer's from its shape or config.json, any traced "      \
      "run's at another batch (--from)")                                                           \
    X(flame, cmd_flame,                                                                            \
      "folded stacks of the bytes at the peak, the OOM or over the run (flamegraph.pl)")           \
    X(diff, cmd_diff, "how two runs' peaks differ, by category and by site (text or --json)")      \
    X(fit, cmd_fit, "largest micro-batch that fits, measured: vramtrace fit [opts] -- CMD {B}...") \
    X(export, cmd_export, "Perfetto JSON, PyTorch memory_viz pickle or an HTML page of a trace")   \
    X(watch, cmd_watch, "follow a run while it is alive: live bytes, peak, headroom, growth")

#define VT_CMD_DECL(name, fn, help) int fn(int argc, char **argv);
VT_COMMANDS(VT_CMD_DECL)
#undef VT_CMD_DECL

#endif
