/* SPDX-License-Identifier: MIT */
/*
 * The CUDA runtime and driver API as the guest's libraries (libcudart.so.13, libcuda.so.1)
 * implement them: CUDA's documented types, values and calls, declared here so that the
 * libraries and the project's own C programs build without NVIDIA's headers. A program
 * compiled with NVIDIA's headers (nvcc) links against the same libraries: the types
 * below have CUDA 13's layout (a test compares them with NVIDIA's headers where those
 * are installed).
 */
#ifndef PEVB_CUDA_H
#define PEVB_CUDA_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CUDART_VERSION 13000
#define CUDA_VERSION 13000

typedef int cudaError_t;	/* cudaError values */
typedef int CUresult;		/* CUresult values */

enum {
	cudaSuccess = 0,
	cudaErrorInvalidValue = 1,
	cudaErrorMemoryAllocation = 2,
	cudaErrorInitializationError = 3,
	cudaErrorCudartUnloading = 4,
	cudaErrorInvalidConfiguration = 9,
	cudaErrorInvalidDevicePointer = 17,
	cudaErrorInvalidMemcpyDirection = 21,
	cudaErrorMissingConfiguration = 52,
	cudaErrorInvalidDeviceFunction = 98,
	cudaErrorNoDevice = 100,
	cudaErrorInvalidDevice = 101,
	cudaErrorInvalidKernelImage = 200,
	cudaErrorInvalidResourceHandle = 400,
	cudaErrorSymbolNotFound = 500,
	cudaErrorNotReady = 600,
	cudaErrorIllegalAddress = 700,
	cudaErrorHostMemoryAlreadyRegistered = 712,
	cudaErrorHostMemoryNotRegistered = 713,
	cudaErrorLaunchFailure = 719,
	cudaErrorNotPermitted = 800,
	cudaErrorNotSupported = 801,
	cudaErrorUnknown = 999,
};

enum {
	CUDA_SUCCESS = 0,
	CUDA_ERROR_INVALID_VALUE = 1,
	CUDA_ERROR_OUT_OF_MEMORY = 2,
	CUDA_ERROR_NOT_INITIALIZED = 3,
	CUDA_ERROR_NO_DEVICE = 100,
	CUDA_ERROR_INVALID_DEVICE = 101,
	CUDA_ERROR_INVALID_HANDLE = 400,
	CUDA_ERROR_NOT_FOUND = 500,
	CUDA_ERROR_NOT_READY = 600,
	CUDA_ERROR_ILLEGAL_ADDRESS = 700,
	CUDA_ERROR_NOT_SUPPORTED = 801,
	CUDA_ERROR_UNKNOWN = 999,
};

enum cudaMemcpyKind {
	cudaMemcpyHostToHost = 0,
	cudaMemcpyHostToDevice = 1,
	cudaMemcpyDeviceToHost = 2,
	cudaMemcpyDeviceToDevice = 3,
	cudaMemcpyDefault = 4,
};

enum cudaMemoryType {
	cudaMemoryTypeUnregistered = 0,
	cudaMemoryTypeHost = 1,
	cudaMemoryTypeDevice = 2,
	cudaMemoryTypeManaged = 3,
};

struct cudaPointerAttributes {
	enum cudaMemoryType type;
	int device;
	void *devicePointer;
	void *hostPointer;
	long reserved[8];
};

typedef struct CUstream_st *cudaStream_t;
typedef struct CUevent_st *cudaEvent_t;
typedef struct CUkern_st *cudaKernel_t;
typedef struct CUstream_st *CUstream;
typedef struct CUevent_st *CUevent;
typedef struct CUctx_st *CUcontext;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;

#define cudaStreamLegacy ((cudaStream_t)0x1)
#define cudaStreamPerThread ((cudaStream_t)0x2)
#define cudaStreamDefault 0x0
#define cudaStreamNonBlocking 0x1
#define cudaEventDefault 0x0
#define cudaEventBlockingSync 0x1
#define cudaEventDisableTiming 0x2
#define cudaHostAllocDefault 0x0
#define cudaHostAllocPortable 0x1
#define cudaHostAllocMapped 0x2
#define cudaHostAllocWriteCombined 0x4
#define cudaHostRegisterDefault 0x0
#define cudaHostRegisterPortable 0x1
#define cudaHostRegisterMapped 0x2
#define cudaHostRegisterIoMemory 0x4
#define cudaHostRegisterReadOnly 0x8

#define CU_POINTER_ATTRIBUTE_CONTEXT 1
#define CU_POINTER_ATTRIBUTE_MEMORY_TYPE 2
#define CU_POINTER_ATTRIBUTE_DEVICE_POINTER 3
#define CU_POINTER_ATTRIBUTE_HOST_POINTER 4
#define CU_POINTER_ATTRIBUTE_P2P_TOKENS 5
#define CU_POINTER_ATTRIBUTE_SYNC_MEMOPS 6
#define CU_POINTER_ATTRIBUTE_BUFFER_ID 7
#define CU_POINTER_ATTRIBUTE_IS_MANAGED 8
#define CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL 9
typedef int CUpointer_attribute;

typedef struct CUDA_POINTER_ATTRIBUTE_P2P_TOKENS_st {
	unsigned long long p2pToken;
	unsigned int vaSpaceToken;
} CUDA_POINTER_ATTRIBUTE_P2P_TOKENS;

#define CU_STREAM_WAIT_VALUE_GEQ 0x0
#define CU_STREAM_WAIT_VALUE_EQ 0x1
#define CU_STREAM_WAIT_VALUE_AND 0x2
#define CU_STREAM_WAIT_VALUE_NOR 0x3
#define CU_STREAM_WRITE_VALUE_DEFAULT 0x0

typedef int cudaDeviceAttr;	/* the same numbers as CUdevice_attribute */
typedef int CUdevice_attribute;
#define cudaDevAttrMaxThreadsPerBlock 1
#define cudaDevAttrWarpSize 10
#define cudaDevAttrMultiProcessorCount 16
#define cudaDevAttrComputeCapabilityMajor 75
#define cudaDevAttrComputeCapabilityMinor 76
#define cudaDevAttrGPUDirectRDMASupported 116

typedef struct dim3 {
	unsigned int x, y, z;
} dim3;

typedef struct uint3 {
	unsigned int x, y, z;
} uint3;

typedef struct CUuuid_st {
	char bytes[16];
} cudaUUID_t;

/* CUDA 13's layout, 1008 bytes */
struct cudaDeviceProp {
	char name[256];
	cudaUUID_t uuid;
	char luid[8];
	unsigned int luidDeviceNodeMask;
	size_t totalGlobalMem, sharedMemPerBlock;
	int regsPerBlock, warpSize;
	size_t memPitch;
	int maxThreadsPerBlock, maxThreadsDim[3], maxGridSize[3];
	size_t totalConstMem;
	int major, minor;
	size_t textureAlignment, texturePitchAlignment;
	int multiProcessorCount, integrated, canMapHostMemory;
	int maxTexture1D, maxTexture1DMipmap, maxTexture2D[2], maxTexture2DMipmap[2];
	int maxTexture2DLinear[3], maxTexture2DGather[2], maxTexture3D[3], maxTexture3DAlt[3];
	int maxTextureCubemap, maxTexture1DLayered[2], maxTexture2DLayered[3];
	int maxTextureCubemapLayered[2], maxSurface1D, maxSurface2D[2], maxSurface3D[3];
	int maxSurface1DLayered[2], maxSurface2DLayered[3], maxSurfaceCubemap;
	int maxSurfaceCubemapLayered[2];
	size_t surfaceAlignment;
	int concurrentKernels, ECCEnabled, pciBusID, pciDeviceID, pciDomainID, tccDriver;
	int asyncEngineCount, unifiedAddressing, memoryBusWidth, l2CacheSize;
	int persistingL2CacheMaxSize, maxThreadsPerMultiProcessor, streamPrioritiesSupported;
	int globalL1CacheSupported, localL1CacheSupported;
	size_t sharedMemPerMultiprocessor;
	int regsPerMultiprocessor, managedMemory, isMultiGpuBoard, multiGpuBoardGroupID;
	int hostNativeAtomicSupported, pageableMemoryAccess, concurrentManagedAccess;
	int computePreemptionSupported, canUseHostPointerForRegisteredMem, cooperativeLaunch;
	size_t sharedMemPerBlockOptin;
	int pageableMemoryAccessUsesHostPageTables, directManagedMemAccessFromHost;
	int maxBlocksPerMultiProcessor, accessPolicyMaxWindowSize;
	size_t reservedSharedMemPerBlock;
	int hostRegisterSupported, sparseCudaArraySupported, hostRegisterReadOnlySupported;
	int timelineSemaphoreInteropSupported, memoryPoolsSupported, gpuDirectRDMASupported;
	unsigned int gpuDirectRDMAFlushWritesOptions;
	int gpuDirectRDMAWritesOrdering;
	unsigned int memoryPoolSupportedHandleTypes;
	int deferredMappingCudaArraySupported, ipcEventSupported, clusterLaunch;
	int unifiedFunctionPointers, deviceNumaConfig, deviceNumaId, mpsEnabled, hostNumaId;
	unsigned int gpuPciDeviceID, gpuPciSubsystemID;
	int hostNumaMultinodeIpcSupported;
	int reserved[56];
};

/* the runtime API (libcudart.so.13) */
cudaError_t cudaGetDeviceCount(int *count);
cudaError_t cudaGetDevice(int *device);
cudaError_t cudaSetDevice(int device);
cudaError_t cudaGetDeviceProperties(struct cudaDeviceProp *prop, int device);
cudaError_t cudaDeviceGetAttribute(int *value, cudaDeviceAttr attr, int device);
cudaError_t cudaDriverGetVersion(int *version);
cudaError_t cudaRuntimeGetVersion(int *version);
cudaError_t cudaDeviceSynchronize(void);
cudaError_t cudaDeviceReset(void);
cudaError_t cudaMemGetInfo(size_t *free, size_t *total);
cudaError_t cudaMalloc(void **ptr, size_t size);
cudaError_t cudaFree(void *ptr);
cudaError_t cudaMemcpy(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind);
cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t count,
			    enum cudaMemcpyKind kind, cudaStream_t stream);
cudaError_t cudaMemset(void *ptr, int value, size_t count);
cudaError_t cudaMemsetAsync(void *ptr, int value, size_t count, cudaStream_t stream);
cudaError_t cudaHostAlloc(void **ptr, size_t size, unsigned int flags);
cudaError_t cudaMallocHost(void **ptr, size_t size);
cudaError_t cudaFreeHost(void *ptr);
cudaError_t cudaHostRegister(void *ptr, size_t size, unsigned int flags);
cudaError_t cudaHostUnregister(void *ptr);
cudaError_t cudaHostGetDevicePointer(void **device, void *host, unsigned int flags);
cudaError_t cudaPointerGetAttributes(struct cudaPointerAttributes *attr, const void *ptr);
cudaError_t cudaStreamCreate(cudaStream_t *stream);
cudaError_t cudaStreamCreateWithFlags(cudaStream_t *stream, unsigned int flags);
cudaError_t cudaStreamDestroy(cudaStream_t stream);
cudaError_t cudaStreamSynchronize(cudaStream_t stream);
cudaError_t cudaStreamQuery(cudaStream_t stream);
cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned int flags);
cudaError_t cudaEventCreate(cudaEvent_t *event);
cudaError_t cudaEventCreateWithFlags(cudaEvent_t *event, unsigned int flags);
cudaError_t cudaEventDestroy(cudaEvent_t event);
cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream);
cudaError_t cudaEventQuery(cudaEvent_t event);
cudaError_t cudaEventSynchronize(cudaEvent_t event);
cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t end);
cudaError_t cudaLaunchKernel(const void *func, dim3 grid, dim3 block, void **args,
			     size_t shared, cudaStream_t stream);
cudaError_t cudaGetLastError(void);
cudaError_t cudaPeekAtLastError(void);
const char *cudaGetErrorName(cudaError_t error);
const char *cudaGetErrorString(cudaError_t error);

/* what nvcc's generated code calls */
void **__cudaRegisterFatBinary(void *fatbin);
void __cudaRegisterFatBinaryEnd(void **handle);
void __cudaUnregisterFatBinary(void **handle);
char __cudaInitModule(void **handle);
void __cudaRegisterFunction(void **handle, const char *host_fun, char *device_fun,
			    const char *device_name, int thread_limit, uint3 *tid, uint3 *bid,
			    dim3 *block, dim3 *grid, int *warp_size);
void __cudaRegisterVar(void **handle, char *host_var, char *device_address,
		       const char *device_name, int ext, size_t size, int constant, int global);
unsigned int __cudaPushCallConfiguration(dim3 grid, dim3 block, size_t shared, cudaStream_t stream);
cudaError_t __cudaPopCallConfiguration(dim3 *grid, dim3 *block, size_t *shared, void *stream);
cudaError_t __cudaGetKernel(cudaKernel_t *kernel, const void *host_fun);
cudaError_t __cudaLaunchKernel(cudaKernel_t kernel, dim3 grid, dim3 block, void **args,
			       size_t shared, cudaStream_t stream);
cudaError_t __cudaLaunchKernel_ptsz(cudaKernel_t kernel, dim3 grid, dim3 block, void **args,
				    size_t shared, cudaStream_t stream);

/* the driver API (libcuda.so.1) */
CUresult cuInit(unsigned int flags);
CUresult cuDriverGetVersion(int *version);
CUresult cuDeviceGet(CUdevice *device, int ordinal);
CUresult cuDeviceGetCount(int *count);
CUresult cuDeviceGetName(char *name, int len, CUdevice device);
CUresult cuDeviceGetAttribute(int *value, CUdevice_attribute attr, CUdevice device);
CUresult cuPointerSetAttribute(const void *value, CUpointer_attribute attr, CUdeviceptr ptr);
CUresult cuPointerGetAttribute(void *data, CUpointer_attribute attr, CUdeviceptr ptr);
CUresult cuStreamWriteValue32(CUstream stream, CUdeviceptr addr, uint32_t value,
			      unsigned int flags);
CUresult cuStreamWaitValue32(CUstream stream, CUdeviceptr addr, uint32_t value,
			     unsigned int flags);
CUresult cuStreamWriteValue64(CUstream stream, CUdeviceptr addr, uint64_t value,
			      unsigned int flags);
CUresult cuStreamWaitValue64(CUstream stream, CUdeviceptr addr, uint64_t value,
			     unsigned int flags);
CUresult cuGetErrorName(CUresult error, const char **str);
CUresult cuGetErrorString(CUresult error, const char **str);

#ifdef __cplusplus
}
#endif

#endif /* PEVB_CUDA_H */
