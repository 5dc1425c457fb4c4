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

static unsigned sync_memops_of(void *p)
{
    unsigned long long v = 0;  // a bool in CUDA 13's header; zeroed wider buffer
    cuPointerGetAttribute(&v, CU_POINTER_ATTRIBUTE_SYNC_MEMOPS, (CUdeviceptr)p);
    return (unsigned)v;
}

// is CU_POINTER_ATTRIBUTE_SYNC_MEMOPS a buffer's, or its chunk's?
static void sync_memops(void)
{
    void *a = NULL, *b = NULL, *c = NULL;
    cudaMalloc(&a, 4096);
    printf("SYNC_MEMOPS of a new 4 KiB buffer: %u\n", sync_memops_of(a));
    cudaMalloc(&c, 4 << 20);
    printf("SYNC_MEMOPS of a new 4 MiB buffer: %u\n", sync_memops_of(c));
    cudaMalloc(&b, 4096);
    unsigned one = 1;
    CUresult r = cuPointerSetAttribute(&one, CU_POINTER_ATTRIBUTE_SYNC_MEMOPS, (CUdeviceptr)b);
    printf("SYNC_MEMOPS set on a neighbour: %d, the buffer's now %u, the neighbour's %u\n",
           (int)r, sync_memops_of(a), sync_memops_of(b));
    void *d = NULL;
    cudaMalloc(&d, 4096);
    printf("SYNC_MEMOPS of the next 4 KiB buffer: %u\n", sync_memops_of(d));
    r = cuPointerSetAttribute(&one, CU_POINTER_ATTRIBUTE_SYNC_MEMOPS, (CUdeviceptr)c);
    printf("SYNC_MEMOPS set on the 4 MiB buffer: %d, the small buffers' %u %u\n", (int)r,
           sync_memops_of(a), sync_memops_of(d));
}

// does SYNC_MEMOPS outlive its buffer? set (through an interior pointer, as
// edge_cases.cu does), free, allocate again at the same address and next to it
static void sync_memops_after_free(void)
{
    void *a = NULL, *a2 = NULL, *n = NULL;
    cudaMalloc(&a, 4096);
    unsigned one = 1;
    cuPointerSetAttribute(&one, CU_POINTER_ATTRIBUTE_SYNC_MEMOPS, (CUdeviceptr)a + 64);
    cudaFree(a);
    cudaMalloc(&a2, 4096);
    cudaMalloc(&n, 4096);
    printf("SYNC_MEMOPS after free and reallocation: %s address %u, the next buffer %u\n",
           a2 == a ? "same" : "another", sync_memops_of(a2), sync_memops_of(n));
}

// the GPUDirect RDMA guide's history: getting P2P tokens used to set SYNC_MEMOPS
static void sync_memops_by_tokens(void)
{
    void *a = NULL;
    cudaMalloc(&a, 4096);
    CUDA_POINTER_ATTRIBUTE_P2P_TOKENS tokens = {0, 0};
    unsigned before = sync_memops_of(a);
    CUresult r = cuPointerGetAttribute(&tokens, CU_POINTER_ATTRIBUTE_P2P_TOKENS, (CUdeviceptr)a);
    printf("SYNC_MEMOPS around a P2P_TOKENS query (%d, tokens %s): %u, then %u\n", (int)r,
           tokens.p2pToken || tokens.vaSpaceToken ? "set" : "zero", before, sync_memops_of(a));
}

// where cudaMalloc puts successive buffers: offsets from the first, in bytes, and
// whether the large ones start on a 2 MiB boundary
static void placement(void)
{
    size_t sizes[] = {1, 4096, 65536, 65537, 2 << 20, 3 << 20, 512};
    char *first = NULL;
    printf("placement:");
    for (size_t n : sizes) {
        void *p = NULL;
        cudaMalloc(&p, n);
        if (first == NULL)
            first = (char *)p;
        long long off = (char *)p - first;
        printf(" %zu B at %+lld%s", n, off, ((uintptr_t)p & ((2 << 20) - 1)) ? "" : " (2 MiB)");
    }
    printf("\n");
}

int main(void)
{
    void (*scenarios[])(void) = {lone_small, small_with_neighbour, chunk_emptied, large,
                                 lone_64k, sync_memops, sync_memops_after_free,
                                 sync_memops_by_tokens, placement};
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
