/* diff_view.c — the difference of two runs' peaks (diff_view.h). Sites are grouped by their
 * text so the same line of code matches across two traces whatever its stack ids. */
#include "diff_view.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "bytes_sat.h"
#include "categories.h"
#include "escape.h"
#include "evalsrc.h"
#include "jsonw.h"
#include "mem.h"
#include "phases.h"
#include "recognize.h"

/* Trace-derived byte counts are u64 up to 2^64 - 1: a sum or a change that would leave int64 is
 * held at its bound (never a signed overflow), +-INT64_MAX so that negating one is defined. */
static int64_t clamp(int64_t v)
{
    return v < -INT64_MAX ? -INT64_MAX : v;
}
static int64_t add_s(int64_t a, int64_t b)
{
    int64_t r;
    return __builtin_add_overflow(a, b, &r) ? (a < 0 ? -INT64_MAX : INT64_MAX) : clamp(r);
}
/* delta: b - a of two byte counts, held within +-INT64_MAX */
static int64_t delta(uint64_t a, uint64_t b)
{
    return bytes_diff(b, a);
}
static int64_t to_s(uint64_t v)
{
    return v > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)v;
}

typedef struct diff_site {
    char *key;   /* what matches it in the other run (source_key) */
    char *text;  /* as shown: its text in B where it has one, else in A's */
    long a_line; /* its line in A where B's is another (the script edited), else 0 */
    int64_t bytes[2];
} diff_site;

typedef struct diff_sites {
    diff_site *v;
    size_t n, cap;
} diff_sites;

/* line_of: the line number after ".py:" in a site's text, 0 when none */
static long line_of(const char *text)
{
    const char *c = strstr(text, ".py:");
    return c ? strtol(c + 4, NULL, 10) : 0;
}

static int sites_add(diff_sites *s, const char *key, const char *text, int side, uint64_t bytes)
{
    for (size_t i = 0; i < s->n; i++) /* sites at a peak: hundreds, not millions */
        if (!strcmp(s->v[i].key, key)) {
            s->v[i].bytes[side] = add_s(s->v[i].bytes[side], to_s(bytes));
            if (side && s->v[i].bytes[0] && strcmp(s->v[i].text, text)) { /* moved in B */
                char *t = strdup(text);
                if (!t)
                    return -1;
                s->v[i].a_line = line_of(s->v[i].text);
                free(s->v[i].text);
                s->v[i].text = t;
            }
            return 0;
        }
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 64;
        diff_site *v = realloc(s->v, cap * sizeof *v);
        if (!v)
            return -1;
        s->v = v;
        s->cap = cap;
    }
    s->v[s->n].key = strdup(key);
    s->v[s->n].text = strdup(text);
    s->v[s->n].a_line = 0;
    if (!s->v[s->n].key || !s->v[s->n].text) {
        free(s->v[s->n].key), free(s->v[s->n].text);
        return -1;
    }
    s->v[s->n].bytes[side] = to_s(bytes);
    s->v[s->n].bytes[!side] = 0;
    s->n++;
    return 0;
}

/* COMPILED: what a site in torch.compile's generated code is named by here: inductor writes
 * each compile's code to a file named by a hash of it (DIR/torchinductor_USER/jl/cjlw32...py),
 * so the same line of the same graph compiled for another batch size is another file. */
#define COMPILED "<torch.compile code>"

/* site_key: a site's text with a generated file's hashed path as COMPILED (the line and the
 * function kept); 1 when it was one. */
static int site_key(const char *text, char *buf, size_t len)
{
    const char *ind = strstr(text, "torchinductor_"), *py = strstr(text, ".py:");
    const char *base = py ? py : text;
    while (base > text && base[-1] != '/')
        base--;
    if (!ind || !py || ind > py || base == text || base[0] != 'c' || py - base < 20) {
        snprintf(buf, len, "%s", text);
        return 0;
    }
    snprintf(buf, len, "%s%s", COMPILED, py + 3);
    return 1;
}

/* source_key: a site "FILE.py:LINE FUNCTION" of a file the trace recorded (a FILE record's
 * contents: the script, a config) keyed by its line's text, not its number: the same statement at
 * another line in the other run (the script edited between them) is the same site; else text.
 * (sim_hf.py with an EMA added: 9 of the 10 sites shown were one statement at two lines) */
/* names: the recorded file name s (n bytes) is the site's (flen bytes of text), or ends with it
 * after a '/': a run given the script by its absolute path, from the directory it is in, shows
 * it as short as one given it relative (a diff of the two had split every site in two, one key
 * by the line's text, the other by its number) */
static int names(const char *s, size_t n, const char *text, size_t flen)
{
    return n >= flen && !memcmp(s + n - flen, text, flen) && (n == flen || s[n - flen - 1] == '/');
}

static const char *source_key(const replay_result *r, const char *text, char *buf, size_t len)
{
    const char *c = strstr(text, ".py:"), *sp = c ? strchr(c, ' ') : NULL;
    long line = line_of(text);
    size_t flen = c ? (size_t)(c + 3 - text) : 0;
    for (size_t i = 0; sp && line > 0 && i < tables_n_files(r->t); i++) {
        const tables_file *f = tables_file_at(r->t, i);
        if (f->flags || !f->contents.s || !flen ||
            !(names(f->name.s, f->name.len, text, flen) ||
              names(f->path.s, f->path.len, text, flen)))
            continue;
        const char *p = f->contents.s, *end = p + f->contents.len;
        for (long n = 1; n < line && p < end; n++) { /* to the start of the line */
            const char *nl = memchr(p, '\n', (size_t)(end - p));
            p = nl ? nl + 1 : end;
        }
        const char *e = memchr(p, '\n', (size_t)(end - p));
        e = e ? e : end;
        while (p < e && (*p == ' ' || *p == '\t'))
            p++;
        while (e > p && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
            e--;
        if (p == e) /* past the end, or a blank line: the number itself */
            return text;
        /* keyed by the file's last name: the same script named relative in one run (shown
         * short) and absolute in the other (shown whole, run from another directory) */
        const char *b = text + flen;
        while (b > text && b[-1] != '/')
            b--;
        snprintf(buf, len, "%.*s|%s|%.*s", (int)(text + flen - b), b, sp + 1, (int)(e - p), p);
        return buf;
    }
    return text;
}

static int sites_fill(diff_sites *s, replay_result *r, int side, int *compiled)
{
    char buf[1024], key[1024], skey[2048];
    for (size_t i = 0; i < r->at_peak.n; i++) {
        const live_item *it = &r->at_peak.items[i];
        *compiled |= site_key(replay_site_text(r, it->stack_id, buf, sizeof buf), key, sizeof key);
        if (sites_add(s, source_key(r, key, skey, sizeof skey), key, side, it->size))
            return -1;
    }
    return 0;
}

static int64_t site_change(const diff_site *x)
{
    return add_s(x->bytes[1], -x->bytes[0]); /* both within +-INT64_MAX */
}

static int cmp_change(const void *p, const void *q)
{
    int64_t a = site_change(p), b = site_change(q);
    a = a < 0 ? -a : a;
    b = b < 0 ? -b : b;
    if (a != b)
        return a > b ? -1 : 1;
    return strcmp(((const diff_site *)p)->key, ((const diff_site *)q)->key);
}

/* sites_rest: the sites from i on that changed (left out at --top): how many, *rest their change
 * summed (with the ones shown, the process peak's change) */
static size_t sites_rest(const diff_sites *s, size_t i, int64_t *rest)
{
    size_t more = 0;
    *rest = 0;
    for (; i < s->n; i++)
        if (site_change(&s->v[i]))
            more++, *rest = add_s(*rest, site_change(&s->v[i]));
    return more;
}

static double mib(int64_t b)
{
    return (double)b / (1024.0 * 1024.0);
}

/* change: b bytes as a signed change in MiB ("+1594.5"); one that would round to 0.0 in KiB or
 * bytes ("-12.0 KiB", "+312 B"), so a change is never shown as "+0.0" or "-0.0"; none is "0". */
static const char *change(int64_t b, char *buf, size_t len)
{
    int64_t a = b < 0 ? -b : b;
    if (!b)
        snprintf(buf, len, "0");
    else if (a >= 52429) /* 0.05 MiB: "%.1f" shows at least 0.1 */
        snprintf(buf, len, "%+.1f", mib(b));
    else if (a >= 52) /* 0.05 KiB */
        snprintf(buf, len, "%+.1f KiB", (double)b / 1024.0);
    else
        snprintf(buf, len, "%+" PRId64 " B", b);
    return buf;
}

/* amount: b bytes in MiB ("3189.0"), one too small for 0.1 MiB in KiB or bytes ("32.0 KiB",
 * "4 B"), so a byte count is never shown as "0.0" beside a change */
static const char *amount(uint64_t b, char *buf, size_t len)
{
    if (b >= 52429 || !b)
        snprintf(buf, len, "%.1f", mib(to_s(b)));
    else if (b >= 52)
        snprintf(buf, len, "%.1f KiB", (double)b / 1024.0);
    else
        snprintf(buf, len, "%" PRIu64 " B", b);
    return buf;
}

/* basis: what a run's categories sort ("tensors": each tensor; "segments": each segment under
 * the phase that grew it, segment mode, where 'allocated' is not visible either) */
static const char *basis(const replay_result *r)
{
    return r->tensor_mode ? "tensors" : "segments";
}

/* pool_hidden: r's tensors came one event each from cudaMallocAsync's pool, whose cache (reserved
 * beyond the tensors) no event shows: its reserved bytes and allocator cache are not measured
 * (a_tensors_eager's "reserved 5965.1", its tensors', "allocator cache 0.0" had read as
 * measured beside a caching allocator's 1348.6 MiB of cache) */
static int pool_hidden(const replay_result *r)
{
    return r->tensor_mode && !r->segment_mode;
}

/* no_torch: r holds no allocation of PyTorch's, neither tensors nor segments (a trace cut before
 * the first, or a program of other memory): not "segment mode" */
static int no_torch(const replay_result *r)
{
    return !r->tensor_mode && !r->segment_mode;
}

/* seen: whether level i (allocated, reserved, process) of r is measured: the tensors' where
 * tensors came, the reserved where segments did (no pool's hidden cache, nor a trace of no
 * allocation of PyTorch's), the process's device memory always */
static int seen(const replay_result *r, int i)
{
    return i == 0 ? r->tensor_mode : i == 1 ? r->segment_mode : 1;
}

/* cat_seen: whether category c of r is measured (the allocator cache of a hidden pool is not) */
static int cat_seen(const replay_result *r, int c)
{
    return c != CAT_CACHE || !pool_hidden(r);
}

/* steps_done: the optimizer steps r completed (a bounded trace's: its summaries') */
static unsigned steps_done(const replay_result *r)
{
    return replay_steps_run(r) - (replay_oom_in_step(r) ? 1u : 0u);
}

/* oom_json: a run's out-of-memory error, or null */
static void oom_json(FILE *out, const replay_result *r)
{
    if (!r->has_oom) {
        fputs("null", out);
        return;
    }
    fprintf(out,
            "{\"requested_bytes\":%" PRIu64 ",\"time_ns\":%" PRIu64
            ",\"phase\":\"%s\",\"optimizer_steps\":%u,\"in_optimizer_step\":%s,\"went_on\":%s}",
            r->oom_requested, r->oom_time_ns, phase_name(r->oom_phase),
            r->oom_went_on ? r->oom_iter : steps_done(r), /* (its steps after it: not before) */
            replay_oom_in_step(r) ? "true" : "false", r->oom_went_on ? "true" : "false");
}

/* oom_phase_said: the phase of r's out-of-memory error in words: "eval" of a no-grad pass whose
 * outputs the step uses (a PPO rollout under model.eval(): evalsrc.h's 2) said as that pass, as
 * the report says it (a rollout's had been "(phase: eval)") */
static const char *oom_phase_said(replay_result *r)
{
    const tables_stack *st =
        r->oom_phase == PHASE_EVAL && r->oom_stack ? tables_stack_get(r->t, r->oom_stack) : NULL;
    if (st && evalsrc_stack(&r->eval_src, r->t, st) == 2)
        return "eval, a no-grad pass whose outputs the step uses: not an evaluation";
    return phase_name(r->oom_phase);
}

/* oom_text: what a run that ran out of memory measured: its peaks are what it held before the
 * error, not what its configuration needs; and what it never made (also said of a run that
 * took no optimizer step after its backward, without an error) */
static void oom_text(FILE *out, const char *which, replay_result *r, int flags)
{
    int fwd_only = flags & DIFF_FWD_ONLY, unseen = (flags & DIFF_STEPS_UNSEEN) && !steps_done(r);
    if (!r->has_oom && unseen) { /* (a run of 2 plain SGD steps had "ran no optimizer step") */
        fprintf(out,
                "(%s showed no optimizer step, and " OPTIM_UNSEEN_WHY
                ": whether it ran any is not known)\n",
                which);
        return;
    }
    if (!r->has_oom && !steps_done(r) && r->backward_passes && /* (not forwards only) */
        !r->at_peak.by_cat.bytes[CAT_OPTIMIZER]) {
        fprintf(out,
                "(%s ran no optimizer step: an optimizer's state and a step's own bytes are not "
                "in its peaks)\n",
                which);
        return;
    }
    if (!r->has_oom)
        return;
    if (r->oom_went_on) { /* (its steps after it are the program's going on, not before it) */
        fprintf(out,
                "(%s ran out of memory at %.3f s (phase: %s), requesting %.1f MiB, after %u "
                "optimizer step%s, and the program caught it and went on: its peaks may be "
                "those of the attempt the error cut short)\n",
                which, (double)r->oom_time_ns / 1e9, oom_phase_said(r), mib(to_s(r->oom_requested)),
                r->oom_iter, r->oom_iter == 1 ? "" : "s");
        return;
    }
    unsigned done = steps_done(r);
    char when[80];
    if (replay_oom_in_step(r) && !done)
        snprintf(when, sizeof when, "inside its first optimizer step");
    else if (replay_oom_in_step(r))
        snprintf(when, sizeof when, "after %u optimizer step%s, inside the next", done,
                 done == 1 ? "" : "s");
    else if (unseen)
        snprintf(when, sizeof when, "after no optimizer step seen (how many ran is not known)");
    else
        snprintf(when, sizeof when, "after %u optimizer step%s", done, done == 1 ? "" : "s");
    fprintf(out,
            "(%s ran out of memory at %.3f s (phase: %s), requesting %.1f MiB, %s: its peaks are "
            "what it held before the error, not what its configuration needs",
            which, (double)r->oom_time_ns / 1e9, oom_phase_said(r), mib(to_s(r->oom_requested)),
            when);
    if (replay_oom_in_step(r) && !done) /* (the state: what the step had made of it) */
        fputs("; its first step's optimizer state was being made: only part of it is in them", out);
    else if (fwd_only) /* (its report's "forwards only": an evaluation's, no state to miss) */
        fputs("; it ran forwards only (no backward pass, no optimizer step: nothing was "
              "trained)",
              out);
    else if (!done && !unseen && !r->at_peak.by_cat.bytes[CAT_OPTIMIZER])
        fputs("; no optimizer step ran: an optimizer's state and a step's own bytes are not in "
              "them",
              out);
    fputs(")\n", out);
}

/* pair_json: "key":{"a":..,"b":..,"change":..} after sep, a side not measured (sa, sb 0) null */
static void pair_json(FILE *out, const char *sep, const char *key, int sa, uint64_t x, int sb,
                      uint64_t y)
{
    fprintf(out, "%s\"%s\":{\"a\":", sep, key);
    fprintf(out, sa ? "%" PRIu64 : "null", x);
    fputs(",\"b\":", out);
    fprintf(out, sb ? "%" PRIu64 : "null", y);
    if (sa && sb)
        fprintf(out, ",\"change\":%" PRId64 "}", delta(x, y));
    else
        fputs(",\"change\":null}", out);
}

static void write_json(FILE *out, replay_result *a, replay_result *b, diff_sites *s, size_t top)
{
    const uint64_t pa[3] = {a->peak_allocated, a->peak_reserved, a->peak_process};
    const uint64_t pb[3] = {b->peak_allocated, b->peak_reserved, b->peak_process};
    static const char *const lv[3] = {"allocated_bytes", "reserved_bytes", "process_bytes"};
    fprintf(out, "{\"schema_version\":%d,\"a\":", DIFF_SCHEMA_VERSION);
    jsonw_cstr(out, a->path);
    fputs(",\"b\":", out);
    jsonw_cstr(out, b->path);
    fputs(",\"out_of_memory\":{\"a\":", out);
    oom_json(out, a);
    fputs(",\"b\":", out);
    oom_json(out, b);
    fprintf(out, "},\"category_basis\":{\"a\":\"%s\",\"b\":\"%s\"},", basis(a), basis(b));
    fprintf(out, "\"python_frames\":{\"a\":%s,\"b\":%s},",
            tables_no_python(a->t) ? "false" : "true", tables_no_python(b->t) ? "false" : "true");
    /* the phase each run's process peak came in: the categories are of those two moments */
    fprintf(out, "\"peak_phase\":{\"a\":\"%s\",\"b\":\"%s\"},\"peak\":{", phase_name(a->peak_phase),
            phase_name(b->peak_phase));
    for (int i = 0; i < 3; i++) /* (a level one run does not measure: null, its change too) */
        pair_json(out, i ? "," : "", lv[i], seen(a, i), pa[i], seen(b, i), pb[i]);
    fputs("},\"categories\":{", out);
    for (int c = 0, first = 1; c < CAT_COUNT; c++) {
        uint64_t x = a->at_peak.by_cat.bytes[c], y = b->at_peak.by_cat.bytes[c];
        if (!x && !y)
            continue;
        pair_json(out, first ? "" : ",", category_key((category)c), cat_seen(a, c), x,
                  cat_seen(b, c), y);
        first = 0;
    }
    fputs("},\"sites\":[", out);
    size_t i = 0;
    for (; i < s->n && i < top; i++) {
        fputs(i ? ",{\"site\":" : "{\"site\":", out);
        jsonw_cstr(out, s->v[i].text);
        if (s->v[i].a_line)
            fprintf(out, ",\"line_in_a\":%ld", s->v[i].a_line);
        fprintf(out, ",\"a\":%" PRId64 ",\"b\":%" PRId64 ",\"change\":%" PRId64 "}",
                s->v[i].bytes[0], s->v[i].bytes[1], site_change(&s->v[i]));
    }
    int64_t rest;
    size_t more = sites_rest(s, i, &rest);
    fprintf(out, "],\"more_sites\":{\"count\":%zu,\"change\":%" PRId64 "}}\n", more, rest);
}

/* visibility_notes: the levels and categories a run's recording does not measure, and why
 * (segment mode, cudaMallocAsync's pool, no allocation of PyTorch's at all) */
static void visibility_notes(FILE *out, const replay_result *a, const replay_result *b)
{
    const replay_result *r[2] = {a, b};
    static const char *const n[2] = {"A", "B"};
    int segs[2], none[2];
    for (int i = 0; i < 2; i++) {
        segs[i] = !r[i]->tensor_mode && r[i]->segment_mode;
        none[i] = no_torch(r[i]);
    }
    if (segs[0] && segs[1])
        fprintf(out, "(allocated: not visible in segment mode)\n");
    else if ((segs[0] && r[1]->tensor_mode) || (segs[1] && r[0]->tensor_mode))
        fprintf(out,
                "(allocated: not visible in segment mode; %s's categories sort tensors, %s's "
                "segments under the phase that grew them: a change below compares the two "
                "ways of sorting as much as the two runs)\n",
                segs[1] ? "A" : "B", segs[1] ? "B" : "A");
    else if (segs[0] || segs[1])
        fprintf(out, "(allocated: not visible in %s's segment mode)\n", segs[0] ? "A" : "B");
    for (int i = 0; i < 2; i++) {
        if (none[i])
            fprintf(out,
                    "(%s holds no allocation of PyTorch's, no tensor and no segment (%llu "
                    "events%s): its allocated and reserved are not measured, only its "
                    "process's device memory)\n",
                    n[i], (unsigned long long)r[i]->n_events,
                    r[i]->status == READER_TRUNCATED ? ", cut before the first" : "");
        if (pool_hidden(r[i]))
            fprintf(out,
                    "(reserved and allocator cache: not visible in %s's tensor mode: "
                    "cudaMallocAsync's pool holds its cache out of the trace's sight)\n",
                    n[i]);
    }
}

static void write_text(FILE *out, replay_result *a, replay_result *b, const int flags[2],
                       diff_sites *s, size_t top, int compiled)
{
    const uint64_t pa[3] = {a->peak_allocated, a->peak_reserved, a->peak_process};
    const uint64_t pb[3] = {b->peak_allocated, b->peak_reserved, b->peak_process};
    static const char *const lv[3] = {"allocated", "reserved", "process"};
    char ch[32];
    fputs("A: ", out);
    escape_term_fputs(out, a->path, strlen(a->path));
    fputs("\nB: ", out);
    escape_term_fputs(out, b->path, strlen(b->path));
    fputs("\n", out);
    oom_text(out, "A", a, flags[0]);
    oom_text(out, "B", b, flags[1]);
    fprintf(out, "\n%-20s %12s %12s %12s\n", "peak (MiB)", "A", "B", "B - A");
    for (int i = 0; i < 3; i++) {
        char x[32], y[32];
        snprintf(x, sizeof x, "%.1f", mib(to_s(pa[i])));
        snprintf(y, sizeof y, "%.1f", mib(to_s(pb[i])));
        fprintf(out, "%-20s %12s %12s %12s\n", lv[i], seen(a, i) ? x : "-", seen(b, i) ? y : "-",
                seen(a, i) && seen(b, i) ? change(delta(pa[i], pb[i]), ch, sizeof ch) : "-");
    }
    visibility_notes(out, a, b);
    fprintf(out, "\n%-20s %12s %12s %12s\n", "at the peak (MiB)", "A", "B", "B - A");
    for (int c = 0; c < CAT_COUNT; c++) {
        uint64_t x = a->at_peak.by_cat.bytes[c], y = b->at_peak.by_cat.bytes[c];
        char ax[32], ay[32];
        int sa = cat_seen(a, c), sb = cat_seen(b, c);
        if (x || y)
            fprintf(out, "%-20s %12s %12s %12s\n", category_name((category)c),
                    sa ? amount(x, ax, sizeof ax) : "-", sb ? amount(y, ay, sizeof ay) : "-",
                    sa && sb ? change(delta(x, y), ch, sizeof ch) : "-");
    }
    if (a->peak_phase != b->peak_phase && a->peak_process &&
        b->peak_process) /* (a run's tensors freed by its peak sit in its cache) */
        fprintf(
            out,
            "(A's process peak came in its %s phase, B's in its %s phase: the rows compare those "
            "two moments, and what one held as tensors then the other may hold as cache; each "
            "run's allocated peak, by category, is in its report)\n",
            phase_name(a->peak_phase), phase_name(b->peak_phase));
    if (tables_no_python(a->t) != tables_no_python(b->t)) /* (report's stacks line, said here) */
        fprintf(out,
                "(%s was recorded without Python frames: its categories rest on the order of "
                "events (an optimizer's state, autocast's copies, library workspaces counted in "
                "its other rows) and its sites are not the program's lines: a change above and "
                "below compares the two recordings as much as the two runs)\n",
                tables_no_python(a->t) ? "A" : "B");
    /* (a site's bytes had read as tensors: beyond/resnet50_b128_fit's vision_train.py:104 holds
     * 6146 MiB where the run's allocated peak is 5679; the report's sites list each category) */
    fprintf(out, "\nsites that changed most (MiB, B - A; a site's bytes at the process peak in "
                 "every category, the CUDA context, kernel code, allocator cache and other / "
                 "external charged to it included):\n");
    if (compiled)
        fputs("  (torch.compile writes each compile's code to a file named by a hash: its sites "
              "are matched by line and function, as " COMPILED ":LINE)\n",
              out);
    size_t i = 0;
    for (; i < s->n && i < top; i++) {
        if (!site_change(&s->v[i]))
            break;
        fprintf(out, "  %12s  ", change(site_change(&s->v[i]), ch, sizeof ch));
        escape_term_fputs(out, s->v[i].text, strlen(s->v[i].text));
        if (s->v[i].a_line)
            fprintf(out, " (line %ld in A)", s->v[i].a_line);
        fputc('\n', out);
    }
    int64_t rest;
    size_t more = sites_rest(s, i, &rest);
    if (more) /* (the sites' changes sum to the process peak's only with them) */
        fprintf(out, "  (%zu more site%s changed, %s together: --top N shows more)\n", more,
                more == 1 ? "" : "s", change(rest, ch, sizeof ch));
    else if (!i) /* (the heading alone had read as if the list were cut) */
        fputs("  (none: every site holds in B what it held in A)\n", out);
}

int diff_view_write(FILE *out, replay_result *a, replay_result *b, const int flags[2], int top,
                    int json)
{
    diff_sites s = {0};
    int rc = 0, compiled = 0;
    if (sites_fill(&s, a, 0, &compiled) || sites_fill(&s, b, 1, &compiled))
        rc = 2;
    else {
        if (s.n > 1) /* s.v is NULL when no site: qsort must not see it */
            qsort(s.v, s.n, sizeof *s.v, cmp_change);
        if (json)
            write_json(out, a, b, &s, (size_t)(top < 0 ? 0 : top));
        else
            write_text(out, a, b, flags, &s, (size_t)(top < 0 ? 0 : top), compiled);
        if (ferror(out) || mem_failed()) /* a site's text left out for want of memory */
            rc = 2;
    }
    for (size_t i = 0; i < s.n; i++)
        free(s.v[i].key), free(s.v[i].text);
    free(s.v);
    return rc;
}
