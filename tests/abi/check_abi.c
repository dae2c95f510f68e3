/* check_abi.c — compiled by tests/integration/cuda_abi.sh against the CUDA toolkit's own
 * cuda.h (when present) together with the project's declarations (preload/cuda_abi.h, under
 * a prefix so the two can coexist), asserting that every type, constant, size and offset the
 * preload relies on agrees. Compiles and runs, or fails to compile. */
#include <cuda.h>
#include <stddef.h>
#include <stdio.h>

/* the project's declarations, renamed so they do not collide with the toolkit's */
#define VT_ABI_CHECK 1
#include "vt_renamed_abi.h"

#define SAME_SIZE(a, b) _Static_assert(sizeof(a) == sizeof(b), #a " vs " #b)
#define SAME_OFF(ta, tb, f) _Static_assert(offsetof(ta, f) == offsetof(tb, f), #ta "." #f)
#define SAME_VAL(a, b) _Static_assert((long long)(a) == (long long)(b), #a " vs " #b)

SAME_SIZE(vt_CUresult, CUresult);
SAME_SIZE(vt_CUdevice, CUdevice);
SAME_SIZE(vt_CUdeviceptr, CUdeviceptr);
SAME_SIZE(vt_CUmemGenericAllocationHandle, CUmemGenericAllocationHandle);
SAME_SIZE(vt_CUmemAllocationProp, CUmemAllocationProp);
SAME_OFF(vt_CUmemAllocationProp, CUmemAllocationProp, type);
SAME_OFF(vt_CUmemAllocationProp, CUmemAllocationProp, requestedHandleTypes);
SAME_OFF(vt_CUmemAllocationProp, CUmemAllocationProp, location);
SAME_OFF(vt_CUmemAllocationProp, CUmemAllocationProp, location.id);
SAME_OFF(vt_CUmemAllocationProp, CUmemAllocationProp, win32HandleMetaData);
SAME_OFF(vt_CUmemAllocationProp, CUmemAllocationProp, allocFlags);
SAME_SIZE(vt_CUmemLocation, CUmemLocation);
SAME_SIZE(vt_CUmemAccessDesc, CUmemAccessDesc);
SAME_SIZE(vt_CUuuid, CUuuid);
SAME_VAL(vt_CUDA_ERROR_OUT_OF_MEMORY, CUDA_ERROR_OUT_OF_MEMORY);
SAME_VAL(vt_CUDA_ERROR_NOT_INITIALIZED, CUDA_ERROR_NOT_INITIALIZED);
SAME_VAL(vt_CUDA_ERROR_NOT_FOUND, CUDA_ERROR_NOT_FOUND);
SAME_VAL(vt_CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM,
         CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM);
SAME_VAL(vt_CU_MEM_LOCATION_TYPE_DEVICE, CU_MEM_LOCATION_TYPE_DEVICE);
SAME_VAL(vt_CU_MEM_ALLOCATION_TYPE_PINNED, CU_MEM_ALLOCATION_TYPE_PINNED);
SAME_VAL(vt_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
         CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
SAME_VAL(vt_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
         CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);

int main(void)
{
    printf("cuda.h %d: %zu-byte CUmemAllocationProp, location.id at %zu: our declarations agree\n",
           CUDA_VERSION, sizeof(CUmemAllocationProp), offsetof(CUmemAllocationProp, location.id));
    return 0;
}
