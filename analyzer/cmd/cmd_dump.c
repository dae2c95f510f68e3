/* cmd_dump.c — `vramtrace dump [--no-resolve] FILE...`: every record of each trace as one
 * JSON object per line (each stack once, resolved, on its own line), then a status line. The
 * stable, greppable view of the binary format; reading is reader.c, rendering dump_json.c. */
#include <stdio.h>

#include "cli.h"
#include "commands.h"
#include "dump_json.h"
#include "mem.h"
#include "notes.h"
#include "reader.h"
#include "tables.h"

/* dump_file: all records of path; returns the exit code for this file (0, 2, 3). An allocation
 * that failed stops it with 2 (main says "out of memory": mem.h). */
static int dump_file(const char *path, bool resolve)
{
    char msg[512];
    reader *r = reader_open(path, msg, sizeof msg);
    if (!r) {
        if (!mem_failed())
            notes_error("dump", msg); /* as every command says it */
        return VT_EXIT_USAGE;
    }
    reader_any_stack_ids(r); /* dump shows every record; it keeps nothing per stack id */
    tables *t = tables_new();
    dump_json *d = t ? dump_json_new(t, stdout, resolve) : NULL;
    int rc = VT_EXIT_OK;
    if (d && reader_status_of(r) == READER_OK && dump_json_header(d, path, reader_header(r)))
        rc = VT_EXIT_USAGE;
    reader_record rec;
    unsigned ended = 0; /* the trailer's: a capture that stopped early is said (notes_stopped) */
    int end_error = 0, lost = 0;
    while (d && !rc && reader_next(r, &rec)) {
        if (rec.type == VT_REC_TRAILER) {
            ended = rec.flags & VT_TRAILER_END_MASK, end_error = rec.u.trailer.error;
            lost = rec.u.trailer.n_dropped != 0;
        }
        /* a stack is dumped from its own record (dump_json.h): the tables never keep one, so
         * memory follows the trace's code objects and symbols, not its stacks */
        if ((rec.type != VT_REC_STACK && tables_add(t, &rec) != 0) || dump_json_record(d, &rec))
            rc = VT_EXIT_USAGE;
    }
    reader_status st = reader_status_of(r);
    if (!d || mem_failed())
        rc = VT_EXIT_USAGE;
    if (rc == VT_EXIT_OK &&
        dump_json_status(d, st, reader_records(r), reader_error_offset(r), reader_error_message(r)))
        rc = VT_EXIT_USAGE;
    fflush(stdout);
    if (rc == VT_EXIT_OK && st == READER_TRUNCATED) /* (its status line is the last: said) */
        notes_truncated("dump", path, reader_error_message(r), "dumping");
    else if (rc == VT_EXIT_OK && st == READER_OK)
        notes_stopped("dump", path, ended, end_error, lost, "dumping");
    if (rc == VT_EXIT_OK && (st == READER_MALFORMED || st == READER_IOERR)) {
        char why[600];
        reader_describe(r, why, sizeof why);
        notes_error("dump", why);
        rc = st == READER_MALFORMED ? VT_EXIT_MALFORMED : VT_EXIT_USAGE;
    }
    dump_json_free(d);
    tables_free(t);
    reader_close(r);
    return rc;
}

/* The options of `dump`, one table: parsing and --help both come from it. */
enum { OPT_NO_RESOLVE = CLI_LONG_ONLY };
static const cli_opt dump_opts[] = {{OPT_NO_RESOLVE, "no-resolve", NULL,
                                     "the records only: no Python line numbers, no traceback\n"
                                     "order, no names or lines from module files"},
                                    {'h', "help", NULL, "this text"},
                                    {0}};

static void dump_usage(FILE *f)
{
    fprintf(f,
            "usage: vramtrace dump [--no-resolve] [-h] FILE...\n\n"
            "Prints every record of each trace as one JSON object per line: a \"header\"\n"
            "line, the records (\"type\": process, config, device, thread, file, alloc, free,\n"
            "stack, code, symbol, module, meminfo, oom, pyinfo, trailer; snapshot and step in\n"
            "a trace written with --max-size or --compress; unknown), then\n"
            "{\"type\":\"status\",\"status\":\"ok|truncated|malformed\",\"records\":N}.\n"
            "An \"oom\" line has \"requested\", \"capacity\" and \"process_used\" (no address).\n"
            "\"aux\" is on an \"alloc\" line whose record carries it: the capture writes it for\n"
            "cuMemMap, cuMemAddressReserve and cuMemRetainAllocationHandle only (the handle,\n"
            "the fixed address asked for, the address asked about).\n"
            "Each record once: an event names its stack by \"stack_id\"; the \"stack\" line\n"
            "(before its first use) lists \"native\" return addresses (the \"ip\" of \"symbol\"\n"
            "lines) and \"python\" frames (\"code_id\" of \"code\" lines, \"offset\", \"line\"),\n"
            "innermost first, and \"native_before_python\": the native frames shown before the\n"
            "Python ones in a traceback. \"symbol\" lines add the name reports show and the\n"
            "source \"file\" / \"line\" from the module's file when it has debug info.\n\n");
    cli_print_options(f, dump_opts);
    fprintf(f, "exit: 0 ok (also truncated), 2 usage or unreadable file or out of memory, 3 "
               "malformed trace\n");
}

int cmd_dump(int argc, char **argv)
{
    bool resolve = true;
    int k;
    cli p;
    cli_init(&p, "dump", dump_opts, 0);
    while ((k = cli_next(&p, argc, argv)) != CLI_END) {
        if (k == 'h') {
            dump_usage(stdout);
            return VT_EXIT_OK;
        } else if (k == OPT_NO_RESOLVE) {
            resolve = false;
        } else {
            return VT_EXIT_USAGE;
        }
    }
    int first = p.optind;
    if (first >= argc) {
        fprintf(stderr,
                "vramtrace dump: no trace file given (usage: vramtrace dump [options] FILE...)\n");
        return VT_EXIT_USAGE;
    }
    static char obuf[1 << 20];
    setvbuf(stdout, obuf, _IOFBF, sizeof obuf);
    tables_sources = 1; /* its SYMBOL records carry file:line */
    int rc = VT_EXIT_OK;
    for (int i = first; i < argc; i++) {
        int r = dump_file(argv[i], resolve);
        if (r > rc)
            rc = r;
    }
    fflush(stdout);
    return rc;
}
