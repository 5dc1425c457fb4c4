// cudaHostAlloc memory as the GPU reaches it: its device pointer and attributes, what
// registration calls say about it, stream writes and kernel stores into it, and the
// physical frames behind it (/proc/self/pagemap, root only).
// Build: nvcc -O1 -arch=sm_90 host_alloc.cu -lcuda -o host_alloc
#include <cuda.h>
#include <cuda_runtime.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define RT(x) do { cudaError_t e_ = (x); printf("%-72s -> %d %s\n", #x, (int)e_, \
	cudaGetErrorName(e_)); cudaGetLastError(); } while (0)
#define DRV(x) do { CUresult r_ = (x); const char *n_ = NULL; cuGetErrorName(r_, &n_); \
	printf("%-72s -> %d %s\n", #x, (int)r_, n_ ? n_ : "?"); } while (0)

__global__ void fill(unsigned int *p, unsigned int n, unsigned int v)
{
	unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		p[i] = v + i;
}

/* the physical runs behind [p, p + n): how many, the longest, in 4 KiB pages */
static void frames(const char *what, void *p, size_t n)
{
	uintptr_t va = (uintptr_t)p & ~(uintptr_t)4095;
	size_t pages = ((uintptr_t)p + n - va + 4095) / 4096, i, runs = 0, run = 0, longest = 0;
	uint64_t e, last = 0;
	int fd = open("/proc/self/pagemap", O_RDONLY);

	if (fd < 0) {
		printf("%s: pagemap not readable\n", what);
		return;
	}
	for (i = 0; i < pages; i++) {
		if (pread(fd, &e, 8, (va / 4096 + i) * 8) != 8 || !(e >> 63)) {
			printf("%s: page %zu not present\n", what, i);
			close(fd);
			return;
		}
		e &= (1ULL << 55) - 1;
		if (!e) {
			printf("%s: PFNs hidden (not root)\n", what);
			close(fd);
			return;
		}
		if (i && e == last + 1) {
			run++;
		} else {
			runs++;
			run = 1;
		}
		if (run > longest)
			longest = run;
		last = e;
	}
	close(fd);
	printf("%s: %zu pages in %zu physical runs, longest %zu pages\n", what, pages, runs,
	       longest);
}

static void attrs(const char *what, void *p)
{
	cudaPointerAttributes pa;
	void *d = NULL;

	memset(&pa, 0, sizeof(pa));
	RT(cudaPointerGetAttributes(&pa, p));
	printf("   %s: type=%d device=%d devptr==p %d hostptr==p %d\n", what, (int)pa.type,
	       pa.device, pa.devicePointer == p, pa.hostPointer == p);
	RT(cudaHostGetDevicePointer(&d, p, 0));
	printf("   devptr==hostptr %d\n", d == p);
}

int main(void)
{
	const size_t mib = 1 << 20;
	unsigned int *h = NULL, *w = NULL, *big = NULL, *hv;
	char *m;
	unsigned int i, bad = 0;
	CUdeviceptr dh;

	RT(cudaSetDevice(0));
	RT(cudaFree(0));
	printf("== cudaHostAlloc(1 MiB, Default)\n");
	RT(cudaHostAlloc((void **)&h, mib, cudaHostAllocDefault));
	printf("   pointer %p (page offset %lu)\n", (void *)h, (unsigned long)((uintptr_t)h & 4095));
	attrs("Default", h);
	RT(cudaHostAlloc((void **)&w, mib, cudaHostAllocWriteCombined | cudaHostAllocMapped));
	attrs("WriteCombined|Mapped", w);
	printf("== registration calls on it\n");
	RT(cudaHostRegister(h, 4096, 0));
	RT(cudaHostRegister(h, mib, cudaHostRegisterMapped));
	RT(cudaHostRegister((char *)h + 4096, 4096, 0));
	RT(cudaHostRegister(h, 4096, cudaHostRegisterIoMemory));
	RT(cudaHostUnregister(h));
	RT(cudaHostUnregister((char *)h + 4096));
	m = (char *)malloc(2 * mib);
	RT(cudaHostRegister(m, mib, 0));
	printf("== stream write and kernel store into it\n");
	DRV(cuMemHostGetDevicePointer(&dh, h, 0));
	printf("   dh==h %d\n", (void *)dh == (void *)h);
	memset(h, 0x5a, mib);
	DRV(cuStreamWriteValue32(0, dh, 0xC0FFEE, 0));
	RT(cudaDeviceSynchronize());
	printf("   host sees %#x %#x\n", h[0], h[1]);
	fill<<<4, 256>>>(h, 1024, 0x1000);
	RT(cudaDeviceSynchronize());
	for (i = 0; i < 1024; i++)
		bad += h[i] != 0x1000 + i;
	printf("   kernel store: %u of 1024 words wrong, next word %#x\n", bad, h[1024]);
	RT(cudaMemsetAsync(h, 0, 4096, 0));
	RT(cudaDeviceSynchronize());
	printf("   cudaMemsetAsync on it: host sees %#x\n", h[0]);
	hv = (unsigned int *)malloc(4096);
	RT(cudaMemcpyAsync(h, hv, 4096, cudaMemcpyHostToHost, 0));
	RT(cudaDeviceSynchronize());
	printf("== physical frames\n");
	RT(cudaHostAlloc((void **)&big, 64 * mib, cudaHostAllocDefault));
	frames("cudaHostAlloc 1 MiB", h, mib);
	frames("cudaHostAlloc WC 1 MiB", w, mib);
	frames("cudaHostAlloc 64 MiB", big, 64 * mib);
	frames("malloc + cudaHostRegister 1 MiB", m, mib);
	printf("== after cudaFreeHost\n");
	RT(cudaFreeHost(w));
	attrs("freed", w);
	RT(cudaFreeHost(w));
	RT(cudaHostUnregister(m));
	RT(cudaFreeHost(h));
	RT(cudaFreeHost(big));
	free(m);
	free(hv);
	return 0;
}
