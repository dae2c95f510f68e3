/* fit_trial.c — one `vramtrace fit` trial as a process: started in a process group of its own,
 * its output read through a pipe into a log that keeps the head and the tail (a trial printing
 * 300 MB leaves 1 MiB and a line saying how much was cut), killed with its whole group past its
 * time limit (a hanging command does not hold the search for ever). Interface: fit_trial.h. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "escape.h"
#include "fit_trial.h"
#include "run_signals.h"

int fit_is_trace_name(const char *name)
{
    size_t len = strlen(name);
    return len >= 4 && !strcmp(name + len - 3, ".vt");
}

void fit_clear_traces(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && (e = readdir(d))) {
        char path[PATH_MAX + 256];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (fit_is_trace_name(e->d_name))
            unlink(path);
    }
    if (d)
        closedir(d);
}

int fit_log_cannot_run(const char *log, char *out, size_t n)
{
    static const char said[] = "vramtrace run: cannot run ";
    char line[1024];
    int found = 0;
    if (n)
        out[0] = '\0';
    FILE *f = fopen(log, "r");
    if (!f)
        return 0;
    while (!found && fgets(line, sizeof line, f)) /* (run says it first, before anything else) */
        if (!strncmp(line, said, sizeof said - 1)) {
            size_t k = strcspn(line, "\n");
            const char *r = line + strlen("vramtrace run: ");
            escape_term(r, k - (size_t)(r - line), out, n);
            found = 1;
        }
    fclose(f);
    return found;
}

double fit_time_limit(double given, double base_s, long base_b, long b)
{
    if (given > 0)
        return given;
    if (base_s <= 0 || base_b <= 0)
        return FIT_FIRST_LIMIT_S;
    double scale = b > base_b ? (double)b / (double)base_b : 1.0;
    double limit = FIT_LIMIT_FACTOR * base_s * scale;
    return limit < FIT_MIN_LIMIT_S ? FIT_MIN_LIMIT_S : limit;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ---- the log: the head written as it comes, the tail in a ring, the middle counted -------- */
typedef struct log_sink {
    int fd;
    uint64_t total;
    char *ring; /* FIT_LOG_TAIL bytes once the head is full */
    uint64_t ring_fill;
} log_sink;

static void write_all(int fd, const char *p, size_t n)
{
    while (fd >= 0 && n) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return; /* the log is a courtesy: a full disk does not stop the trial */
        p += w, n -= (size_t)w;
    }
}

static void log_add(log_sink *l, const char *p, size_t n)
{
    if (l->total < FIT_LOG_HEAD) {
        size_t h = FIT_LOG_HEAD - l->total < n ? (size_t)(FIT_LOG_HEAD - l->total) : n;
        write_all(l->fd, p, h);
        l->total += h, p += h, n -= h;
    }
    if (n && !l->ring && !(l->ring = malloc(FIT_LOG_TAIL)))
        l->fd = -1; /* out of memory: the log keeps its head */
    for (; n && l->ring; n--, p++, l->total++)
        l->ring[l->ring_fill++ % FIT_LOG_TAIL] = *p;
}

/* log_end: the tail after the head, with a line saying what was cut; returns the bytes cut. */
static uint64_t log_end(log_sink *l)
{
    uint64_t cut = 0;
    if (l->ring_fill) {
        uint64_t keep = l->ring_fill < FIT_LOG_TAIL ? l->ring_fill : FIT_LOG_TAIL;
        cut = l->ring_fill - keep;
        if (cut) {
            char line[256];
            int n = snprintf(line, sizeof line,
                             "\n[vramtrace fit: %llu bytes of output cut here; the first %u "
                             "and the last %u bytes of %llu are kept]\n",
                             (unsigned long long)cut, FIT_LOG_HEAD, FIT_LOG_TAIL,
                             (unsigned long long)l->total);
            write_all(l->fd, line, (size_t)n);
        }
        uint64_t start = l->ring_fill - keep;
        for (uint64_t i = 0; i < keep;) { /* at most two runs: to the ring's end, then from 0 */
            size_t at = (size_t)((start + i) % FIT_LOG_TAIL);
            size_t run = FIT_LOG_TAIL - at < keep - i ? FIT_LOG_TAIL - at : (size_t)(keep - i);
            write_all(l->fd, l->ring + at, run);
            i += run;
        }
    }
    free(l->ring);
    return cut;
}

/* drain: reads what the pipe holds (waiting up to wait_ms for the first bytes), at most
 * `reads` reads, so a trial that never stops printing still lets the caller watch the clock;
 * returns 1 at end of file. */
static int drain(int fd, log_sink *l, int wait_ms, int reads)
{
    char buf[65536];
    struct pollfd p = {fd, POLLIN, 0};
    while (reads-- > 0 && poll(&p, 1, wait_ms) > 0) {
        ssize_t n = read(fd, buf, sizeof buf);
        if (n < 0 && (errno == EINTR || errno == EAGAIN))
            return 0;
        if (n <= 0)
            return 1;
        log_add(l, buf, (size_t)n);
        wait_ms = 0;
    }
    return 0;
}

int fit_proc_run(char *const argv[], const char *log, double limit_s, volatile sig_atomic_t *stop,
                 volatile pid_t *running, fit_proc *out)
{
    memset(out, 0, sizeof *out);
    if (unlink(log) && errno != ENOENT) {
        out->log_failed = 1;
        return -1;
    }
    log_sink l = {open(log, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600), 0, NULL,
                  0};
    if (l.fd < 0) {
        out->log_failed = 1;
        return -1;
    }
    int fds[2];
    if (pipe2(fds, O_CLOEXEC)) {
        int e = errno;
        close(l.fd);
        errno = e;
        return -1;
    }
    fflush(stdout); /* nothing buffered is written twice by the child */
    fflush(stderr);
    double t0 = now_s();
    /* SIGCHLD the default while the trial runs (a trial that crashed had been taken as one that
     * fit), as it was in the trial itself */
    struct sigaction chld;
    run_signals_chld_default(&chld);
    pid_t pid = fork();
    if (pid < 0) {
        int e = errno;
        sigaction(SIGCHLD, &chld, NULL);
        close(fds[0]), close(fds[1]);
        if (l.fd >= 0)
            close(l.fd);
        errno = e;
        return -1;
    }
    if (pid == 0) {
        setpgid(0, 0); /* the trial and everything it starts: one group to stop */
        int null = open("/dev/null", O_RDONLY);
        if (null >= 0)
            dup2(null, 0);
        dup2(fds[1], 1);
        dup2(fds[1], 2);
        signal(SIGINT, SIG_DFL);
        signal(SIGTERM, SIG_DFL);
        signal(SIGPIPE, SIG_DFL);
        sigaction(SIGCHLD, &chld, NULL);
        execv(argv[0], argv);
        _exit(127);
    }
    setpgid(pid, pid); /* also here: no window in which a kill of the group misses it */
    close(fds[1]);
    fcntl(fds[0], F_SETFL, O_NONBLOCK);
    *running = pid;
    int status = 0, eof = 0, exited = 0, lost = 0;
    double term_at = 0, stop_at = 0;
    while (!exited) {
        if (!eof)
            eof = drain(fds[0], &l, 100, 256);
        else
            poll(NULL, 0, 50);
        pid_t r = waitpid(pid, &status, WNOHANG);
        if (r == pid || (r < 0 && errno != EINTR)) {
            exited = 1;
            lost = r < 0 ? errno : 0; /* (its status unknown: never a trial that fit) */
            break;
        }
        double t = now_s();
        if (limit_s > 0 && !term_at && t - t0 > limit_s) {
            out->timed_out = 1;
            term_at = t;
            kill(-pid, SIGTERM);
        }
        if (*stop && !stop_at)
            stop_at = t;
        if ((term_at && t - term_at > FIT_KILL_GRACE_S) || (stop_at && t - stop_at > 10.0))
            kill(-pid, SIGKILL);
    }
    *running = 0;
    sigaction(SIGCHLD, &chld, NULL);
    out->seconds = now_s() - t0;
    if (out->timed_out)
        kill(-pid, SIGKILL); /* what the trial left running in its group */
    if (!eof)
        drain(fds[0], &l, 0, 1024); /* what is there now; a process it left may hold the pipe */
    close(fds[0]);
    out->out = l.total;
    out->out_cut = log_end(&l);
    if (l.fd >= 0)
        close(l.fd);
    out->status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    if (lost) {
        errno = lost;
        return -1;
    }
    return 0;
}
