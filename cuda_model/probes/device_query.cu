// What a program's device queries return on the real GPU, and how NVIDIA's libraries are
// named and versioned: the facts the guest's runtime library (guest/cuda/) answers with.
// Build: nvcc -O2 device_query.cu -lcuda -o device_query
#include <cuda.h>
#include <cuda_runtime.h>
#include <stdio.h>

int main(void)
{
	static const int attrs[] = {
		cudaDevAttrMaxThreadsPerBlock, cudaDevAttrMaxBlockDimX, cudaDevAttrMaxBlockDimY,
		cudaDevAttrMaxBlockDimZ, cudaDevAttrMaxGridDimX, cudaDevAttrMaxGridDimY,
		cudaDevAttrMaxGridDimZ, cudaDevAttrMaxSharedMemoryPerBlock, cudaDevAttrWarpSize,
		cudaDevAttrClockRate, cudaDevAttrMultiProcessorCount, cudaDevAttrIntegrated,
		cudaDevAttrCanMapHostMemory, cudaDevAttrPciBusId, cudaDevAttrPciDeviceId,
		cudaDevAttrPciDomainId, cudaDevAttrUnifiedAddressing, cudaDevAttrMemoryClockRate,
		cudaDevAttrGlobalMemoryBusWidth, cudaDevAttrL2CacheSize,
		cudaDevAttrMaxThreadsPerMultiProcessor, cudaDevAttrComputeCapabilityMajor,
		cudaDevAttrComputeCapabilityMinor, cudaDevAttrConcurrentManagedAccess,
		cudaDevAttrGPUDirectRDMASupported, cudaDevAttrGPUDirectRDMAFlushWritesOptions,
		cudaDevAttrGPUDirectRDMAWritesOrdering, cudaDevAttrTotalConstantMemory,
		cudaDevAttrMaxRegistersPerBlock, cudaDevAttrAsyncEngineCount,
		cudaDevAttrMemoryPoolsSupported, cudaDevAttrMaxSharedMemoryPerMultiprocessor,
	};
	static const int errs[] = { 0, 1, 2, 3, 4, 9, 17, 21, 98, 100, 101, 200, 400, 500,
				    600, 700, 712, 713, 719, 800, 801, 999 };
	cudaDeviceProp p;
	int v, i, n = 0, drv = 0, rtv = 0;
	size_t fr, tot;
	CUdevice d;
	char name[256];

	printf("cudaGetDeviceCount %d", cudaGetDeviceCount(&n));
	printf(" -> %d\n", n);
	cudaDriverGetVersion(&drv);
	cudaRuntimeGetVersion(&rtv);
	printf("driver %d runtime %d\n", drv, rtv);
	for (i = 0; i < (int)(sizeof(attrs) / sizeof(attrs[0])); i++) {
		cudaError_t e = cudaDeviceGetAttribute(&v, (cudaDeviceAttr)attrs[i], 0);
		printf("attr %d = %d (err %d)\n", attrs[i], v, e);
	}
	cudaGetDeviceProperties(&p, 0);
	printf("name '%s' totalGlobalMem %zu major %d minor %d mpc %d sizeof(prop) %zu\n",
	       p.name, p.totalGlobalMem, p.major, p.minor, p.multiProcessorCount, sizeof(p));
	cudaMemGetInfo(&fr, &tot);
	printf("memgetinfo total %zu\n", tot);
	cuInit(0);
	cuDeviceGet(&d, 0);
	cuDeviceGetName(name, sizeof(name), d);
	printf("cuDeviceGetName '%s'\n", name);
	printf("cudaSetDevice(1) %d, cudaGetDevice ", cudaSetDevice(1));
	cudaGetDevice(&v);
	printf("%d; cudaGetLastError %d\n", v, cudaGetLastError());
	for (i = 0; i < (int)(sizeof(errs) / sizeof(errs[0])); i++) {
		const char *s1 = 0, *s2 = 0;

		cuGetErrorName((CUresult)errs[i], &s1);
		printf("err %d '%s' '%s' | cu '%s'", errs[i], cudaGetErrorName((cudaError_t)errs[i]),
		       cudaGetErrorString((cudaError_t)errs[i]), s1 ? s1 : "(null)");
		cuGetErrorString((CUresult)errs[i], &s2);
		printf(" '%s'\n", s2 ? s2 : "(null)");
	}
	printf("cudaGetErrorName(12345) '%s' string '%s'\n", cudaGetErrorName((cudaError_t)12345),
	       cudaGetErrorString((cudaError_t)12345));
	return 0;
}
