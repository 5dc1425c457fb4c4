// How does CUDA export GPU memory as a dma-buf? Measured on a real GPU for the GPU
// model's dma-buf path (issue 37): cuMemGetHandleForAddressRange with
// CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, its alignment and flag rules, which memory it
// exports, and how long the exported memory lives. Build and run:
//   nvcc -o dmabuf dmabuf.cu -lcuda && ./dmabuf
// Every line prints a CUresult as "number NAME" (0 CUDA_SUCCESS). "vram back" is how
// much cuMemGetInfo's free memory grew, in KiB. The recorded output of a run on an H100
// is dmabuf.txt beside this file.
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sys/mman.h>
#include <unistd.h>
#include <cuda.h>
#include <cuda_runtime.h>

static const char *name(CUresult r)
{
    const char *s = NULL;
    cuGetErrorName(r, &s);
    return s ? s : "?";
}

static size_t free_vram(void)
{
    size_t f = 0, t = 0;
    cuMemGetInfo(&f, &t);
    return f;
}

// export [p, p + size) with flags; prints the result and the fd's size; returns the fd
static int export_range(const char *what, CUdeviceptr p, size_t size, unsigned long long flags)
{
    int fd = -1;
    CUresult r = cuMemGetHandleForAddressRange(&fd, p, size,
                                               CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, flags);
    long long len = -1;
    if (r == CUDA_SUCCESS && fd >= 0)
        len = (long long)lseek(fd, 0, SEEK_END);
    printf("%s: %d %s, fd %s, size %lld\n", what, (int)r, name(r), fd >= 0 ? "yes" : "no", len);
    return r == CUDA_SUCCESS ? fd : -1;
}

int main(void)
{
    cudaFree(0);
    CUdevice dev;
    cuCtxGetDevice(&dev);
    char devname[128];
    cuDeviceGetName(devname, sizeof devname, dev);
    int drv = 0;
    cuDriverGetVersion(&drv);
    printf("device %s, driver API %d\n", devname, drv);
    int a = -1;
    CUresult r = cuDeviceGetAttribute(&a, CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED, dev);
    printf("DMA_BUF_SUPPORTED: %d (%d %s)\n", a, (int)r, name(r));
    a = -1;
    r = cuDeviceGetAttribute(&a, CU_DEVICE_ATTRIBUTE_HOST_ALLOC_DMA_BUF_SUPPORTED, dev);
    printf("HOST_ALLOC_DMA_BUF_SUPPORTED: %d (%d %s)\n", a, (int)r, name(r));
    a = -1;
    r = cuDeviceGetAttribute(&a, CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED, dev);
    printf("GPU_DIRECT_RDMA_SUPPORTED: %d (%d %s)\n", a, (int)r, name(r));

    // cudaMalloc: whole, part, misaligned pointer and size, past the end, zero size
    const size_t MB2 = 2 << 20;
    void *v = NULL;
    cudaMalloc(&v, 4 * MB2);
    CUdeviceptr p = (CUdeviceptr)v;
    printf("cudaMalloc 8 MiB at offset %llu in a 2 MiB page\n", (unsigned long long)(p % MB2));
    int fd = export_range("whole 8 MiB", p, 4 * MB2, 0);
    if (fd >= 0)
        close(fd);
    fd = export_range("4 KiB at +64 KiB", p + 65536, 4096, 0);
    if (fd >= 0)
        close(fd);
    export_range("pointer +1", p + 1, 4096, 0);
    export_range("pointer +256", p + 256, 4096, 0);
    export_range("size 4095", p, 4095, 0);
    export_range("size 4097", p, 4097, 0);
    export_range("size 0", p, 0, 0);
    export_range("past the end", p + 4 * MB2 - 4096, 8192, 0);
    export_range("PCIE mapping flag", p, MB2, CU_MEM_RANGE_FLAG_DMA_BUF_MAPPING_TYPE_PCIE);
    export_range("flag 0x2", p, MB2, 0x2);
    export_range("flag 0x80", p, MB2, 0x80);

    // two adjacent allocations in one range
    void *b1 = NULL, *b2 = NULL;
    cudaMalloc(&b1, MB2);
    cudaMalloc(&b2, MB2);
    CUdeviceptr q1 = (CUdeviceptr)b1, q2 = (CUdeviceptr)b2;
    printf("two 2 MiB allocations adjacent: %s\n", q2 == q1 + MB2 ? "yes" : "no");
    if (q2 == q1 + MB2)
        export_range("across two allocations", q1 + MB2 - 4096, 8192, 0);

    // one VA reservation, two physical allocations mapped side by side
    {
        CUmemAllocationProp prop;
        memset(&prop, 0, sizeof prop);
        prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
        prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
        prop.location.id = dev;
        CUmemGenericAllocationHandle h1, h2;
        cuMemCreate(&h1, MB2, &prop, 0);
        cuMemCreate(&h2, MB2, &prop, 0);
        CUdeviceptr va = 0;
        cuMemAddressReserve(&va, 2 * MB2, 0, 0, 0);
        cuMemMap(va, MB2, 0, h1, 0);
        cuMemMap(va + MB2, MB2, 0, h2, 0);
        CUmemAccessDesc acc;
        memset(&acc, 0, sizeof acc);
        acc.location = prop.location;
        acc.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
        cuMemSetAccess(va, 2 * MB2, &acc, 1);
        export_range("two cuMemCreate allocations, one reservation, across", va + MB2 - 4096,
                     8192, 0);
        fd = export_range("two cuMemCreate allocations, one reservation, the first", va, MB2, 0);
        if (fd >= 0)
            close(fd);
        cuMemUnmap(va, 2 * MB2);
        cuMemAddressFree(va, 2 * MB2);
        cuMemRelease(h1);
        cuMemRelease(h2);
    }
    fd = export_range("pointer +4 KiB, 4 KiB", p + 4096, 4096, 0);
    if (fd >= 0)
        close(fd);

    // pinned host memory, pageable host memory, managed memory
    void *h = NULL;
    cudaMallocHost(&h, MB2);
    fd = export_range("cudaMallocHost 2 MiB", (CUdeviceptr)h, MB2, 0);
    if (fd >= 0)
        close(fd);
    void *pg = aligned_alloc(MB2, MB2);
    export_range("malloc 2 MiB (pageable)", (CUdeviceptr)pg, MB2, 0);
    void *m = NULL;
    cudaMallocManaged(&m, MB2);
    export_range("cudaMallocManaged 2 MiB", (CUdeviceptr)m, MB2, 0);

    // cuMemCreate / cuMemMap, with and without gpuDirectRDMACapable
    for (int rdma = 0; rdma < 2; rdma++) {
        CUmemAllocationProp prop;
        memset(&prop, 0, sizeof prop);
        prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
        prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
        prop.location.id = dev;
        prop.allocFlags.gpuDirectRDMACapable = rdma;
        size_t gran = 0;
        cuMemGetAllocationGranularity(&gran, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM);
        CUmemGenericAllocationHandle hnd;
        CUresult c = cuMemCreate(&hnd, MB2, &prop, 0);
        CUdeviceptr va = 0;
        cuMemAddressReserve(&va, MB2, 0, 0, 0);
        cuMemMap(va, MB2, 0, hnd, 0);
        CUmemAccessDesc acc;
        memset(&acc, 0, sizeof acc);
        acc.location = prop.location;
        acc.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
        cuMemSetAccess(va, MB2, &acc, 1);
        char what[96];
        snprintf(what, sizeof what, "cuMemCreate gpuDirectRDMACapable=%d (create %d, granularity %zu)",
                 rdma, (int)c, gran);
        fd = export_range(what, va, MB2, 0);
        if (fd >= 0)
            close(fd);
        cuMemUnmap(va, MB2);
        cuMemAddressFree(va, MB2);
        cuMemRelease(hnd);
    }

    // lifetime: an exported 64 MiB range, freed while the dma-buf is open, then closed
    const size_t BIG = 64 << 20;
    void *big = NULL;
    size_t before = free_vram();
    cudaMalloc(&big, BIG);
    size_t held = free_vram();
    printf("64 MiB allocated: vram taken %lld KiB\n", ((long long)before - (long long)held) / 1024);
    fd = export_range("64 MiB", (CUdeviceptr)big, BIG, 0);
    size_t exported = free_vram();
    printf("64 MiB exported: vram taken by the export %lld KiB\n",
           ((long long)held - (long long)exported) / 1024);
    if (fd >= 0) {
        void *mm = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
        printf("mmap of the dma-buf fd: %s (errno %d %s)\n", mm == MAP_FAILED ? "failed" : "mapped",
               mm == MAP_FAILED ? errno : 0, mm == MAP_FAILED ? strerror(errno) : "");
        if (mm != MAP_FAILED)
            munmap(mm, 4096);
    }
    cudaError_t fr = cudaFree(big);
    size_t after_free = free_vram();
    printf("cudaFree with the dma-buf open: %d, vram back %lld KiB\n", (int)fr,
           ((long long)after_free - (long long)exported) / 1024);
    if (fd >= 0) {
        close(fd);
        size_t after_close = free_vram();
        printf("dma-buf closed: vram back %lld KiB\n",
               ((long long)after_close - (long long)after_free) / 1024);
    }
    return 0;
}
