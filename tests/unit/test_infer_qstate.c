/* test_infer_qstate.c — the quantization state of weights packed two 4-bit elements a byte
 * (analyzer/model/facts/infer_packed.c's vt__find_qstate): bitsandbytes' absmax, one per
 * 64-element block of a packed weight, and the constants of its double quantization are no
 * parameters, left out of P (a simulated Llama-2-7B QLoRA had been P 6806.59 M of the program's
 * 6755.19 M); an fp32 adapter of an absmax's size made after every packed weight has its absmax
 * stays one. */
#include "infer_run.h"
#include "infer_pass.h"

#define QD 1536  /* width d: each q is d×d, packed d²/2 B (its absmax's absmax no square) */
#define QI 4608  /* MLP width */
#define QL 3     /* blocks */
#define QV 32000 /* vocabulary */
#define QB 2
#define QT 64

/* tm: a tensor made in a forward (its stack says so) */
static uint64_t tm(run *r, uint64_t size, int made)
{
    reader_event ev;
    memset(&ev, 0, sizeof ev);
    ev.api = VT_API_torchAlloc;
    r->addr += (size + 511) / 512 * 512 + 512;
    ev.addr = r->addr, ev.size = size;
    infer_pass_event_made(r->ip, ++r->event, 1, &ev, 0, made);
    return r->addr;
}

#define PQ (QD * QD / 2)                         /* q's packed bytes */
#define PM (QD * QI / 2)                         /* an MLP projection's */
static const uint64_t packed_b[] = {PQ, PM, PM}; /* q, up, down */

/* qstate: a packed weight of b bytes' state as bnb's quantize_4bit makes it (the offset scalar,
 * the uint8 absmax per 64 elements, the fp32 absmax of those per 256 blocks, the 16-entry code;
 * the 256-entry map once, first); its bytes */
static uint64_t qstate(run *r, uint64_t b, int first)
{
    uint64_t blocks = (2 * b + 63) / 64, abs2 = 4 * ((blocks + 255) / 256);
    t(r, 4, 0), t(r, blocks, 0), t(r, abs2, 0), t(r, 64, 0);
    if (first)
        t(r, 1024, 0);
    return 4 + blocks + abs2 + 64 + (first ? 1024 : 0);
}

/* the run: fp32 embedding, QL blocks (a norm, q, up, down packed, a norm), each packed weight's
 * state right after it (after_each) or all after the blocks; fp32 adapters of rank 6 on q (6·d
 * elements: 36 KiB, the size of q's uint8 absmax, d²/64, made after them all), a forward that
 * dequantizes each packed weight to a temporary of 4× its bytes, the adapters' gradients; *elems
 * the parameters' element count */
static void qlora(run *r, int after_each, int64_t *elems, uint64_t *qbytes)
{
    *elems = QV * QD, *qbytes = 0;
    t(r, QV * QD * 4, 0);
    for (int l = 0; l < QL; l++) {
        t(r, QD * 4, 0), *elems += QD;
        for (int k = 0; k < 3; k++) {
            t(r, packed_b[k], 0), *elems += 2 * (int64_t)packed_b[k];
            if (after_each)
                *qbytes += qstate(r, packed_b[k], !l && !k);
        }
        t(r, QD * 4, 0), *elems += QD;
    }
    t(r, QD * 4, 0), *elems += QD;
    for (int l = 0; !after_each && l < QL; l++)
        for (int k = 0; k < 3; k++)
            *qbytes += qstate(r, packed_b[k], !l && !k);
    for (int l = 0; l < QL; l++) /* (lora_A and lora_B, fp32) */
        t(r, 6 * QD * 4, 0), t(r, 6 * QD * 4, 0), *elems += 12 * QD;
    t(r, QB * QT * 8, 0); /* the token batch */
    uint64_t emb = tm(r, QB * QT * QD * 4, INFER_MADE_FORWARD);
    for (int l = 0; l < QL; l++)
        for (int k = 0; k < 3; k++) {
            uint64_t w = tm(r, 4 * packed_b[k], INFER_MADE_FORWARD);
            die(r, w);
        }
    uint64_t lg = tm(r, QB * QT * QV * 4ull, INFER_MADE_FORWARD);
    uint64_t g[2 * QL];
    for (int l = 0; l < 2 * QL; l++)
        g[l] = t(r, 6 * QD * 4, 1);
    die(r, lg), die(r, emb);
    t(r, 64, 0); /* after the first backward */
    (void)g;
}

static void check(int after_each)
{
    run r;
    infer_result out;
    int64_t elems;
    uint64_t qbytes;
    run_begin(&r);
    qlora(&r, after_each, &elems, &qbytes);
    run_end(&r, &out);
    assert_int_equal(out.packed_bytes, QL * (packed_b[0] + packed_b[1] + packed_b[2]));
    assert_int_equal(out.qstate_bytes, qbytes);
    assert_int_equal(val(&out, INFER_params), elems);
}

/* the state made after all the layers (the simulated qlora_4bit.py's order) */
static void test_qstate_after_the_layers(void **state)
{
    (void)state;
    check(0);
}

/* ... and each packed weight's beside it (frozen_dtypes.py's buffers) */
static void test_qstate_beside_each(void **state)
{
    (void)state;
    check(1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_qstate_after_the_layers),
        cmocka_unit_test(test_qstate_beside_each),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
