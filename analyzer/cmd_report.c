/* cmd_report.c — `vramtrace report [options] FILE...`: replays each trace (replay.c), fills
 * the facts the memory model needs (model.h) and the allocation sites at the peak, then
 * writes text (report_text.c) or JSON (report_json.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cards.h"
#include "commands.h"
#include "report.h"

static void usage(FILE *out)
{
    fprintf(out,
            "usage: vramtrace report [options] FILE...\n\n"
            "Where the memory of a traced run went: peaks (allocated / reserved / process), every\n"
            "byte at the peak by category, the sites that caused them, phases, the formula\n"
            "comparison, the OOM diagnosis and the configuration change that fits the card.\n"
            "Several files (one per rank / process): the first in full, then a per-rank table.\n\n"
            "options:\n"
            "  --json            one JSON document instead of text\n"
            "  --top N           allocation sites per category (default 3)\n"
            "  --card SPEC       target card for the advice (default: the emulated card, else the\n"
            "                    traced device): a size (12GiB) or a preset (%s)\n"
            "  --no-color        no ANSI colour (also: NO_COLOR set, or not a terminal)\n"
            "  --fail-if-oom     exit 1 when a trace ends in an out-of-memory error\n"
            "  --KEY=VALUE       override the run's nanoGPT configuration (e.g. --batch_size=8)\n"
            "  -h, --help        this text\n"
            "exit: 0 ok, 1 OOM with --fail-if-oom, 2 usage or unreadable file, 3 malformed trace\n",
            card_presets_help());
}

/* cmp_site: most bytes first; ties by category, then site text (a stable, documented order) */
static int cmp_site(const void *a, const void *b)
{
    const report_site *x = a, *y = b;
    if (x->bytes != y->bytes)
        return x->bytes < y->bytes ? 1 : -1;
    if (x->category != y->category)
        return x->category < y->category ? -1 : 1;
    return strcmp(x->text, y->text);
}

typedef struct group_key {
    uint8_t category;
    uint32_t stack;
    uint64_t size;
} group_key;

static int cmp_key(const void *a, const void *b)
{
    const group_key *x = a, *y = b;
    if (x->category != y->category)
        return x->category < y->category ? -1 : 1;
    return x->stack < y->stack ? -1 : x->stack > y->stack ? 1 : 0;
}

static const char *env_value(const replay_result *r, const char *name)
{
    return tables_env(r->t, name);
}

int report_fill(report_ctx *c)
{
    replay_result *r = &c->runs[0];
    run_facts *f = &c->facts;
    memset(f, 0, sizeof *f);
    const tables_process *p = tables_process_get(r->t);
    if (p) {
        int n = p->argc < 512 ? (int)p->argc : 512;
        for (int i = 0; i < n; i++)
            c->argv_store[i] = p->argv[i].s;
        f->argc = n;
        f->argv = c->argv_store;
        f->cwd = p->cwd.s;
    }
    f->alloc_conf = env_value(r, "PYTORCH_ALLOC_CONF") ? env_value(r, "PYTORCH_ALLOC_CONF")
                                                        : env_value(r, "PYTORCH_CUDA_ALLOC_CONF");
    f->tensor_mode = r->tensor_mode;
    const tables_config *cf = tables_config_get(r->t);
    f->card_bytes = cf ? cf->card_bytes : 0;
    f->card_name = cf && cf->card.s ? cf->card.s : "";
    const tables_device *d = tables_n_devices(r->t) ? tables_device_at(r->t, 0) : NULL;
    f->device_total = d ? d->total_bytes : 0;
    f->peak_allocated = r->tensor_mode ? r->peak_allocated : 0;
    f->peak_reserved = r->peak_reserved;
    f->peak_process = r->peak_process;
    f->at_peak = r->at_peak.by_cat;
    f->iterations = (int)r->iterations;
    if (r->has_oom) {
        f->has_oom = 1;
        f->oom_requested = r->oom_requested;
        f->oom_capacity = r->oom_capacity ? r->oom_capacity : f->card_bytes ? f->card_bytes : f->device_total;
        f->at_oom = r->at_oom.by_cat;
        f->oom_cache = r->oom_cache_released;
        f->at_oom.bytes[CAT_CACHE] += 0; /* the released cache is reported beside, not double */
        f->oom_outside = r->at_oom.by_cat.bytes[CAT_CONTEXT] + r->at_oom.by_cat.bytes[CAT_KERNEL_CODE] +
                         r->at_oom.by_cat.bytes[CAT_EXTERNAL];
        f->oom_phase = phase_name(r->oom_phase);
        replay_site_text(r, r->oom_stack, c->site_oom, sizeof c->site_oom);
        f->oom_site = c->site_oom;
        f->oom_pytorch_pattern = r->oom_pytorch_pattern;
    }
    /* sites: (category, site text) over the allocations live at the peak. Items are grouped
     * by (category, stack) first, so each stack's text is made once; texts are merged through
     * a hash (different stacks often share a site). */
    size_t items = r->at_peak.n;
    group_key *keys = malloc((items + 1) * sizeof *keys);
    if (!keys)
        return -1;
    for (size_t i = 0; i < items; i++)
        keys[i] = (group_key){(uint8_t)r->at_peak.items[i].category, r->at_peak.items[i].stack_id,
                              r->at_peak.items[i].size};
    qsort(keys, items, sizeof *keys, cmp_key);
    size_t ngroups = 0;
    for (size_t i = 0; i < items; i++)
        ngroups += i == 0 || keys[i].category != keys[i - 1].category || keys[i].stack != keys[i - 1].stack;
    size_t n = 0, hcap = 16;
    while (hcap < 2 * ngroups + 2)
        hcap *= 2;
    report_site *s = calloc(ngroups + 1, sizeof *s);
    uint32_t *slot = calloc(hcap, sizeof *slot); /* index + 1 into s, 0 = empty */
    if (!s || !slot) {
        free(keys), free(s), free(slot);
        return -1;
    }
    size_t cur = 0;
    for (size_t i = 0; i < items; i++) {
        if (i == 0 || keys[i].category != keys[i - 1].category || keys[i].stack != keys[i - 1].stack) {
            char text[512];
            replay_site_text(r, keys[i].stack, text, sizeof text);
            uint64_t h = keys[i].category * 0x9e3779b97f4a7c15ull;
            for (const char *q = text; *q; q++)
                h = (h ^ (unsigned char)*q) * 0x100000001b3ull;
            size_t j = h & (hcap - 1);
            while (slot[j] && !(s[slot[j] - 1].category == keys[i].category && !strcmp(s[slot[j] - 1].text, text)))
                j = (j + 1) & (hcap - 1);
            if (!slot[j]) {
                s[n].category = keys[i].category;
                snprintf(s[n].text, sizeof s[n].text, "%s", text);
                replay_native_text(r, keys[i].stack, s[n].native, sizeof s[n].native);
                slot[j] = (uint32_t)++n;
            }
            cur = slot[j] - 1;
        }
        s[cur].bytes += keys[i].size;
        s[cur].count++;
    }
    free(keys);
    free(slot);
    qsort(s, n, sizeof *s, cmp_site);
    c->sites = s;
    c->nsites = n;
    return 0;
}

int cmd_report(int argc, char **argv)
{
    int json = 0, top = 3, fail_if_oom = 0, no_color = 0;
    const char *card = NULL;
    const char **files = calloc((size_t)argc + 1, sizeof *files);
    const char **overrides = calloc((size_t)argc + 1, sizeof *overrides);
    int nfiles = 0, nover = 0;
    if (!files || !overrides) {
        free(files);
        free(overrides);
        return VT_EXIT_USAGE;
    }
    int rc = VT_EXIT_OK;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            goto out;
        } else if (!strcmp(a, "--json")) {
            json = 1;
        } else if (!strcmp(a, "--no-color")) {
            no_color = 1;
        } else if (!strcmp(a, "--fail-if-oom")) {
            fail_if_oom = 1;
        } else if (!strcmp(a, "--top") && i + 1 < argc) {
            char *end;
            top = (int)strtol(argv[++i], &end, 10);
            if (*end || top < 0 || top > 1000) {
                fprintf(stderr, "vramtrace report: --top %s: expected a number from 0 to 1000\n", argv[i]);
                rc = VT_EXIT_USAGE;
                goto out;
            }
        } else if (!strcmp(a, "--card") && i + 1 < argc) {
            card = argv[++i];
        } else if (!strncmp(a, "--", 2) && strchr(a, '=')) {
            overrides[nover++] = a + 2;
        } else if (a[0] == '-' && a[1]) {
            fprintf(stderr, "vramtrace report: unknown option %s (see --help)\n", a);
            rc = VT_EXIT_USAGE;
            goto out;
        } else {
            files[nfiles++] = a;
        }
    }
    if (!nfiles) {
        fprintf(stderr, "vramtrace report: no trace file given (usage: vramtrace report [options] FILE...)\n");
        rc = VT_EXIT_USAGE;
        goto out;
    }
    report_ctx c;
    memset(&c, 0, sizeof c);
    c.top = top;
    c.color = !json && !no_color && !getenv("NO_COLOR") && isatty(1);
    c.opts.noverrides = nover;
    c.opts.overrides = overrides;
    c.opts.color = c.color;
    card_spec spec;
    if (card) {
        char err[256];
        if (card_parse(card, &spec, err, sizeof err) < 0) {
            fprintf(stderr, "vramtrace report: --card %s: %s\n", card, err);
            rc = VT_EXIT_USAGE;
            goto out;
        }
        c.opts.target_card_bytes = spec.bytes;
        c.opts.target_card_name = spec.name;
    }
    replay_progress = isatty(2);
    c.runs = calloc((size_t)nfiles, sizeof *c.runs);
    if (!c.runs) {
        rc = VT_EXIT_USAGE;
        goto out;
    }
    for (int i = 0; i < nfiles; i++) {
        char err[512] = "";
        if (isatty(2) && nfiles > 1)
            fprintf(stderr, "\rvramtrace report: reading %d/%d %s", i + 1, nfiles, files[i]);
        int r = replay_file(files[i], &c.runs[i], err, sizeof err);
        c.nruns = i + 1;
        if (r) {
            fprintf(stderr, "vramtrace report: %s\n", err);
            rc = r == 2 ? VT_EXIT_USAGE : VT_EXIT_MALFORMED;
            goto free_runs;
        }
        if (c.runs[i].status == READER_TRUNCATED)
            fprintf(stderr, "vramtrace report: warning: %s is truncated (no trailer: the process was "
                            "killed or is still running); reporting every complete record\n", files[i]);
        else if (c.runs[i].ended & (VT_TRAILER_DISK_FULL | VT_TRAILER_OUTPUT_ERROR))
            fprintf(stderr, "vramtrace report: warning: %s stopped early (%s: tracing stopped, the "
                            "program went on); reporting every record made before\n", files[i],
                    c.runs[i].ended & VT_TRAILER_DISK_FULL ? "disk full" : "writing the trace failed");
    }
    if (isatty(2) && nfiles > 1)
        fprintf(stderr, "\n");
    if (report_fill(&c) < 0) {
        rc = VT_EXIT_USAGE;
        goto free_runs;
    }
    int w = json ? report_json(stdout, &c) : report_text(stdout, &c);
    if (w < 0)
        rc = VT_EXIT_USAGE;
    else if (fail_if_oom)
        for (int i = 0; i < c.nruns; i++)
            if (c.runs[i].has_oom)
                rc = VT_EXIT_FINDINGS;
free_runs:
    for (int i = 0; i < c.nruns; i++)
        replay_free(&c.runs[i]);
    free(c.runs);
    free(c.sites);
out:
    free(files);
    free(overrides);
    return rc;
}

char *report_json_of_trace(const char *path, char *err, size_t errlen)
{
    report_ctx c;
    memset(&c, 0, sizeof c);
    c.top = 3;
    c.runs = calloc(1, sizeof *c.runs);
    if (!c.runs)
        return NULL;
    char *out = NULL;
    size_t len = 0;
    int r = replay_file(path, &c.runs[0], err, errlen);
    c.nruns = 1;
    if (r == 0 && report_fill(&c) == 0) {
        FILE *m = open_memstream(&out, &len);
        if (m) {
            int w = report_json(m, &c);
            fclose(m);
            if (w < 0) {
                free(out);
                out = NULL;
            }
        }
    }
    replay_free(&c.runs[0]);
    free(c.runs);
    free(c.sites);
    return out;
}
