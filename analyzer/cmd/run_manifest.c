/* run_manifest.c — the list of traces `vramtrace run` gives the preload, read back (and passed up
 * to an outer run's): the file's lines, then the links a process with no file descriptor free
 * left beside it (include/vramtrace/env.h). Interface: run_manifest.h. */
#include "run_manifest.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vramtrace/env.h"

/* link_name: the list's link k (0: run's own probe; the preload's are from 1); 0, or -1 when
 * the name does not fit */
static int link_name(char out[PATH_MAX + 16], const char *name, int k)
{
    int n = snprintf(out, PATH_MAX + 16, "%s.%d", name, k);
    return n > 0 && n < PATH_MAX + 16 ? 0 : -1;
}

/* own_link: link k is there and is a link this user made (one made by another user, who can
 * see the list's name in a shared /tmp, is never read nor removed): 1, 0 when it is another
 * file or another's, -1 when there is none (the links are made in order: the end) */
static int own_link(const char *name, int k, char link[PATH_MAX + 16])
{
    struct stat st;
    if (link_name(link, name, k) < 0 || lstat(link, &st))
        return -1;
    return S_ISLNK(st.st_mode) && st.st_uid == geteuid();
}

int run_manifest_open(run_manifest *m, const char *name)
{
    m->name = name;
    m->mark = 1;
    m->f = fopen(name, "r");
    return m->f ? 0 : -1;
}

int run_manifest_next(run_manifest *m, char *line, size_t cap)
{
    while (m->f) {
        if (!fgets(line, (int)cap, m->f)) {
            fclose(m->f);
            m->f = NULL;
            break;
        }
        char *nl = strchr(line, '\n');
        if (nl) {
            *nl = '\0';
            return 1;
        }
        int c; /* longer than cap (no preload writes one) or not ended yet: left out whole */
        while ((c = getc(m->f)) != EOF && c != '\n') {
        }
    }
    char link[PATH_MAX + 16];
    for (int own; m->mark <= VT_MANIFEST_LINKS; m->mark++) {
        if ((own = own_link(m->name, m->mark, link)) < 0)
            break;
        ssize_t n = own ? readlink(link, line, cap - 1) : -1;
        if (n >= 0 && (size_t)n < cap - 1) {
            line[n] = '\0';
            m->mark++;
            return 1;
        }
    }
    m->mark = VT_MANIFEST_LINKS + 1;
    return 0;
}

void run_manifest_close(run_manifest *m)
{
    if (m->f)
        fclose(m->f);
    m->f = NULL;
}

void run_manifest_remove(const char *name)
{
    char link[PATH_MAX + 16];
    for (int k = 1, own; k <= VT_MANIFEST_LINKS && (own = own_link(name, k, link)) >= 0; k++)
        if (own)
            unlink(link);
    unlink(name);
}

/* as_written: line, cut to cap, into out (a line the preload did not escape); -1 */
static int as_written(const char *line, char *out, size_t cap)
{
    size_t n = strnlen(line, cap - 1);
    memcpy(out, line, n);
    out[n] = '\0';
    return -1;
}

int run_manifest_path(const char *line, char *out, size_t cap)
{
    size_t n = 0;
    for (const char *s = line; *s; s++) {
        char c = *s;
        if (c == '\\') {
            if (s[1] != '\\' && s[1] != 'n')
                return as_written(line, out, cap);
            c = *++s == 'n' ? '\n' : '\\';
        }
        if (n + 1 >= cap)
            return as_written(line, out, cap);
        out[n++] = c;
    }
    out[n] = '\0';
    return 0;
}

/* run_manifest_lost: one newline appended (a blank line: readers skip those), with SIGXFSZ
 * ignored while it is written (the program has ended), and a link made and removed again */
int run_manifest_lost(const char *name, int *by_link)
{
    int fd = open(name, O_WRONLY | O_APPEND | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return errno;
    struct sigaction ign = {0}, old;
    ign.sa_handler = SIG_IGN;
    sigemptyset(&ign.sa_mask);
    sigaction(SIGXFSZ, &ign, &old);
    int err = write(fd, "\n", 1) == 1 ? 0 : errno ? errno : EIO;
    sigaction(SIGXFSZ, &old, NULL);
    close(fd);
    char link[PATH_MAX + 16];
    if (err || link_name(link, name, 0) < 0)
        return err ? err : ENAMETOOLONG;
    if (symlink("?", link))
        return *by_link = 1, errno;
    unlink(link);
    return 0;
}

/* add_link: line as the list's first free link, as the preload makes them (env.h); 0 or -1 */
static int add_link(const char *name, const char *line)
{
    char link[PATH_MAX + 16];
    for (int k = 1; k <= VT_MANIFEST_LINKS && !link_name(link, name, k); k++) {
        if (!symlink(line, link))
            return 0;
        if (errno != EEXIST)
            return -1;
    }
    return -1;
}

/* append_line: line and its newline added to the list in one write (other processes of the
 * outer run may be adding theirs); where no descriptor is free, a link. line has room for one
 * byte more. */
static void append_line(const char *name, char *line)
{
    size_t n = strlen(line);
    int fd = open(name, O_WRONLY | O_APPEND | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) {
        if (errno == EMFILE || errno == ENFILE)
            add_link(name, line);
        return;
    }
    line[n] = '\n';
    if (write(fd, line, n + 1) != (ssize_t)(n + 1)) {
        /* (the outer run says what it can of its list: run_manifest_lost) */
    }
    line[n] = '\0';
    close(fd);
}

/* run_pass_up (run_manifest.h): each line as the preload wrote it (escaped) */
void run_pass_up(const char *manifest, const char *outer)
{
    static char line[VT_MANIFEST_LINE_MAX + 2];
    run_manifest m;
    if (run_manifest_open(&m, manifest) < 0)
        return;
    while (run_manifest_next(&m, line, sizeof line - 1))
        if (line[0])
            append_line(outer, line);
    run_manifest_close(&m);
}
