/* categories.c — names and helpers for the category X-macro (categories.h). */
#include "categories.h"

#include "bytes_sat.h"

#include <string.h>

static const char *const cat_names[] = {
#define VT_CAT_NAME(e, name, key, doc) name,
    VT_CATEGORIES(VT_CAT_NAME)
#undef VT_CAT_NAME
};
static const char *const cat_keys[] = {
#define VT_CAT_KEY(e, name, key, doc) key,
    VT_CATEGORIES(VT_CAT_KEY)
#undef VT_CAT_KEY
};
static const char *const cat_docs[] = {
#define VT_CAT_DOC(e, name, key, doc) doc,
    VT_CATEGORIES(VT_CAT_DOC)
#undef VT_CAT_DOC
};

const char *category_name(category c)
{
    return (unsigned)c < CAT_COUNT ? cat_names[c] : "?";
}

const char *category_key(category c)
{
    return (unsigned)c < CAT_COUNT ? cat_keys[c] : "?";
}

const char *category_doc(category c)
{
    return (unsigned)c < CAT_COUNT ? cat_docs[c] : "?";
}

category category_from_key(const char *key)
{
    if (!key)
        return CAT_COUNT;
    for (int i = 0; i < CAT_COUNT; i++)
        if (strcmp(key, cat_keys[i]) == 0 || strcmp(key, cat_names[i]) == 0)
            return (category)i;
    return CAT_COUNT;
}

uint64_t cat_breakdown_total(const cat_breakdown *b)
{
    uint64_t t = 0;
    for (int i = 0; i < CAT_COUNT; i++)
        t = bytes_add(t, b->bytes[i]); /* (a hostile trace's bytes reach 2^64: held, not wrapped) */
    return t;
}

int category_tensor(category c)
{
    return c != CAT_CACHE && c != CAT_CONTEXT && c != CAT_KERNEL_CODE && c != CAT_EXTERNAL;
}

uint64_t cat_breakdown_tensors(const cat_breakdown *b)
{
    uint64_t t = 0;
    for (int i = 0; i < CAT_COUNT; i++)
        if (category_tensor((category)i))
            t = bytes_add(t, b->bytes[i]);
    return t;
}
