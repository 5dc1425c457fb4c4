// cudaHostRegister on a device mapping (VM_IO | VM_PFNMAP): the GPU's own BAR1 and BAR0
// mapped from sysfs (64-bit BARs: BAR0 is resource0, BAR1 resource2), the only device BARs a GPU machine offers. Nothing is read or
// written through the mappings. Build: nvcc -O1 -arch=sm_90 io_register.cu -o io_register
// Run as root; the last part forks a child that drops to uid 65534 before CUDA starts.
#include <cuda_runtime.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define RT(x) do { cudaError_t e_ = (x); printf("%-72s -> %d %s\n", #x, (int)e_, \
	cudaGetErrorName(e_)); cudaGetLastError(); } while (0)

static char bdf[32];

static void *map_bar(int bar, size_t n, int *fdp)
{
	char path[128];
	void *p;
	int fd;

	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/resource%d", bdf, bar);
	fd = open(path, O_RDWR | O_SYNC);
	printf("open(%s) -> %d %s\n", path, fd, fd < 0 ? strerror(errno) : "");
	if (fd < 0)
		return NULL;
	p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	printf("mmap(%zu) -> %s\n", n, p == MAP_FAILED ? strerror(errno) : "ok");
	*fdp = fd;
	return p == MAP_FAILED ? NULL : p;
}

static void tries(const char *what, char *p, size_t n)
{
	cudaPointerAttributes pa;
	void *d = NULL;

	printf("== %s\n", what);
	RT(cudaHostRegister(p, n, 0));
	RT(cudaHostRegister(p, n, cudaHostRegisterMapped));
	RT(cudaHostRegister(p, n, cudaHostRegisterIoMemory | cudaHostRegisterReadOnly));
	RT(cudaHostRegister(p + 4, 4096, cudaHostRegisterIoMemory));
	RT(cudaHostRegister(p, n, cudaHostRegisterIoMemory));
	RT(cudaHostGetDevicePointer(&d, p, 0));
	printf("   devptr==hostptr %d\n", d == (void *)p);
	memset(&pa, 0, sizeof(pa));
	RT(cudaPointerGetAttributes(&pa, p));
	printf("   type=%d\n", (int)pa.type);
	RT(cudaHostUnregister(p));
}

int main(void)
{
	int fd0 = -1, fd1 = -1, fd2 = -1;
	char *p0, *p1, *p1b;
	pid_t pid;

	if (cudaFree(0)) {
		printf("no CUDA\n");
		return 1;
	}
	cudaDeviceGetPCIBusId(bdf, sizeof(bdf), 0);
	for (char *c = bdf; *c; c++)
		if (*c >= 'A' && *c <= 'Z')
			*c += 32;
	printf("GPU at %s, uid %d\n", bdf, (int)getuid());
	p1 = (char *)map_bar(2, 1 << 21, &fd1);
	if (p1)
		tries("BAR1 (resource2), 2 MiB", p1, 1 << 21);
	p0 = (char *)map_bar(0, 1 << 16, &fd0);
	if (p0)
		tries("BAR0 (resource0), 64 KiB", p0, 1 << 16);
	// one range over two mappings (two VMAs) of the same BAR, placed side by side
	p1b = (char *)map_bar(2, 1 << 16, &fd2);
	if (p1 && p1b) {
		char *a = (char *)mmap(NULL, 2 << 16, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		munmap(a, 2 << 16);
		a = (char *)mmap(a, 1 << 16, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd1, 0);
		mmap(a + (1 << 16), 1 << 16, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd2,
		     1 << 16);
		printf("== two VMAs side by side\n");
		RT(cudaHostRegister(a, 2 << 16, cudaHostRegisterIoMemory));
		RT(cudaHostUnregister(a));
	}
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		int fd;
		char *q;

		q = (char *)map_bar(2, 1 << 16, &fd);
		if (setgid(65534) || setuid(65534)) {
			printf("setuid failed\n");
			_exit(1);
		}
		printf("== child, uid %d\n", (int)getuid());
		if (q)
			RT(cudaHostRegister(q, 1 << 16, cudaHostRegisterIoMemory));
		{
			char *m = (char *)aligned_alloc(65536, 65536);

			RT(cudaHostRegister(m, 65536, 0));
		}
		fflush(stdout);
		_exit(0);
	}
	waitpid(pid, NULL, 0);
	return 0;
}
