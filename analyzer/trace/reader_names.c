/* reader_names.c — what the reader knows of ids (reader.h): each API id's name, layer, kind
 * and space, kind / space / record type names, all from trace_format.h's X-macro lists. The
 * streaming reader itself is reader.c. */
#include "reader.h"

typedef struct api_info {
    const char *name;
    signed char layer, kind, space;
} api_info;

static const api_info reader_apis[256] = {
#define READER_API_ROW(name, id, layer, kind, space)                                               \
    [id] = {#name, layer, VT_KIND_##kind, VT_SPACE_##space},
    VT_APIS(READER_API_ROW)
#undef READER_API_ROW
};

static const char *const reader_kind_names[] = {
#define READER_KIND_NAME(k) #k,
    VT_KINDS(READER_KIND_NAME)
#undef READER_KIND_NAME
};

static const char *const reader_space_names[] = {
#define READER_SPACE_NAME(s) #s,
    VT_SPACES(READER_SPACE_NAME)
#undef READER_SPACE_NAME
};

const char *reader_api_name(unsigned api)
{
    return api < 256 ? reader_apis[api].name : NULL;
}

/* layer | (kind ^ OTHER) << 2 | space << 6 of each known id: an unknown id's 0 reads as layer 0,
 * kind OTHER, space NONE (reader.h's inline reader_api_layer / _kind / _space) */
const uint16_t reader_api_bits[256] = {
#define READER_API_BITS(name, id, layer, kind, space)                                              \
    [id] = (uint16_t)((layer) | (VT_KIND_##kind ^ VT_KIND_OTHER) << 2 | VT_SPACE_##space << 6),
    VT_APIS(READER_API_BITS)
#undef READER_API_BITS
};

const char *reader_kind_name(int kind)
{
    int n = (int)(sizeof reader_kind_names / sizeof *reader_kind_names);
    return kind >= 0 && kind < n ? reader_kind_names[kind] : "?";
}

const char *reader_space_name(int space)
{
    int n = (int)(sizeof reader_space_names / sizeof *reader_space_names);
    return space >= 0 && space < n ? reader_space_names[space] : "?";
}

const char *reader_type_name(unsigned type)
{
    switch (type) {
    case VT_REC_PROCESS:
        return "process";
    case VT_REC_CONFIG:
        return "config";
    case VT_REC_DEVICE:
        return "device";
    case VT_REC_THREAD:
        return "thread";
    case VT_REC_ALLOC:
        return "alloc";
    case VT_REC_FREE:
        return "free";
    case VT_REC_STACK:
        return "stack";
    case VT_REC_CODE:
        return "code";
    case VT_REC_SYMBOL:
        return "symbol";
    case VT_REC_MODULE:
        return "module";
    case VT_REC_MEMINFO:
        return "meminfo";
    case VT_REC_OOM:
        return "oom";
    case VT_REC_PYINFO:
        return "pyinfo";
    case VT_REC_TRAILER:
        return "trailer";
    case VT_REC_FILE:
        return "file";
    case VT_REC_SLOT:
        return "slot";
    case VT_REC_CHUNK:
        return "chunk";
    case VT_REC_SNAPSHOT:
        return "snapshot";
    case VT_REC_STEP:
        return "step";
    default:
        return "unknown";
    }
}
