/* test_scriptpass.c — what a training script's source says of its loop that its trace may not show
 * (analyzer/model/recognize/scriptpass.c): a recurrent model's hidden state carried from batch to
 * batch (detached, then fed back to the model); none where the code only looks like it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "scriptpass.h"

static char g_name[64];

static uint32_t carried_at(const char *s)
{
    return scriptpass_carried(s, strlen(s), g_name, sizeof g_name);
}

/* truncated BPTT, as PyTorch's word language model writes it and as an own loop does */
static const char k_tbptt[] =
    "def train():\n"                                                   /* 1 */
    "    hidden = model.init_hidden(bsz)\n"                            /* 2 */
    "    for batch in range(n):\n"                                     /* 3 */
    "        data, targets = get_batch(batch)\n"                       /* 4 */
    "        hidden = [(h.detach(), c.detach()) for h, c in hidden]\n" /* 5 */
    "        output, hidden = model(data, hidden)\n"                   /* 6 */
    "        loss = crit(output, targets)\n"                           /* 7 */
    "        loss.backward()\n";                                       /* 8 */

static const char k_repackage[] = "def repackage_hidden(h):\n"                         /* 1 */
                                  "    if isinstance(h, torch.Tensor):\n"              /* 2 */
                                  "        return h.detach()\n"                        /* 3 */
                                  "    return tuple(repackage_hidden(v) for v in h)\n" /* 4 */
                                  "def train():\n"                                     /* 5 */
                                  "    for i in range(n):\n"                           /* 6 */
                                  "        hidden = repackage_hidden(hidden)\n"        /* 7 */
                                  "        output, hidden = model(\n"                  /* 8 */
                                  "            data, hidden)\n"                        /* 9 */
                                  "        loss.backward()\n";                         /* 10 */

static void test_carried(void **state)
{
    (void)state;
    assert_int_equal(carried_at(k_tbptt), 5);
    assert_string_equal(g_name, "hidden");
    assert_int_equal(carried_at(k_repackage), 7);
    assert_string_equal(g_name, "hidden");
    /* a state made anew every batch, a detached target no call takes back, a loop that does
     * not train: none */
    assert_int_equal(carried_at("def train():\n    for b in range(n):\n"
                                "        hidden = model.init_hidden(bsz)\n"
                                "        out, hidden = model(x, hidden)\n"
                                "        out.sum().backward()\n"),
                     0);
    assert_int_equal(carried_at("def train():\n    for b in range(n):\n"
                                "        target = target.detach()\n"
                                "        out = model(x, target)\n"
                                "        out.sum().backward()\n"),
                     0);
    assert_int_equal(carried_at("def sample():\n    for t in range(n):\n"
                                "        x = x.detach()\n"
                                "        x = step(model, x)\n"),
                     0);
    /* rebound from itself with no detach, or detached and then loaded anew (no call takes it
     * back): none */
    assert_int_equal(carried_at("def train():\n    for b in range(n):\n"
                                "        h = h * 0\n"
                                "        out, h = model(x, h)\n"
                                "        out.sum().backward()\n"),
                     0);
    assert_int_equal(carried_at("def train():\n    for b in range(n):\n"
                                "        target = target.detach()\n"
                                "        target = load(b)\n"
                                "        model(x, target).sum().backward()\n"),
                     0);
    /* written in a string: none */
    assert_int_equal(carried_at("def train():\n    for b in range(n):\n"
                                "        s = 'hidden = hidden.detach()'\n"
                                "        out, hidden = model(x, hidden)\n"
                                "        out.sum().backward()\n"),
                     0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_carried)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
