/* test_scriptpass.c — what a training script's source says of its loop that its trace may not show
 * (analyzer/model/recognize/scriptpass.c): a validation pass it runs every N steps (inline, or a
 * validation_step it calls), and a recurrent model's hidden state carried from batch to batch
 * (detached, then fed back to the model); neither where the code only looks like it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "scriptpass.h"

static char g_name[64], g_def[80];

static uint32_t eval_at(const char *s)
{
    return scriptpass_eval(s, strlen(s), g_name, sizeof g_name, g_def, sizeof g_def);
}

static uint32_t carried_at(const char *s)
{
    return scriptpass_carried(s, strlen(s), g_name, sizeof g_name);
}

/* a Lightning-style driver of the program's own: a validation every 2 steps, inline */
static const char k_loop[] = "class Runner:\n"                                    /* 1 */
                             "    def fit(self, module, tb, vb):\n"               /* 2 */
                             "        for step in range(9):\n"                    /* 3 */
                             "            loss = module.training_step(tb())\n"    /* 4 */
                             "            loss.backward()\n"                      /* 5 */
                             "            opt.step()\n"                           /* 6 */
                             "            if step % 2 == 0:\n"                    /* 7 */
                             "                module.eval()\n"                    /* 8 */
                             "                with torch.no_grad():\n"            /* 9 */
                             "                    module.validation_step(vb())\n" /* 10 */
                             "                module.train()\n";                  /* 11 */

/* the same pass as a function the loop calls (no no_grad block to see) */
static const char k_called[] = "def validation_step(model, b):\n"          /* 1 */
                               "    return model(b).mean()\n"              /* 2 */
                               "def train():\n"                            /* 3 */
                               "    for i in range(9):\n"                  /* 4 */
                               "        model(x).sum().backward()\n"       /* 5 */
                               "        if i % 5 == 0:\n"                  /* 6 */
                               "            validation_step(model, vb)\n"; /* 7 */

static void test_eval(void **state)
{
    (void)state;
    assert_int_equal(eval_at(k_loop), 10);
    assert_string_equal(g_name, "");
    assert_string_equal(g_def, "fit"); /* (the def whose block holds the inline pass) */
    /* the def around it, not the nearest above: a helper sample() defined before the loop */
    assert_int_equal(eval_at("def train():\n"                      /* 1 */
                             "    def sample(m):\n"                /* 2 */
                             "        return m(x)\n"               /* 3 */
                             "    for i in range(9):\n"            /* 4 */
                             "        model(x).sum().backward()\n" /* 5 */
                             "        model.eval()\n"              /* 6 */
                             "        with torch.no_grad():\n"     /* 7 */
                             "            model(vb).mean()\n"      /* 8 */
                             "        model.train()\n"),           /* 9 */
                     8);
    assert_string_equal(g_def, "train");
    assert_int_equal(eval_at(k_called), 1);
    assert_string_equal(g_name, "validation_step");
    /* never called, or named in a string or a comment only: none */
    assert_int_equal(eval_at("def evaluate(m):\n    pass\n"
                             "def train():\n    loss.backward()\n"
                             "    print('evaluate(m) later')  # evaluate(m)\n"),
                     0);
    /* a script that never trains: none */
    assert_int_equal(eval_at("def evaluate(m):\n    pass\nevaluate(m)\n"), 0);
    /* a name that trains too: none (train_and_evaluate) */
    assert_int_equal(eval_at("def train_and_evaluate(m):\n    m().backward()\n"
                             "train_and_evaluate(m)\n"),
                     0);
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
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_eval), cmocka_unit_test(test_carried)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
