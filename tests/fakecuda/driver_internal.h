/* driver_internal.h — shared state of the fake CUDA driver (libcuda.so.1) built for tests:
 * simulated devices, one global lock, the fake address-space allocator and the error table.
 * Only tests/fakecuda/driver*.c include this; nothing here is exported (libcuda.map). */
#ifndef FK_DRIVER_INTERNAL_H
#define FK_DRIVER_INTERNAL_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "../../preload/cuda_abi.h"

/* Driver error codes beyond the ones in cuda_abi.h (kept here as macros so that later
 * additions to cuda_abi.h's enum cannot clash). */
#define FK_ERR_INVALID_IMAGE 200
#define FK_ERR_FILE_NOT_FOUND 301
#define FK_ERR_INVALID_HANDLE 400
#define FK_ERR_NOT_MAPPED 211
#define FK_ERR_ALREADY_MAPPED 208
#define FK_ERR_HOST_MEMORY_ALREADY_REGISTERED 712
#define FK_ERR_HOST_MEMORY_NOT_REGISTERED 713

/* Every driver error the fake can return: X(code, NAME, "description"). */
#define FK_ERRORS(X)                                                                               \
    X(0, CUDA_SUCCESS, "no error")                                                                 \
    X(1, CUDA_ERROR_INVALID_VALUE, "invalid argument")                                             \
    X(2, CUDA_ERROR_OUT_OF_MEMORY, "out of memory")                                                \
    X(3, CUDA_ERROR_NOT_INITIALIZED, "initialization error")                                       \
    X(4, CUDA_ERROR_DEINITIALIZED, "driver shutting down")                                         \
    X(100, CUDA_ERROR_NO_DEVICE, "no CUDA-capable device is detected")                             \
    X(101, CUDA_ERROR_INVALID_DEVICE, "invalid device ordinal")                                    \
    X(200, CUDA_ERROR_INVALID_IMAGE, "device kernel image is invalid")                             \
    X(201, CUDA_ERROR_INVALID_CONTEXT, "invalid device context")                                   \
    X(208, CUDA_ERROR_ALREADY_MAPPED, "resource already mapped")                                   \
    X(211, CUDA_ERROR_NOT_MAPPED, "resource not mapped")                                           \
    X(301, CUDA_ERROR_FILE_NOT_FOUND, "file not found")                                            \
    X(400, CUDA_ERROR_INVALID_HANDLE, "invalid resource handle")                                   \
    X(500, CUDA_ERROR_NOT_FOUND, "named symbol not found")                                         \
    X(712, CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED,                                              \
      "part or all of the requested memory range is already mapped")                               \
    X(713, CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED,                                                  \
      "pointer does not correspond to a registered memory region")                                 \
    X(801, CUDA_ERROR_NOT_SUPPORTED, "operation not supported")                                    \
    X(999, CUDA_ERROR_UNKNOWN, "unknown error")

#define FK_MAX_DEVICES 8
#define FK_GRANULARITY (2ull << 20) /* VMM granularity and module rounding */
#define FK_ALIGN 512ull             /* linear allocation alignment */

/* Kinds of live address ranges. */
enum fk_kind { FK_LINEAR, FK_LINEAR32, FK_MANAGED, FK_ASYNC, FK_PITCH, FK_RESERVE };

/* One live address range on a device. `charged` is what it costs against capacity. */
struct fk_range {
    uint64_t addr, size, charged;
    int kind;
};

/* The live ranges of one fake address space [base, limit) (driver_space.c). */
struct fk_node;
struct fk_space {
    uint64_t base, limit;
    struct fk_node *root;
    size_t n;
    int no_reuse; /* FAKECUDA_NO_REUSE=1: never hand out an address below hwm again */
    uint64_t hwm; /* end of the highest range ever handed out */
};

struct fk_ctx {
    uint32_t magic; /* FK_CTX_MAGIC while alive */
    int dev;
    int primary;
};
#define FK_CTX_MAGIC 0xC7C7C7C7u

struct fk_pool {
    int dev;
};

struct fk_device {
    uint64_t capacity, used;
    int primary_refs;        /* cuDevicePrimaryCtxRetain count */
    struct fk_ctx primary;   /* the primary context object */
    struct fk_pool pool;     /* default memory pool */
    struct fk_space space;   /* 64-bit VA */
    struct fk_space space32; /* below 4 GiB, for the v1 (32-bit) API */
};

struct fk_driver {
    pthread_mutex_t lock;
    int initialized; /* cuInit called */
    int configured;  /* env read */
    int ndev;
    uint64_t ctx_bytes;
    int log;
    int raise_sig; /* FAKECUDA_RAISE=SIG: cuCtxGetDevice raises SIG first (0: never) */
    struct fk_device dev[FK_MAX_DEVICES];
};

extern struct fk_driver fk_drv;

/* fk_configure: reads FAKECUDA_* once (idempotent, caller holds no lock). */
void fk_configure(void);
/* fk_lock / fk_unlock: the one driver mutex. */
void fk_lock(void);
void fk_unlock(void);
/* fk_log: printf-style debug line to stderr when FAKECUDA_LOG=1. */
void fk_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* fk_current_dev: device of the calling thread's current context, or -1 if none. */
int fk_current_dev(void);
/* fk_charge: adds `bytes` to device `d`'s usage; 0 or CUDA_ERROR_OUT_OF_MEMORY (nothing
 * charged). Caller holds the lock. fk_uncharge: subtracts (clamped at 0). */
CUresult fk_charge(int d, uint64_t bytes);
void fk_uncharge(int d, uint64_t bytes);
/* fk_space_alloc: records a range of `size` bytes (rounded up to `align`) at the lowest free
 * aligned address of `s` (first fit, so freed ranges are reused), or exactly at `want` when
 * want != 0; returns the address, or 0 when there is no room (or `want` overlaps).
 * fk_space_find: the range starting exactly at addr, or NULL. fk_space_find_containing: the
 * range containing addr, or NULL. fk_space_remove: drops a range that find returned (its
 * pointer is invalid afterwards). Caller holds the lock for all of them. */
uint64_t fk_space_alloc(struct fk_space *s, uint64_t size, uint64_t align, uint64_t want, int kind,
                        uint64_t charged);
struct fk_range *fk_space_find(const struct fk_space *s, uint64_t addr);
struct fk_range *fk_space_find_containing(const struct fk_space *s, uint64_t addr);
void fk_space_remove(struct fk_space *s, struct fk_range *r);
/* fk_dev_of_addr: device whose 64-bit space contains addr, or -1. */
int fk_dev_of_addr(uint64_t addr);
/* fk_ready: CUDA_SUCCESS if cuInit ran, else CUDA_ERROR_NOT_INITIALIZED. */
CUresult fk_ready(void);

#endif
