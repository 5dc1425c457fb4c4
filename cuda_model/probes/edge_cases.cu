// Edge cases of the CUDA runtime and driver APIs the GPU model reproduces, measured on
// a real GPU. Build and run: nvcc -o edge_cases edge_cases.cu -lcuda && ./edge_cases
// Each line: the call, the error it returned (number and name), and what it wrote out.
// The recorded output of a run on an H100 is edge_cases.txt beside this file; the
// model's tests (tests/unit/test_cuda_fidelity.py) cite it line by line.
#include <cstdio>
#include <cstdlib>
#include <cstdint>
#include <cuda.h>
#include <cuda_runtime.h>

static void show(const char *what, cudaError_t e)
{
    printf("%s: %d %s\n", what, (int)e, cudaGetErrorName(e));
}

static void show_cu(const char *what, CUresult r)
{
    const char *name = "?";
    cuGetErrorName(r, &name);
    printf("%s: %d %s\n", what, (int)r, name);
}

// cuPointerGetAttribute into a zeroed buffer big enough for any attribute; the value is
// printed as a pointer ("self": the queried address, NULL, other), a number or "set"
static void show_attr(const char *what, CUpointer_attribute a, CUdeviceptr p, char how)
{
    unsigned long long buf[4] = {0, 0, 0, 0};
    CUresult r = cuPointerGetAttribute(buf, a, p);
    show_cu(what, r);
    if (r != CUDA_SUCCESS)
        return;
    if (how == 'p')
        printf("%s value: %s\n", what, buf[0] == p ? "self" : (buf[0] ? "other" : "NULL"));
    else if (how == 'n')
        printf("%s value: %llu\n", what, buf[0]);
    else
        printf("%s value: %s\n", what, buf[0] ? "set" : "zero");
}

static const char *which(const void *got, const void *self)
{
    return got == self ? "self" : (got ? "other" : "NULL");
}

__global__ void nothing(void) {}

__global__ void store_at(int *p) { *p = 1; }

int main(void)
{
    int rt = 0, drv = 0;
    cudaRuntimeGetVersion(&rt);
    cudaDriverGetVersion(&drv);
    printf("runtime %d driver %d\n", rt, drv);

    // cudaMalloc
    void *p = (void *)0x1234;
    show("cudaMalloc(0)", cudaMalloc(&p, 0));
    printf("cudaMalloc(0) pointer: %s\n", p == NULL ? "NULL" : "not NULL");
    void *huge = NULL;
    show("cudaMalloc(1<<62)", cudaMalloc(&huge, (size_t)1 << 62));
    cudaGetLastError();
    show("cudaFree(NULL)", cudaFree(NULL));
    void *d = NULL;
    show("cudaMalloc(4096)", cudaMalloc(&d, 4096));
    show("cudaFree(interior)", cudaFree((char *)d + 256));
    cudaGetLastError();
    void *hm = malloc(4096);
    show("cudaFree(malloc pointer)", cudaFree(hm));
    cudaGetLastError();

    // pointer queries on live, interior, freed and foreign memory
    CUdeviceptr base = 0;
    size_t size = 0;
    show_cu("cuMemGetAddressRange(interior)",
            cuMemGetAddressRange(&base, &size, (CUdeviceptr)d + 100));
    printf("cuMemGetAddressRange(interior) base: %s size: %zu\n",
           base == (CUdeviceptr)d ? "the allocation's" : "other", size);
    show("cudaFree(d)", cudaFree(d));
    show("cudaFree(d) again", cudaFree(d));
    cudaGetLastError();
    show_cu("cuMemGetAddressRange(freed)", cuMemGetAddressRange(&base, &size, (CUdeviceptr)d));
    show_cu("cuMemGetAddressRange(never allocated)",
            cuMemGetAddressRange(&base, &size, (CUdeviceptr)0x10));
    struct cudaPointerAttributes attr;
    show("cudaPointerGetAttributes(freed)", cudaPointerGetAttributes(&attr, d));
    printf("cudaPointerGetAttributes(freed) type: %d\n", (int)attr.type);
    cudaGetLastError();
    show("cudaPointerGetAttributes(malloc pointer)", cudaPointerGetAttributes(&attr, hm));
    printf("cudaPointerGetAttributes(malloc pointer) type: %d\n", (int)attr.type);
    show("cudaPointerGetAttributes(NULL)", cudaPointerGetAttributes(&attr, NULL));
    printf("cudaPointerGetAttributes(NULL) type: %d\n", (int)attr.type);
    cudaGetLastError();
    unsigned int mtype = 0;
    show_cu("cuPointerGetAttribute(MEMORY_TYPE, freed)",
            cuPointerGetAttribute(&mtype, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, (CUdeviceptr)d));

    // memcpy and memset edge cases
    char hbuf[64];
    void *e = NULL;
    cudaMalloc(&e, 64);
    // the pool hands d's freed spot to the next small buffer: the "freed" pointer below
    // is live memory again (memory freed for good is pool_release.cu's subject)
    printf("cudaMalloc(64) after cudaFree(d): %s address\n", e == d ? "d's" : "another");
    show("cudaMemcpy(count 0, NULL, NULL)", cudaMemcpy(NULL, NULL, 0, cudaMemcpyDeviceToHost));
    show("cudaMemcpy(kind 7)", cudaMemcpy(hbuf, e, 16, (cudaMemcpyKind)7));
    cudaGetLastError();
    show("cudaMemcpy(D2H beyond the allocation)", cudaMemcpy(hbuf, (char *)e + 32, 64,
                                                             cudaMemcpyDeviceToHost));
    cudaGetLastError();
    show("cudaMemset(freed, reused)", cudaMemset(d, 0, 16));
    cudaGetLastError();
    show("cudaMemset(count 0, NULL)", cudaMemset(NULL, 0, 0));
    cudaGetLastError();

    // pinned host memory
    void *h = (void *)0x1234;
    show("cudaHostAlloc(0)", cudaHostAlloc(&h, 0, cudaHostAllocDefault));
    printf("cudaHostAlloc(0) pointer: %s\n", h == NULL ? "NULL" : "not NULL");
    cudaGetLastError();
    show("cudaHostAlloc(flags 0x100)", cudaHostAlloc(&h, 4096, 0x100));
    cudaGetLastError();
    show("cudaFreeHost(NULL)", cudaFreeHost(NULL));
    show("cudaFreeHost(device pointer)", cudaFreeHost(e));
    cudaGetLastError();
    show("cudaHostAlloc(4096)", cudaHostAlloc(&h, 4096, cudaHostAllocDefault));
    show("cudaFreeHost(interior)", cudaFreeHost((char *)h + 16));
    cudaGetLastError();
    show("cudaFreeHost(h)", cudaFreeHost(h));
    show("cudaFreeHost(h) again", cudaFreeHost(h));
    cudaGetLastError();
    show("cudaFree(cudaHostAlloc pointer)", cudaFree(h));
    cudaGetLastError();

    // more pointer and range cases
    void *g = NULL;
    cudaMalloc(&g, 4096);
    show("cudaMemcpy(H2D into freed, reused memory)",
         cudaMemcpy(d, hbuf, 16, cudaMemcpyHostToDevice));
    cudaGetLastError();
    show("cudaMemcpy(D2H from freed, reused memory)",
         cudaMemcpy(hbuf, d, 16, cudaMemcpyDeviceToHost));
    cudaGetLastError();
    show("cudaMemcpy(H2D beyond the allocation)", cudaMemcpy((char *)g + 4090, hbuf, 16,
                                                             cudaMemcpyHostToDevice));
    cudaGetLastError();
    show("cudaMemset(beyond the allocation)", cudaMemset((char *)g + 4090, 0, 16));
    cudaGetLastError();
    show("cudaMemcpy(D2D overlapping)", cudaMemcpy((char *)g + 8, g, 64, cudaMemcpyDeviceToDevice));
    cudaGetLastError();
    int value = -1;
    show("cudaDeviceGetAttribute(device 1)",
         cudaDeviceGetAttribute(&value, cudaDevAttrGPUDirectRDMASupported, 1));
    cudaGetLastError();
    show("cudaDeviceGetAttribute(attribute 100000)",
         cudaDeviceGetAttribute(&value, (cudaDeviceAttr)100000, 0));
    cudaGetLastError();
    unsigned int one = 1;
    show_cu("cuPointerSetAttribute(SYNC_MEMOPS, malloc pointer)",
            cuPointerSetAttribute(&one, CU_POINTER_ATTRIBUTE_SYNC_MEMOPS, (CUdeviceptr)hm));
    show_cu("cuPointerSetAttribute(SYNC_MEMOPS, interior)",
            cuPointerSetAttribute(&one, CU_POINTER_ATTRIBUTE_SYNC_MEMOPS, (CUdeviceptr)g + 64));
    unsigned long long id1 = 0, id2 = 0;
    cuPointerGetAttribute(&id1, CU_POINTER_ATTRIBUTE_BUFFER_ID, (CUdeviceptr)g);
    cudaFree(g);
    void *g2 = NULL;
    cudaMalloc(&g2, 4096);
    cuPointerGetAttribute(&id2, CU_POINTER_ATTRIBUTE_BUFFER_ID, (CUdeviceptr)g2);
    printf("cudaMalloc after cudaFree, same size: %s address, %s buffer ID\n",
           g2 == g ? "same" : "another", id2 != id1 ? "new" : "same");
    show_cu("cuPointerGetAttribute(BUFFER_ID, interior)",
            cuPointerGetAttribute(&id1, CU_POINTER_ATTRIBUTE_BUFFER_ID, (CUdeviceptr)g2 + 100));
    printf("cuPointerGetAttribute(BUFFER_ID, interior) value: %s\n",
           id1 == id2 ? "the allocation's" : "other");

    // pinned host memory flags and host-side copies
    void *hp = NULL;
    show("cudaHostAlloc(Portable|Mapped|WriteCombined)",
         cudaHostAlloc(&hp, 4096, cudaHostAllocPortable | cudaHostAllocMapped |
                                      cudaHostAllocWriteCombined));
    void *hq = NULL;
    show("cudaHostAlloc(flags 0x8)", cudaHostAlloc(&hq, 4096, 0x8));
    cudaGetLastError();
    if (hq != NULL)
        cudaFreeHost(hq);
    show("cudaMemcpy(H2H, cudaHostAlloc -> malloc)", cudaMemcpy(hbuf, hp, 16,
                                                                cudaMemcpyHostToHost));
    show("cudaMemcpy(Default, cudaHostAlloc -> device)", cudaMemcpy(g2, hp, 16,
                                                                    cudaMemcpyDefault));
    show("cudaMemcpy(H2D with a device source)", cudaMemcpy(g2, g2, 16,
                                                            cudaMemcpyHostToDevice));
    cudaGetLastError();
    show("cudaMemcpy(D2H into a device pointer)", cudaMemcpy(g2, g2, 16,
                                                             cudaMemcpyDeviceToHost));
    cudaGetLastError();
    cudaFreeHost(hp);

    // attributes of live memory: device, an interior device pointer, pinned host
    void *dv = NULL, *hv = NULL;
    cudaMalloc(&dv, 4096);
    cudaHostAlloc(&hv, 4096, cudaHostAllocDefault);
    void *dvi = (char *)dv + 100;
    struct { const char *name; void *p; } live[] = {{"device", dv}, {"interior", dvi},
                                                   {"cudaHostAlloc", hv}};
    char label[128];
    for (auto &m : live) {
        snprintf(label, sizeof label, "cudaPointerGetAttributes(%s)", m.name);
        show(label, cudaPointerGetAttributes(&attr, m.p));
        printf("%s fields: type %d device %d devicePointer %s hostPointer %s\n", label,
               (int)attr.type, attr.device, which(attr.devicePointer, m.p),
               which(attr.hostPointer, m.p));
        struct { const char *name; CUpointer_attribute a; char how; } attrs[] = {
            {"CONTEXT", CU_POINTER_ATTRIBUTE_CONTEXT, 's'},
            {"MEMORY_TYPE", CU_POINTER_ATTRIBUTE_MEMORY_TYPE, 'n'},
            {"DEVICE_POINTER", CU_POINTER_ATTRIBUTE_DEVICE_POINTER, 'p'},
            {"HOST_POINTER", CU_POINTER_ATTRIBUTE_HOST_POINTER, 'p'},
            {"P2P_TOKENS", CU_POINTER_ATTRIBUTE_P2P_TOKENS, 's'},
            {"SYNC_MEMOPS", CU_POINTER_ATTRIBUTE_SYNC_MEMOPS, 'n'},
            {"IS_MANAGED", CU_POINTER_ATTRIBUTE_IS_MANAGED, 'n'},
            {"DEVICE_ORDINAL", CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, 'n'},
        };
        for (auto &x : attrs) {
            snprintf(label, sizeof label, "cuPointerGetAttribute(%s, %s)", x.name, m.name);
            show_attr(label, x.a, (CUdeviceptr)m.p, x.how);
        }
    }
    show_cu("cuMemGetAddressRange(cudaHostAlloc)",
            cuMemGetAddressRange(&base, &size, (CUdeviceptr)hv));
    cudaFree(dv);
    cudaFreeHost(hv);
    int rdma_attrs[] = {cudaDevAttrGPUDirectRDMASupported,
                        cudaDevAttrGPUDirectRDMAFlushWritesOptions,
                        cudaDevAttrGPUDirectRDMAWritesOrdering};
    for (int a : rdma_attrs) {
        snprintf(label, sizeof label, "cudaDeviceGetAttribute(%d)", a);
        value = -1;
        show(label, cudaDeviceGetAttribute(&value, (cudaDeviceAttr)a, 0));
        printf("%s value: %d\n", label, value);
    }

    // launch configurations
    nothing<<<0, 32>>>();
    show("launch grid 0", cudaGetLastError());
    nothing<<<1, 0>>>();
    show("launch block 0", cudaGetLastError());
    nothing<<<1, 1025>>>();
    show("launch block 1025", cudaGetLastError());
    nothing<<<dim3(1, 65536), 1>>>();
    show("launch grid.y 65536", cudaGetLastError());
    nothing<<<1, dim3(1, 1, 65)>>>();
    show("launch block.z 65", cudaGetLastError());
    nothing<<<1, 1025>>>();
    show("cudaPeekAtLastError after a bad launch", cudaPeekAtLastError());
    show("cudaGetLastError", cudaGetLastError());
    show("cudaGetLastError again", cudaGetLastError());
    show("cudaDeviceSynchronize after bad launches", cudaDeviceSynchronize());

    // a kernel fault is sticky: it poisons the context (last: nothing works after it)
    store_at<<<1, 1>>>((int *)0x10);
    show("launch of a faulting kernel", cudaGetLastError());
    show("cudaDeviceSynchronize after the fault", cudaDeviceSynchronize());
    show("cudaGetLastError after the fault", cudaGetLastError());
    void *f = NULL;
    show("cudaMalloc after the fault", cudaMalloc(&f, 64));
    show("cudaMemcpy after the fault", cudaMemcpy(hbuf, e, 16, cudaMemcpyDeviceToHost));
    show("cudaFree after the fault", cudaFree(e));
    show("cudaGetLastError at the end", cudaGetLastError());
    return 0;
}
