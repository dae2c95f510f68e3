/* perfetto.c — Chrome trace-event JSON of a replay (perfetto.h). The timeline comes from the
 * replay (model/timeline.c); strings are quoted by jsonw.c. Times are microseconds since the
 * trace began. */
#include "perfetto.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "jsonw.h"
#include "mem.h"
#include "phases.h"

static double us(uint64_t ns)
{
    return (double)ns / 1000.0;
}

/* process_name: what the traced process ran, as a track's name: its program's file name and its
 * arguments ("python3.11 train.py --batch_size=8", up to ~200 bytes), then its pid; the
 * executable's path where the trace has no arguments */
static void process_name(const tables_process *p, char *out, size_t n)
{
    size_t len = 0;
    out[0] = '\0';
    for (uint32_t i = 0; p && i < p->argc && len + 1 < n && len < 200; i++) {
        const char *a = p->argv[i].s ? p->argv[i].s : "";
        size_t al = p->argv[i].len;
        if (i == 0) { /* the program: its file name */
            const char *slash = memrchr(a, '/', al);
            if (slash)
                al -= (size_t)(slash + 1 - a), a = slash + 1;
        }
        int w = snprintf(out + len, n - len, "%s%.*s", i ? " " : "", (int)(al < 200 ? al : 200), a);
        len += w > 0 ? (size_t)w : 0;
    }
    if (len >= n)
        len = n - 1;
    if (!len && p && p->exe.len)
        len =
            (size_t)snprintf(out, n, "%.*s", (int)(p->exe.len < 200 ? p->exe.len : 200), p->exe.s);
    if (!p)
        snprintf(out, n, "traced process");
    else if (len < n)
        snprintf(out + len, n - len, " (pid %" PRIu32 ")", p->pid);
}

/* the process (pid 1: one traced process per file) and one named track per thread */
static void meta(FILE *out, replay_result *r)
{
    const tables_process *p = tables_process_get(r->t);
    char name[320];
    process_name(p, name, sizeof name);
    fputs("{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":1,\"tid\":0,\"args\":{\"name\":", out);
    jsonw_cstr(out, name);
    fputs("}}", out);
    for (size_t i = 0; i < tables_n_threads(r->t); i++) {
        const tables_thread *th = tables_thread_at(r->t, i);
        fprintf(out,
                ",\n{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":1,\"tid\":%" PRIu32
                ",\"args\":{\"name\":",
                th->index + 1);
        if (th->name.len)
            jsonw_str(out, th->name.s, th->name.len);
        else
            jsonw_cstr(out, tables_role_name(th->role));
        fputs("}}", out);
    }
    /* the category counters on a process of their own, named by the device (every real
     * trace's process uses one; several are summed and the name says so) */
    fputs(",\n{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":2,\"tid\":0,\"args\":{\"name\":",
          out);
    if (tables_n_devices(r->t) == 1) {
        const tables_device *d = tables_device_at(r->t, 0);
        char buf[300];
        snprintf(buf, sizeof buf, "cuda:%u %.*s: live bytes by category", d->ordinal,
                 (int)(d->name.len < 200 ? d->name.len : 200), d->name.s ? d->name.s : "");
        jsonw_cstr(out, buf);
    } else
        jsonw_cstr(out, tables_n_devices(r->t) ? "all devices: live bytes by category"
                                               : "live bytes by category");
    fputs("}}", out);
}

static void counter(FILE *out, int c, uint64_t t, uint64_t v)
{
    fprintf(out,
            ",\n{\"ph\":\"C\",\"name\":\"%s\",\"cat\":\"live bytes\",\"pid\":2,\"tid\":0,"
            "\"ts\":%.3f,\"args\":{\"bytes\":%" PRIu64 "}}",
            category_key((category)c), us(t), v);
}

/* one counter track per category that ever held bytes, sampled at whole moments of the replay
 * (timeline_moments: each span's lowest, tallest and last, each category's largest, the run's
 * tallest), a value left out when it repeats the track's last: at any instant the tracks hold
 * one moment's values, so their sum is the process's live bytes then, never more than its peak */
static int counters(FILE *out, const timeline *tl)
{
    size_t n = 0;
    const timeline_moment **m = timeline_moments(tl, PERFETTO_POINTS, &n);
    if (!m)
        return -1;
    for (int c = 0; c < CAT_COUNT; c++) {
        uint64_t prev = UINT64_MAX, any = 0;
        for (size_t i = 0; i < n; i++)
            any |= m[i]->v[c];
        for (size_t i = 0; any && i < n; i++)
            if (m[i]->v[c] != prev)
                counter(out, c, m[i]->t, prev = m[i]->v[c]);
    }
    free(m);
    return 0;
}

static void instant(FILE *out, const char *name, const char *cat, uint64_t t, const char *scope)
{
    fprintf(out,
            ",\n{\"ph\":\"i\",\"name\":\"%s\",\"cat\":\"%s\",\"s\":\"%s\",\"pid\":1,\"tid\":0,"
            "\"ts\":%.3f",
            name, cat, scope, us(t));
}

int perfetto_write(FILE *out, replay_result *r)
{
    const timeline *tl = r->tl;
    char site[512];
    if (!tl)
        return -1;
    fputs("{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n", out);
    meta(out, r);
    if (tl->has_cats && counters(out, tl))
        return -1;
    for (size_t i = 0; i < tl->nslices; i++) {
        const timeline_slice *s = &tl->slices[i];
        fprintf(out,
                ",\n{\"ph\":\"X\",\"name\":\"%s\",\"cat\":\"phase\",\"pid\":1,\"tid\":%" PRIu32
                ",\"ts\":%.3f,\"dur\":%.3f}",
                phase_name(s->phase), s->thread + 1, us(s->t0),
                us(s->t1 > s->t0 ? s->t1 - s->t0 : 0));
    }
    for (size_t i = 0; i < tl->nticks; i++) {
        instant(out, "optimizer step", "iteration", tl->ticks[i], "p");
        fprintf(out, ",\"args\":{\"step\":%zu}}", i + 1);
    }
    instant(out, "peak", "peak", r->t_process, "g");
    fprintf(out, ",\"args\":{\"process_bytes\":%" PRIu64 "}}", r->peak_process);
    if (r->has_oom) {
        instant(out, "out of memory", "oom", r->oom_time_ns, "g");
        fprintf(out, ",\"args\":{\"requested_bytes\":%" PRIu64 ",\"phase\":\"%s\",\"site\":",
                r->oom_requested, phase_name(r->oom_phase));
        jsonw_cstr(out, replay_site_text(r, r->oom_stack, site, sizeof site));
        fputs("}}", out);
    }
    fprintf(out,
            "\n],\"otherData\":{\"tool\":\"vramtrace\",\"phase_slices_cut\":%s,"
            "\"category_tracks\":%s}}\n",
            tl->slices_cut ? "true" : "false", tl->has_cats ? "true" : "false");
    return ferror(out) || mem_failed() ? -1 : 0; /* a string left out for want of memory */
}
