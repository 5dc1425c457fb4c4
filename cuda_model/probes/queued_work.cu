// Work still queued on memory whose registration goes, and a sticky error beside a
// running wait: what cudaHostUnregister does while a stream still holds a wait, a
// stream write and a memset on those pages; whether a cuStreamWaitValue32 on another
// stream goes on after a kernel's fault; what CU_STREAM_WAIT_VALUE_FLUSH answers.
// Build: nvcc -O1 -arch=sm_90 queued_work.cu -lcuda -lpthread -o queued_work
#include <cuda.h>
#include <cuda_runtime.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define RT(x) do { cudaError_t e_ = (x); printf("%-72s -> %d %s\n", #x, (int)e_, \
	cudaGetErrorName(e_)); } while (0)
#define DRV(x) do { CUresult r_ = (x); const char *n_ = NULL; cuGetErrorName(r_, &n_); \
	printf("%-72s -> %d %s\n", #x, (int)r_, n_ ? n_ : "?"); } while (0)

static double now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

struct later {
	volatile unsigned int *flag;
	unsigned int value;
	int ms;
};

static void *set_later(void *arg)
{
	struct later *l = (struct later *)arg;

	usleep(l->ms * 1000);
	*l->flag = l->value;
	__sync_synchronize();
	return NULL;
}

__global__ void spin(long long cycles)
{
	long long t0 = clock64();

	while (clock64() - t0 < cycles)
		;
}

__global__ void fault(unsigned int *p)
{
	p[0] = 1;
}

int main(void)
{
	const size_t size = 1 << 20;
	unsigned int *buf, *flag2;
	CUdeviceptr d;
	cudaStream_t s, s1, s2;
	pthread_t th;
	struct later l;
	double t0, dt;
	int clock_khz;

	alarm(60);
	setvbuf(stdout, NULL, _IOLBF, 0);
	RT(cudaSetDevice(0));
	RT(cudaFree(0));
	cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, 0);
	RT(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));

	printf("== CU_STREAM_WAIT_VALUE_FLUSH\n");
	RT(cudaMalloc((void **)&d, 4096));
	RT(cudaMemset((void *)d, 0, 4096));
	DRV(cuStreamWaitValue32((CUstream)s, d, 0, CU_STREAM_WAIT_VALUE_GEQ | CU_STREAM_WAIT_VALUE_FLUSH));
	DRV(cuStreamWaitValue32((CUstream)s, d, 0, CU_STREAM_WAIT_VALUE_EQ | CU_STREAM_WAIT_VALUE_FLUSH));
	DRV(cuStreamWaitValue64((CUstream)s, d, 0, CU_STREAM_WAIT_VALUE_GEQ | CU_STREAM_WAIT_VALUE_FLUSH));
	DRV(cuStreamWaitValue32((CUstream)s, d, 0, 1u << 29));
	RT(cudaStreamSynchronize(s));

	printf("== cudaHostUnregister with a wait, a write and a memset queued on its pages\n");
	buf = (unsigned int *)aligned_alloc(4096, size);
	memset(buf, 0, size);
	RT(cudaHostRegister(buf, size, cudaHostRegisterDefault));
	DRV(cuStreamWaitValue32((CUstream)s, (CUdeviceptr)buf, 1, CU_STREAM_WAIT_VALUE_EQ));
	DRV(cuStreamWriteValue32((CUstream)s, (CUdeviceptr)(buf + 1024), 0xabcd, 0));
	RT(cudaMemsetAsync(buf + 2048, 0x5a, 4096, s));
	l.flag = buf;
	l.value = 1;
	l.ms = 500;
	pthread_create(&th, NULL, set_later, &l);
	t0 = now_ms();
	RT(cudaHostUnregister(buf));
	dt = now_ms() - t0;
	printf("   unregister returned after the flag was set (>= 400 ms): %d\n", dt >= 400);
	printf("   stream done when it returned: %d\n", cudaStreamQuery(s) == cudaSuccess);
	pthread_join(th, NULL);
	RT(cudaStreamSynchronize(s));
	printf("   write landed: %d, memset landed: %d\n", buf[1024] == 0xabcd,
	       ((unsigned char *)buf)[8192] == 0x5a && ((unsigned char *)buf)[12287] == 0x5a);
	RT(cudaGetLastError());

	printf("== cudaHostUnregister with a kernel of 300 ms and a write queued behind it\n");
	memset(buf, 0, size);
	RT(cudaHostRegister(buf, size, cudaHostRegisterDefault));
	spin<<<1, 1, 0, s>>>((long long)clock_khz * 300);
	DRV(cuStreamWriteValue32((CUstream)s, (CUdeviceptr)(buf + 1024), 0x1234, 0));
	t0 = now_ms();
	RT(cudaHostUnregister(buf));
	dt = now_ms() - t0;
	printf("   unregister waited for the kernel (>= 200 ms): %d\n", dt >= 200);
	RT(cudaStreamSynchronize(s));
	printf("   write landed: %d\n", buf[1024] == 0x1234);
	RT(cudaGetLastError());

	printf("== a kernel's fault while another stream waits on a host flag (set after 3 s)\n");
	RT(cudaHostAlloc((void **)&flag2, 4096, cudaHostAllocDefault));
	flag2[0] = 0;
	flag2[16] = 0;
	RT(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
	RT(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
	DRV(cuStreamWaitValue32((CUstream)s2, (CUdeviceptr)flag2, 1, CU_STREAM_WAIT_VALUE_EQ));
	DRV(cuStreamWriteValue32((CUstream)s2, (CUdeviceptr)(flag2 + 16), 0x77, 0));
	usleep(100000);
	RT(cudaStreamQuery(s2));
	l.flag = flag2;
	l.value = 1;
	l.ms = 3000;
	pthread_create(&th, NULL, set_later, &l);
	t0 = now_ms();
	fault<<<1, 1, 0, s1>>>((unsigned int *)0x10);
	RT(cudaGetLastError());
	RT(cudaStreamSynchronize(s1));
	dt = now_ms() - t0;
	printf("   the faulting stream's sync returned after the flag was set (>= 2500 ms): %d\n",
	       dt >= 2500);
	printf("   the write behind the wait had landed then: %d\n", flag2[16] == 0x77);
	RT(cudaStreamQuery(s2));
	pthread_join(th, NULL);
	usleep(200000);
	RT(cudaStreamQuery(s2));
	printf("   the write behind the wait landed: %d\n", flag2[16] == 0x77);
	RT(cudaStreamSynchronize(s2));
	DRV(cuStreamWaitValue32((CUstream)s2, (CUdeviceptr)flag2, 1, CU_STREAM_WAIT_VALUE_EQ));
	RT(cudaGetLastError());
	return 0;
}
