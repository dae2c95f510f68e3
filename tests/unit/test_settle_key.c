/* test_settle_key.c — the replay's settle key (replay_cats_key, replay_state.h: fields that lie
 * side by side packed by masks and shifts) is classify_settle_bits of the same features (the
 * seventeen arguments it was built from before), over every space class, layer, level, tensor
 * mode, phase, flag set, backward count, size bits and vocabulary state: the memo of settled
 * categories is keyed by it, so one bit apart would give an allocation another's category. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "classify.h"
#include "replay_state.h"

/* the key as the replay built it before its packing: classify_settle_bits of e's features */
static uint32_t key_by_fields(const state *s, const livemap_entry *e)
{
    unsigned f = e->flags, ph = e->phase, lv = e->level, tm = s->r->tensor_mode != 0;
    unsigned cast = (f & (EF_LOSS | EF_ATTENTION)) == (EF_LOSS | EF_ATTENTION);
    unsigned out = cast && (f & EF_WORKSPACE), grad = out && (f & EF_INPUT); /* (the cast's kind) */
    unsigned tensor_api = (lv == L_TENSOR) | (lv == L_INNER), unsized = !s->vocab_done;
    unsigned bits = replay_size_bits(s, e->size), half = bits & 1, copy = bits >> 1 & 1;
    unsigned to_copy = (f & EF_TO_COPY) != 0 && tensor_api;
    return classify_settle_bits(
               e->space, reader_api_layer(e->api), tensor_api, tm, ph, (f & EF_LOSS) != 0 && !cast,
               to_copy & copy, half, bits >> 2 & 1, (f & EF_WORKSPACE) != 0 && !cast,
               (f & EF_ATTENTION) != 0 && !cast, (f & EF_INPUT) != 0 && !grad, e->bwd != 0, unsized,
               unsized & to_copy, unsized & !half & !copy,
               !replay_provisional((int)ph, (int)tensor_api), cast ? 1 + out + grad : 0) |
           (uint32_t)(s->r->state_left != 0) << 26;
}

/* api_of_layer: an API id of that layer (an entry's layer is its API's), 256 when none is */
static unsigned api_of_layer(unsigned layer)
{
    for (unsigned api = 0; api < 256; api++)
        if ((unsigned)reader_api_layer(api) == layer)
            return api;
    return 256;
}

static void test_key_is_the_fields(void **st)
{
    (void)st;
    static const unsigned spaces[] = {0, 1, 3, 7, 8, 15},
                          levels[] = {L_TENSOR, L_INNER, L_SEGMENT, L_OTHER};
    static const uint8_t efs[] = {EF_LOSS, EF_TO_COPY, EF_WORKSPACE, EF_ATTENTION, EF_INPUT};
    replay_result r;
    memset(&r, 0, sizeof r);
    state s;
    memset(&s, 0, sizeof s);
    s.r = &r;
    s.sizes_gen = 1;
    s.szm = calloc(8192, sizeof *s.szm);
    assert_non_null(s.szm);
    const uint64_t size = 1 << 20;
    struct size_memo *m = replay_size_memo(s.szm, size);
    m->size = size, m->gen = s.sizes_gen;
    unsigned long n = 0;
    for (unsigned bits = 0; bits < 8; bits++) {
        m->bits = (uint8_t)bits; /* what the size says: 1 a parameter's, 2 half, 4 logits */
        for (int vd = 0; vd < 2; vd++)
            for (int tm = 0; tm < 4; tm++) /* (tensor mode; 2: the run's state_left) */
                for (unsigned fs = 0; fs < 32; fs++)
                    for (unsigned ph = 0; ph < PHASE_COUNT; ph++)
                        for (size_t sp = 0; sp < sizeof spaces / sizeof *spaces; sp++)
                            for (unsigned layer = 0; layer < 4; layer++)
                                for (size_t lv = 0; lv < 4; lv++)
                                    for (uint32_t bwd = 0; bwd < 2; bwd++) {
                                        if (api_of_layer(layer) > 255)
                                            continue;
                                        s.vocab_done = vd, r.tensor_mode = tm & 1;
                                        r.state_left = tm >> 1;
                                        livemap_entry e;
                                        memset(&e, 0, sizeof e);
                                        e.size = size, e.space = (uint8_t)spaces[sp];
                                        e.api = (uint8_t)api_of_layer(layer);
                                        e.level = (uint8_t)levels[lv];
                                        e.phase = (uint8_t)ph, e.bwd = bwd;
                                        for (int k = 0; k < 5; k++)
                                            e.flags |= (fs >> k & 1) ? efs[k] : 0;
                                        e.flags |= EF_HAS_REC; /* (not part of the key) */
                                        if (replay_cats_key(&s, &e) != key_by_fields(&s, &e))
                                            fail_msg("key %#x, fields %#x (flags %#x, phase %u, "
                                                     "level %u, bits %u)",
                                                     replay_cats_key(&s, &e), key_by_fields(&s, &e),
                                                     e.flags, ph, levels[lv], bits);
                                        n++;
                                    }
    }
    assert_true(n > 1000000);
    free(s.szm);
}

/* the keys' memo tells entries apart by all a key is made of, their API too: an entry's layer is
 * its API's (livemap.h), and the memo's tag reads the API where it had read the layer */
static void test_memo_tells_layers(void **st)
{
    (void)st;
    replay_result r;
    memset(&r, 0, sizeof r);
    state *s = calloc(1, sizeof *s);
    assert_non_null(s);
    s->r = &r;
    s->sizes_gen = 1;
    s->szm = calloc(8192, sizeof *s->szm);
    assert_non_null(s->szm);
    unsigned layers = 0;
    for (unsigned layer = 0; layer < 4; layer++) {
        if (api_of_layer(layer) > 255)
            continue;
        livemap_entry e;
        memset(&e, 0, sizeof e);
        e.size = 4096, e.space = 1, e.level = L_SEGMENT, e.phase = 1;
        e.api = (uint8_t)api_of_layer(layer);
        assert_int_equal(replay_cats_key_memo(s, &e), replay_cats_key(s, &e));
        layers++;
    }
    /* and the run's state_left: the same entry's key once it is set is not the memo's of before */
    livemap_entry e;
    memset(&e, 0, sizeof e);
    e.size = 4096, e.space = 1, e.level = L_TENSOR, e.phase = 1, e.bwd = 1;
    uint32_t before = replay_cats_key_memo(s, &e);
    replay_cats_state_left(s);
    assert_int_equal(replay_cats_key_memo(s, &e), replay_cats_key(s, &e));
    assert_int_not_equal(replay_cats_key_memo(s, &e), before);
    assert_true(layers >= 2);
    free(s->szm);
    free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_key_is_the_fields),
                                       cmocka_unit_test(test_memo_tells_layers)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
