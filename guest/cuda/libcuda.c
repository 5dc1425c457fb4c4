// SPDX-License-Identifier: MIT
/*
 * libcuda.so.1: the parts of CUDA's driver API that GPUDirect programs call, against the
 * guest's GPU (a context of the GPU model per process, cuda_core.h): initialisation and
 * device queries, pointer attributes (SYNC_MEMOPS, P2P tokens) and the stream memory
 * operations. NVIDIA's libcuda.so.1 exports its symbols unversioned; so does this one.
 */
#include <stdio.h>
#include <string.h>

#include "pevb_gpu_regs.h"
#include "cuda_core.h"
#include "pevb_cuda.h"

#define API PEVB_CUDA_API

static int initialised;

static CUresult ready(void)
{
	return initialised ? CUDA_SUCCESS : CUDA_ERROR_NOT_INITIALIZED;
}

API CUresult cuInit(unsigned int flags)
{
	int ret;

	if (flags)
		return CUDA_ERROR_INVALID_VALUE;
	ret = pevb_cuda_open();
	if (!ret)
		initialised = 1;
	return ret;
}

API CUresult cuDriverGetVersion(int *version)
{
	if (!version)
		return CUDA_ERROR_INVALID_VALUE;
	*version = CUDA_VERSION;
	return CUDA_SUCCESS;
}

API CUresult cuDeviceGetCount(int *count)
{
	if (!count)
		return CUDA_ERROR_INVALID_VALUE;
	*count = 0;
	if (ready())
		return ready();
	*count = 1;
	return CUDA_SUCCESS;
}

API CUresult cuDeviceGet(CUdevice *device, int ordinal)
{
	if (ready())
		return ready();
	if (!device)
		return CUDA_ERROR_INVALID_VALUE;
	if (ordinal != 0)
		return CUDA_ERROR_INVALID_DEVICE;
	*device = 0;
	return CUDA_SUCCESS;
}

API CUresult cuDeviceGetName(char *name, int len, CUdevice device)
{
	if (ready())
		return ready();
	if (!name || len <= 0)
		return CUDA_ERROR_INVALID_VALUE;
	if (device != 0)
		return CUDA_ERROR_INVALID_DEVICE;
	snprintf(name, len, "%s", "NVIDIA H100 (pevb GPU model)");
	return CUDA_SUCCESS;
}

API CUresult cuDeviceGetAttribute(int *value, CUdevice_attribute attr, CUdevice device)
{
	uint64_t args[5] = { (uint64_t)attr, 1 }, v;
	int ret;

	if (ready())
		return ready();
	if (!value)
		return CUDA_ERROR_INVALID_VALUE;
	if (device != 0)
		return CUDA_ERROR_INVALID_DEVICE;
	ret = pevb_cuda_cmd(PEVB_GPU_CMD_DEVICE_ATTRIBUTE, args, &v, NULL, 0, 0);
	if (!ret)
		*value = (int)v;
	return ret;
}

API CUresult cuPointerSetAttribute(const void *value, CUpointer_attribute attr, CUdeviceptr ptr)
{
	uint64_t args[5] = { (uint64_t)attr, ptr };

	if (!value)
		return CUDA_ERROR_INVALID_VALUE;
	if (attr != CU_POINTER_ATTRIBUTE_SYNC_MEMOPS)
		return CUDA_ERROR_INVALID_VALUE;	/* the only one CUDA lets be set */
	args[2] = *(const unsigned int *)value;
	return pevb_cuda_cmd(PEVB_GPU_CMD_POINTER_SET, args, NULL, NULL, 0, 0);
}

API CUresult cuPointerGetAttribute(void *data, CUpointer_attribute attr, CUdeviceptr ptr)
{
	uint64_t args[5] = { (uint64_t)attr, ptr, 0 }, v, w;
	struct pevb_mem m = pevb_cuda_find(ptr);
	int ret;

	if (!data)
		return CUDA_ERROR_INVALID_VALUE;
	if (m.kind == PEVB_MEM_HOST_ALLOC || m.kind == PEVB_MEM_HOST_REG) {
		/* the process's own host memory, which the GPU model does not hold */
		switch (attr) {
		case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
			*(unsigned int *)data = 1;	/* CU_MEMORYTYPE_HOST */
			return CUDA_SUCCESS;
		case CU_POINTER_ATTRIBUTE_DEVICE_POINTER:
		case CU_POINTER_ATTRIBUTE_HOST_POINTER:
			*(void **)data = (void *)(uintptr_t)ptr;
			return CUDA_SUCCESS;
		default:
			return CUDA_ERROR_INVALID_VALUE;
		}
	}
	ret = pevb_cuda_cmd(PEVB_GPU_CMD_POINTER_GET, args, &v, NULL, 0, 0);
	if (ret)
		return ret;
	switch (attr) {
	case CU_POINTER_ATTRIBUTE_P2P_TOKENS:
		args[2] = 1;
		ret = pevb_cuda_cmd(PEVB_GPU_CMD_POINTER_GET, args, &w, NULL, 0, 0);
		if (ret)
			return ret;
		((CUDA_POINTER_ATTRIBUTE_P2P_TOKENS *)data)->p2pToken = v;
		((CUDA_POINTER_ATTRIBUTE_P2P_TOKENS *)data)->vaSpaceToken = (unsigned int)w;
		break;
	case CU_POINTER_ATTRIBUTE_CONTEXT:
	case CU_POINTER_ATTRIBUTE_DEVICE_POINTER:
	case CU_POINTER_ATTRIBUTE_HOST_POINTER:
		*(uint64_t *)data = v;
		break;
	case CU_POINTER_ATTRIBUTE_BUFFER_ID:
		*(unsigned long long *)data = v;
		break;
	case CU_POINTER_ATTRIBUTE_SYNC_MEMOPS:
	case CU_POINTER_ATTRIBUTE_IS_MANAGED:
		*(unsigned char *)data = !!v;	/* a bool */
		break;
	default:
		*(unsigned int *)data = (unsigned int)v;
	}
	return CUDA_SUCCESS;
}

static CUresult memop(uint32_t op, CUstream stream, CUdeviceptr addr, uint64_t value,
		      unsigned int flags, uint64_t size)
{
	uint64_t args[5] = { (uintptr_t)stream, addr, value, flags, size };

	if (stream == cudaStreamLegacy || stream == cudaStreamPerThread)
		args[0] = 0;
	return pevb_cuda_cmd(op, args, NULL, NULL, 0, 0);
}

API CUresult cuStreamWriteValue32(CUstream stream, CUdeviceptr addr, uint32_t value,
				  unsigned int flags)
{
	return memop(PEVB_GPU_CMD_WRITE_VALUE, stream, addr, value, flags, 4);
}

API CUresult cuStreamWaitValue32(CUstream stream, CUdeviceptr addr, uint32_t value,
				 unsigned int flags)
{
	return memop(PEVB_GPU_CMD_WAIT_VALUE, stream, addr, value, flags, 4);
}

API CUresult cuStreamWriteValue64(CUstream stream, CUdeviceptr addr, uint64_t value,
				  unsigned int flags)
{
	return memop(PEVB_GPU_CMD_WRITE_VALUE, stream, addr, value, flags, 8);
}

API CUresult cuStreamWaitValue64(CUstream stream, CUdeviceptr addr, uint64_t value,
				 unsigned int flags)
{
	return memop(PEVB_GPU_CMD_WAIT_VALUE, stream, addr, value, flags, 8);
}

/* cuda.h (CUDA 12 on) names these _v2; NVIDIA's library has both names */
API CUresult cuStreamWriteValue32_v2(CUstream stream, CUdeviceptr addr, uint32_t value,
				     unsigned int flags)
	__attribute__((alias("cuStreamWriteValue32")));
API CUresult cuStreamWaitValue32_v2(CUstream stream, CUdeviceptr addr, uint32_t value,
				    unsigned int flags)
	__attribute__((alias("cuStreamWaitValue32")));
API CUresult cuStreamWriteValue64_v2(CUstream stream, CUdeviceptr addr, uint64_t value,
				     unsigned int flags)
	__attribute__((alias("cuStreamWriteValue64")));
API CUresult cuStreamWaitValue64_v2(CUstream stream, CUdeviceptr addr, uint64_t value,
				    unsigned int flags)
	__attribute__((alias("cuStreamWaitValue64")));

API CUresult cuGetErrorName(CUresult error, const char **str)
{
	const char *name = pevb_cuda_error_name(error, 1);

	if (!str)
		return CUDA_ERROR_INVALID_VALUE;
	*str = name;
	return name ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

API CUresult cuGetErrorString(CUresult error, const char **str)
{
	const char *s = pevb_cuda_error_name(error, 1) ? pevb_cuda_error_string(error) : NULL;

	if (!str)
		return CUDA_ERROR_INVALID_VALUE;
	*str = s;
	return s ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}
