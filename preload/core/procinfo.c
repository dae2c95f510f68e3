/* procinfo.c — the PROCESS record: who was traced (pid, ppid, exe, cwd, host, argv and the
 * environment variables of VT_RECORDED_ENV and VRAMTRACE_*, the settings' as they applied), then
 * the FILE records of the config files argv names (argfiles.c). Written once per trace file while
 * it opens. */
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "vramtrace/trace_format.h"
#include "core/argfiles.h"
#include "core/config.h"
#include "writer.h"

#define MAX_CMDLINE (256u << 10)
#define MAX_ARGS 4096
#define MAX_VT_ENV 32 /* VRAMTRACE_* variables recorded */

extern char **environ;

/* is_setting: whether the NAME=VALUE entry is one of the settings' variables */
static int is_setting(const char *entry)
{
    const char *name;
    size_t len = strcspn(entry, "=");
    for (size_t i = 0; (name = vt__config_setting_name(i)); i++)
        if (strlen(name) == len && !strncmp(entry, name, len))
            return 1;
    return 0;
}

/* read_cmdline: /proc/self/cmdline into a malloc'ed buffer; *len bytes. NULL on failure. */
static char *read_cmdline(size_t *len)
{
    int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    char *buf = malloc(MAX_CMDLINE + 1);
    size_t n = 0;
    while (buf && n < MAX_CMDLINE) {
        ssize_t r = read(fd, buf + n, MAX_CMDLINE - n);
        if (r <= 0)
            break;
        n += (size_t)r;
    }
    close(fd);
    if (buf)
        buf[n] = '\0';
    *len = n;
    return buf;
}

void vt__write_process_locked(void)
{
    static const char *const names[] = {
#define VT_ENV_NAME(n) #n,
        VT_RECORDED_ENV(VT_ENV_NAME)
#undef VT_ENV_NAME
    };
    enum { NENV = sizeof names / sizeof names[0] + MAX_VT_ENV };
    const char **strs = malloc(sizeof(char *) * (3 + MAX_ARGS + NENV));
    uint32_t *lens = malloc(sizeof(uint32_t) * (3 + MAX_ARGS + NENV));
    char(*envbuf)[1024] = malloc(sizeof(*envbuf) * NENV);
    char *cmd = NULL, *enc = NULL;
    if (!strs || !lens || !envbuf)
        goto out;
    static char exe[PATH_MAX], cwd[PATH_MAX], host[256];
    ssize_t el = readlink("/proc/self/exe", exe, sizeof exe - 1);
    exe[el > 0 ? el : 0] = '\0';
    if (!getcwd(cwd, sizeof cwd))
        cwd[0] = '\0';
    if (gethostname(host, sizeof host - 1) != 0)
        host[0] = '\0';
    host[sizeof host - 1] = '\0';
    int n = 0;
    strs[n++] = exe;
    strs[n++] = cwd;
    strs[n++] = host;
    size_t clen = 0;
    cmd = read_cmdline(&clen);
    uint32_t argc = 0;
    for (size_t i = 0; cmd && i < clen && argc < MAX_ARGS; argc++) {
        size_t l = strnlen(cmd + i, clen - i);
        strs[n++] = cmd + i;
        i += l + 1;
    }
    uint32_t nenv = 0;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        const char *v = getenv(names[i]);
        if (!v)
            continue;
        snprintf(envbuf[nenv], sizeof envbuf[0], "%s=%s", names[i], v);
        strs[n++] = envbuf[nenv++];
    }
    /* the settings' variables as they applied (as the process started: config.c), then any
     * other VRAMTRACE_* variable as it is now */
    for (size_t i = 0; vt__config_setting_name(i) && nenv < NENV; i++) {
        const char *v = vt__config_setting_env(i);
        if (!v)
            continue;
        snprintf(envbuf[nenv], sizeof envbuf[0], "%s=%s", vt__config_setting_name(i), v);
        strs[n++] = envbuf[nenv++];
    }
    for (char **e = environ; e && *e && nenv < NENV; e++) {
        if (strncmp(*e, "VRAMTRACE_", 10) != 0 || is_setting(*e))
            continue;
        snprintf(envbuf[nenv], sizeof envbuf[0], "%s", *e);
        strs[n++] = envbuf[nenv++];
    }
    size_t total = 0;
    for (int i = 0; i < n; i++)
        total += 4 + (lens[i] = (uint32_t)strlen(strs[i]));
    size_t lim = vt__writer_rec_max(); /* a chunked trace's slot, or the format's bound */
    size_t cap = lim > 64 + sizeof(vt_rec_process) ? lim - 64 - sizeof(vt_rec_process) : 0;
    if (total > cap)
        total = cap;
    enc = malloc(total);
    if (!enc)
        goto out;
    size_t used = vt__encode_strings(enc, total, strs, lens, n);
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    vt_rec_process p = {(uint32_t)getpid(), (uint32_t)getppid(), argc, nenv,
                        (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec};
    vt__writer_append_locked(VT_REC_PROCESS, 0, &p, sizeof p, enc, used, NULL, 0);
    vt__write_argfiles_locked((int)argc, strs + 3, cwd);
out:
    free(enc);
    free(cmd);
    free(envbuf);
    free(lens);
    free(strs);
}

/* Registers the PROCESS record with the writer before any other constructor can open a file
 * (priority 101 runs before the default ones), so the writer never calls up into core/. */
__attribute__((constructor(101))) static void vt__procinfo_register(void)
{
    vt__writer_on_open(vt__write_process_locked);
}
