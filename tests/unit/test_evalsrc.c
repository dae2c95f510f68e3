/* test_evalsrc.c — an evaluation written inline in a training loop, read from the script's source
 * (analyzer/model/facts/evalsrc.c): model.eval(); with torch.no_grad(): ... in the loop is one; a
 * frozen teacher's no_grad forward before the backward, an evaluation-only script's forwards, a
 * no_grad block with a backward after it in its block, or a model never sent back to training
 * are not; strings and comments say nothing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "evalsrc.h"

static uint8_t g_lines[256];

/* lines: evalsrc_lines of src; the count set */
static size_t lines(const char *src)
{
    return evalsrc_lines(src, strlen(src), g_lines, sizeof g_lines);
}

/* the audit's program, reduced: the evaluation inline in main's loop */
static const char k_inline[] = "def main():\n"                                       /* 1 */
                               "    for step in range(4):\n"                         /* 2 */
                               "        loss = model(x)\n"                           /* 3 */
                               "        loss.backward()\n"                           /* 4 */
                               "        opt.step()\n"                                /* 5 */
                               "        if (step + 1) % 2 == 0:\n"                   /* 6 */
                               "            model.eval()\n"                          /* 7 */
                               "            with torch.no_grad():\n"                 /* 8 */
                               "                xe = batch(32)\n"                    /* 9 */
                               "                # a comment\n"                       /* 10 */
                               "                el = F.cross_entropy(model(xe),\n"   /* 11 */
                               "                                     xe.view(-1))\n" /* 12 */
                               "            model.train()\n"                         /* 13 */
                               "    print('done')\n";                                /* 14 */

static void test_inline(void **state)
{
    (void)state;
    assert_int_equal(lines(k_inline), 4);
    for (int l = 1; l < 15; l++)
        assert_int_equal(g_lines[l], l >= 9 && l <= 12);
}

static void test_not_evaluations(void **state)
{
    (void)state;
    /* a teacher's forward in the step: the backward after it in its block */
    assert_int_equal(lines("def main():\n"
                           "    for b in data:\n"
                           "        model.eval()\n"
                           "        with torch.no_grad():\n"
                           "            t = teacher(b)\n"
                           "        model.train()\n"
                           "        model(b).backward()\n"),
                     0);
    /* a teacher set to eval beside it, never trained */
    assert_int_equal(lines("def main():\n"
                           "    for b in data:\n"
                           "        if teach:\n"
                           "            teacher.eval()\n"
                           "            with torch.no_grad():\n"
                           "                t = teacher(b)\n"
                           "        model(b).backward()\n"
                           "        model.train()\n"),
                     0);
    /* evaluation only: nothing in the function trains */
    assert_int_equal(lines("def main():\n"
                           "    model.eval()\n"
                           "    with torch.inference_mode():\n"
                           "        model(b)\n"
                           "    model.train()\n"),
                     0);
    /* no .eval(): an EMA's update, a master copy */
    assert_int_equal(lines("def main():\n"
                           "    loss.backward()\n"
                           "    with torch.no_grad():\n"
                           "        ema.mul_(0.9)\n"
                           "    model.train()\n"),
                     0);
    /* the words in strings and comments only */
    assert_int_equal(lines("def main():\n"
                           "    loss.backward()\n"
                           "    s = 'model.eval()'  # model.eval()\n"
                           "    with torch.no_grad():\n"
                           "        model(b)\n"
                           "    model.train()\n"),
                     0);
    /* at the module's level, nothing sent back to training */
    assert_int_equal(lines("loss.backward()\n"
                           "raw.eval()\n"
                           "with torch.inference_mode(): out = raw(b)\n"),
                     0);
    /* another model sent back to training than the one evaluated (train_model.train()) */
    assert_int_equal(lines("def main():\n"
                           "    loss.backward()\n"
                           "    model.eval()\n"
                           "    with torch.no_grad():\n"
                           "        model(b)\n"
                           "    train_model.train()\n"),
                     0);
}

static void test_forms(void **state)
{
    (void)state;
    /* a one-line body, inference_mode, the module's own level, .eval() inside the block */
    assert_int_equal(lines("loss.backward()\n"
                           "raw.eval()\n"
                           "with torch.inference_mode(): out = raw(b)\n"
                           "raw.train()\n"),
                     1);
    assert_int_equal(g_lines[3], 1);
    assert_int_equal(lines("def train(self):\n"
                           "    self.loss.backward()\n"
                           "    with torch.set_grad_enabled(False), ctx:\n"
                           "        self.model.eval()\n"
                           "        out = self.model(b)\n"
                           "    self.model.train()\n"),
                     2);
    assert_int_equal(g_lines[4] + g_lines[5], 2);
    /* model.eval() a line before it, model.train() before the evaluation in the loop */
    assert_int_equal(lines("def main():\n"
                           "    loss.backward()\n"
                           "    model.eval()\n"
                           "    n = 0\n"
                           "    with torch.no_grad():\n"
                           "        model(b)\n"
                           "    model.train()\n"),
                     1);
    assert_int_equal(g_lines[6], 1);
    assert_int_equal(lines("def main():\n"
                           "    for b in data:\n"
                           "        model.train()\n"
                           "        model(b).backward()\n"
                           "        model.eval()\n"
                           "        n = 0\n"
                           "        with torch.no_grad():\n"
                           "            model(b)\n"),
                     1);
    assert_int_equal(g_lines[8], 1);
    /* a string that spans lines, and CRLF line ends */
    assert_int_equal(lines("def main():\r\n"
                           "    \"\"\"docs\r\n"
                           "    with torch.no_grad():\"\"\"\r\n"
                           "    loss.backward()\r\n"
                           "    model.eval()\r\n"
                           "    with torch.no_grad():\r\n"
                           "        model(b)\r\n"
                           "    model.train()\r\n"),
                     1);
    assert_int_equal(g_lines[7], 1);
    /* no source */
    assert_int_equal(lines(""), 0);
}

/* a function decorated @torch.no_grad() named like a sampling pass, called after the step (a
 * diffusion model's samples during training), is one; an EMA's no_grad update, a noise sampler
 * the step calls before its backward, and an evaluation-only script's sampler are not */
static void test_decorated(void **state)
{
    (void)state;
    static const char src[] = "@torch.no_grad()\n"                    /* 1 */
                              "def sample(model, n):\n"               /* 2 */
                              "    x = torch.randn(n)\n"              /* 3 */
                              "    return model(x)\n"                 /* 4 */
                              "@torch.no_grad()\n"                    /* 5 */
                              "def update_parameters(ema, m):\n"      /* 6 */
                              "    ema.lerp_(m)\n"                    /* 7 */
                              "@torch.inference_mode()\n"             /* 8 */
                              "def sample_t(n):\n"                    /* 9 */
                              "    return torch.randint(n)\n"         /* 10 */
                              "def main():\n"                         /* 11 */
                              "    for step in range(4):\n"           /* 12 */
                              "        t = sample_t(8)\n"             /* 13 */
                              "        model(t).backward()\n"         /* 14 */
                              "        update_parameters(ema, m)\n"   /* 15 */
                              "        if step % 2:\n"                /* 16 */
                              "            imgs = sample(ema, 64)\n"; /* 17 */
    assert_int_equal(lines(src), 3);
    for (int l = 1; l < 18; l++)
        assert_int_equal(g_lines[l], l >= 2 && l <= 4);
    /* undecorated, or a script that never trains: not */
    assert_int_equal(lines("def sample(m):\n"
                           "    return m(x)\n"
                           "loss.backward()\n"
                           "sample(m)\n"),
                     0);
    assert_int_equal(lines("@torch.no_grad()\n"
                           "def sample(m):\n"
                           "    return m(x)\n"
                           "sample(m)\n"),
                     0);
    /* never called */
    assert_int_equal(lines("@torch.no_grad()\n"
                           "def sample(m):\n"
                           "    return m(x)\n"
                           "loss.backward()\n"),
                     0);
    /* every form of the pass words (namewords.h): an evaluation, an inference (these two had
     * gone unread: "run_evaluation", "infer" not in this list); a value's getter is none */
    static const char *const named[] = {"run_evaluation", "infer", "get_val"};
    for (int k = 0; k < 3; k++) {
        char one[160];
        snprintf(one, sizeof one,
                 "@torch.no_grad()\ndef %s(m):\n    return m(x)\nloss.backward()\n%s(m)\n",
                 named[k], named[k]);
        assert_int_equal(lines(one), k < 2 ? 2 : 0);
    }
}

/* a no_grad block under model.eval() whose outputs a later backward reads (through names bound
 * from them: PPO's rollouts) is a pass of the step's, 2; one whose outputs are only printed, or
 * whose names the step binds anew before its backward, an evaluation still, 1 */
static void test_rollout(void **state)
{
    (void)state;
    static const char roll[] = "def main():\n"                               /* 1 */
                               "    buf = []\n"                              /* 2 */
                               "    for step in range(4):\n"                 /* 3 */
                               "        if step % 2 == 0:\n"                 /* 4 */
                               "            model.eval()\n"                  /* 5 */
                               "            with torch.no_grad():\n"         /* 6 */
                               "                xs = batch(4 * B)\n"         /* 7 */
                               "                old, _ = model(xs)\n"        /* 8 */
                               "            model.train()\n"                 /* 9 */
                               "        x = xs[:B]\n"                        /* 10 */
                               "        logits, loss = model(x)\n"           /* 11 */
                               "        loss = loss + kl(logits, old[:B])\n" /* 12 */
                               "        loss.backward()\n";                  /* 13 */
    assert_int_equal(lines(roll), 2);
    for (int l = 1; l < 14; l++)
        assert_int_equal(g_lines[l], l == 7 || l == 8 ? 2 : 0);
    /* filled in place (buf.append) and read through a for loop's name, in a one-line block */
    assert_int_equal(lines("def main():\n"
                           "    for step in range(4):\n"
                           "        if step % 2 == 0:\n"
                           "            model.eval()\n"
                           "            with torch.no_grad(): buf.append(model.generate(p))\n"
                           "            model.train()\n"
                           "        for seq in buf:\n"
                           "            r = reward(seq)\n"
                           "            (r * model(seq)).mean().backward()\n"),
                     1);
    assert_int_equal(g_lines[5], 2);
    /* an evaluation whose loss is printed and kept as the best: 1 */
    assert_int_equal(lines("def main():\n"
                           "    for step in range(4):\n"
                           "        if step % 2 == 0:\n"
                           "            model.eval()\n"
                           "            with torch.no_grad():\n"
                           "                val = model(xv)\n"
                           "            model.train()\n"
                           "            print(val)\n"
                           "        best = min(best, val)\n"
                           "        loss = model(x)\n"
                           "        loss.backward()\n"),
                     1);
    assert_int_equal(g_lines[6], 1);
    /* its names bound anew by the step before its backward: 1 */
    assert_int_equal(lines("def main():\n"
                           "    for step in range(4):\n"
                           "        if step % 2 == 0:\n"
                           "            model.eval()\n"
                           "            with torch.no_grad():\n"
                           "                logits, loss = model(xv)\n"
                           "            model.train()\n"
                           "        logits, loss = model(x)\n"
                           "        loss.backward()\n"),
                     1);
    assert_int_equal(g_lines[6], 1);
    /* a PPO iteration: the rollout, then its updates in the same loop body (the backward after
     * the block, in the block around it): a pass of the step's, 2 (it had been no evaluation,
     * read as the training's forward) */
    static const char iter[] = "def main():\n"                                   /* 1 */
                               "    for it in range(2):\n"                       /* 2 */
                               "        model.eval()\n"                          /* 3 */
                               "        with torch.no_grad(), autocast():\n"     /* 4 */
                               "            ids = gen(model, a.rollout_batch)\n" /* 5 */
                               "            old = model(ids).log_softmax(-1)\n"  /* 6 */
                               "        model.train()\n"                         /* 7 */
                               "        for m in range(n_mb):\n"                 /* 8 */
                               "            mb = ids[m * B:(m + 1) * B]\n"       /* 9 */
                               "            lp = model(mb).log_softmax(-1)\n"    /* 10 */
                               "            loss = (lp - old[m * B]).mean()\n"   /* 11 */
                               "            loss.backward()\n";                  /* 12 */
    assert_int_equal(lines(iter), 2);
    for (int l = 1; l < 13; l++)
        assert_int_equal(g_lines[l], l == 5 || l == 6 ? 2 : 0);
    /* the rollout collected at the end of the loop's body, for the next iteration's updates
     * before it (the backward before the block, reading what it bound): 2 (it had been an
     * evaluation, 1); bound anew before that backward, an evaluation still */
    static const char next[] = "def main():\n"                                   /* 1 */
                               "    old = None\n"                                /* 2 */
                               "    for it in range(3):\n"                       /* 3 */
                               "        if old is not None:\n"                   /* 4 */
                               "            model.train()\n"                     /* 5 */
                               "            lp = model(ids).log_softmax(-1)\n"   /* 6 */
                               "            loss = (lp - old).mean()\n"          /* 7 */
                               "            loss.backward()\n"                   /* 8 */
                               "        model.eval()\n"                          /* 9 */
                               "        with torch.no_grad():\n"                 /* 10 */
                               "            ids = gen(model, a.rollout_batch)\n" /* 11 */
                               "            old = model(ids).log_softmax(-1)\n"  /* 12 */
                               "    print(it)\n";                                /* 13 */
    assert_int_equal(lines(next), 2);
    for (int l = 1; l < 14; l++)
        assert_int_equal(g_lines[l], l == 11 || l == 12 ? 2 : 0);
    assert_int_equal(lines("def main():\n"
                           "    for it in range(3):\n"
                           "        model.train()\n"
                           "        ids, old = batch()\n"
                           "        loss = (model(ids) - old).mean()\n"
                           "        loss.backward()\n"
                           "        model.eval()\n"
                           "        with torch.no_grad():\n"
                           "            ids = gen(model, a.rollout_batch)\n"
                           "            old = model(ids).log_softmax(-1)\n"),
                     2);
    assert_int_equal(g_lines[9], 1);
    /* the rollout's own steps in an inner loop, the updates in the outer one's body before it */
    assert_int_equal(lines("def main():\n"
                           "    buf = []\n"
                           "    for it in range(3):\n"
                           "        model.train()\n"
                           "        for seq in buf:\n"
                           "            (reward(seq) * model(seq)).mean().backward()\n"
                           "        buf = []\n"
                           "        for t in range(8):\n"
                           "            model.eval()\n"
                           "            with torch.no_grad():\n"
                           "                buf.append(model.generate(p))\n"),
                     1);
    assert_int_equal(g_lines[11], 2);
    /* the same block whose outputs the updates never read: the step's forward still, 0 */
    assert_int_equal(lines("def main():\n"
                           "    for it in range(2):\n"
                           "        model.eval()\n"
                           "        with torch.no_grad():\n"
                           "            val = model(xv)\n"
                           "        model.train()\n"
                           "        loss = model(x)\n"
                           "        loss.backward()\n"),
                     0);
}

/* a large script is answered, the same way as a small one: 600 functions that each evaluate
 * inline and call a sampler of their own, and one function of 1,000 model.eval() lines and then
 * 1,000 no_grad blocks that no model leaves for training (~210 KB, near the 256 KiB a trace
 * records of a script; asked block by block, such a script took minutes) */
static void test_large(void **state)
{
    (void)state;
    enum { K = 600, N = 1000, FN_LINES = 12 };
    size_t cap = 400000, len = 0;
    char *src = malloc(cap);
    assert_non_null(src);
    for (int i = 0; i < K; i++) /* lines 12 i + 1 .. 12 i + 12 */
        len += (size_t)snprintf(src + len, cap - len,
                                "@torch.no_grad()\n"
                                "def sample_%d(m):\n"
                                "    return m(x)\n"
                                "def f%d():\n"
                                "    for step in range(4):\n"
                                "        loss.backward()\n"
                                "        if step %% 2:\n"
                                "            m%d.eval()\n"
                                "            with torch.no_grad():\n"
                                "                y = m%d(x)\n"
                                "            m%d.train()\n"
                                "    imgs = sample_%d(m%d)\n",
                                i, i, i, i, i, i, i);
    len += (size_t)snprintf(src + len, cap - len, "def g():\n    loss.backward()\n");
    for (int i = 0; i < N; i++)
        len += (size_t)snprintf(src + len, cap - len, "    n%d.eval()\n", i);
    for (int i = 0; i < N; i++)
        len +=
            (size_t)snprintf(src + len, cap - len, "    with torch.no_grad():\n        v = n(x)\n");
    assert_true(len > 200000 && len < cap - 1);
    size_t nl = (size_t)K * FN_LINES + 2 + 3 * (size_t)N + 2;
    uint8_t *m = malloc(nl);
    assert_non_null(m);
    assert_int_equal(evalsrc_lines(src, len, m, nl), 3 * K);
    for (size_t l = 1; l < nl; l++) {
        size_t k = (l - 1) % FN_LINES + 1; /* the line in its function's 12 */
        assert_int_equal(m[l], l <= (size_t)K * FN_LINES && (k == 2 || k == 3 || k == 10));
    }
    free(m);
    free(src);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_inline), cmocka_unit_test(test_not_evaluations),
        cmocka_unit_test(test_forms),  cmocka_unit_test(test_decorated),
        cmocka_unit_test(test_large),  cmocka_unit_test(test_rollout),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
