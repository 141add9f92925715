// The transpose of e4m3 matrices for the PyTorch layers' input gradient: W^T from W quantised
// 128 x 128 (the codes transposed; the scale grid is transposed on the host side by torch).
//
//   in  [batch][rows][cols] bytes, row-major, contiguous
//   out [batch][cols][rows] bytes, row-major, contiguous: out[b][c][r] = in[b][r][c]
//
// Why a kernel: torch's copy of a transposed 1-byte tensor reads with a stride of `cols` bytes per
// element (one useful byte per 32-byte sector on a cold cache), which for a 7168 x 16384 weight
// costs more than the quantisation. Here a CTA moves one 64 x 64 tile through shared memory:
// 16-byte loads along the input rows, 16-byte stores along the output rows (both coalesced).
// rows % 16 == 0 and cols % 16 == 0 (the op checks; every 16-byte chunk is then wholly inside or
// wholly outside the matrix), 16-byte aligned pointers.
#include <cuda_runtime.h>

#include <cstdint>

namespace fp8gemm::torch_ops {

namespace {

constexpr int kTile = 64;
constexpr int kThreads = 256;  // 64 rows x 4 chunks of 16 bytes
constexpr int kPitch = kTile + 4;  // shared-memory row pitch: spreads a column over the banks

__global__ void __launch_bounds__(kThreads) transpose_bytes_kernel(const std::uint8_t* __restrict__ in,
                                                                  std::uint8_t* __restrict__ out,
                                                                  std::int64_t rows,
                                                                  std::int64_t cols) {
  __shared__ std::uint8_t tile[kTile][kPitch];
  const std::int64_t plane = rows * cols;
  in += plane * blockIdx.z;
  out += plane * blockIdx.z;
  const std::int64_t r0 = std::int64_t(blockIdx.y) * kTile;
  const std::int64_t c0 = std::int64_t(blockIdx.x) * kTile;
  const int t = int(threadIdx.x);
  const int tr = t / 4, tc = (t % 4) * 16;

  // Load: thread t reads input row r0 + tr, columns c0 + tc .. + 15.
  if (r0 + tr < rows && c0 + tc < cols) {
    const uint4 v = *reinterpret_cast<const uint4*>(in + (r0 + tr) * cols + c0 + tc);
    const std::uint8_t* b = reinterpret_cast<const std::uint8_t*>(&v);
#pragma unroll
    for (int j = 0; j < 16; ++j) tile[tr][tc + j] = b[j];
  }
  __syncthreads();
  // Store: thread t writes output row c0 + tr (an input column), output columns r0 + tc .. + 15
  // (input rows).
  if (c0 + tr < cols && r0 + tc < rows) {
    alignas(16) std::uint8_t b[16];
#pragma unroll
    for (int j = 0; j < 16; ++j) b[j] = tile[tc + j][tr];
    *reinterpret_cast<uint4*>(out + (c0 + tr) * rows + r0 + tc) = *reinterpret_cast<const uint4*>(b);
  }
}

}  // namespace

/// Launches the transpose of `batch` rows x cols byte matrices on `stream`; returns the launch's
/// error (cudaSuccess when it was queued). The caller checks the shape rules above.
cudaError_t launch_transpose_bytes(const std::uint8_t* in, std::uint8_t* out, std::int64_t batch,
                                   std::int64_t rows, std::int64_t cols, cudaStream_t stream) {
  const dim3 grid(unsigned((cols + kTile - 1) / kTile), unsigned((rows + kTile - 1) / kTile),
                  unsigned(batch));
  transpose_bytes_kernel<<<grid, kThreads, 0, stream>>>(in, out, rows, cols);
  return cudaGetLastError();
}

}  // namespace fp8gemm::torch_ops
