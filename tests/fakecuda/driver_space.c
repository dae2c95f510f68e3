/* driver_space.c — the fake driver's address spaces: live ranges of one device's fake VA in a
 * treap keyed by address, each subtree knowing its largest internal gap, so first-fit
 * allocation (lowest free address: freed ranges are reused; with FAKECUDA_NO_REUSE=1 above every
 * range handed out before), lookup and removal are O(log n). */
#include <stdlib.h>

#include "driver_internal.h"

struct fk_node {
    struct fk_range r;
    struct fk_node *left, *right;
    uint32_t prio;
    uint64_t lo, hi, maxgap; /* subtree: lowest start, highest end, largest gap inside */
};

/* prio_next: xorshift priorities (treap balance); called with the lock held. */
static uint32_t prio_next(void)
{
    static uint32_t x = 2463534242u;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    return x;
}

/* fix: recomputes n's subtree summary from its children. */
static void fix(struct fk_node *n)
{
    uint64_t g = 0;
    n->lo = n->r.addr;
    n->hi = n->r.addr + n->r.size;
    if (n->left) {
        n->lo = n->left->lo;
        g = n->left->maxgap;
        if (n->r.addr - n->left->hi > g)
            g = n->r.addr - n->left->hi;
    }
    if (n->right) {
        n->hi = n->right->hi;
        if (n->right->maxgap > g)
            g = n->right->maxgap;
        if (n->right->lo - (n->r.addr + n->r.size) > g)
            g = n->right->lo - (n->r.addr + n->r.size);
    }
    n->maxgap = g;
}

/* split: t -> (*l: addr < key, *r: addr >= key). */
static void split(struct fk_node *t, uint64_t key, struct fk_node **l, struct fk_node **r)
{
    if (!t) {
        *l = *r = NULL;
    } else if (t->r.addr < key) {
        split(t->right, key, &t->right, r);
        fix(t);
        *l = t;
    } else {
        split(t->left, key, l, &t->left);
        fix(t);
        *r = t;
    }
}

/* merge: every address in a is below every address in b. */
static struct fk_node *merge(struct fk_node *a, struct fk_node *b)
{
    if (!a)
        return b;
    if (!b)
        return a;
    if (a->prio > b->prio) {
        a->right = merge(a->right, b);
        fix(a);
        return a;
    }
    b->left = merge(a, b->left);
    fix(b);
    return b;
}

/* fits: the aligned start inside gap [g0, g1) for `size` bytes, or 0. */
static uint64_t fits(uint64_t g0, uint64_t g1, uint64_t size, uint64_t align)
{
    uint64_t a = (g0 + align - 1) / align * align;
    return a >= g0 && a < g1 && g1 - a >= size ? a : 0;
}

/* first_fit: lowest fitting address in subtree t, whose in-order predecessor ends at prev. */
static uint64_t first_fit(const struct fk_node *t, uint64_t prev, uint64_t size, uint64_t align)
{
    if (!t || (t->lo - prev < size && t->maxgap < size))
        return 0;
    uint64_t a = first_fit(t->left, prev, size, align);
    if (a)
        return a;
    if ((a = fits(t->left ? t->left->hi : prev, t->r.addr, size, align)) != 0)
        return a;
    return first_fit(t->right, t->r.addr + t->r.size, size, align);
}

/* insert: links a new node for r; 0 or -1 (no memory). */
static int insert(struct fk_space *s, struct fk_range r)
{
    struct fk_node *n = calloc(1, sizeof *n), *l, *g;
    if (!n)
        return -1;
    n->r = r;
    n->prio = prio_next();
    fix(n);
    split(s->root, r.addr, &l, &g);
    s->root = merge(merge(l, n), g);
    s->n++;
    return 0;
}

uint64_t fk_space_alloc(struct fk_space *s, uint64_t size, uint64_t align, uint64_t want, int kind,
                        uint64_t charged)
{
    if (size == 0 || align == 0 || size > s->limit - s->base)
        return 0;
    size = (size + align - 1) / align * align;
    struct fk_range r = {0, size, charged, kind};
    if (want) {
        if (want % align || want < s->base || want > s->limit - size)
            return 0;
        if (fk_space_find_containing(s, want))
            return 0;
        /* nor may a range start inside [want, want+size) */
        const struct fk_node *t = s->root;
        while (t) { /* smallest start >= want */
            if (t->r.addr >= want) {
                if (t->r.addr < want + size)
                    return 0;
                t = t->left;
            } else {
                t = t->right;
            }
        }
        r.addr = want;
        if (insert(s, r))
            return 0;
        if (want + size > s->hwm)
            s->hwm = want + size;
        return want;
    }
    uint64_t a = s->root && !s->no_reuse ? first_fit(s->root, s->base, size, align) : 0, top;
    if (!a) {
        top = s->root ? s->root->hi : s->base;
        if (s->no_reuse && s->hwm > top)
            top = s->hwm; /* a freed range is never handed out again */
        a = fits(top, s->limit, size, align);
    }
    if (!a)
        return 0;
    r.addr = a;
    if (insert(s, r))
        return 0;
    if (a + size > s->hwm)
        s->hwm = a + size;
    return a;
}

struct fk_range *fk_space_find(const struct fk_space *s, uint64_t addr)
{
    struct fk_node *t = s->root;
    while (t && t->r.addr != addr)
        t = addr < t->r.addr ? t->left : t->right;
    return t ? &t->r : NULL;
}

struct fk_range *fk_space_find_containing(const struct fk_space *s, uint64_t addr)
{
    struct fk_node *t = s->root, *best = NULL;
    while (t) { /* greatest start <= addr */
        if (t->r.addr <= addr) {
            best = t;
            t = t->right;
        } else {
            t = t->left;
        }
    }
    return best && addr - best->r.addr < best->r.size ? &best->r : NULL;
}

void fk_space_remove(struct fk_space *s, struct fk_range *r)
{
    uint64_t addr = r->addr;
    struct fk_node *l, *m, *g;
    split(s->root, addr, &l, &m);
    split(m, addr + 1, &m, &g);
    free(m); /* exactly the node holding r */
    s->root = merge(l, g);
    s->n--;
}
