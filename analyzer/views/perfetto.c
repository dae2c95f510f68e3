/* perfetto.c — Chrome trace-event JSON of a replay (perfetto.h). The timeline comes from the
 * replay (model/timeline.c); strings are quoted by jsonw.c. Times are microseconds since the
 * trace began. */
#include "perfetto.h"

#include <inttypes.h>
#include <string.h>

#include "jsonw.h"
#include "phases.h"

static double us(uint64_t ns)
{
    return (double)ns / 1000.0;
}

/* the process (pid 1: one traced process per file) and one named track per thread */
static void meta(FILE *out, replay_result *r)
{
    const tables_process *p = tables_process_get(r->t);
    fputs("{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":1,\"tid\":0,\"args\":{\"name\":", out);
    jsonw_str(out, p ? p->exe.s : "traced process", p ? p->exe.len : strlen("traced process"));
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

/* one counter track per category that ever held bytes: per bucket its maximum (when it was
 * reached) and its value at the bucket's end, repeats left out */
static void counters(FILE *out, const timeline *tl)
{
    for (int c = 0; c < CAT_COUNT; c++) {
        uint64_t any = 0, prev = UINT64_MAX;
        for (size_t i = 0; i < TIMELINE_BUCKETS; i++)
            any |= tl->b[i].max[c];
        if (!any)
            continue;
        for (size_t i = 0; i < TIMELINE_BUCKETS; i++) {
            const timeline_bucket *b = &tl->b[i];
            if (!b->used)
                continue;
            if (b->max[c] != prev)
                counter(out, c, b->t_max[c], prev = b->max[c]);
            if (b->last[c] != prev)
                counter(out, c, b->t_last, prev = b->last[c]);
        }
    }
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
    if (tl->has_cats)
        counters(out, tl);
    for (size_t i = 0; i < tl->nslices; i++) {
        const timeline_slice *s = &tl->slices[i];
        fprintf(out,
                ",\n{\"ph\":\"X\",\"name\":\"%s\",\"cat\":\"phase\",\"pid\":1,\"tid\":%" PRIu32
                ",\"ts\":%.3f,\"dur\":%.3f}",
                phase_name(s->phase), s->thread + 1, us(s->t0), us(s->t1 - s->t0));
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
    return ferror(out) ? -1 : 0;
}
