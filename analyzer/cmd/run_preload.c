/* run_preload.c — which libvramtrace.so `vramtrace run` preloads, and whether a path given in
 * $VRAMTRACE_PRELOAD is a library the loader would preload: an ELF shared object of this
 * machine's class, byte order and architecture (those of this program's own file), not a
 * position-independent executable (the loader refuses those: "cannot be preloaded"), a regular
 * file (a FIFO had made run wait for ever on its open). Anything else, the program would run
 * untraced and run say "no CUDA allocation was made". */
#include "run_preload.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "run_traces.h"
#include "vramtrace/env.h"

/* read_at: n bytes at off of fd, exactly; 0 or -1 */
static int read_at(int fd, void *buf, size_t n, off_t off)
{
    return pread(fd, buf, n, off) == (ssize_t)n ? 0 : -1;
}

/* pie: the ELF64 object fd (header h) marks itself a position-independent executable
 * (DT_FLAGS_1 has DF_1_PIE in its dynamic section) */
static int pie(int fd, const Elf64_Ehdr *h)
{
    for (unsigned i = 0; i < h->e_phnum && i < 256; i++) {
        Elf64_Phdr ph;
        if (read_at(fd, &ph, sizeof ph, (off_t)(h->e_phoff + (uint64_t)i * h->e_phentsize)) ||
            ph.p_type != PT_DYNAMIC)
            continue;
        for (uint64_t k = 0; k < ph.p_filesz / sizeof(Elf64_Dyn) && k < 4096; k++) {
            Elf64_Dyn d;
            if (read_at(fd, &d, sizeof d, (off_t)(ph.p_offset + k * sizeof d)) ||
                d.d_tag == DT_NULL)
                return 0;
            if (d.d_tag == DT_FLAGS_1)
                return (d.d_un.d_val & DF_1_PIE) != 0;
        }
    }
    return 0;
}

/* preloadable: path is such a library; else 0 with why */
static int preloadable(const char *path, const char **why)
{
    *why = "not a shared library (ELF): the program would run untraced";
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) || !S_ISREG(st.st_mode)) {
        if (fd >= 0)
            close(fd);
        *why = "not a regular file: the program would run untraced";
        return 0;
    }
    Elf64_Ehdr h, self;
    char exe[PATH_MAX];
    int sfd = run_self_exe(exe) == 0 ? open(exe, O_RDONLY | O_CLOEXEC) : -1;
    /* this machine's class and byte order first: the fields after them are read in its own */
    int ok = sfd >= 0 && !read_at(sfd, &self, sizeof self, 0) && !read_at(fd, &h, sizeof h, 0) &&
             !memcmp(h.e_ident, ELFMAG, SELFMAG);
    if (ok && (h.e_ident[EI_CLASS] != self.e_ident[EI_CLASS] ||
               h.e_ident[EI_DATA] != self.e_ident[EI_DATA] ||
               (h.e_type == ET_DYN && h.e_machine != self.e_machine))) {
        ok = 0;
        *why = "a shared library for another machine (ELF class, byte order or architecture): the "
               "program would run untraced";
    } else if (ok && (h.e_type != ET_DYN || h.e_phentsize != self.e_phentsize)) {
        ok = 0; /* (the loader checks the header's entry size too: "phentsize not the expected") */
    } else if (ok && h.e_ident[EI_CLASS] == ELFCLASS64 && pie(fd, &h)) {
        ok = 0;
        *why = "a program (a position-independent executable), not a shared library: the loader "
               "refuses to preload it and the program would run untraced";
    }
    if (sfd >= 0)
        close(sfd);
    close(fd);
    return ok;
}

/* split: the loader splits LD_PRELOAD on spaces and colons (also tabs, newlines): a path with
 * one is two names it cannot load, the program run untraced with two loader errors on its
 * stderr, run then saying "no CUDA allocation was made" */
static int split(const char *path, const char **why)
{
    if (!strpbrk(path, " :\t\n"))
        return 0;
    *why = "its path has a space or a colon, which LD_PRELOAD splits it on: the program would run "
           "untraced (put libvramtrace.so, or a link to it, where its path has neither, and set "
           "VRAMTRACE_PRELOAD to that)";
    return 1;
}

int run_find_preload(char *out, size_t len, const char **why)
{
    const char *env = getenv(VT_ENV_PRELOAD);
    *why = NULL;
    if (env && *env) {
        snprintf(out, len, "%s", env);
        if (access(out, R_OK) != 0)
            return -1;
        return split(out, why) ? -2 : preloadable(out, why) ? 0 : -2;
    }
    char self[PATH_MAX];
    if (run_self_exe(self) < 0)
        return -1;
    char *slash = strrchr(self, '/');
    if (!slash)
        return -1;
    *slash = '\0';
    snprintf(out, len, "%s/libvramtrace.so", self);
    if (access(out, R_OK) != 0)
        snprintf(out, len, "%s/../lib/vramtrace/libvramtrace.so", self);
    if (access(out, R_OK) != 0)
        return -1;
    return split(out, why) ? -2 : 0;
}
