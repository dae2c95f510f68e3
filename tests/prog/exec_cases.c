/* exec_cases.c — exec under the preload, run by tests/integration/writer_exec.sh: a trace
 * ends with an EXEC trailer before each form of exec; a failed exec (three in a row) changes
 * nothing the program sees (result, errno) and tracing goes on; a vfork child's exec leaves the
 * parent's trace alone; `chain S` keeps 10 * (S + 1) allocations of 1 MiB for 1.5 s, then execs
 * itself as `chain S+1` up to S = 2 (three images, one trace each). usage: exec_cases exec|fail
 * FORM | vfork | chain S; FORM: execv execve execvp execvpe execl execlp execle fexecve. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

typedef int cudaError_t;
cudaError_t cudaMalloc(void **p, size_t n);
cudaError_t cudaFree(void *p);
extern char **environ;

static void pairs(int n)
{
    for (int i = 0; i < n; i++) {
        void *p = NULL;
        if (cudaMalloc(&p, 1000 + (size_t)i) || cudaFree(p)) {
            fprintf(stderr, "exec_cases: CUDA call failed\n");
            exit(1);
        }
    }
}

/* do_exec: runs `path` (a name searched in PATH for the p forms) with one argument. */
static int do_exec(const char *form, const char *path, const char *name)
{
    char *argv[] = {(char *)name, NULL};
    if (!strcmp(form, "execv"))
        return execv(path, argv);
    if (!strcmp(form, "execve"))
        return execve(path, argv, environ);
    if (!strcmp(form, "execvp"))
        return execvp(name, argv);
    if (!strcmp(form, "execvpe"))
        return execvpe(name, argv, environ);
    if (!strcmp(form, "execl"))
        return execl(path, name, (char *)NULL);
    if (!strcmp(form, "execlp"))
        return execlp(name, name, (char *)NULL);
    if (!strcmp(form, "execle"))
        return execle(path, name, (char *)NULL, environ);
    if (!strcmp(form, "fexecve")) {
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            return -1;
        int r = fexecve(fd, argv, environ);
        int e = errno;
        close(fd);
        errno = e;
        return r;
    }
    fprintf(stderr, "exec_cases: unknown form %s\n", form);
    exit(2);
}

int main(int argc, char **argv)
{
    if (argc == 3 && !strcmp(argv[1], "exec")) {
        pairs(3);
        do_exec(argv[2], "/bin/true", "true");
        perror("exec_cases: exec /bin/true");
        return 1;
    }
    if (argc == 3 && !strcmp(argv[1], "fail")) {
        pairs(2);
        /* fexecve: a descriptor of a file that is no program (one of no file fails in open) */
        int fd_form = !strcmp(argv[2], "fexecve"), want = fd_form ? EACCES : ENOENT;
        for (int k = 0; k < 3; k++) { /* (one after another, as a search of PATH by hand does) */
            errno = 0;
            int r = do_exec(argv[2], fd_form ? "/dev/null" : "/nonexistent-vt/none",
                            "nonexistent-vt-command");
            if (r != -1 || errno != want) {
                fprintf(stderr, "exec_cases: failed exec gave %d, errno %d (want -1, %d)\n", r,
                        errno, want);
                return 3;
            }
        }
        pairs(2);
        return 0;
    }
    if (argc == 3 && !strcmp(argv[1], "chain")) {
        int s = atoi(argv[2]);
        for (int i = 0; i < 10 * (s + 1); i++) {
            void *p = NULL;
            if (cudaMalloc(&p, 1 << 20))
                return 1;
        }
        usleep(1500000);
        char next[16];
        snprintf(next, sizeof next, "%d", s + 1);
        if (s < 2)
            execl("/proc/self/exe", "exec_cases", "chain", next, (char *)NULL);
        return s < 2 ? 1 : 0;
    }
    if (argc == 2 && !strcmp(argv[1], "vfork")) {
        pairs(1);
        pid_t pid = vfork();
        if (pid == 0) {
            char *a[] = {"true", NULL};
            execv("/bin/true", a);
            _exit(127);
        }
        int st = 0;
        if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st)) {
            fprintf(stderr, "exec_cases: vfork child failed\n");
            return 1;
        }
        pairs(1);
        return 0;
    }
    fprintf(stderr, "usage: exec_cases exec|fail FORM | vfork | chain S\n");
    return 2;
}
