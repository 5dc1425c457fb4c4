// SPDX-License-Identifier: MIT
/*
 * The layouts and values a program compiled against CUDA's headers shares with the
 * guest's CUDA libraries, printed: built once with NVIDIA's headers (-DNVIDIA_HEADERS)
 * and once with the project's (pevb_cuda.h), the two outputs must be the same
 * (tests/unit/test_unit_guest_cuda_abi.py).
 */
#include <stddef.h>
#include <stdio.h>
#ifdef NVIDIA_HEADERS
#include <cuda.h>
#include <cuda_runtime_api.h>
#else
#include "pevb_cuda.h"
#endif

#define PROP(f) printf("cudaDeviceProp.%s %zu\n", #f, offsetof(struct cudaDeviceProp, f))
#define VALUE(v) printf("%s %d\n", #v, (int)(v))

int main(void)
{
	printf("sizeof cudaDeviceProp %zu\n", sizeof(struct cudaDeviceProp));
	PROP(uuid);
	PROP(totalGlobalMem);
	PROP(warpSize);
	PROP(maxThreadsDim);
	PROP(maxGridSize);
	PROP(totalConstMem);
	PROP(major);
	PROP(minor);
	PROP(multiProcessorCount);
	PROP(canMapHostMemory);
	PROP(asyncEngineCount);
	PROP(unifiedAddressing);
	PROP(memoryBusWidth);
	PROP(l2CacheSize);
	PROP(maxThreadsPerMultiProcessor);
	PROP(sharedMemPerMultiprocessor);
	PROP(concurrentManagedAccess);
	PROP(memoryPoolsSupported);
	PROP(gpuDirectRDMASupported);
	PROP(gpuDirectRDMAWritesOrdering);
	PROP(reserved);
	printf("sizeof cudaPointerAttributes %zu\n", sizeof(struct cudaPointerAttributes));
	printf("cudaPointerAttributes.hostPointer %zu\n",
	       offsetof(struct cudaPointerAttributes, hostPointer));
	printf("sizeof P2P_TOKENS %zu\n", sizeof(CUDA_POINTER_ATTRIBUTE_P2P_TOKENS));
	printf("sizeof dim3 %zu\n", sizeof(dim3));
	VALUE(cudaErrorInvalidValue);
	VALUE(cudaErrorMemoryAllocation);
	VALUE(cudaErrorInvalidDevice);
	VALUE(cudaErrorInvalidDeviceFunction);
	VALUE(cudaErrorMissingConfiguration);
	VALUE(cudaErrorNoDevice);
	VALUE(cudaErrorInvalidResourceHandle);
	VALUE(cudaErrorNotReady);
	VALUE(cudaErrorIllegalAddress);
	VALUE(cudaErrorHostMemoryAlreadyRegistered);
	VALUE(cudaErrorHostMemoryNotRegistered);
	VALUE(cudaMemcpyDefault);
	VALUE(cudaMemoryTypeDevice);
	VALUE(cudaStreamNonBlocking);
	VALUE(cudaEventDisableTiming);
	VALUE(cudaHostRegisterReadOnly);
	VALUE(cudaDevAttrMultiProcessorCount);
	VALUE(cudaDevAttrGPUDirectRDMASupported);
	VALUE(CU_POINTER_ATTRIBUTE_P2P_TOKENS);
	VALUE(CU_POINTER_ATTRIBUTE_SYNC_MEMOPS);
	VALUE(CU_POINTER_ATTRIBUTE_BUFFER_ID);
	VALUE(CU_STREAM_WAIT_VALUE_EQ);
	VALUE(CU_STREAM_WAIT_VALUE_NOR);
	VALUE(CUDA_ERROR_INVALID_HANDLE);
	VALUE(CUDA_ERROR_NOT_INITIALIZED);
	return 0;
}
