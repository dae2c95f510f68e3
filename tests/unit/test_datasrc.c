/* test_datasrc.c — the lines of a recorded script where storage filled with a constant is the
 * program's data, not a weight (analyzer/model/facts/datasrc.c): a plain class's (a replay buffer
 * kept on the device), a function's that names no weight, the module's own lines; not a class with
 * a base (a Module's weights and buffers), nor a function or class that makes a weight by hand
 * (requires_grad, Parameter) or names a model's parameters or a forward; strings and comments
 * say nothing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "datasrc.h"

static uint8_t g_lines[128];

/* data: datasrc_lines of src with bit 4 (other bits kept: the caller's); the count set */
static size_t data(const char *src)
{
    memset(g_lines, 1, sizeof g_lines);
    return datasrc_lines(src, strlen(src), g_lines, sizeof g_lines, 4);
}

static int on(int line)
{
    return (g_lines[line] & 4) != 0;
}

/* the audit's program, reduced: the buffer in a plain class, the model a Module */
static const char k_dqn[] = "import torch\n"                                          /* 1 */
                            "class QNetwork(nn.Module):\n"                            /* 2 */
                            "    def __init__(self):\n"                               /* 3 */
                            "        self.b = torch.zeros(4, device='cuda')\n"        /* 4 */
                            "    def forward(self, x):\n"                             /* 5 */
                            "        return x\n"                                      /* 6 */
                            "class DeviceReplayBuffer:\n"                             /* 7 */
                            "    def __init__(self, size, device):\n"                 /* 8 */
                            "        self.obs = torch.zeros(size, 4, 84, 84,\n"       /* 9 */
                            "                               device=device)\n"         /* 10 */
                            "    def sample(self, n):\n"                              /* 11 */
                            "        # a comment: parameters requires_grad forward\n" /* 12 */
                            "        return self.obs[torch.randint(0, n, (n,))]\n"    /* 13 */
                            "def main():\n"                                           /* 14 */
                            "    q = QNetwork().to('cuda')\n"                         /* 15 */
                            "    opt = torch.optim.Adam(q.parameters())\n"            /* 16 */
                            "    rb = DeviceReplayBuffer(10, 'cuda')\n"               /* 17 */
                            "def make_storage(n):\n"                                  /* 18 */
                            "    s = 'requires_grad'\n"                               /* 19 */
                            "    return torch.zeros(n, device='cuda')\n";             /* 20 */

static void test_dqn(void **state)
{
    (void)state;
    assert_true(data(k_dqn) > 0);
    for (int l = 3; l <= 6; l++) /* a Module's: its weights and buffers */
        assert_false(on(l));
    for (int l = 8; l <= 13; l++) /* the plain class's (a comment saying nothing: no code) */
        assert_true(on(l) || l == 12);
    assert_false(on(16));            /* main names a model's parameters on this line */
    assert_true(on(15) && on(17));   /* (elsewhere in main they say nothing of a line) */
    assert_true(on(20));             /* a function naming no weight (a string says nothing) */
    assert_true(on(1));              /* the module's own lines name none */
    assert_int_equal(g_lines[4], 1); /* (the caller's bits kept) */
}

/* classes with a base, or a plain one whose text makes a weight, are no data's */
static const char k_not[] = "class A(object):\n"                               /* 1 */
                            "    def __init__(self):\n"                        /* 2 */
                            "        self.w = torch.zeros(3, device='cuda')\n" /* 3 */
                            "        self.w.requires_grad_()\n"                /* 4 */
                            "class B(Base, ):\n"                               /* 5 */
                            "    x = torch.zeros(3, device='cuda')\n"          /* 6 */
                            "class C():\n"                                     /* 7 */
                            "    class D(nn.Module):\n"                        /* 8 */
                            "        y = torch.ones(3)\n"                      /* 9 */
                            "    z = 1\n"                                      /* 10 */
                            "def init_params():\n"                             /* 11 */
                            "    return nn.Parameter(torch.zeros(3))\n"        /* 12 */
                            "async def fill():\n"                              /* 13 */
                            "    return torch.zeros(3)\n"                      /* 14 */
                            "w = torch.zeros(3, requires_grad=True)\n";        /* 15 */

static void test_not_data(void **state)
{
    (void)state;
    data(k_not);
    for (int l = 2; l <= 4; l++) /* object alone is no base, but it makes a weight */
        assert_false(on(l));
    assert_false(on(6));  /* a base */
    assert_false(on(9));  /* a Module inside a plain class */
    assert_true(on(10));  /* the plain class's own line */
    assert_false(on(12)); /* a function that makes a Parameter */
    assert_true(on(14));  /* an async def naming none */
    assert_false(on(15)); /* the module's own lines make a weight */
}

/* what reaches the storage a line makes: the names it reads, and the arguments of the call of its
 * function (a class's constructor for its __init__) passed as a parameter it reads */
static const char k_reach[] =
    "class Buf:\n"                                                          /* 1 */
    "    def __init__(self, size, device, batch_size=32):\n"                /* 2 */
    "        self.obs = torch.zeros(size, 4, 84, 84, device=device)\n"      /* 3 */
    "        self.n = batch_size\n"                                         /* 4 */
    "class Loader:\n"                                                       /* 5 */
    "    def __init__(self, data, *, batch_size):\n"                        /* 6 */
    "        self.x = torch.zeros(N_TRAIN, 3, 32, 32, device='cuda')\n"     /* 7 */
    "def fill(k, n):\n"                                                     /* 8 */
    "    return torch.zeros(n * 2, device='cuda')\n"                        /* 9 */
    "def main(args):\n"                                                     /* 10 */
    "    rb = Buf(args.buffer_size, 'cuda', batch_size=args.batch_size)\n"  /* 11 */
    "    ld = Loader(ds, batch_size=args.batch_size)\n"                     /* 12 */
    "    z = fill(args.batch_size,\n"                                       /* 13 */
    "             n=args.frames)\n"                                         /* 14 */
    "    y = torch.zeros(args.rows, 3, device='cuda')  # args.batch_size\n" /* 15 */
    "    w = fill(n=args.frames, k=args.batch_size)\n"                      /* 16 */
    "    v = Buf(args.rows, 'cuda', args.batch_size)\n";                    /* 17 */

static int reaches(const char *out, const char *name)
{
    char w[64];
    snprintf(w, sizeof w, " %s ", name);
    return strstr(out, w) != NULL;
}

static void test_reaching(void **state)
{
    (void)state;
    char out[256];
    size_t n = strlen(k_reach);
    /* the buffer's size through its constructor's first argument; its batch_size argument is a
     * parameter the line does not read */
    assert_true(datasrc_reaching(k_reach, n, 3, "Buf.__init__", 11, out, sizeof out) > 0);
    assert_true(reaches(out, "size") && reaches(out, "buffer_size") && reaches(out, "args"));
    assert_false(reaches(out, "batch_size"));
    /* a loader's batch_size, passed to the class that makes the data, sizes nothing of it */
    assert_true(datasrc_reaching(k_reach, n, 7, "Loader.__init__", 12, out, sizeof out) > 0);
    assert_true(reaches(out, "N_TRAIN"));
    assert_false(reaches(out, "batch_size"));
    /* a function's parameters by place and by keyword, the call over two lines */
    assert_true(datasrc_reaching(k_reach, n, 9, "fill", 14, out, sizeof out) > 0);
    assert_true(reaches(out, "frames"));
    assert_false(reaches(out, "batch_size"));
    /* the line itself reads the flag (a comment says nothing); no call asked for */
    assert_true(datasrc_reaching(k_reach, n, 15, "main", 0, out, sizeof out) > 0);
    assert_true(reaches(out, "rows"));
    assert_false(reaches(out, "batch_size"));
    /* keywords by their names, not their places; a method's places after self */
    assert_true(datasrc_reaching(k_reach, n, 9, "fill", 16, out, sizeof out) > 0);
    assert_true(reaches(out, "frames"));
    assert_false(reaches(out, "batch_size"));
    assert_true(datasrc_reaching(k_reach, n, 3, "Buf.__init__", 17, out, sizeof out) > 0);
    assert_true(reaches(out, "rows"));
    assert_false(reaches(out, "batch_size"));
    /* a call that is not the line's function's: its own names alone */
    assert_true(datasrc_reaching(k_reach, n, 3, "Other.__init__", 11, out, sizeof out) > 0);
    assert_false(reaches(out, "buffer_size"));
    assert_int_equal(datasrc_reaching(k_reach, n, 99, "main", 0, out, sizeof out), 0);
}

static const char k_main[] = "def main(args):\n"                                           /* 1 */
                             "    q = QNetwork().to('cuda')\n"                             /* 2 */
                             "    opt = torch.optim.Adam(q.parameters(), lr=1e-4)\n"       /* 3 */
                             "    obs = torch.zeros(args.buffer_size, 4, 84, 84,\n"        /* 4 */
                             "                      dtype=torch.uint8, device='cuda')\n"   /* 5 */
                             "    m = {}\n"                                                /* 6 */
                             "    for p in q.parameters():\n"                              /* 7 */
                             "        if p.dim() > 1:\n"                                   /* 8 */
                             "            m[p] = torch.zeros_like(p)\n"                    /* 9 */
                             "    dones = torch.zeros(args.buffer_size, device='cuda')\n"  /* 10 */
                             "    for p in target.parameters(): p.requires_grad_(False)\n" /* 11 */
                             "    target.head.weight.requires_grad = False\n"              /* 12 */
                             "def by_hand():\n"                                            /* 13 */
                             "    w = torch.zeros(8, device='cuda')\n"                     /* 14 */
                             "    w.requires_grad_()\n"                                    /* 15 */
                             "    opt = SGD(model.parameters())\n"                         /* 16 */
                             "buf = torch.zeros(100, device='cuda')\n"                     /* 17 */
                             "opt = SGD(model.parameters())\n";                            /* 18 */

/* a buffer made in main() beside the model's parameters and a target's freeze is data; storage
 * made for each of the parameters (a block over them) or in a function that makes a weight by
 * hand (requires_grad_() turning a gradient on) is not */
static void test_main_beside_parameters(void **state)
{
    (void)state;
    data(k_main);
    assert_true(on(4) && on(5) && on(10)); /* the buffer's lines */
    assert_false(on(3));                   /* the line naming them */
    for (int l = 7; l <= 9; l++)           /* a block over them, and what lies in it */
        assert_false(on(l));
    for (int l = 14; l <= 16; l++) /* a weight made by hand in the function */
        assert_false(on(l));
    assert_true(on(17)); /* the module's own lines the same */
    assert_false(on(18));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dqn),
        cmocka_unit_test(test_not_data),
        cmocka_unit_test(test_main_beside_parameters),
        cmocka_unit_test(test_reaching),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
