/* libsimtorch.c — SIMULATION helper for simtorch (examples/sim/simtorch; no GPU, no PyTorch):
 * loads the fake libc10_cuda.so (tests/fakecuda/c10), whose caching allocator the preload finds
 * and attaches to exactly as to PyTorch's; gives every simulated ATen operation a native frame
 * named like PyTorch's (at::_ops::mm::call ...), so stacks read as a real run's; runs the
 * backward on a thread named pt_autograd_0 (torch::autograd::Engine::thread_main) that calls
 * back into Python. Python calls it through ctypes (GIL released, like PyTorch's bindings). */
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

typedef int sim_cuda_err;
extern sim_cuda_err cudaFree(void *p);
extern sim_cuda_err cudaHostAlloc(void **p, size_t size, unsigned int flags);
extern sim_cuda_err cudaMemGetInfo(size_t *free_b, size_t *total_b);
extern sim_cuda_err cudaGetLastError(void);

#define SIM_EXPORT __attribute__((visibility("default")))

static struct {
    void *(*malloc_fn)(size_t);
    void (*free_fn)(void *);
    const char *(*stats_fn)(uint64_t *);
    const char *(*oom_fn)(void);
    void (*empty_fn)(void);
    char err[512];
} C10;

/* sim_init: loads the fake libc10_cuda.so at c10_path (its allocator's backend follows
 * PYTORCH_CUDA_ALLOC_CONF, read when it loads, as PyTorch's) and creates the CUDA context
 * (cudaFree(NULL), as PyTorch's lazy init does). 0 ok, -1 the library or a symbol is missing
 * (sim_error() says which), else the CUDA error. */
SIM_EXPORT int sim_init(const char *c10_path)
{
    void *h = dlopen(c10_path, RTLD_NOW | RTLD_GLOBAL);
    if (!h) {
        snprintf(C10.err, sizeof C10.err, "%s", dlerror());
        return -1;
    }
    C10.malloc_fn = (void *(*)(size_t))dlsym(h, "fake_c10_malloc");
    C10.free_fn = (void (*)(void *))dlsym(h, "fake_c10_free");
    C10.stats_fn = (const char *(*)(uint64_t *))dlsym(h, "fake_c10_memory_stats");
    C10.oom_fn = (const char *(*)(void))dlsym(h, "fake_c10_oom_message");
    C10.empty_fn = (void (*)(void))dlsym(h, "fake_c10_empty_cache");
    if (!C10.malloc_fn || !C10.free_fn || !C10.stats_fn || !C10.oom_fn || !C10.empty_fn) {
        snprintf(C10.err, sizeof C10.err, "%s lacks the fake_c10_* entry points", c10_path);
        return -1;
    }
    return cudaFree(NULL);
}

/* ---- allocation: one native frame per operation ------------------------------------------ */
static volatile uint64_t g_zero; /* read after each call: no operation frame is a tail call */

__attribute__((noinline)) static uint64_t device_alloc(uint64_t n)
{
    return (uint64_t)(uintptr_t)C10.malloc_fn((size_t)n);
}

/* SIM_OP(len, name): `uint64_t at::_ops::name::call(unsigned long)` (Itanium-mangled so
 * stacks demangle like PyTorch's); allocates n bytes; 0 after an out-of-memory error. */
#define SIM_OP(len, name)                                                                          \
    SIM_EXPORT __attribute__((noinline))                                                           \
    uint64_t sim_op_##name(uint64_t n) __asm__("_ZN2at4_ops" #len #name "4callEm");                \
    uint64_t sim_op_##name(uint64_t n)                                                             \
    {                                                                                              \
        return device_alloc(n) + g_zero;                                                           \
    }
SIM_OP(2, mm)
SIM_OP(3, bmm)
SIM_OP(5, addmm)
SIM_OP(8, _to_copy)
SIM_OP(5, clone)
SIM_OP(3, cat)
SIM_OP(5, stack)
SIM_OP(5, zeros)
SIM_OP(10, zeros_like)
SIM_OP(9, full_like)
SIM_OP(9, ones_like)
SIM_OP(10, empty_like)
SIM_OP(4, full)
SIM_OP(6, arange)
SIM_OP(11, randint_low)
SIM_OP(5, randn)
SIM_OP(9, embedding)
SIM_OP(24, embedding_dense_backward)
SIM_OP(17, native_layer_norm)
SIM_OP(26, native_layer_norm_backward)
SIM_OP(35, _scaled_dot_product_cudnn_attention)
SIM_OP(44, _scaled_dot_product_cudnn_attention_backward)
/* the casts autocast makes of scaled_dot_product_attention's inputs run under that op's frame
 * (PyTorch's autocast wrapper of the op calls _to_copy) */
SIM_EXPORT __attribute__((noinline)) uint64_t
sim_op_sdpa_cast(uint64_t n) __asm__("_ZN2at4_ops28scaled_dot_product_attention4callEm");
uint64_t sim_op_sdpa_cast(uint64_t n)
{
    return sim_op__to_copy(n) + g_zero;
}
SIM_OP(12, _log_softmax)
SIM_OP(26, _log_softmax_backward_data)
SIM_OP(8, _softmax)
SIM_OP(22, _softmax_backward_data)
SIM_OP(16, nll_loss_forward)
SIM_OP(17, nll_loss_backward)
SIM_OP(4, gelu)
SIM_OP(13, gelu_backward)
SIM_OP(4, silu)
SIM_OP(13, silu_backward)
SIM_OP(4, relu)
SIM_OP(18, threshold_backward)
SIM_OP(4, tanh)
SIM_OP(13, tanh_backward)
SIM_OP(10, add_Tensor)
SIM_OP(10, sub_Tensor)
SIM_OP(10, mul_Tensor)
SIM_OP(10, mul_Scalar)
SIM_OP(10, div_Tensor)
SIM_OP(3, neg)
SIM_OP(17, pow_Tensor_Scalar)
SIM_OP(5, rsqrt)
SIM_OP(4, sqrt)
SIM_OP(3, cos)
SIM_OP(3, sin)
SIM_OP(8, mean_dim)
SIM_OP(15, sum_dim_IntList)
SIM_OP(9, ne_Scalar)
SIM_OP(5, isnan)
SIM_OP(5, isinf)
SIM_OP(14, native_dropout)
SIM_OP(23, native_dropout_backward)
SIM_OP(15, constant_pad_nd)
SIM_OP(14, slice_backward)
SIM_OP(17, replication_pad1d)
SIM_OP(26, replication_pad1d_backward)
SIM_OP(15, unfold_backward)
SIM_OP(14, var_correction)
SIM_OP(17, cudnn_convolution)
SIM_OP(20, convolution_backward)
SIM_OP(16, cudnn_batch_norm)
SIM_OP(25, cudnn_batch_norm_backward)
SIM_OP(23, max_pool2d_with_indices)
SIM_OP(32, max_pool2d_with_indices_backward)
SIM_OP(20, _adaptive_avg_pool2d)
SIM_OP(29, _adaptive_avg_pool2d_backward)
SIM_OP(13, _foreach_sqrt)
SIM_OP(17, _foreach_add_List)
SIM_OP(20, _foreach_norm_Scalar)
SIM_OP(18, linalg_vector_norm)
SIM_OP(10, reciprocal)
SIM_OP(5, clamp)
SIM_OP(4, norm)
SIM_OP(3, exp)
SIM_OP(12, index_Tensor)
SIM_OP(17, native_group_norm)
SIM_OP(26, native_group_norm_backward)
SIM_OP(18, upsample_nearest2d)
SIM_OP(27, upsample_nearest2d_backward)
SIM_OP(8, mse_loss)
SIM_OP(17, mse_loss_backward)

/* The cuBLAS workspaces a thread's first matrix products get (through the caching allocator,
 * as PyTorch's): the handle's and cuBLASLt's. */
SIM_EXPORT __attribute__((noinline)) uint64_t
sim_blas_handle_ws(uint64_t n) __asm__("_ZN2at4cuda24getCurrentCUDABlasHandleEv");
uint64_t sim_blas_handle_ws(uint64_t n)
{
    return device_alloc(n) + g_zero;
}
SIM_EXPORT __attribute__((noinline)) uint64_t
sim_blaslt_ws(uint64_t n) __asm__("_ZN2at4cuda22getCUDABlasLtWorkspaceEv");
uint64_t sim_blaslt_ws(uint64_t n)
{
    return device_alloc(n) + g_zero;
}

/* Tensor.to / .cuda() / .cpu() / .float() / .half() / .bfloat16() / .long(): called straight from
 * Python (no Python frame of simtorch's own, as PyTorch's builtin methods leave none), so the
 * caller is the innermost Python frame when the copy is allocated. The planner (Python) says how
 * many bytes the copy needs and which overload of aten::to the call is: n * 4 + SIM_TO_*; -1 none
 * (the tensor itself), -3 a host copy, other negatives an error it keeps. The copy is made under
 * the overload's dispatch frame and at::native::to, as in PyTorch: to_dtype_layout for a device
 * alone (.to(device), .cuda(): the binding's TensorOptions), to_dtype for a dtype alone (.float(),
 * .to(dtype): a cast on the tensor's own device; PyTorch's to_device, for both, is not simulated:
 * simtorch's .to() takes one). Returns the address, 1 (itself), 3 (host), 2 (error) or 0 (out of
 * memory). */
enum { SIM_TO_LAYOUT, SIM_TO_DTYPE };
typedef int64_t (*sim_planner)(void *self, void *arg);
static sim_planner g_planner;
SIM_EXPORT void sim_set_planner(sim_planner p)
{
    g_planner = p;
}
SIM_EXPORT __attribute__((noinline)) uint64_t
sim_native_to(uint64_t n) __asm__("_ZN2at6native2toEm");
uint64_t sim_native_to(uint64_t n)
{
    return sim_op__to_copy(n) + g_zero;
}
/* SIM_TO(len, name): `at::_ops::name::call(unsigned long)`, an overload's dispatch of aten::to */
#define SIM_TO(len, name)                                                                          \
    SIM_EXPORT __attribute__((noinline))                                                           \
    uint64_t sim_##name(uint64_t n) __asm__("_ZN2at4_ops" #len #name "4callEm");                   \
    uint64_t sim_##name(uint64_t n)                                                                \
    {                                                                                              \
        return sim_native_to(n) + g_zero;                                                          \
    }
SIM_TO(15, to_dtype_layout)
SIM_TO(8, to_dtype)
SIM_EXPORT __attribute__((noinline)) uint64_t
sim_tensor_to(void *self, void *arg) __asm__("_ZN5torch8autograd14THPVariable_toEv");
uint64_t sim_tensor_to(void *self, void *arg)
{
    int64_t n = g_planner ? g_planner(self, arg) : -2;
    if (n == -1 || n == -3)
        return (uint64_t)-n;
    if (n < 0)
        return 2;
    uint64_t bytes = (uint64_t)n >> 2;
    if ((n & 3) == SIM_TO_DTYPE)
        return sim_to_dtype(bytes) + g_zero;
    return sim_to_dtype_layout(bytes) + g_zero;
}

/* Tensor.clone: called straight from Python as Tensor.to is (PyTorch's builtin method leaves no
 * Python frame: a checkpoint's `p.detach().clone()` is the caller's), under clone's frame; the
 * planner is asked with a null argument (the tensor's own device and type). */
SIM_EXPORT __attribute__((noinline)) uint64_t
sim_tensor_clone(void *self, void *arg) __asm__("_ZN2at6native5cloneEv");
uint64_t sim_tensor_clone(void *self, void *arg)
{
    int64_t n = g_planner ? g_planner(self, arg) : -2;
    if (n == -3)
        return 3;
    if (n < 0)
        return 2;
    return sim_op_clone((uint64_t)n >> 2) + g_zero;
}

/* sim_alloc: an allocation no named operation makes. */
SIM_EXPORT uint64_t sim_alloc(uint64_t n)
{
    return device_alloc(n) + g_zero;
}

/* sim_free: returns a tensor's memory to the allocator (0 is ignored). */
SIM_EXPORT void sim_free(uint64_t p)
{
    if (p)
        C10.free_fn((void *)(uintptr_t)p);
}

/* sim_empty_cache: torch.cuda.empty_cache(): the allocator's cached segments no tensor uses
 * go back to the device */
SIM_EXPORT void sim_empty_cache(void)
{
    C10.empty_fn();
}

/* sim_stats: out[12] as fake_c10_memory_stats (requested, allocated, reserved current and
 * peak; device allocs, device frees, retries, OOMs, allocations, frees); returns the backend's
 * name. */
SIM_EXPORT const char *sim_stats(uint64_t out[12])
{
    return C10.stats_fn(out);
}

/* sim_error: the last out-of-memory message (or sim_init's failure). */
SIM_EXPORT const char *sim_error(void)
{
    const char *m = C10.oom_fn ? C10.oom_fn() : "";
    return m && *m ? m : C10.err;
}

/* sim_host_alloc: pinned host memory (cudaHostAlloc); 0 on failure. */
SIM_EXPORT uint64_t sim_host_alloc(uint64_t n)
{
    void *p = NULL;
    if (cudaHostAlloc(&p, n, 0) != 0) {
        cudaGetLastError();
        return 0;
    }
    return (uint64_t)(uintptr_t)p;
}

/* sim_mem_get_info: cudaMemGetInfo into out[0] free, out[1] total; returns the CUDA error. */
SIM_EXPORT int sim_mem_get_info(uint64_t out[2])
{
    size_t f = 0, t = 0;
    int e = cudaMemGetInfo(&f, &t);
    out[0] = f, out[1] = t;
    return e;
}

/* ---- the backward thread ------------------------------------------------------------------ */
typedef int (*sim_task)(void);
static struct {
    pthread_mutex_t lock;
    pthread_cond_t cv;
    pthread_t th;
    int started, pending, done, result;
    sim_task task;
} A = {.lock = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};

/* The device thread's loop: runs each task handed over (a Python callback: the engine). */
__attribute__((noinline)) void *
sim_engine_thread_main(void *arg) __asm__("_ZN5torch8autograd6Engine11thread_mainEv");
void *sim_engine_thread_main(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&A.lock);
    for (;;) {
        while (!A.pending)
            pthread_cond_wait(&A.cv, &A.lock);
        A.pending = 0;
        sim_task t = A.task;
        pthread_mutex_unlock(&A.lock);
        int r = t();
        pthread_mutex_lock(&A.lock);
        A.result = r;
        A.done = 1;
        pthread_cond_broadcast(&A.cv);
    }
    return NULL;
}

/* sim_backward: runs task on the autograd thread "pt_autograd_0" (created once and kept, like
 * PyTorch's device thread) while the caller waits; returns the task's result, -2 if the
 * thread cannot be created. */
SIM_EXPORT int sim_backward(sim_task task)
{
    pthread_mutex_lock(&A.lock);
    if (!A.started) {
        if (pthread_create(&A.th, NULL, sim_engine_thread_main, NULL) != 0) {
            pthread_mutex_unlock(&A.lock);
            return -2;
        }
        pthread_setname_np(A.th, "pt_autograd_0");
        pthread_detach(A.th);
        A.started = 1;
    }
    A.task = task;
    A.done = 0;
    A.pending = 1;
    pthread_cond_broadcast(&A.cv);
    while (!A.done)
        pthread_cond_wait(&A.cv, &A.lock);
    int r = A.result;
    pthread_mutex_unlock(&A.lock);
    return r;
}
