/* test_joinsrc.c — a line of a recorded script that joins tensors along their first dimension
 * (analyzer/model/facts/joinsrc.c): a DPO loop's torch.cat([chosen, rejected], dim=0) makes one
 * token batch of both parts' sequences; a join along another dimension, of a comprehension or of
 * an unpacked list is none it can count; a line that folds a batch's leading dimensions (a video
 * model's clips into frames) is told apart from one that keeps them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "joinsrc.h"

static int joined(const char *s)
{
    size_t at = 0, end = 0;
    int k = joinsrc_code(s, strlen(s), &at, &end);
    if (k) {
        assert_true(end > at && end <= strlen(s));
        assert_int_equal(s[at], 't');
        assert_int_equal(s[end - 1], ')');
    }
    return k;
}

static void test_joins_along_the_batch(void **state)
{
    (void)state;
    assert_int_equal(joined("ids = torch.cat([chosen, rejected], dim=0).to(dev)"), 2);
    assert_int_equal(joined("ids = torch.cat([chosen, rejected])"), 2);
    assert_int_equal(joined("ids = torch.cat((a, b, c), 0)"), 3);
    assert_int_equal(joined("x = torch.concat([a[0], b[1]], axis = 0)"), 2);
    assert_int_equal(joined("x = torch.vstack([a, b])"), 2);
    assert_int_equal(joined("x = torch.cat([pad(a, 1), b,], dim=0)"), 2);
}

static void test_not_a_join_of_sequences(void **state)
{
    (void)state;
    assert_int_equal(joined("ids = torch.cat([prompt, response], dim=1)"), 0);
    assert_int_equal(joined("ids = torch.cat([prompt, response], -1)"), 0);
    assert_int_equal(joined("ids = torch.cat([x for x in parts])"), 0);
    assert_int_equal(joined("ids = torch.cat([*parts])"), 0);
    assert_int_equal(joined("ids = torch.cat(parts, dim=0)"), 0);
    assert_int_equal(joined("ids = torch.cat([only])"), 0);
    assert_int_equal(joined("ids = mytorch.cat([a, b])"), 0);
    assert_int_equal(joined("x = torch.vstack([a, b], out=y)"), 0);
    assert_int_equal(joined("ids = torch.cat([a, b], dim=0"), 0); /* (unclosed) */
}

static int folds(const char *s)
{
    size_t at = 0, end = 0;
    int k = joinsrc_fold_code(s, strlen(s), &at, &end);
    if (k) {
        assert_true(end > at && end <= strlen(s));
        assert_int_equal(s[end - 1], ')');
    }
    return k;
}

/* a video model's forward folds B clips of T frames into B·T images (TSM's input.view((-1, 3) +
 * input.size()[-2:]), x.view(b * t, c, h, w), x.flatten(0, 1)); other reshapes keep the samples */
static void test_folds_the_batch(void **state)
{
    (void)state;
    assert_int_equal(
        folds("out = self.base(input.view(-1, 3, input.size()[-2], input.size()[-1]))"), 1);
    assert_int_equal(folds("out = self.base(input.view((-1, 3) + input.size()[-2:]))"), 1);
    assert_int_equal(folds("x = x.reshape(b * t, c, h, w)"), 1);
    assert_int_equal(folds("x = self.cnn(x.flatten(0, 1))"), 1);
    assert_int_equal(folds("x = x.view(x.size(0), -1)"), 0);
    assert_int_equal(folds("x = x.view(b, t * c, h, w)"), 0);
    assert_int_equal(folds("x = x.flatten(1)"), 0);
    assert_int_equal(folds("x = x.view(-1x, 3)"), 0);
    assert_int_equal(folds("x = self.conv1(x)"), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_joins_along_the_batch),
        cmocka_unit_test(test_not_a_join_of_sequences),
        cmocka_unit_test(test_folds_the_batch),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
