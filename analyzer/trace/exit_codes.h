/* exit_codes.h — the exit codes of `vramtrace`, one list with their meanings. Library code
 * returns them as values (reader, replay, report); only main() exits. */
#ifndef VT_ANALYZER_EXIT_CODES_H
#define VT_ANALYZER_EXIT_CODES_H

/* X(name, code, meaning) */
#define VT_EXIT_CODES(X)                                                                           \
    X(VT_EXIT_OK, 0, "ok")                                                                         \
    X(VT_EXIT_FINDINGS, 1, "findings (an out-of-memory error with --fail-if-oom)")                 \
    X(VT_EXIT_USAGE, 2, "usage or system error (bad option, unreadable file, out of memory)")      \
    X(VT_EXIT_MALFORMED, 3, "malformed trace")

#define VT_EXIT_ENUM(name, code, meaning) name = code,
enum { VT_EXIT_CODES(VT_EXIT_ENUM) };
#undef VT_EXIT_ENUM

/* vt_exit_meaning: the meaning of an exit code above, or "unknown exit code". */
static inline const char *vt_exit_meaning(int code)
{
#define VT_EXIT_CASE(name, value, meaning)                                                         \
    case value:                                                                                    \
        return meaning;
    switch (code) {
        VT_EXIT_CODES(VT_EXIT_CASE)
    }
#undef VT_EXIT_CASE
    return "unknown exit code";
}

#endif
