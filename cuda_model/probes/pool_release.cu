// When does cudaMalloc's pool give memory back? Measured on a real GPU for the GPU
// model's pin granularity (an nv-p2p free callback fires when the resource manager's
// allocation behind a pin is freed, so it matters whether freeing a small buffer frees
// its 2 MiB pool chunk). Build and run:
//   nvcc -o pool_release pool_release.cu -lcuda && ./pool_release
// Each scenario runs in its own process (a fault poisons the context): it allocates,
// frees, then touches the freed address with cudaMemset + cudaDeviceSynchronize. A
// still-mapped address gives 0 (cudaSuccess); an unmapped one gives 700
// (cudaErrorIllegalAddress). "vram back" is how much cudaMemGetInfo's free memory grew
// across the frees, in KiB. The recorded output of a run on an H100 is pool_release.txt
// beside this file; tests/unit/test_cuda_fidelity.py cites it.
#include <cstdio>
#include <cstdlib>
#include <cstdint>
#include <sys/wait.h>
#include <unistd.h>
#include <cuda.h>
#include <cuda_runtime.h>

static size_t free_vram(void)
{
    size_t f = 0, t = 0;
    cudaMemGetInfo(&f, &t);
    return f;
}

static void touch(const char *what, void *p)
{
    cudaError_t set = cudaMemset(p, 0x5a, 16);
    cudaError_t sync = cudaDeviceSynchronize();
    printf("%s: memset %d, synchronize %d %s\n", what, (int)set, (int)sync,
           cudaGetErrorName(sync));
}

static void report_back(const char *what, size_t before, size_t after)
{
    long long kib = ((long long)after - (long long)before) / 1024;
    printf("%s: vram back %lld KiB\n", what, kib);
}

// one small buffer alone in its chunk, freed
static void lone_small(void)
{
    void *a = NULL;
    cudaMalloc(&a, 4096);
    size_t held = free_vram();
    cudaFree(a);
    report_back("lone 4 KiB freed", held, free_vram());
    touch("lone 4 KiB freed", a);
}

// a small buffer freed while another one lives in the same chunk
static void small_with_neighbour(void)
{
    void *a = NULL, *b = NULL;
    cudaMalloc(&a, 4096);
    cudaMalloc(&b, 4096);
    size_t held = free_vram();
    cudaFree(a);
    report_back("4 KiB freed, neighbour live", held, free_vram());
    printf("4 KiB freed, neighbour live: same chunk %s\n",
           ((uintptr_t)a >> 21) == ((uintptr_t)b >> 21) ? "yes" : "no");
    touch("4 KiB freed, neighbour live", a);
}

// both small buffers of a chunk freed: the chunk is empty
static void chunk_emptied(void)
{
    void *a = NULL, *b = NULL;
    cudaMalloc(&a, 4096);
    cudaMalloc(&b, 65536);
    size_t held = free_vram();
    cudaFree(a);
    cudaFree(b);
    report_back("chunk emptied", held, free_vram());
    touch("chunk emptied", b);
    void *c = NULL;
    cudaMalloc(&c, 4096);
    printf("chunk emptied: next 4 KiB %s\n", c == a ? "same address" : "another address");
}

// a 2 MiB-and-up allocation, which has its own range
static void large(void)
{
    void *a = NULL;
    cudaMalloc(&a, 4 << 20);
    size_t held = free_vram();
    cudaFree(a);
    report_back("4 MiB freed", held, free_vram());
    char h[16] = {0};
    cudaError_t cp = cudaMemcpy(a, h, 16, cudaMemcpyHostToDevice);
    printf("4 MiB freed: H2D copy %d %s\n", (int)cp, cudaGetErrorName(cp));
    cudaGetLastError();
    touch("4 MiB freed", a);
}

// a small buffer the size gdrcopy's invalidation test uses (64 KiB), alone
static void lone_64k(void)
{
    CUdeviceptr a = 0;
    cuMemAlloc(&a, 65536);
    size_t held = free_vram();
    cuMemFree(a);
    report_back("lone 64 KiB cuMemFree", held, free_vram());
    touch("lone 64 KiB cuMemFree", (void *)a);
}

int main(void)
{
    void (*scenarios[])(void) = {lone_small, small_with_neighbour, chunk_emptied, large,
                                 lone_64k};
    for (auto run : scenarios) {
        fflush(stdout);
        pid_t pid = fork();
        if (pid == 0) {
            cudaFree(0);  // context first, so its own allocations are not counted
            run();
            fflush(stdout);
            _exit(0);
        }
        int status = 0;
        waitpid(pid, &status, 0);
    }
    return 0;
}
