/* host_cases.c — programs that do to their own process what a tracer must survive without the
 * program noticing, run by tests/integration/host_untouched.sh (under the fake runtime):
 *   fdclose N   closes every descriptor from 3 up, opens data.txt (it takes the lowest number,
 *               perhaps the trace's old one), writes a line, makes N alloc/free pairs and checks
 *               data.txt is still exactly that line; a fork child then writes to it too
 *   fddup2 N    opens data.txt and dup2()s it over descriptors 3..63, the same check
 *   rawfork N C N pairs, a child made with _Fork() (no fork handlers) that makes C pairs and
 *               exits through exit(), then N more pairs in the parent
 *   clone N C   the same with a raw clone system call
 *   vforkexit N N pairs, a vfork child that returns through exit() (not _exit), N more pairs
 *   chdir N     chdir("/") then N pairs
 *   exitrace N  8 threads allocating without end, then after N microseconds exit(5) (exec: the
 *   execrace N  same, then execl("/bin/true")): neither waits for the threads' records
 *   earlyexit N two threads allocating without end; after N ms a signal handler calls _exit(42),
 *               or _exit(43) where no allocation had returned yet
 *   cancel N    a thread allocating in a loop with pthread_testcancel() and another allocating
 *               thread; the first is cancelled after N microseconds (its first CUDA call may be
 *               under way: the tracer opening its file), both joined, then 100 pairs: "ok"
 *   sigexit N   pairs without end; after N microseconds a SIGALRM handler calls exit(7) (it
 *               may interrupt a CUDA call being recorded: the tracer's exit must not hang)
 *   sigexec N   the same, the handler exec'ing /bin/sh -c 'exit 8'
 *   sigexitm N  sigexit with the program's own malloc and free between the pairs (the handler
 *               may interrupt malloc, outside any CUDA call, holding its lock)
 *   sigexecfail N  sigexec whose exec fails (no such file): the handler then counts the
 *               descriptors open past 2 and exits 10 + n
 *   sigexecfailmt N  the same after 100,000 pairs on a thread of its own, with the program's own
 *               malloc and free between the pairs (threaded: the handler may interrupt them
 *               holding malloc's lock); sigexitmt, sigexecmt: sigexitm and sigexec so
 *   sigforkexec N  64 MiB touched (a slow fork), then a pair and a fork() (the child _exits)
 *               without end; after N microseconds a SIGALRM handler execs /bin/sh -c 'exit 8'
 *               (it may run inside fork(), between its handlers: the tracer's prepare holds its
 *               lock)
 *   sigbigforkexec N  sigforkexec after 100,000 pairs on a thread of its own (a plain trace's
 *               windows reach 2 MiB: the tracer's helper thread faults the next one in while
 *               the exec comes)
 *   lateexit N  N threads allocating without end, each counting its calls that returned in
 *               counts.bin (a shared mapping: read after the process is gone), then exit(0) with
 *               2 MiB of stdout still buffered: the threads go on while exit() writes it out,
 *               after the tracer's trailer (a reader that waits makes it take a while)
 *   sighook N   N pairs with a SIGUSR1 handler that makes a pair of its own (run with
 *               FAKECUDA_RAISE=10: the signal comes while the tracer asks the device, recording
 *               an allocation); prints "made M handler H": the events of each
 *   nproc N     100 pairs, then N threads at once, each a pair, all alive together (under
 *               `ulimit -u`: the tracer's threads must not take the program's); prints
 *               "threads N failed F" (F: pthread_create refused)
 *   cancelself W  N pairs, then the main thread cancels itself (deferred: pending) and W: exit
 *               exit(5); exec execl("/bin/sh", "exit 6"); fork: a child that prints "child" and
 *               exits 7, waited for (cancellation off), "child 7". None is a cancellation point
 *               untraced: the exit status is 5, 6 or 0 as written
 *   lowfd N     closes its stdout, makes N pairs (the tracer unwinds their stacks), opens
 *               /dev/null twice: prints "fds A B" on stderr, the descriptors it got (untraced:
 *               1 and 3, the lowest free)
 * Prints what it saw ("data ok 1 child 0", "child 0"); exit 0 unless a call failed. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

typedef int cudaError_t;
cudaError_t cudaMalloc(void **p, size_t n);
cudaError_t cudaFree(void *p);

static void pairs(int k)
{
    for (int i = 0; i < k; i++) {
        void *p;
        if (cudaMalloc(&p, 1024 + (size_t)i))
            exit(20);
        cudaFree(p);
    }
}

static const char LINE[] = "program data\n";

/* data_ok: data.txt (open at fd) is still exactly the program's line */
static int data_ok(int fd)
{
    char buf[64] = {0};
    off_t size = lseek(fd, 0, SEEK_END);
    return size == (off_t)(sizeof LINE - 1) && pread(fd, buf, sizeof buf - 1, 0) == size &&
           !strcmp(buf, LINE);
}

static int fds(int close_all, int n)
{
    pairs(1); /* the trace file is open from here */
    int fd;
    if (close_all) {
        for (int i = 3; i < 1024; i++)
            close(i);
        fd = open("data.txt", O_RDWR | O_CREAT | O_TRUNC, 0644);
    } else {
        fd = open("data.txt", O_RDWR | O_CREAT | O_TRUNC, 0644);
        for (int i = 3; i < 64; i++)
            if (i != fd)
                dup2(fd, i);
    }
    if (fd < 0 || write(fd, LINE, sizeof LINE - 1) != (ssize_t)(sizeof LINE - 1))
        return 21;
    pairs(n);
    int ok = data_ok(fd);
    pid_t c = fork(); /* the child's copy of the descriptor is the program's too */
    if (c == 0)
        _exit(pwrite(fd, "x", 1, 0) == 1 ? 0 : 1);
    int st = 0;
    waitpid(c, &st, 0);
    printf("data ok %d child %d\n", ok, WIFEXITED(st) ? WEXITSTATUS(st) : 99);
    return 0;
}

static int raw_child(int use_clone, int n, int c)
{
    pairs(n);
    pid_t pid = use_clone ? (pid_t)syscall(SYS_clone, SIGCHLD, 0, 0, 0, 0) : _Fork();
    if (pid == 0) {
        pairs(c);
        exit(0); /* its destructors run: the parent's trace must not be ended by them */
    }
    int st = 0;
    waitpid(pid, &st, 0);
    pairs(n);
    printf("child %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : 99);
    return 0;
}

static void *spin(void *arg)
{
    (void)arg;
    for (;;) {
        void *p;
        if (cudaMalloc(&p, 1024) == 0)
            cudaFree(p);
    }
    return NULL;
}

/* race: 8 threads allocating, then after us microseconds the exit or the exec */
static int race(int exec, int us)
{
    pthread_t t;
    for (int i = 0; i < 8; i++)
        if (pthread_create(&t, NULL, spin, NULL))
            return 3;
    usleep((useconds_t)us);
    if (exec)
        execl("/bin/true", "true", (char *)NULL);
    exit(5);
}

static void *cancelled(void *arg)
{
    (void)arg;
    for (;;) {
        pairs(1);
        pthread_testcancel();
    }
    return NULL;
}

static void *beside(void *arg)
{
    (void)arg;
    usleep(1000);
    pairs(1000);
    return NULL;
}

static volatile sig_atomic_t g_allocated; /* earlyexit: an allocation had returned */

static void *allocating(void *arg)
{
    (void)arg;
    for (;;) {
        pairs(1);
        g_allocated = 1;
    }
    return NULL;
}

/* exit42: 42 where an allocation had returned (its trace must exist), 43 where none had yet (on a
 * loaded machine the threads may not have reached their first call in a few ms) */
static void exit42(int sig)
{
    (void)sig;
    _exit(g_allocated ? 42 : 43);
}

/* early_exit: see the top (the process may end before the tracer set up its first window) */
static int early_exit(int ms)
{
    signal(SIGUSR1, exit42);
    pthread_t t[2];
    for (int i = 0; i < 2; i++)
        if (pthread_create(&t[i], NULL, allocating, NULL))
            return 23;
    usleep((useconds_t)ms * 1000);
    raise(SIGUSR1);
    return 1;
}

/* cancel_case: see the top (a thread cancelled inside a hook had hung every later CUDA call) */
static int cancel_case(int us)
{
    pthread_t t, o;
    if (pthread_create(&o, NULL, beside, NULL) || pthread_create(&t, NULL, cancelled, NULL))
        return 23;
    usleep((useconds_t)us);
    pthread_cancel(t);
    pthread_join(t, NULL);
    pthread_join(o, NULL);
    pairs(100);
    printf("ok\n");
    return 0;
}

static void exit7(int sig)
{
    (void)sig;
    exit(7); /* not async-signal-safe, but programs do it and it works untraced */
}

static void exec8(int sig)
{
    (void)sig;
    execl("/bin/sh", "sh", "-c", "exit 8", (char *)NULL);
    _exit(99);
}

/* loader_open: fd is the dynamic loader's own descriptor of libcuda.so.1, open while a dlopen
 * maps it (the runtime's first call loads the driver: a signal there finds it open, traced or
 * not; 1 in ~10 untraced runs at 0.1-1.2 ms). readlink is async-signal-safe. */
static int loader_open(int fd)
{
    char path[64], to[4096];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd); /* (no allocation for %d) */
    ssize_t k = readlink(path, to, sizeof to - 1);
    static const char lib[] = "/libcuda.so.1";
    return k >= (ssize_t)sizeof lib - 1 && !memcmp(to + k - (sizeof lib - 1), lib, sizeof lib - 1);
}

/* exec_fails: an exec that fails (no such file), then the descriptors the process has open past
 * stdin, stdout and stderr counted, but the loader's (loader_open): exit 10 + n (n at most 80),
 * so one more descriptor is one more in the status also from none (9 for none had made 0 -> 1 a
 * step of two) */
static void exec_fails(int sig)
{
    (void)sig;
    execl("/nonexistent/vramtrace-test", "x", (char *)NULL);
    int n = 0;
    for (int fd = 3; fd < 4096; fd++)
        n += fcntl(fd, F_GETFD) != -1 && !loader_open(fd);
    _exit(10 + (n > 80 ? 80 : n));
}

/* sig_exit: see the top (sigexit, sigexec, sigexitm: mall; sigexecfail: exec 2) */
static __attribute__((noreturn)) int sig_exit(int us, int exec, int mall)
{
    signal(SIGALRM, exec == 2 ? exec_fails : exec ? exec8 : exit7);
    struct itimerval it = {{0, 0}, {0, us}};
    setitimer(ITIMER_REAL, &it, NULL);
    for (unsigned i = 0;; i++) {
        pairs(1);
        for (unsigned k = 0; mall && k < 8; k++) {
            volatile char *m = malloc(64 + (i * 7919u + k * 104729u) % 200000u);
            if (m)
                m[0] = 1;
            free((void *)m);
        }
    }
}

/* hundred_k_pairs: sigbigforkexec's first pairs */
static void *hundred_k_pairs(void *arg)
{
    pairs(100000);
    return arg;
}

/* sig_fork_exec: see the top (sigforkexec) */
static __attribute__((noreturn)) int sig_fork_exec(int us)
{
    size_t n = (size_t)64 << 20;
    char *big = malloc(n);
    if (!big)
        exit(26);
    memset(big, 1, n); /* its page tables copied at each fork: the signal often comes inside */
    signal(SIGCHLD, SIG_IGN);
    signal(SIGALRM, exec8);
    struct itimerval it = {{0, 0}, {0, us}};
    setitimer(ITIMER_REAL, &it, NULL);
    for (;;) {
        pairs(1);
        if (fork() == 0)
            _exit(0);
    }
}

static _Atomic unsigned long long *g_counts; /* lateexit: each thread's calls made */

static void *counting(void *arg)
{
    _Atomic unsigned long long *n = &g_counts[(long)arg];
    for (;;) {
        void *p;
        if (cudaMalloc(&p, 1024) == 0) {
            atomic_fetch_add_explicit(n, 1, memory_order_relaxed);
            if (cudaFree(p) == 0)
                atomic_fetch_add_explicit(n, 1, memory_order_relaxed);
        }
    }
    return NULL;
}

/* late_exit: see the top (events made after the trailer must be counted, not vanish) */
static int late_exit(int n)
{
    int fd = open("counts.bin", O_RDWR | O_CREAT | O_TRUNC, 0644);
    if (fd < 0 || ftruncate(fd, 4096))
        return 24;
    g_counts = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (g_counts == MAP_FAILED || n > 64)
        return 25;
    static char buf[4 << 20];
    setvbuf(stdout, buf, _IOFBF, sizeof buf);
    for (int i = 0; i < 2 << 10; i++)
        printf("%01023d\n", 0);
    pthread_t t;
    for (long i = 0; i < n; i++)
        if (pthread_create(&t, NULL, counting, (void *)i))
            return 23;
    /* exit once the threads are under way (20 ms had been the wait: on a loaded machine they
     * had not yet run, and the run counted no event at all), at most 10 s */
    for (int w = 0; w < 10000; w++) {
        unsigned long long made = 0;
        for (long i = 0; i < n; i++)
            made += atomic_load_explicit(&g_counts[i], memory_order_relaxed);
        if (made > 2000 && w >= 20)
            break;
        usleep(1000);
    }
    exit(0);
}

/* sig_hook: see the top (a handler's events inside the tracer's hook: recorded or counted lost) */
static volatile sig_atomic_t g_hook_events;

static void hook_handler(int sig)
{
    (void)sig;
    void *p;
    if (cudaMalloc(&p, 4096) == 0) {
        g_hook_events++;
        if (cudaFree(p) == 0)
            g_hook_events++;
    }
}

static int sig_hook(int n)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = hook_handler;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGUSR1, &sa, NULL))
        return 28;
    pairs(n);
    printf("made %d handler %d\n", 2 * n, (int)g_hook_events);
    return 0;
}

/* nproc_case: see the top */
static atomic_int g_go;

static void *one_pair(void *arg)
{
    (void)arg;
    while (!atomic_load(&g_go))
        usleep(1000);
    pairs(1);
    return NULL;
}

static int nproc_case(int n)
{
    pthread_t t[64];
    int failed = 0, made = 0;
    pairs(100);
    for (int i = 0; i < n && i < 64; i++) {
        if (pthread_create(&t[made], NULL, one_pair, NULL))
            failed++;
        else
            made++;
    }
    atomic_store(&g_go, 1);
    for (int i = 0; i < made; i++)
        pthread_join(t[i], NULL);
    printf("threads %d failed %d\n", n, failed);
    return 0;
}

/* cancel_self: see the top (the tracer's own work at exit, exec and in a fork child) */
static int cancel_self(const char *what, int n)
{
    pairs(n);
    pthread_cancel(pthread_self()); /* pending until a cancellation point */
    if (!strcmp(what, "exit"))
        exit(5);
    if (!strcmp(what, "exec"))
        execl("/bin/sh", "sh", "-c", "exit 6", (char *)NULL);
    if (strcmp(what, "fork"))
        return 2;
    pid_t c = fork();
    int old, st = 0;
    pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &old); /* (the child's write, the wait) */
    if (c == 0) {
        if (write(1, "child\n", 6) != 6)
            _exit(1);
        _exit(7);
    }
    waitpid(c, &st, 0);
    printf("child %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : 99);
    return 0;
}

int main(int argc, char **argv)
{
    const char *c = argc > 2 ? argv[1] : "";
    int n = argc > 2 ? atoi(argv[2]) : 0, k = argc > 3 ? atoi(argv[3]) : 0;
    if (!strcmp(c, "fdclose"))
        return fds(1, n);
    if (!strcmp(c, "fddup2"))
        return fds(0, n);
    if (!strcmp(c, "rawfork"))
        return raw_child(0, n, k);
    if (!strcmp(c, "clone"))
        return raw_child(1, n, k);
    if (!strcmp(c, "vforkexit")) {
        pairs(n);
        pid_t pid = vfork();
        if (pid == 0)
            exit(0); /* undefined by POSIX, but programs do it and it works untraced */
        int st = 0;
        waitpid(pid, &st, 0);
        pairs(n);
        printf("child %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : 99);
        return 0;
    }
    if (!strcmp(c, "chdir")) {
        if (chdir("/"))
            return 22;
        pairs(n);
        return 0;
    }
    if (!strcmp(c, "exitrace") || !strcmp(c, "execrace"))
        return race(!strcmp(c, "execrace"), n);
    if (!strcmp(c, "cancel"))
        return cancel_case(n);
    if (!strcmp(c, "lateexit"))
        return late_exit(n);
    if (!strcmp(c, "sigexit") || !strcmp(c, "sigexec") || !strcmp(c, "sigexitm"))
        return sig_exit(n, !strcmp(c, "sigexec"), !strcmp(c, "sigexitm"));
    if (!strcmp(c, "sigexecfail"))
        return sig_exit(n, 2, 0);
    if (!strcmp(c, "sigexecfailmt") || !strcmp(c, "sigexitmt") || !strcmp(c, "sigexecmt")) {
        pthread_t t; /* (a thread made and joined first: malloc takes locks) */
        if (pthread_create(&t, NULL, hundred_k_pairs, NULL) || pthread_join(t, NULL))
            return 27;
        return sig_exit(n, !strcmp(c, "sigexecfailmt") ? 2 : !strcmp(c, "sigexecmt"), 1);
    }
    if (!strcmp(c, "sigforkexec"))
        return sig_fork_exec(n);
    if (!strcmp(c, "sigbigforkexec")) { /* (on a thread: the helper needs one to have been) */
        pthread_t t;
        if (pthread_create(&t, NULL, hundred_k_pairs, NULL) || pthread_join(t, NULL))
            return 27;
        return sig_fork_exec(n);
    }
    if (!strcmp(c, "cancelself"))
        return cancel_self(argv[2], argc > 3 ? atoi(argv[3]) : 10);
    if (!strcmp(c, "earlyexit"))
        return early_exit(n);
    if (!strcmp(c, "sighook"))
        return sig_hook(n);
    if (!strcmp(c, "nproc"))
        return nproc_case(n);
    if (!strcmp(c, "lowfd")) {
        close(1);
        pairs(n);
        int a = open("/dev/null", O_WRONLY), b = open("/dev/null", O_WRONLY);
        fprintf(stderr, "fds %d %d\n", a, b);
        return 0;
    }
    fprintf(stderr,
            "usage: host_cases fdclose|fddup2|rawfork|clone|vforkexit|chdir|exitrace|"
            "execrace|cancel|earlyexit|sigexit|sigexec|sigexitm|sigexitmt|sigexecmt|sigexecfail|"
            "sigexecfailmt|sigforkexec|sigbigforkexec|lateexit|sighook|nproc|lowfd N [C] | "
            "cancelself "
            "exit|exec|fork [N]\n");
    return 2;
}
