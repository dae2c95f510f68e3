/* test_recognize_optim.c — the optimizer a run's recorded script constructs, the one its command
 * line names, and the steps that may have run unseen (analyzer/model/recognize/optim*.c): the
 * readings of the program's own words, apart from test_recognize.c's traces. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "recognize.h"

/* script_optim: recognize_optim_script on one recorded script of source src */
static run_recognition script_optim(const char *src)
{
    config_recfile f = {.name = "train.py", .data = src, .len = strlen(src), .kind = VT_FILE_ARG};
    config_files fs = {1, &f, 1};
    run_recognition r;
    memset(&r, 0, sizeof r);
    r.optim_bpp = -1;
    recognize_optim_script(&fs, NULL, &r);
    return r;
}

/* sgd_under_own: recognize_optim_script on one recorded script of source src, SGD's momentum
 * buffer measured (4 B per parameter) */
static run_recognition sgd_under_own(const char *src)
{
    config_recfile f = {.name = "train.py", .data = src, .len = strlen(src), .kind = VT_FILE_ARG};
    config_files fs = {1, &f, 1};
    run_recognition r;
    memset(&r, 0, sizeof r);
    r.optim = OPT_MOMENTUM, r.optim_bpp = 4;
    snprintf(r.optim_class, sizeof r.optim_class, "SGD");
    recognize_optim_script(&fs, NULL, &r);
    return r;
}

static void test_optim_script(void **state)
{
    (void)state;
    /* one kind constructed (a comment and a longer name are no call): that one, file and line */
    run_recognition r = script_optim("import torch\n# torch.optim.AdamW(p) was slower\n"
                                     "opt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
                                     "sched = MySGD(opt)\n");
    /* (SGD with the learning rate alone: no momentum, no state; it had been "SGD", a momentum
     * buffer counted) */
    assert_int_equal(r.optim, OPT_NONE);
    assert_non_null(strstr(r.optim_where, "SGD( in train.py:3 (momentum not given: torch's "
                                          "default 0), the script's only optimizer: no momentum "
                                          "buffer, no state"));
    /* its momentum as given: a literal, its third argument; a name or ** arguments: not known */
    r = script_optim("opt = torch.optim.SGD(\n    p, lr=0.1,\n    momentum=0.9)\n");
    assert_int_equal(r.optim, OPT_MOMENTUM);
    assert_non_null(strstr(r.optim_where, "SGD( in train.py:1 (momentum=0.9), the script's only"));
    r = script_optim("opt = torch.optim.SGD(p, 0.1, 0.0, nesterov=False)\n");
    assert_int_equal(r.optim, OPT_NONE);
    r = script_optim("opt = torch.optim.SGD(p, 0.1, 0.9)\n");
    assert_int_equal(r.optim, OPT_MOMENTUM);
    /* no momentum and no weight decay: its update is in place (sgd_bare); a weight decay, its
     * fifth argument or a name: a list the size of the gradients may be made; momentum: no */
    assert_int_equal(r.sgd_bare, 0);
    r = script_optim("opt = torch.optim.SGD(p, lr=0.1)\n");
    assert_int_equal(r.sgd_bare, 1);
    r = script_optim("opt = torch.optim.SGD(p, 0.1, 0.0, 0, 1e-4)\n");
    assert_int_equal(r.optim, OPT_NONE);
    assert_int_equal(r.sgd_bare, 0);
    r = script_optim("opt = torch.optim.SGD(p, lr=0.1, weight_decay=a.wd)\n");
    assert_int_equal(r.sgd_bare, 0);
    r = script_optim("opt = torch.optim.SGD(p, lr=0.1, weight_decay=0)\n");
    assert_int_equal(r.sgd_bare, 1);
    r = script_optim("opt = torch.optim.SGD(p, lr=a.lr, momentum=a.momentum)\n");
    assert_int_equal(r.optim, OPT_SGD);
    r = script_optim("opt = torch.optim.SGD(p, **kw)\n");
    assert_int_equal(r.optim, OPT_SGD);
    /* two calls that disagree: not known */
    r = script_optim("g = torch.optim.SGD(p, lr=1)\nd = torch.optim.SGD(q, momentum=0.5)\n");
    assert_int_equal(r.optim, OPT_SGD);
    /* two of one kind (a GAN's generator and discriminator): that kind, never "the only one" */
    r = script_optim("from torch.optim import AdamW\nopt = AdamW(params)\nopt2 = AdamW(other)\n");
    assert_int_equal(r.optim, OPT_ADAM);
    assert_non_null(strstr(r.optim_where, "AdamW( in train.py:2, the first of the script's 2 "
                                          "optimizers, all of this kind"));
    assert_null(strstr(r.optim_where, "only"));
    /* two kinds: which one ran is not in the source; both said, with their lines */
    r = script_optim("if a.opt == 'sgd':\n    o = torch.optim.SGD(p)\nelse:\n"
                     "    o = torch.optim.AdamW(p)\n");
    assert_int_equal(r.optim, OPT_UNKNOWN);
    assert_int_equal(r.optim_kinds, 1u << OPT_SGD | 1u << OPT_ADAM);
    assert_string_equal(r.optim_choices, "SGD( line 2, AdamW( line 4 of train.py");
    assert_non_null(strstr(r.optim_where, "the script constructs several kinds (SGD( line 2"));
    r = script_optim("print('no optimizer here')\n");
    assert_int_equal(r.optim, OPT_UNKNOWN);
    /* a class or a def of a known name is no call; the script's own optimizer classes name no
     * library kind: one is a state of its own size, several are several kinds */
    r = script_optim("class AdamW8bit(Optimizer):\n    pass\ndef SGD(p):\n    pass\n"
                     "opt = torch.optim.AdamW(p)\n");
    assert_int_equal(r.optim, OPT_ADAM);
    assert_non_null(strstr(r.optim_where, "AdamW( in train.py:5, the script's only optimizer"));
    r = script_optim("class Lion(torch.optim.Optimizer):\n    pass\nopt = Lion(p)\n");
    assert_int_equal(r.optim, OPT_OTHER);
    assert_non_null(strstr(r.optim_where, "Lion( in train.py:3 (a class of the script's own), "
                                          "the script's only optimizer"));
    r = script_optim("class Lion(Optimizer):\n    pass\nclass AdamW8bit(Optimizer):\n    pass\n"
                     "o = Lion(p) if a.lion else AdamW8bit(p)\n");
    assert_int_equal(r.optim, OPT_UNKNOWN);
    assert_string_equal(r.optim_choices, "Lion( line 5, AdamW8bit( line 5 of train.py");
    /* a library's state measured under a class of the script's own (SAM over SGD): said */
    r = sgd_under_own("class SAM(Optimizer):\n    pass\nopt = SAM(p, torch.optim.SGD)\n");
    assert_int_equal(r.optim, OPT_MOMENTUM);
    assert_non_null(
        strstr(r.optim_where, "the script's own SAM (constructed at line 3) drives it"));
    /* its docstring's and a comment's SAM( are none: the construction's line counted past them */
    r = sgd_under_own("class SAM(Optimizer):\n    \"\"\"Wrap as SAM(p, SGD).\n    \"\"\"\n"
                      "# SAM(p)\nopt = SAM(p, torch.optim.SGD)\n");
    assert_non_null(
        strstr(r.optim_where, "the script's own SAM (constructed at line 5) drives it"));
    /* a string is no call either (a docstring naming what the script does not make, a help
     * text): the one call, its line counted past them */
    r = script_optim(
        "\"\"\"Trains with AdamW.\n\nNot torch.optim.SGD(p, momentum=0.9): slower.\n\"\"\"\n"
        "ap.add_argument('--x', help=\"like Adafactor(p) # or\")\n"
        "opt = torch.optim.AdamW(p)\n");
    assert_int_equal(r.optim, OPT_ADAM);
    assert_int_equal(r.optim_kinds, 0);
    assert_non_null(strstr(r.optim_where, "AdamW( in train.py:6, the script's only optimizer"));
    /* a measured state or a class seen stays */
    config_recfile f = {.name = "t.py", .data = "SGD(p)", .len = 6, .kind = VT_FILE_ARG};
    config_files fs = {1, &f, 1};
    memset(&r, 0, sizeof r);
    r.optim = OPT_ADAM, r.optim_bpp = 8;
    recognize_optim_script(&fs, NULL, &r);
    assert_int_equal(r.optim, OPT_ADAM);
    /* none made, the steps maybe all skipped by a GradScaler: the kinds, one or several, beside
     * the row and its none measured, as they are */
    memset(&r, 0, sizeof r);
    r.steps_maybe_skipped = 1, r.optim_bpp = 0;
    snprintf(r.optim_where, sizeof r.optim_where, "no state was made");
    f.name = "train.py";
    recognize_optim_script(&fs, NULL, &r);
    assert_int_equal(r.optim, OPT_UNKNOWN);
    assert_int_equal(r.optim_kinds, 1u << OPT_SGD);
    assert_string_equal(r.optim_choices, "SGD( line 1 of train.py");
    assert_string_equal(r.optim_where, "no state was made");
    assert_true(r.optim_bpp == 0);
}

/* the script's own optimizer class, no step measured: its state made on the host by its code
 * (every tensor it puts into its state names "cpu", .cpu() or pin_memory, none CUDA): no state on
 * the device; one tensor that may be on the device (zeros_like(p), .cuda(), .to(p.device)):
 * a state of its own size, as before */
static void test_optim_host(void **state)
{
    (void)state;
    static const char host[] =
        "class HostAdam(torch.optim.Optimizer):\n"
        "    def step(self):\n"
        "        for p in ps:\n"
        "            st = self.state[p]\n"
        "            if not st:\n"
        "                st['step'] = 0\n"
        "                st['m'] = torch.zeros(p.shape, device='cpu')\n"
        "                self.state[p]['v'] = p.detach().cpu().pin_memory()\n"
        "            st['step'] += 1\n"
        "\n"
        "opt = HostAdam(model.parameters())\n";
    run_recognition r = script_optim(host);
    assert_int_equal(r.optim, OPT_NONE);
    assert_true(r.optim_off_device);
    assert_string_equal(r.optim_class, "HostAdam");
    assert_non_null(strstr(r.optim_where, "HostAdam( in train.py:11 (a class of the script's "
                                          "own), the script's only optimizer: its code makes its "
                                          "2 state tensors on the host (lines 7-8 of train.py)"));
    static const char *const device[] = {"torch.zeros_like(p)", "torch.zeros(p.shape).cuda()",
                                         "torch.zeros(p.shape, device='cpu').to(p.device)",
                                         "torch.zeros(p.shape, device='cuda')"};
    for (size_t k = 0; k < sizeof device / sizeof device[0]; k++) {
        char src[600];
        snprintf(src, sizeof src,
                 "class HostAdam(Optimizer):\n    def step(self):\n        st = self.state[p]\n"
                 "        st['m'] = torch.zeros(p.shape, device='cpu')\n        st['v'] = %s\n"
                 "opt = HostAdam(model.parameters())\n",
                 device[k]);
        r = script_optim(src);
        assert_int_equal(r.optim, OPT_OTHER);
        assert_false(r.optim_off_device);
    }
    /* a state of numbers alone (a step count): nothing says where its tensors are */
    r = script_optim("class Counter(Optimizer):\n    def step(self):\n"
                     "        self.state[p]['step'] = 0\nopt = Counter(ps)\n");
    assert_int_equal(r.optim, OPT_OTHER);
}

/* steps that may have run unseen: none seen after a completed backward, where a step of this
 * optimizer may make nothing (no state, SGD not known, none known; any without Python frames) */
static void test_steps_unseen(void **state)
{
    (void)state;
    run_recognition r;
    memset(&r, 0, sizeof r);
    r.python_frames = 1, r.optim = OPT_NONE;
    assert_false(optim_steps_unseen(&r)); /* (no backward completed: none ran) */
    r.steps_may_hide = 1;
    assert_true(optim_steps_unseen(&r));
    r.optim = OPT_SGD;
    assert_true(optim_steps_unseen(&r));
    r.optim = OPT_UNKNOWN;
    assert_true(optim_steps_unseen(&r));
    r.optim = OPT_ADAM; /* (its first step makes its state under its code) */
    assert_false(optim_steps_unseen(&r));
    r.optim = OPT_MOMENTUM;
    assert_false(optim_steps_unseen(&r));
    r.optim = OPT_UNKNOWN, r.optim_kinds = 1u << OPT_ADAM | 1u << OPT_FACTORED;
    assert_false(optim_steps_unseen(&r));
    r.optim_kinds |= 1u << OPT_SGD;
    assert_true(optim_steps_unseen(&r));
    r.optim = OPT_ADAM, r.optim_kinds = 0, r.python_frames = 0; /* (nothing tells a step) */
    assert_true(optim_steps_unseen(&r));
}

/* the optimizer a command line names, when no step ran and no code named one */
static void test_optim_cmdline(void **state)
{
    (void)state;
    run_recognition r;
    const char *const a1[] = {"python", "train.py", "--optimizer", "adafactor", "--lr", "1"};
    memset(&r, 0, sizeof r);
    r.optim_bpp = -1;
    recognize_optim_cmdline(6, a1, &r);
    assert_int_equal(r.optim, OPT_FACTORED);
    assert_non_null(strstr(r.optim_where, "--optimizer adafactor on the command line"));
    const char *const a2[] = {"python", "t.py", "--optim=ADAMW_8BIT"};
    memset(&r, 0, sizeof r);
    r.optim_bpp = -1;
    recognize_optim_cmdline(3, a2, &r);
    assert_int_equal(r.optim, OPT_EIGHT_BIT);
    assert_non_null(strstr(r.optim_where, "--optim=ADAMW_8BIT on the command line"));
    /* not the flag, then SGD (momentum not said: kind sgd, counted as a bound) */
    const char *const a3[] = {"python",  "t.py", "--optimizer-lr", "adamw",
                              "--optim", "sgd",  "--optimizer"};
    memset(&r, 0, sizeof r);
    r.optim_bpp = -1;
    recognize_optim_cmdline(7, a3, &r);
    assert_int_equal(r.optim, OPT_SGD);
    assert_non_null(strstr(r.optim_where, "--optim sgd on the command line"));
    /* not the flag, a flag with no value: nothing taken */
    const char *const a4[] = {"python", "t.py", "--optimizer-lr", "adamw", "--optimizer"};
    memset(&r, 0, sizeof r);
    r.optim_bpp = -1;
    recognize_optim_cmdline(5, a4, &r);
    assert_int_equal(r.optim, OPT_UNKNOWN);
    /* a measured state is never replaced by a name */
    memset(&r, 0, sizeof r);
    r.optim_bpp = 8.0;
    recognize_optim_cmdline(6, a1, &r);
    assert_int_equal(r.optim, OPT_UNKNOWN);
    r.optim = OPT_ADAM;
    r.optim_bpp = -1;
    recognize_optim_cmdline(6, a1, &r);
    assert_int_equal(r.optim, OPT_ADAM);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_optim_script),
        cmocka_unit_test(test_optim_host),
        cmocka_unit_test(test_steps_unseen),
        cmocka_unit_test(test_optim_cmdline),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
