/* cmd_dump.c — `vramtrace dump [--no-resolve] FILE...`: every record of each trace as one
 * JSON object per line, events with their resolved stacks, then a status line. The stable,
 * greppable view of the binary format; reading is reader.c, rendering views/dump_json.c. */
#include <inttypes.h>
#include <stdio.h>

#include "cli.h"
#include "commands.h"
#include "dump_json.h"
#include "reader.h"
#include "tables.h"

/* dump_file: all records of path; returns the exit code for this file (0, 2, 3). */
static int dump_file(const char *path, bool resolve)
{
    char msg[512];
    reader *r = reader_open(path, msg, sizeof msg);
    if (!r) {
        fprintf(stderr, "vramtrace dump: cannot open %s (check the path)\n", msg);
        return VT_EXIT_USAGE;
    }
    tables *t = tables_new();
    int rc = VT_EXIT_OK;
    if (!t) {
        fprintf(stderr, "vramtrace dump: %s: out of memory\n", path);
        reader_close(r);
        return VT_EXIT_USAGE;
    }
    dump_json *d = dump_json_new(t, resolve);
    if (!d) {
        fprintf(stderr, "vramtrace dump: %s: out of memory\n", path);
        tables_free(t);
        reader_close(r);
        return VT_EXIT_USAGE;
    }
    if (reader_status_of(r) == READER_OK)
        dump_json_header(path, reader_header(r));
    reader_record rec;
    while (reader_next(r, &rec)) {
        if (tables_add(t, &rec) != 0) {
            fprintf(stderr, "vramtrace dump: %s: out of memory at byte %" PRIu64 "\n", path,
                    rec.offset);
            rc = VT_EXIT_USAGE;
            break;
        }
        if (dump_json_record(d, &rec) != 0) {
            fprintf(stderr, "vramtrace dump: out of memory\n");
            rc = VT_EXIT_USAGE;
            break;
        }
    }
    reader_status st = reader_status_of(r);
    if (rc == VT_EXIT_OK)
        dump_json_status(st, reader_records(r), reader_error_offset(r), reader_error_message(r));
    fflush(stdout);
    if (st == READER_MALFORMED || st == READER_IOERR) {
        char why[600];
        reader_describe(r, why, sizeof why);
        fprintf(stderr, "vramtrace dump: %s\n", why);
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
                                     "events carry stack_id only (no resolved \"stack\" array)"},
                                    {'h', "help", NULL, "this text"},
                                    {0}};

static void dump_usage(FILE *f)
{
    fprintf(f, "usage: vramtrace dump [--no-resolve] [-h] FILE...\n\n"
               "Prints every record of each trace as one JSON object per line: a \"header\"\n"
               "line, the records (\"type\": process, config, device, thread, alloc, free,\n"
               "stack, code, symbol, module, meminfo, oom, pyinfo, trailer, unknown), then\n"
               "{\"type\":\"status\",\"status\":\"ok|truncated|malformed\",\"records\":N}.\n\n");
    cli_print_options(f, dump_opts);
    fprintf(f, "exit: 0 ok (also truncated), 2 usage or unreadable file, 3 malformed trace\n");
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
        fprintf(stderr, "vramtrace dump: no trace file given\n");
        dump_usage(stderr);
        return VT_EXIT_USAGE;
    }
    static char obuf[1 << 20];
    setvbuf(stdout, obuf, _IOFBF, sizeof obuf);
    int rc = VT_EXIT_OK;
    for (int i = first; i < argc; i++) {
        int r = dump_file(argv[i], resolve);
        if (r > rc)
            rc = r;
    }
    fflush(stdout);
    return rc;
}
