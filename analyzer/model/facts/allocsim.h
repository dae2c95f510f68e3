/* allocsim.h — PyTorch's caching allocator under its default rules, simulated (allocsim.c): a
 * request placed where the allocator would place it, so that a sequence of requests and frees
 * gives the bytes it would reserve. The rules are c10/cuda/CUDACachingAllocator.cpp's: requests
 * round up to 512 B; those of at most 1 MiB come from the small pool's 2 MiB segments, those
 * under 10 MiB from 20 MiB segments, larger ones get a segment of their own rounded up to 2 MiB;
 * a free block is found best-fit (smallest, then lowest address) in its pool and split when the
 * rest is at least 512 B (small pool) or more than 1 MiB (large pool); a freed block merges with
 * its free neighbours. No device limit: nothing is released (replay_again.c asks what a step
 * would reserve, not whether it fits). */
#ifndef VT_ANALYZER_ALLOCSIM_H
#define VT_ANALYZER_ALLOCSIM_H

#include <stddef.h>
#include <stdint.h>

typedef struct allocsim allocsim;

/* allocsim_block / allocsim_segment: the rules above for one request of n bytes: the block it is
 * rounded to, and the segment cudaMalloc is asked for when no free block serves that block */
uint64_t allocsim_block(uint64_t n);
uint64_t allocsim_segment(uint64_t block);

/* allocsim_new: an empty allocator; NULL when out of memory. */
allocsim *allocsim_new(void);
void allocsim_delete(allocsim *a);
/* allocsim_alloc: a request of n bytes placed; its handle (> 0), or 0 when out of memory (the
 * simulation's own: allocsim_failed says so from then on). */
uint32_t allocsim_alloc(allocsim *a, uint64_t n);
/* allocsim_free: the block of handle h freed (0, or one not allocated: nothing). */
void allocsim_free(allocsim *a, uint32_t h);
/* allocsim_reserved / allocsim_requested: the bytes in segments; the bytes requested by the
 * blocks allocated now. */
uint64_t allocsim_reserved(const allocsim *a);
uint64_t allocsim_requested(const allocsim *a);
/* allocsim_where: the address of the block of handle h (the segments laid out from 0, one after
 * another) and its size in *size; 0 and size 0 for a handle of none. */
uint64_t allocsim_where(const allocsim *a, uint32_t h, uint64_t *size);
/* allocsim_pools: the free blocks in both pools, and the runs of keys that hold them (allocsim.c:
 * fewer than blocks / 16 + 2, whatever came and went). */
void allocsim_pools(const allocsim *a, size_t *blocks, size_t *runs);
/* allocsim_failed: an allocation of the simulation failed (its memory): its answers are not. */
int allocsim_failed(const allocsim *a);

#endif
