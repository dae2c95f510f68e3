/* argfiles.c — the FILE records (trace_format.h, 1.2): the contents of the config files a
 * command line names, read once while the trace file opens (right after PROCESS, procinfo.c),
 * so the analyzer never has to open a file that a trace names. */
#include "core/argfiles.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vramtrace/trace_format.h"
#include "writer.h"

/* has_config_ext: .py .json .yaml .yml .toml */
static int has_config_ext(const char *s)
{
    static const char *const ext[] = {".py", ".json", ".yaml", ".yml", ".toml", NULL};
    size_t n = strlen(s);
    for (int i = 0; ext[i]; i++) {
        size_t e = strlen(ext[i]);
        if (n > e && !strcmp(s + n - e, ext[i]))
            return 1;
    }
    return 0;
}

/* read_regular: up to VT_FILE_MAX_BYTES of the regular file at path into buf (*len bytes).
 * Returns 0, or VT_FILEF_* (too large, read error); *size gets the size on disk. O_NONBLOCK:
 * a FIFO swapped in after the stat neither blocks the open nor is read (not regular). */
static uint32_t read_regular(const char *path, char *buf, size_t *len, uint64_t *size)
{
    *len = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0)
        return VT_FILEF_READ_ERROR;
    struct stat st;
    uint32_t flags = 0;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        flags = VT_FILEF_READ_ERROR;
    } else if ((uint64_t)st.st_size > VT_FILE_MAX_BYTES) {
        *size = (uint64_t)st.st_size;
        flags = VT_FILEF_TOO_LARGE;
    } else {
        *size = (uint64_t)st.st_size;
        while (*len < VT_FILE_MAX_BYTES) {
            ssize_t r = read(fd, buf + *len, VT_FILE_MAX_BYTES - *len);
            if (r < 0 && errno == EINTR)
                continue;
            if (r < 0) {
                flags = VT_FILEF_READ_ERROR;
                *len = 0;
            }
            if (r <= 0)
                break;
            *len += (size_t)r;
        }
    }
    close(fd);
    return flags;
}

/* record_one: one FILE record for path (already known to be a regular file). */
static void record_one(uint32_t kind, uint32_t argi, const char *name, const char *path, char *buf)
{
    size_t len = 0;
    uint64_t size = 0;
    uint32_t flags = read_regular(path, buf, &len, &size);
    vt_rec_file f = {kind, argi, size, flags, 0};
    const char *strs[3] = {name, path, buf};
    uint32_t lens[3] = {(uint32_t)strnlen(name, PATH_MAX), (uint32_t)strnlen(path, PATH_MAX),
                        (uint32_t)len};
    size_t cap = 12 + lens[0] + lens[1] + lens[2];
    char *enc = malloc(cap);
    if (!enc)
        return;
    size_t used = vt__encode_strings(enc, cap, strs, lens, 3);
    if (used)
        vt__writer_append_locked(VT_REC_FILE, 0, &f, sizeof f, enc, used, NULL, 0);
    free(enc);
}

/* seen: whether a file of this name was recorded already (an argument given twice is
 * recorded once; the same file under another spelling is recorded under that name too, since
 * the analyzer looks files up by the name the command line gave). */
static int seen(char (*done)[PATH_MAX], unsigned n, const char *path)
{
    for (unsigned i = 0; i < n; i++)
        if (!strcmp(done[i], path))
            return 1;
    return 0;
}

/* torch_version_py: the version.py of the PyTorch whose torch/lib/libc10.so is mapped (read
 * from /proc/self/maps: no loader lock is taken while the writer holds its own). 0 or -1. */
static int torch_version_py(char *out, size_t len)
{
    static const char lib[] = "/torch/lib/libc10.so";
    FILE *f = fopen("/proc/self/maps", "re");
    char line[PATH_MAX + 128];
    int rc = -1;
    while (f && rc != 0 && fgets(line, sizeof line, f)) {
        char *p = strchr(line, '/');
        char *hit = p ? strstr(p, lib) : NULL;
        if (!hit || (hit[sizeof lib - 1] != '\n' && hit[sizeof lib - 1] != '\0'))
            continue;
        int n = snprintf(out, len, "%.*s/torch/version.py", (int)(hit - p), p);
        rc = n > 0 && (size_t)n < len ? 0 : -1;
    }
    if (f)
        fclose(f);
    return rc;
}

void vt__write_argfiles_locked(int argc, const char *const *argv, const char *cwd)
{
    char(*done)[PATH_MAX] = malloc(sizeof(*done) * VT_FILE_MAX_COUNT);
    char *buf = malloc(VT_FILE_MAX_BYTES);
    unsigned n = 0;
    for (int i = 1; done && buf && i < argc && n < VT_FILE_MAX_COUNT; i++) {
        const char *a = argv[i];
        if (!a || !*a)
            continue;
        if (a[0] == '-') { /* --key=VALUE: the value may name a file or directory */
            const char *eq = strchr(a, '=');
            if (!eq || !eq[1])
                continue;
            a = eq + 1;
        }
        char full[PATH_MAX], name[PATH_MAX];
        int fl = a[0] == '/' || !cwd || !*cwd ? snprintf(full, sizeof full, "%s", a)
                                              : snprintf(full, sizeof full, "%s/%s", cwd, a);
        if (fl < 0 || (size_t)fl >= sizeof full)
            continue;
        struct stat st;
        if (stat(full, &st) != 0)
            continue;
        uint32_t kind = 0;
        if (S_ISREG(st.st_mode) && has_config_ext(a)) {
            kind = VT_FILE_ARG;
            snprintf(name, sizeof name, "%s", a);
        } else if (S_ISDIR(st.st_mode)) {
            int nl = snprintf(name, sizeof name, "%s/config.json", a);
            size_t l = strlen(full);
            if (nl < 0 || (size_t)nl >= sizeof name || l + 13 > sizeof full)
                continue;
            memcpy(full + l, "/config.json", 13);
            if (stat(full, &st) != 0 || !S_ISREG(st.st_mode))
                continue;
            kind = VT_FILE_DIR_CONFIG;
        } else {
            continue;
        }
        if (seen(done, n, name))
            continue;
        snprintf(done[n++], PATH_MAX, "%s", name);
        record_one(kind, (uint32_t)i, name, full, buf);
    }
    char vpath[PATH_MAX];
    struct stat vst;
    if (done && buf && n < VT_FILE_MAX_COUNT && torch_version_py(vpath, sizeof vpath) == 0 &&
        stat(vpath, &vst) == 0 && S_ISREG(vst.st_mode))
        record_one(VT_FILE_TORCH_VERSION, 0, "torch/version.py", vpath, buf);
    free(buf);
    free(done);
}
