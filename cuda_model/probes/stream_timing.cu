// Stream timing on the real GPU: what the model's launch latency and per-operation
// costs come from (cuda_model/streams.py). Build: nvcc -O2 -arch=sm_90 stream_timing.cu
// -lcuda -o stream_timing. Times come from %globaltimer (ns, GPU side) and the host's
// CLOCK_MONOTONIC; each figure is the median of N runs.
#include <cuda.h>
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <algorithm>
#include <vector>

#define CK(x) do { cudaError_t e = (x); if (e) { printf("%s: %d %s\n", #x, e, \
	cudaGetErrorString(e)); exit(1); } } while (0)
#define N 2001

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

__device__ unsigned long long gtime(void)
{
	unsigned long long t;

	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
	return t;
}

__global__ void stamp(unsigned long long *out, int i)
{
	if (threadIdx.x == 0 && blockIdx.x == 0)
		out[i] = gtime();
}

__global__ void empty(void) { }

static double median(std::vector<double> v)
{
	std::sort(v.begin(), v.end());
	return v[v.size() / 2];
}

int main(void)
{
	unsigned long long *d, *h;
	cudaStream_t s;
	cudaEvent_t a, b;
	std::vector<double> v;
	float ms;

	CK(cudaSetDevice(0));
	CK(cudaStreamCreate(&s));
	CK(cudaMalloc(&d, N * 8));
	CK(cudaMallocHost(&h, N * 8));
	CK(cudaEventCreate(&a));
	CK(cudaEventCreate(&b));
	for (int i = 0; i < 50; i++)
		empty<<<1, 1, 0, s>>>();
	CK(cudaStreamSynchronize(s));

	// 1. launch + synchronize round trip of an empty kernel (host clock)
	v.clear();
	for (int i = 0; i < N; i++) {
		double t0 = now_ns();

		empty<<<1, 1, 0, s>>>();
		CK(cudaStreamSynchronize(s));
		v.push_back(now_ns() - t0);
	}
	printf("empty kernel launch+sync round trip: %.0f ns\n", median(v));

	// 2. back-to-back kernels in one stream: the gap between their starts (GPU clock)
	for (int i = 0; i < N; i++)
		stamp<<<1, 32, 0, s>>>(d, i);
	CK(cudaMemcpyAsync(h, d, N * 8, cudaMemcpyDeviceToHost, s));
	CK(cudaStreamSynchronize(s));
	v.clear();
	for (int i = 1; i < N; i++)
		v.push_back((double)(h[i] - h[i - 1]));
	printf("back-to-back kernel start gap: %.0f ns (globaltimer)\n", median(v));

	// 3. host launch to kernel start: the kernel stamps the GPU clock, the host read
	// the GPU clock's offset from its own first (globaltimer counts Unix-epoch ns)
	v.clear();
	for (int i = 0; i < 201; i++) {
		struct timespec rt;
		double t0;

		clock_gettime(CLOCK_REALTIME, &rt);
		t0 = rt.tv_sec * 1e9 + rt.tv_nsec;
		stamp<<<1, 32, 0, s>>>(d, 0);
		CK(cudaMemcpyAsync(h, d, 8, cudaMemcpyDeviceToHost, s));
		CK(cudaStreamSynchronize(s));
		v.push_back((double)h[0] - t0);
	}
	printf("host launch to kernel start (realtime vs globaltimer): %.0f ns\n", median(v));

	// 4. events around nothing, around a 4-byte memset, a 4 KiB D2D copy
	v.clear();
	for (int i = 0; i < N; i++) {
		CK(cudaEventRecord(a, s));
		CK(cudaEventRecord(b, s));
		CK(cudaEventSynchronize(b));
		CK(cudaEventElapsedTime(&ms, a, b));
		v.push_back(ms * 1e6);
	}
	printf("event to event, nothing between: %.0f ns\n", median(v));
	v.clear();
	for (int i = 0; i < N; i++) {
		CK(cudaEventRecord(a, s));
		CK(cudaMemsetAsync(d, 0x5a, 4, s));
		CK(cudaEventRecord(b, s));
		CK(cudaEventSynchronize(b));
		CK(cudaEventElapsedTime(&ms, a, b));
		v.push_back(ms * 1e6);
	}
	printf("event to event around a 4-byte memset: %.0f ns\n", median(v));
	v.clear();
	for (int i = 0; i < N; i++) {
		CK(cudaEventRecord(a, s));
		empty<<<1, 1, 0, s>>>();
		CK(cudaEventRecord(b, s));
		CK(cudaEventSynchronize(b));
		CK(cudaEventElapsedTime(&ms, a, b));
		v.push_back(ms * 1e6);
	}
	printf("event to event around an empty kernel: %.0f ns\n", median(v));
	return 0;
}
