/* cmd_run.c — `vramtrace run [options] -- CMD ARGS...`: runs CMD with the preload library
 * injected (LD_PRELOAD) and the VRAMTRACE_* variables set, returns CMD's exit status, then
 * lists every trace written (the preload appends each path to a manifest file) with its
 * one-paragraph summary (model/summary.c, views/summary_text.c). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "vramtrace/env.h"
#include "cards.h"
#include "cli.h"
#include "commands.h"
#include "escape.h"
#include "reader.h"
#include "summary_text.h"
#include "mem.h"
#include "run_manifest.h"
#include "run_preload.h"
#include "run_signals.h"
#include "run_traces.h"
#include "watch.h"

#define MANIFEST_ROOM (16 << 10) /* ~100 traces' paths (a killed run's file keeps it) */

/* The options of `run`, one table: parsing and --help both come from it. */
enum {
    OPT_STACKS = CLI_LONG_ONLY,
    OPT_DEPTH,
    OPT_CARD,
    OPT_TENSORS,
    OPT_SAMPLE_MS,
    OPT_FREE_STACKS,
    OPT_MAX_SIZE,
    OPT_COMPRESS,
    OPT_NO_COMPRESS,
    OPT_WATCH
};
static const cli_opt run_opts[] = {
    {'o', "output", "FILE", "trace path (%p pid, %r $RANK); default vramtrace.%p.vt"},
    {OPT_STACKS, "stacks", "MODE", "all (native + Python, default), native, python, none"},
    {OPT_DEPTH, "depth", "N", "native frames per stack (1-128, default 32)"},
    {OPT_CARD, "card", "SPEC",
     "emulate a card: a size with a unit (12GiB, 12288MiB, 11.5GiB;\n"
     "KB/MB/GB are decimal) or a preset (see below)"},
    {OPT_TENSORS, "tensors", NULL,
     "tensor mode: PyTorch's cudaMallocAsync backend, one event per\n"
     "tensor (merged into PYTORCH_CUDA_ALLOC_CONF)"},
    {OPT_SAMPLE_MS, "sample-ms", "N",
     "sample cuMemGetInfo every N ms in the background (0: off,\ndefault)"},
    {OPT_FREE_STACKS, "free-stacks", NULL, "record stacks on frees too"},
    {OPT_MAX_SIZE, "max-size", "SIZE",
     "keep each trace file under SIZE (512MiB, 2GiB; at least 8MiB): the\n"
     "first steps in full, then a rolling window of the latest events with\n"
     "snapshots of what was alive, and every step's summary\n(docs/long-runs.md)"},
    {OPT_COMPRESS, "compress", NULL, "zstd-compress the trace (on by default with --max-size)"},
    {OPT_NO_COMPRESS, "no-compress", NULL,
     "with --max-size: chunks stored, not compressed (alone: a plain trace, the default)"},
    {OPT_WATCH, "watch", NULL,
     "show the live bytes, the peak, the card's headroom and growth per\n"
     "step while CMD runs (vramtrace watch on its trace)"},
    {'q', "quiet", NULL, "no summary after the run (trace paths only)"},
    {'h', "help", NULL, "this text"},
    {0}};

static void usage(FILE *out)
{
    fprintf(out, "usage: vramtrace run [options] [--] CMD [ARGS...]\n\n"
                 "Runs CMD with the vramtrace preload library; every process of it that uses CUDA\n"
                 "writes its own trace. Returns CMD's exit status (128+N if killed by signal N).\n"
                 "Options end at CMD (or at --).\n\n");
    cli_print_options(out, run_opts);
    fprintf(out, "card presets: %s\n", card_presets_help());
    fprintf(out, "exit: CMD's status (128+N if a signal N killed it; 127 CMD not found, 126 not "
                 "runnable), 2 usage\n");
}

/* merge_tensor_mode: adds backend:cudaMallocAsync to the allocator config the user set
 * (PYTORCH_ALLOC_CONF if set, else PYTORCH_CUDA_ALLOC_CONF), keeping their other options;
 * a different backend the user chose is kept, with a warning. */
static void merge_tensor_mode(void)
{
    const char *name =
        getenv("PYTORCH_ALLOC_CONF") ? "PYTORCH_ALLOC_CONF" : "PYTORCH_CUDA_ALLOC_CONF";
    const char *cur = getenv(name);
    if (!cur || !*cur) {
        setenv(name, "backend:cudaMallocAsync", 1);
        return;
    }
    if (strstr(cur, "backend:cudaMallocAsync"))
        return;
    if (strstr(cur, "backend:")) { /* (the value escaped, as every environment's: it was raw) */
        char shown[1024];
        escape_term(cur, strlen(cur), shown, sizeof shown);
        fprintf(stderr, "vramtrace run: --tensors ignored: %s already chooses a backend (%s)\n",
                name, shown);
        return;
    }
    size_t n = strlen(cur) + 32;
    char *v = malloc(n);
    if (!v)
        return;
    snprintf(v, n, "%s,backend:cudaMallocAsync", cur);
    setenv(name, v, 1);
    free(v);
}

/* safe_rank: $RANK as the preload puts it in a file name (%r): at most 16 characters of
 * [A-Za-z0-9._-], others '_', a leading '.' made '_'; "0" when unset. */
static void safe_rank(char out[17])
{
    const char *s = getenv("RANK");
    if (!s || !*s)
        s = "0";
    size_t n = 0;
    for (; s[n] && n < 16; n++) {
        char c = s[n];
        int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                 c == '-' || c == '_' || c == '.';
        out[n] = ok ? c : '_';
    }
    out[n] = '\0';
    if (out[0] == '.')
        out[0] = '_';
}

/* expand_known: the template with %r and %% expanded as the preload does (%p kept as is); 0,
 * 1 when the name depends on the pid (%p: only known in the process), -1 when it does not fit
 * cap: the name is too long (it had been cut here, and the cut named another file: a
 * directory said as "is a directory"). */
static int expand_known(const char *tmpl, char *out, size_t cap)
{
    char rank[17];
    safe_rank(rank);
    size_t n = 0, rl = strlen(rank);
    int pid = 0;
    for (const char *s = tmpl; *s; s++) {
        int r = s[0] == '%' && s[1] == 'r', p = s[0] == '%' && s[1] == 'p';
        if (n + (r ? rl : p ? 2 : 1) >= cap) {
            out[n] = '\0';
            return -1;
        }
        if (r) {
            memcpy(out + n, rank, rl);
            n += rl;
        } else if (p) {
            pid = 1;
            out[n++] = '%';
            out[n++] = 'p';
        } else {
            out[n++] = *s;
        }
        s += r || p || (s[0] == '%' && s[1] == '%');
    }
    out[n] = '\0';
    return pid;
}

/* abs_too_long: name, made absolute as run gives it to the preload, is past what a file's name
 * may be: PATH_MAX with its NUL */
static int abs_too_long(const char *name)
{
    char cwd[PATH_MAX];
    return name[0] != '/' && getcwd(cwd, sizeof cwd) && strlen(cwd) + 1 + strlen(name) >= PATH_MAX;
}

/* can_make_in: a file can be made in directory dir: what access() does not say for root, whom it
 * lets write in /proc too. An unnamed file first (O_TMPFILE: nothing to remove, nothing left if
 * run is killed), else one named, made and removed (a leftover, where removing is refused, as in
 * an append-only directory, is named on stderr). 0 with errno when none can be made. */
static int can_make_in(const char *dir)
{
#ifdef O_TMPFILE
    int fd = open(dir, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
    if (fd >= 0)
        return close(fd), 1;
    if (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL)
        return 0; /* (read-only, refused: what a named file would meet too) */
#endif
    char probe[PATH_MAX];
    int n = snprintf(probe, sizeof probe, "%s/.vramtrace-probe.XXXXXX", dir);
    if (n < 0 || (size_t)n >= sizeof probe)
        return 1; /* (a name too long to try: the preload says if it cannot write there) */
    if ((fd = mkstemp(probe)) < 0)
        return 0;
    close(fd);
    if (unlink(probe)) {
        char shown[PATH_MAX * 4];
        escape_term(probe, strlen(probe), shown, sizeof shown);
        fprintf(stderr,
                "vramtrace run: warning: could not remove %s, made to see that a trace can "
                "be written there: %s\n",
                shown, strerror(errno));
    }
    return 1;
}

/* check_output: refuses, before the program starts, an output the preload could not use: a
 * directory or a device (FIFO, socket) named as the trace file, a name ending in '/', a
 * directory that does not exist or cannot be written (read-only, /proc also for root). `from` names
 * where the template came from. 0, or -1 after one message. */
static int check_output(const char *tmpl, const char *from)
{
    char shown[1200], name[PATH_MAX], dir[PATH_MAX];
    escape_term(tmpl, strlen(tmpl), shown, sizeof shown);
    size_t len = strlen(tmpl);
    if (!len || tmpl[len - 1] == '/') {
        fprintf(stderr,
                "vramtrace run: %s %s: not a file name (traces are files: e.g. "
                "%svramtrace.%%p.vt)\n",
                from, shown, len ? shown : "DIR/");
        return -1;
    }
    int pid = expand_known(tmpl, name, sizeof name);
    if (pid < 0 || abs_too_long(name)) {
        fprintf(stderr,
                "vramtrace run: %s %s: %s (a trace's name, made absolute, is at most %d "
                "bytes)\n",
                from, shown, strerror(ENAMETOOLONG), PATH_MAX - 1);
        return -1;
    }
    struct stat st;
    /* what the name is, through a symbolic link (the preload never follows one: it writes
     * beside it, NAME.1, but one to a directory, a device or a FIFO is refused as that is) */
    if (!pid && !stat(name, &st) && !S_ISREG(st.st_mode)) {
        if (S_ISDIR(st.st_mode))
            fprintf(stderr,
                    "vramtrace run: %s %s: is a directory; the output is a file name (e.g. "
                    "%s/vramtrace.%%p.vt)\n",
                    from, shown, shown);
        else
            fprintf(stderr,
                    "vramtrace run: %s %s: exists and is not a regular file (a device, FIFO "
                    "or socket); a trace is a file of its own\n",
                    from, shown);
        return -1;
    }
    const char *slash = strrchr(tmpl, '/');
    if (!slash)
        snprintf(dir, sizeof dir, ".");
    else if (slash == tmpl)
        snprintf(dir, sizeof dir, "/");
    else
        snprintf(dir, sizeof dir, "%.*s", (int)(slash - tmpl), tmpl);
    char edir[PATH_MAX], sdir[1200];
    if (expand_known(dir, edir, sizeof edir))
        return 0; /* a directory per process: the preload says if it cannot write there */
    escape_term(edir, strlen(edir), sdir, sizeof sdir);
    if (stat(edir, &st)) {
        fprintf(stderr, "vramtrace run: %s %s: the directory %s: %s\n", from, shown, sdir,
                strerror(errno));
        return -1;
    }
    if (!S_ISDIR(st.st_mode)) {
        fprintf(stderr, "vramtrace run: %s %s: %s is not a directory\n", from, shown, sdir);
        return -1;
    }
    if (access(edir, W_OK | X_OK)) {
        fprintf(stderr, "vramtrace run: %s %s: cannot write traces in %s: %s\n", from, shown, sdir,
                strerror(errno));
        return -1;
    }
    if (!can_make_in(edir)) {
        fprintf(stderr,
                "vramtrace run: %s %s: cannot write traces in %s: its file system takes no new "
                "file (%s)\n",
                from, shown, sdir, strerror(errno));
        return -1;
    }
    return 0;
}

/* bad_interpreter: path exists and begins with "#!" naming an interpreter (into interp, 256
 * bytes) that does not exist: what execve's ENOENT of an existing script means ("cannot run
 * ./x.sh: No such file or directory" had named the script, which is there). 1, or 0. */
static int bad_interpreter(const char *path, char interp[256])
{
    char b[256];
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    ssize_t n = fd >= 0 ? read(fd, b, sizeof b - 1) : -1;
    if (fd >= 0)
        close(fd);
    if (n < 3 || b[0] != '#' || b[1] != '!')
        return 0;
    b[n] = 0;
    char *p = b + 2;
    while (*p == ' ' || *p == '\t')
        p++;
    size_t k = strcspn(p, " \t\r\n");
    if (!k)
        return 0;
    p[k] = 0;
    struct stat st;
    if (!stat(p, &st))
        return 0; /* (there: its ENOENT is another's, the interpreter's own interpreter) */
    snprintf(interp, 256, "%s", p);
    return 1;
}

int cmd_run(int argc, char **argv)
{
    const char *output = NULL, *stacks = NULL, *card = NULL;
    long depth = 0, sample = -1;
    int tensors = 0, free_stacks = 0, quiet = 0, compress = -1, watch = 0;
    uint64_t max_size = 0;
    int k;
    cli p;
    cli_init(&p, "run", run_opts, CLI_STOP_AT_OPERAND);
    while ((k = cli_next(&p, argc, argv)) != CLI_END) {
        const char *next = p.arg;
        char *end;
        switch (k) {
        case 'h':
            usage(stdout);
            return VT_EXIT_OK;
        case 'o':
            if (!*next) { /* (it had been taken as no -o: the default name) */
                fprintf(stderr, "vramtrace run: -o: an empty file name\n");
                return VT_EXIT_USAGE;
            }
            output = next;
            break;
        case 'q':
            quiet = 1;
            break;
        case OPT_TENSORS:
            tensors = 1;
            break;
        case OPT_FREE_STACKS:
            free_stacks = 1;
            break;
        case OPT_CARD:
            card = next;
            break;
        case OPT_COMPRESS:
        case OPT_NO_COMPRESS:
            if (compress == (k == OPT_NO_COMPRESS)) { /* the other one came before */
                fprintf(stderr, "vramtrace run: --compress and --no-compress contradict each "
                                "other: give one\n");
                return VT_EXIT_USAGE;
            }
            compress = k == OPT_COMPRESS;
            break;
        case OPT_WATCH:
            watch = 1;
            break;
        case OPT_MAX_SIZE:
            if (card_parse_size(next, &max_size) < 0 || max_size < VT_MAX_SIZE_MIN ||
                max_size > (1ull << 50)) {
                fprintf(stderr,
                        "vramtrace run: --max-size %s: expected a size with a unit from 8MiB to "
                        "1024TiB (512MiB, 2GiB)\n",
                        next);
                return VT_EXIT_USAGE;
            }
            break;
        case OPT_STACKS:
            stacks = next;
            if (strcmp(stacks, VT_STACKS_NAME_ALL) && strcmp(stacks, VT_STACKS_NAME_NATIVE) &&
                strcmp(stacks, VT_STACKS_NAME_PYTHON) && strcmp(stacks, VT_STACKS_NAME_NONE)) {
                fprintf(stderr,
                        "vramtrace run: --stacks %s: expected all, native, python or none\n",
                        stacks);
                return VT_EXIT_USAGE;
            }
            break;
        case OPT_DEPTH:
            depth = strtol(next, &end, 10);
            if (*end || end == next || depth < 1 || depth > 128) {
                fprintf(stderr,
                        "vramtrace run: --depth %s: expected a number from 1 to 128 (see vramtrace "
                        "run --help)\n",
                        next);
                return VT_EXIT_USAGE;
            }
            break;
        case OPT_SAMPLE_MS:
            sample = strtol(next, &end, 10);
            if (*end || end == next || sample < 0 || sample > 3600000) {
                fprintf(stderr, "vramtrace run: --sample-ms %s: expected milliseconds (0 = off)\n",
                        next);
                return VT_EXIT_USAGE;
            }
            break;
        default:
            return VT_EXIT_USAGE;
        }
    }
    int i = p.optind;
    if (i >= argc) {
        fprintf(
            stderr,
            "vramtrace run: no command given (usage: vramtrace run [options] -- CMD ARGS...)\n");
        return VT_EXIT_USAGE;
    }
    char preload[PATH_MAX + 64];
    const char *why;
    int found = run_find_preload(preload, sizeof preload, &why);
    if (found < 0 && getenv(VT_ENV_PRELOAD) && *getenv(VT_ENV_PRELOAD)) {
        char shown[PATH_MAX + 64];
        escape_term(preload, strlen(preload), shown, sizeof shown);
        fprintf(stderr, "vramtrace run: %s=%s: %s\n", VT_ENV_PRELOAD, shown,
                found == -2 ? why : strerror(errno));
        return VT_EXIT_USAGE;
    }
    if (found == -2) { /* (beside this binary, or installed: a path the loader splits) */
        char shown[PATH_MAX + 64];
        escape_term(preload, strlen(preload), shown, sizeof shown);
        fprintf(stderr, "vramtrace run: %s: %s\n", shown, why);
        return VT_EXIT_USAGE;
    }
    if (found < 0) {
        fprintf(stderr,
                "vramtrace run: libvramtrace.so not found beside the vramtrace binary or in "
                "../lib/vramtrace/ (build it with `make`, or set VRAMTRACE_PRELOAD)\n");
        return VT_EXIT_USAGE;
    }
    if (card) {
        card_spec spec;
        char err[256];
        if (card_parse(card, &spec, err, sizeof err) < 0) {
            fprintf(stderr, "vramtrace run: --card: %s\n", err);
            return VT_EXIT_USAGE;
        }
        if (spec.bytes > (1ull << 62)) { /* the preload's VRAMTRACE_CARD_BYTES range */
            fprintf(stderr, "vramtrace run: --card %s: more than 4 EiB is not a card\n", card);
            return VT_EXIT_USAGE;
        }
        char bytes[32];
        snprintf(bytes, sizeof bytes, "%llu", (unsigned long long)spec.bytes);
        setenv(VT_ENV_CARD_BYTES, bytes, 1);
        setenv(VT_ENV_CARD_NAME, spec.name, 1);
    }
    const char *tmpl = output ? output : getenv(VT_ENV_OUTPUT);
    if (tmpl && *tmpl ? check_output(tmpl, output ? "-o" : VT_ENV_OUTPUT) < 0
                      : check_output("vramtrace.%p.vt", "the default output") < 0)
        return VT_EXIT_USAGE;
    char manifest[PATH_MAX];
    const char *tmp = getenv("TMPDIR");
    snprintf(manifest, sizeof manifest, "%s/vramtrace-run.XXXXXX", tmp && *tmp ? tmp : "/tmp");
    int mfd = mkstemp(manifest);
    if (mfd < 0) {
        int e = errno;
        char shown[3 * PATH_MAX]; /* (TMPDIR is the environment's: escaped for the terminal) */
        escape_term(manifest, strlen(manifest), shown, sizeof shown);
        fprintf(stderr,
                "vramtrace run: cannot create %s: %s (set TMPDIR to a writable directory)\n", shown,
                strerror(e));
        return VT_EXIT_USAGE;
    }
    /* room for its lines now (its size unchanged): a TMPDIR that fills while the program runs
     * does not lose the list of traces (a full one already is said at the end) */
    for (off_t room = MANIFEST_ROOM; room >= 4096 && fallocate(mfd, FALLOC_FL_KEEP_SIZE, 0, room);)
        room /= 2; /* (as much of it as there is) */
    close(mfd);
    char outer[PATH_MAX] = ""; /* a run inside another's: its manifest (run_pass_up) */
    if (getenv(VT_ENV_MANIFEST))
        snprintf(outer, sizeof outer, "%s", getenv(VT_ENV_MANIFEST));
    setenv(VT_ENV_MANIFEST, manifest, 1);
    /* the file is made at the program's first CUDA call, in the directory it is in then: a
     * relative name is made absolute here, where it was checked (the program may chdir) */
    const char *given = tmpl && *tmpl ? tmpl : "vramtrace.%p.vt";
    char cwd[PATH_MAX], abs_out[2 * PATH_MAX + 2];
    if (given[0] != '/' && getcwd(cwd, sizeof cwd) &&
        (size_t)snprintf(abs_out, sizeof abs_out, "%s/%s", cwd, given) < sizeof abs_out)
        given = abs_out;
    setenv(VT_ENV_OUTPUT, given, 1);
    if (stacks)
        setenv(VT_ENV_STACKS, stacks, 1);
    char num[32];
    if (depth) {
        snprintf(num, sizeof num, "%ld", depth);
        setenv(VT_ENV_STACK_DEPTH, num, 1);
    }
    if (sample >= 0) {
        snprintf(num, sizeof num, "%ld", sample);
        setenv(VT_ENV_SAMPLE_MS, num, 1);
    }
    if (free_stacks)
        setenv(VT_ENV_FREE_STACKS, "1", 1);
    if (max_size) {
        snprintf(num, sizeof num, "%llu", (unsigned long long)max_size);
        setenv(VT_ENV_MAX_SIZE, num, 1);
    }
    if (compress >= 0)
        setenv(VT_ENV_COMPRESS, compress ? "1" : "0", 1);
    if (tensors)
        merge_tensor_mode();
    unsetenv(VT_ENV_DISABLE);
    const char *old = getenv("LD_PRELOAD");
    size_t plen = strlen(preload) + (old ? strlen(old) : 0) + 2;
    char *pre = malloc(plen);
    if (!pre) {
        unlink(manifest);
        return VT_EXIT_USAGE;
    }
    snprintf(pre, plen, "%s%s%s", preload, old && *old ? ":" : "", old && *old ? old : "");
    setenv("LD_PRELOAD", pre, 1);
    free(pre);

    run_signals rs;
    run_signals_begin(&rs);
    /* the child's exec error comes back through ex (closed on a successful exec): a command
     * that never ran is not reported as a run that made no CUDA allocation */
    int ex[2] = {-1, -1};
    if (pipe2(ex, O_CLOEXEC))
        ex[0] = ex[1] = -1;
    pid_t pid = fork();
    if (pid < 0) {
        fprintf(stderr, "vramtrace run: fork: %s\n", strerror(errno));
        run_signals_end(&rs);
        unlink(manifest);
        return VT_EXIT_USAGE;
    }
    if (pid == 0) {
        run_signals_child(&rs);
        execvp(argv[i], argv + i);
        int e = errno;
        struct stat st; /* execve says EACCES of a directory: said as what it is */
        char interp[256];
        if (e == EACCES && strchr(argv[i], '/') && !stat(argv[i], &st) && S_ISDIR(st.st_mode))
            fprintf(stderr, "vramtrace run: cannot run %s: %s\n", argv[i], strerror(EISDIR));
        else if (e == ENOENT && strchr(argv[i], '/') && bad_interpreter(argv[i], interp))
            fprintf(stderr, "vramtrace run: cannot run %s: its interpreter %s: %s\n", argv[i],
                    interp, strerror(e));
        else
            fprintf(stderr, "vramtrace run: cannot run %s: %s\n", argv[i], strerror(e));
        if (ex[1] >= 0 && write(ex[1], &e, sizeof e) < 0)
            e = errno;
        _exit(e == ENOENT ? 127 : 126); /* as a shell: not found, or found and not runnable */
    }
    run_signals_forward_to(pid); /* (what came since the fork: now) */
    /* a reader of run's output gone (a pipe closed) is an output error (finish, main.c), not
     * run's death by SIGPIPE with the program's exit status lost (141) and, watching, the
     * program left running alone */
    signal(SIGPIPE, SIG_IGN);
    int exec_err = 0;
    if (ex[1] >= 0)
        close(ex[1]);
    while (ex[0] >= 0 && read(ex[0], &exec_err, sizeof exec_err) < 0 && errno == EINTR) {
    }
    if (ex[0] >= 0)
        close(ex[0]);
    int status = 0, waited = 1;
    if (watch)
        watch_child(pid, manifest, &status);
    else
        while ((waited = run_signals_reap(pid, &status, 0) == pid) == 0 && errno == EINTR) {
        }
    int wait_err = errno;
    run_signals_end(&rs);
    if (!waited) /* (its status unknown: never said as an exit 0) */
        fprintf(stderr, "vramtrace run: cannot wait for the program (pid %d): %s\n", (int)pid,
                strerror(wait_err));
    run_print_traces(manifest, given, quiet, !exec_err);
    if (outer[0] && strcmp(outer, manifest))
        run_pass_up(manifest, outer);
    run_manifest_remove(manifest);
    if (!waited)
        return VT_EXIT_USAGE;
    if (WIFEXITED(status))
        return WEXITSTATUS(status);
    if (WIFSIGNALED(status))
        return 128 + WTERMSIG(status);
    return VT_EXIT_USAGE;
}
