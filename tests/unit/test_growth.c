/* test_growth.c — growth across steps (analyzer/model/facts/growth.c) on hand-made steps: a
 * leak of a known size per step is found with its rate and since which step, and the step rule
 * (backward, then the optimizer, then the next forward) counts every step; a cache filled in the
 * first steps and kept is not growth; a stack that grows and then falls back is not; a run of
 * steps given by STEP records (a chunked trace) replaces the replay's own; a fall of less than a
 * tenth of what a run gained keeps the run going, a larger one restarts it (its rises counted
 * anew); fewer step ends than the rule needs are said
 * (growth_can_tell), the fewest it needs being the rule's own; recorded with no stacks, an
 * allocation after a backward ends the step only when no zero_grad follows before the next
 * backward. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "growth.h"

#define MiB (1ull << 20)

/* step: one training step: a forward of an activation (stack 2, freed by the backward), a
 * backward (a gradient, stack 3, freed), an optimizer allocation (stack 4, freed); leak bytes
 * (stack 5) kept each step when > 0 */
static void step(growth *g, uint64_t t, uint64_t leak)
{
    growth_alloc(g, 2, 8 * MiB, 1, 0, PHASE_FORWARD, 0, t);
    if (leak)
        growth_alloc(g, 5, leak, 1, 0, PHASE_FORWARD, 0, t + 1);
    growth_alloc(g, 3, 4 * MiB, 1, 0, PHASE_BACKWARD, 1, t + 2);
    growth_free(g, 2, 8 * MiB, 1, 0);
    growth_alloc(g, 4, 1 * MiB, 1, 0, PHASE_OPTIMIZER, 0, t + 3);
    growth_free(g, 4, 1 * MiB, 1, 0);
    growth_free(g, 3, 4 * MiB, 1, 0);
}

static void test_leak_found(void **st)
{
    (void)st;
    growth g;
    memset(&g, 0, sizeof g);
    growth_alloc(&g, 1, 100 * MiB, 1, 0, PHASE_INIT, 0, 1); /* the parameters */
    for (int i = 0; i < 30; i++)
        step(&g, 1000 * (uint64_t)(i + 1), i >= 10 ? 3 * MiB : 0);
    growth_end(&g, 100000);
    assert_int_equal(g.steps, 30);
    assert_int_equal(g.opt_steps, 30);
    growth_site s[4];
    int n = growth_sites(&g, s, 4);
    assert_int_equal(n, 1);
    assert_int_equal(s[0].stack, 5);
    assert_int_equal(s[0].phase, PHASE_FORWARD);
    assert_true(s[0].rate > 2.9 * MiB && s[0].rate < 3.1 * MiB);
    assert_true(s[0].since_step >= 10 && s[0].since_step <= 12);
    /* the 30th step ran into the trace's end, which is no step's end: the last one is the
     * 29th's, with 19 leaks (steps 11 to 29) */
    assert_int_equal(s[0].bytes_last, 19 * 3 * MiB);
    /* the live bytes at the last step's end: the parameters and the leak */
    assert_int_equal(g.last_live, 100 * MiB + 57 * MiB);
    assert_int_equal(g.timed_steps, 29);
    growth_free_all(&g);
}

/* the program's teardown frees everything after its last step: that is no step's end, so the
 * leak is still found and the last step's live bytes are a step's, not the teardown's */
static void test_teardown_not_a_step(void **st)
{
    (void)st;
    growth g;
    memset(&g, 0, sizeof g);
    growth_alloc(&g, 1, 100 * MiB, 1, 0, PHASE_INIT, 0, 1);
    for (int i = 0; i < 30; i++)
        step(&g, 1000 * (uint64_t)(i + 1), i >= 10 ? 3 * MiB : 0);
    growth_free(&g, 5, 20 * 3 * MiB, 1, 0); /* exit: the leaked list and the model go */
    growth_free(&g, 1, 100 * MiB, 1, 0);
    growth_end(&g, 100000);
    assert_int_equal(g.steps, 30);
    growth_site s[4];
    assert_int_equal(growth_sites(&g, s, 4), 1);
    assert_int_equal(s[0].stack, 5);
    assert_int_equal(s[0].bytes_last, 19 * 3 * MiB);
    assert_int_equal(g.last_live, 100 * MiB + 57 * MiB);
    for (unsigned i = 0; i < g.npts; i++) /* no point of the series is the teardown's */
        assert_true(g.pts[i].live >= 100 * MiB);
    growth_free_all(&g);
}

/* the time per step comes from the step ends before the trace's end: the last step's end there
 * is the program's teardown (here 1 s after the last step began, where steps take 1 ms); an
 * optimizer step that allocated nothing (told by the replay) is an optimizer step */
static void test_time_per_step(void **st)
{
    (void)st;
    growth g;
    memset(&g, 0, sizeof g);
    growth_alloc(&g, 1, 100 * MiB, 1, 0, PHASE_INIT, 0, 1);
    for (int i = 0; i < 5; i++) {
        uint64_t t = 1000000 * (uint64_t)(i + 1);
        growth_alloc(&g, 2, 8 * MiB, 1, 0, PHASE_FORWARD, 0, t);
        growth_alloc(&g, 3, 4 * MiB, 1, 0, PHASE_BACKWARD, 1, t + 2);
        growth_free(&g, 2, 8 * MiB, 1, 0);
        if (i % 2)
            growth_optimizer_step(&g); /* a fused optimizer: nothing allocated */
        growth_free(&g, 3, 4 * MiB, 1, 0);
    }
    growth_end(&g, 5000000 + 1000000000ull);
    assert_int_equal(g.steps, 5);
    assert_int_equal(g.opt_steps, 2);
    /* the ends of steps 1..4 (at 2, 3, 4, 5 ms): 1 ms a step, not (1.005 s - 2 ms) / 4; from
     * the first optimizer step's end (3 ms) on: 2 steps timed */
    assert_true(growth_time_per_step(&g) > 0.00099 && growth_time_per_step(&g) < 0.00101);
    assert_int_equal(growth_timed_steps(&g), 2);
    growth_free_all(&g);
    /* the step with the first optimizer step makes its state (3 ms where steps take 1 ms): the
     * time per step is measured from its end on, 1 ms, not (7 - 2) ms / 3 */
    memset(&g, 0, sizeof g);
    static const uint64_t starts[] = {1000000, 2000000, 5000000, 6000000, 7000000};
    for (int i = 0; i < 5; i++) {
        growth_alloc(&g, 2, 8 * MiB, 1, 0, PHASE_FORWARD, 0, starts[i]);
        growth_alloc(&g, 3, 4 * MiB, 1, 0, PHASE_BACKWARD, 1, starts[i] + 2);
        growth_free(&g, 2, 8 * MiB, 1, 0);
        if (i % 2)
            growth_optimizer_step(&g);
        growth_free(&g, 3, 4 * MiB, 1, 0);
    }
    growth_end(&g, 9000000);
    assert_int_equal(g.steps, 5);
    assert_true(growth_time_per_step(&g) > 0.00099 && growth_time_per_step(&g) < 0.00101);
    growth_free_all(&g);
    /* one step end before the trace's: no time per step */
    memset(&g, 0, sizeof g);
    growth_alloc(&g, 2, 8 * MiB, 1, 0, PHASE_FORWARD, 0, 10);
    growth_alloc(&g, 3, 4 * MiB, 1, 0, PHASE_BACKWARD, 1, 20);
    growth_alloc(&g, 2, 8 * MiB, 1, 0, PHASE_FORWARD, 0, 30);
    growth_alloc(&g, 3, 4 * MiB, 1, 0, PHASE_BACKWARD, 1, 40);
    growth_end(&g, 1000);
    assert_int_equal(g.steps, 2);
    assert_true(growth_time_per_step(&g) == 0);
    assert_int_equal(growth_timed_steps(&g), 0);
    growth_free_all(&g);
}

static void test_no_growth(void **st)
{
    (void)st;
    growth g;
    memset(&g, 0, sizeof g);
    growth_alloc(&g, 1, 100 * MiB, 1, 0, PHASE_INIT, 0, 1);
    for (int i = 0; i < 40; i++) {
        step(&g, 1000 * (uint64_t)(i + 1), 0);
        if (i < 6) /* a cache filled in the first steps and kept: not growth */
            growth_alloc(&g, 6, 50 * MiB, 1, 0, PHASE_FORWARD, 0, 1000 * (uint64_t)(i + 1) + 5);
        if (i >= 5 && i < 15) /* grows for 10 steps, then falls back: not growth */
            growth_alloc(&g, 7, 2 * MiB, 1, 0, PHASE_FORWARD, 0, 1000 * (uint64_t)(i + 1) + 6);
        if (i == 15)
            growth_free(&g, 7, 20 * MiB, 1, 0);
    }
    assert_int_equal(g.steps, 39); /* the last step ends with the run: */
    growth_end(&g, 100000);
    growth_site s[4];
    assert_int_equal(growth_sites(&g, s, 4), 0);
    assert_int_equal(g.steps, 40);
    growth_free_all(&g);
}

static void test_tolerates_small_fall(void **st)
{
    (void)st;
    growth g;
    memset(&g, 0, sizeof g);
    for (int i = 0; i < 20; i++) {
        step(&g, 1000 * (uint64_t)(i + 1), 4 * MiB);
        if (i == 12) /* a little of it freed once (a fall at that step's end): the run goes on */
            growth_free(&g, 5, 6 * MiB, 1, 0);
    }
    growth_site s[2];
    assert_int_equal(growth_sites(&g, s, 2), 1);
    assert_true(s[0].since_step <= 2);
    assert_int_equal(s[0].n_up, 17); /* the step ends 2..19 rose, but the one that fell */
    growth_free_all(&g);
}

/* a fall beyond a tenth of what a run gained restarts it: the rises counted are the new run's
 * alone, from the step it restarted at (the run before it rose 9 times) */
static void test_restart_counts_anew(void **st)
{
    (void)st;
    growth g;
    memset(&g, 0, sizeof g);
    for (int i = 0; i < 20; i++) {
        step(&g, 1000 * (uint64_t)(i + 1), 4 * MiB);
        if (i == 9) /* most of what it gained freed at once */
            growth_free(&g, 5, 30 * MiB, 1, 0);
    }
    growth_site s[2];
    assert_int_equal(growth_sites(&g, s, 2), 1);
    assert_int_equal(s[0].since_step, 10);
    assert_int_equal(s[0].n_up, 9); /* the step ends 11..19 */
    assert_int_equal(s[0].bytes_since, 10 * MiB);
    growth_free_all(&g);
}

/* leak_steps: a run of n steps, each keeping 3 MiB more at stack 5 from the first on, with the
 * parameters; the program's teardown ends it (no step's end) */
static void leak_steps(growth *g, int n)
{
    memset(g, 0, sizeof *g);
    growth_alloc(g, 1, 100 * MiB, 1, 0, PHASE_INIT, 0, 1);
    for (int i = 0; i < n; i++)
        step(g, 1000 * (uint64_t)(i + 1), 3 * MiB);
    growth_end(g, 1000000);
}

/* the fewest step ends the rule can find growth in (growth_can_tell) is the rule's own: a leak
 * from the first step on is found at GROWTH_MIN_STEP_ENDS step ends, and one fewer can show no
 * growth at all, which growth_can_tell says (so a view does not say that nothing grows) */
static void test_too_few_step_ends(void **st)
{
    (void)st;
    growth g;
    growth_site s[2];
    for (uint32_t ends = 1; ends < GROWTH_MIN_STEP_ENDS; ends++) {
        leak_steps(&g, (int)ends + 1); /* n steps: n - 1 ends before the teardown */
        assert_int_equal(growth_step_ends(&g), ends);
        assert_int_equal(growth_step_ends(&g), g.sampled); /* the ends the runs took */
        assert_false(growth_can_tell(&g));
        assert_int_equal(growth_sites(&g, s, 2), 0);
        growth_free_all(&g);
    }
    leak_steps(&g, GROWTH_MIN_STEP_ENDS + 1);
    assert_int_equal(growth_step_ends(&g), GROWTH_MIN_STEP_ENDS);
    assert_int_equal(growth_step_ends(&g), g.sampled);
    assert_true(growth_can_tell(&g));
    assert_int_equal(growth_sites(&g, s, 2), 1);
    assert_int_equal(s[0].stack, 5);
    assert_int_equal(s[0].since_step, 1);
    assert_true(s[0].rate > 2.9 * MiB && s[0].rate < 3.1 * MiB);
    growth_free_all(&g);
    /* no step ended before the trace's end: its one point is the trace's end, none compared */
    memset(&g, 0, sizeof g);
    growth_alloc(&g, 2, 8 * MiB, 1, 0, PHASE_FORWARD, 0, 10);
    growth_alloc(&g, 3, 4 * MiB, 1, 0, PHASE_BACKWARD, 1, 20);
    growth_end(&g, 1000);
    assert_int_equal(g.steps, 1);
    assert_int_equal(growth_step_ends(&g), 0);
    assert_false(growth_can_tell(&g));
    growth_free_all(&g);
}

/* step_rec: a STEP record of one stack's bytes */
static reader_step step_rec(uint32_t n, uint64_t t, uint32_t stack, uint64_t bytes, uint8_t *buf)
{
    reader_step r;
    memset(&r, 0, sizeof r);
    r.fixed.step = n;
    r.fixed.flags = VT_STEPF_TENSORS | VT_STEPF_OPTIMIZER;
    r.fixed.live_tensor = bytes;
    r.fixed.peak_device = bytes + 10 * MiB;
    r.fixed.n_stacks = 1;
    r.time_ns = t;
    vt_step_stack v = {stack, 0, bytes};
    memcpy(buf, &v, sizeof v);
    r.stacks = buf;
    return r;
}

static int phase_fwd(void *ctx, uint32_t id)
{
    (void)ctx;
    return id == 9 ? PHASE_FORWARD : PHASE_OTHER;
}

static void test_step_records_rule(void **st)
{
    (void)st;
    growth g;
    memset(&g, 0, sizeof g);
    for (int i = 0; i < 10; i++) /* the replay's own steps, with a leak at stack 5 ... */
        step(&g, 1000 * (uint64_t)(i + 1), 3 * MiB);
    uint8_t buf[16];
    for (uint32_t i = 1; i <= 50; i++) { /* ... until the trace's STEP records come */
        reader_step r = step_rec(i, 100000 + i, 9, (uint64_t)i * MiB, buf);
        growth_step_record(&g, &r, phase_fwd, NULL);
    }
    assert_true(g.from_records);
    assert_int_equal(g.steps, 50);
    assert_int_equal(growth_step_ends(&g), 50); /* every record a step's end */
    growth_site s[4];
    assert_int_equal(growth_sites(&g, s, 4), 1);
    assert_int_equal(s[0].stack, 9);
    assert_int_equal(s[0].phase, PHASE_FORWARD);
    assert_true(s[0].rate > 0.99 * MiB && s[0].rate < 1.01 * MiB);
    assert_int_equal(g.last_peak_device, 60 * MiB);
    growth_free_all(&g);
}

/* STEP records of device bytes after one of tensors: a stack's runs follow its device bytes,
 * with those its events added while the records' were tensors (a stack no record lists: its
 * events' bytes alone) */
static void test_records_change_kind(void **st)
{
    (void)st;
    growth g;
    memset(&g, 0, sizeof g);
    step(&g, 100, 0); /* the replay's events come first (a bounded trace's) */
    uint8_t buf[16];
    reader_step r = step_rec(1, 1000, 9, 10 * MiB, buf); /* tensors */
    growth_step_record(&g, &r, phase_fwd, NULL);
    growth_alloc(&g, 7, 4 * MiB, 0, 1, PHASE_FORWARD, 0, 1001); /* device bytes, stack 7 */
    growth_alloc(&g, 7, 4 * MiB, 0, 1, PHASE_FORWARD, 0, 1002);
    for (uint32_t i = 2; i <= 8; i++) {
        if (i > 2)
            growth_alloc(&g, 7, 4 * MiB, 0, 1, PHASE_FORWARD, 0, 1000 * i);
        reader_step d = step_rec(i, 1000 * i + 1, 9, 10 * MiB, buf);
        d.fixed.flags = VT_STEPF_OPTIMIZER; /* device bytes from here on */
        growth_step_record(&g, &d, phase_fwd, NULL);
    }
    growth_site s[4];
    assert_int_equal(growth_sites(&g, s, 4), 1);
    assert_int_equal(s[0].stack, 7);
    assert_int_equal(s[0].bytes_since, 2 * 4 * MiB); /* its run began at the second record */
    assert_int_equal(s[0].bytes_last, 8 * 4 * MiB);  /* every allocation of the stack */
    growth_free_all(&g);
}

/* a stack's run at a step's end follows its bytes of the kind they were at that end, also where
 * the kind changes after it (the run's first tensor; STEP records of the other kind) */
static void test_waiting_run_keeps_its_kind(void **st)
{
    (void)st;
    growth g;
    memset(&g, 0, sizeof g);
    growth_alloc(&g, 7, 4 * MiB, 0, 1, PHASE_FORWARD, 0, 10);  /* device bytes, stack 7 */
    growth_alloc(&g, 8, 1 * MiB, 0, 1, PHASE_BACKWARD, 1, 20); /* a backward ... */
    growth_alloc(&g, 8, 1 * MiB, 0, 1, PHASE_FORWARD, 0, 30);  /* ... then a forward: step 1 */
    assert_int_equal(g.steps, 1);
    growth_alloc(&g, 9, 2 * MiB, 1, 0, PHASE_FORWARD, 0, 40); /* the first tensor */
    assert_int_equal(g.st[7].last, 4 * MiB); /* its run at step 1: its device bytes then */
    assert_int_equal((uint32_t)g.st[7].run, 1);
    growth_free_all(&g);
    /* STEP records: tensors, then device bytes */
    memset(&g, 0, sizeof g);
    uint8_t buf[16];
    reader_step r = step_rec(1, 1000, 9, 10 * MiB, buf); /* tensors: stack 9's */
    growth_step_record(&g, &r, phase_fwd, NULL);
    reader_step d = step_rec(2, 2000, 5, 3 * MiB, buf);
    d.fixed.flags = VT_STEPF_OPTIMIZER; /* device bytes from here on */
    growth_step_record(&g, &d, phase_fwd, NULL);
    assert_int_equal(g.st[9].last, 10 * MiB); /* its run at step 1: its tensors then */
    growth_free_all(&g);
}

/* the run's first tensor, in a stack whose device bytes came before it (its segment's), counts
 * in its phase's bytes: those are tensors' from it on */
static void test_first_tensor_counted(void **st)
{
    (void)st;
    growth g;
    memset(&g, 0, sizeof g);
    growth_alloc(&g, 6, 20 * MiB, 0, 1, PHASE_FORWARD, 0, 1); /* a segment: device bytes */
    growth_alloc(&g, 6, 2 * MiB, 1, 0, PHASE_FORWARD, 0, 2);  /* the first tensor, inside it */
    for (int i = 0; i < 10; i++)
        step(&g, 1000 * (uint64_t)(i + 1), 0);
    growth_end(&g, 100000);
    /* at a step's end (the next forward's first allocation) the forward's activation is freed:
     * the first tensor alone is the forward's */
    assert_int_equal(g.last_by_phase[PHASE_FORWARD], 2 * MiB);
    growth_free_all(&g);
}

/* stackless_step: a step recorded with no stacks (stack 0): a forward (8 MiB, freed by the
 * backward), a backward (a 4 MiB gradient); the program's first allocation after it (2 MiB, its
 * optimizer's temporaries or the next forward's: freed at once) and, with zg, the gradient freed
 * by the program (zero_grad) before the next step */
static void stackless_step(growth *g, uint64_t t, int zg)
{
    growth_alloc(g, 0, 8 * MiB, 1, 1, PHASE_FORWARD, 0, t);
    growth_alloc(g, 0, 4 * MiB, 1, 1, PHASE_BACKWARD, 1, t + 2);
    growth_free(g, 0, 8 * MiB, 1, 1);
    growth_alloc(g, 0, 2 * MiB, 1, 1, PHASE_FORWARD, 0, t + 3);
    growth_free(g, 0, 2 * MiB, 1, 1);
    if (zg) {
        growth_optimizer_step(g);
        growth_free(g, 0, 4 * MiB, 1, 1);
    }
}

/* --stacks none: the first allocation after a backward ends the step only when no zero_grad
 * follows before the next backward; where one does, the step goes on through it (a foreach
 * optimizer's temporaries had made two steps of each). The step that ended there ends with the
 * levels of then, its peak its own. */
static void test_stackless_steps(void **st)
{
    (void)st;
    for (int zg = 0; zg <= 1; zg++) {
        growth g;
        memset(&g, 0, sizeof g);
        g.no_python = 1;
        growth_alloc(&g, 0, 100 * MiB, 1, 1, PHASE_INIT, 0, 1); /* the parameters */
        for (int i = 0; i < 6; i++)
            stackless_step(&g, 1000 * (uint64_t)(i + 1), zg);
        growth_end(&g, 100000);
        assert_int_equal(g.steps, 6);
        assert_int_equal(g.opt_steps, zg ? 6 : 0);
        assert_false(g.prov.on);
        /* with zero_grad, the last step's end before the trace's is the fifth's, at the sixth
         * forward's first allocation, the gradient freed; without, the sixth's, at the 2 MiB
         * after its backward (before them), its gradient alive with the five before */
        assert_int_equal(g.last_live, zg ? 100 * MiB : 100 * MiB + 6 * 4 * MiB);
        /* a step's peak: the forward's 8 MiB with the backward's 4 (no step's peak holds
         * the next forward's), and the gradients kept before it */
        assert_int_equal(g.last_peak_device, 100 * MiB + 12 * MiB + (zg ? 0 : 5 * 4 * MiB));
        growth_free_all(&g);
    }
    /* a bounded trace: the replay's events come first, its STEP records last; a provisional
     * step end the events left open is no step of the records' (it had made one more) */
    {
        growth g;
        memset(&g, 0, sizeof g);
        g.no_python = 1;
        stackless_step(&g, 1000, 0); /* (left provisional: no zero_grad, no backward after) */
        assert_true(g.prov.on);
        uint8_t buf[16];
        for (uint32_t i = 1; i <= 5; i++) {
            reader_step rs = step_rec(i, 100000 + i, 9, (uint64_t)i * MiB, buf);
            growth_step_record(&g, &rs, phase_fwd, NULL);
        }
        growth_end(&g, 200000);
        assert_int_equal(g.steps, 5);
        growth_free_all(&g);
    }
    /* recorded with stacks, an allocation that took none ends the step as before */
    growth g;
    memset(&g, 0, sizeof g);
    for (int i = 0; i < 6; i++)
        stackless_step(&g, 1000 * (uint64_t)(i + 1), 1);
    growth_end(&g, 100000);
    assert_int_equal(g.steps, 12);
    growth_free_all(&g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stackless_steps),
        cmocka_unit_test(test_leak_found),
        cmocka_unit_test(test_teardown_not_a_step),
        cmocka_unit_test(test_no_growth),
        cmocka_unit_test(test_time_per_step),
        cmocka_unit_test(test_tolerates_small_fall),
        cmocka_unit_test(test_restart_counts_anew),
        cmocka_unit_test(test_step_records_rule),
        cmocka_unit_test(test_too_few_step_ends),
        cmocka_unit_test(test_records_change_kind),
        cmocka_unit_test(test_first_tensor_counted),
        cmocka_unit_test(test_waiting_run_keeps_its_kind),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
