/* test_ahead.c — fwd_ahead_measure (analyzer/model/facts/ahead.c) on a first forward cut short
 * under autocast: the 16-bit copies still to come of the weights it had not reached, split into
 * the rest of the stack it was in (cast_same) and what follows it (cast_other, cast_new), a size
 * it had reached and never cast (a norm's weight, the embedding looked up) never counted. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "ahead.h"
#include "categories.h"
#include "phases.h"

/* the model's weights in the order made: an embedding (4000 B, looked up), four blocks of a norm
 * (40 B), A (400 B) and B (800 B), then a tail: a weight of a size never reached (1600 B), one of
 * the embedding's size (never cast) and one of B's (cast before) */
static const uint64_t weights[] = {4000, 40,  400, 800, 40,  400,  800,  40,
                                   400,  800, 40,  400, 800, 1600, 4000, 800};
#define NW (sizeof weights / sizeof weights[0])

static void test_copies_to_come(void **state)
{
    (void)state;
    live_item it[NW + 16];
    size_t n = 0;
    uint64_t ev = 1;
    memset(it, 0, sizeof it);
    for (size_t i = 0; i < NW; i++, n++)
        it[n].size = weights[i], it[n].phase_alloc = PHASE_INIT, it[n].category = CAT_PARAMETERS,
        it[n].alloc_event = ev++, it[n].addr = 0x1000 * (n + 1);
    /* the forward cast A and B of blocks 0, 1 and 2 (half their sizes), an activation after each
     * copy, and ran out of memory in block 3 before casting its weights */
    for (int b = 0; b < 3; b++)
        for (int w = 0; w < 2; w++) {
            it[n].size = w ? 400 : 200, it[n].category = CAT_AUTOCAST;
            it[n].phase_alloc = PHASE_FORWARD, it[n].alloc_event = ev++, n++;
            it[n].size = 64, it[n].category = CAT_ACTIVATIONS;
            it[n].phase_alloc = PHASE_FORWARD, it[n].alloc_event = ev++, n++;
        }
    replay_snapshot s = {.event = ev, .items = it, .n = n};
    fwd_ahead a;
    assert_int_equal(fwd_ahead_measure(&s, &a), 1);
    assert_int_equal(a.casts, 6);
    assert_int_equal(a.period, 2);
    assert_int_equal(a.reached, 10); /* (up to block 2's B) */
    assert_int_equal(a.same, 3);     /* block 3: its norm, A and B */
    assert_int_equal(a.other, 3);
    assert_int_equal(a.block_act, 128);
    /* block 3's A and B at half their size, its norm not (its size reached, never cast) */
    assert_int_equal(a.cast_same, 200 + 400);
    /* the tail's weight of B's size; the embedding's size not (looked up, never cast) */
    assert_int_equal(a.cast_other, 400);
    /* the weight of a size not reached: counted apart */
    assert_int_equal(a.cast_new, 800);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_copies_to_come),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
