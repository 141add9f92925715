// fp8gemm's PyTorch ops (namespace torch.ops.fp8gemm): the library's quantisers and GEMMs on
// torch tensors. Python wrappers, fake (meta) implementations and the layouts' documentation:
// fp8gemm/ops.py. Every op
//   - checks its arguments (device, dtype, shape, strides) and raises ValueError naming the op, the
//     argument and the rule before any GPU work; the library's own refusals (std::invalid_argument)
//     become ValueError too, its CUDA failures (std::runtime_error) RuntimeError;
//   - runs on the current CUDA stream of the tensors' device, never synchronises the host and
//     never reads device data on the host, so it can be captured in a CUDA graph (gemm_mx with
//     dequantize_bf16 or requantize_block_scaled refuses capture: the plan cache may free the
//     workspace a graph would read);
//   - allocates its outputs through PyTorch (the caching allocator, graph pools included).
// The GEMM ops keep their plans in an LRU cache keyed by everything a plan is built from but the
// buffers (plan_cache.hpp): a call costs a lookup, a re-pointing of the cached plan when its
// buffers moved (a few driver queries) and the launch.
//
// Tensors (e4m3 = torch.float8_e4m3fn, bf16 = torch.bfloat16; row-major = unit stride along the
// last dimension, any row stride the rule allows; kg = ceil(K / 128), nb = ceil(N / 128)):
//   A      [M, K] e4m3 row-major (activations)         scale_a [M, kg] float32, 1 x 128 groups
//   B      [N, K] e4m3 row-major (weights)             scale_b [nb, kg] float32, 128 x 128 blocks
//   D      [M, N] bf16 or float32 row-major
//   scale_a is read in place when its strides are (1, ld) with ld >= M, ld % 4 == 0 and its data
//   16-byte aligned (mn-major, "TMA-aligned": what quantize_1x128 returns); any other strides are
//   accepted and copied into that layout (one small extra kernel, enqueued only once the library
//   has accepted the call). scale_b is read in place when its strides are (ld, 1) with ld >= kg
//   (contiguous, what quantize_128x128 returns; or padded); other strides are copied likewise.
// This file is host C++ only (compiled by the host compiler against libtorch); the kernels live in
// the fp8gemm static libraries it links.
#include <ATen/ATen.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <c10/util/Exception.h>
#include <torch/library.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "common/launch.hpp"   // require_no_pending_error
#include "common/scaling.hpp"  // ceil_div, round_up
#include "fp8gemm/fp8gemm.hpp"
#include "plan_cache.hpp"

namespace fp8gemm::torch_ops {

// The e4m3 transpose kernel's launch (transpose.cu).
cudaError_t launch_transpose_bytes(const std::uint8_t* in, std::uint8_t* out, std::int64_t batch,
                                   std::int64_t rows, std::int64_t cols, cudaStream_t stream);

namespace {

// ---- messages -----------------------------------------------------------------------------------

std::string torch_name(at::ScalarType t) {
  switch (t) {
    case at::kBFloat16:
      return "torch.bfloat16";
    case at::kFloat:
      return "torch.float32";
    case at::kHalf:
      return "torch.float16";
    case at::kDouble:
      return "torch.float64";
    case at::kFloat8_e4m3fn:
      return "torch.float8_e4m3fn";
    case at::kFloat8_e5m2:
      return "torch.float8_e5m2";
    case at::kInt:
      return "torch.int32";
    case at::kLong:
      return "torch.int64";
    case at::kByte:
      return "torch.uint8";
    default:
      return std::string("torch.") + c10::toString(t);
  }
}

std::string shape_str(at::IntArrayRef s) {
  std::string r = "[";
  for (std::size_t i = 0; i < s.size(); ++i) r += (i ? ", " : "") + std::to_string(s[i]);
  return r + "]";
}

[[noreturn]] void fail(const char* op, const std::string& msg) {
  C10_THROW_ERROR(ValueError, std::string("fp8gemm.") + op + ": " + msg);
}

/// Runs `f`, turning the library's exceptions into PyTorch's: std::invalid_argument (a refused
/// call, before any GPU work) -> ValueError, std::runtime_error (CUDA failure, unsupported GPU)
/// -> RuntimeError; both prefixed with the op.
template <class F>
decltype(auto) library_call(const char* op, F&& f) {
  try {
    return f();
  } catch (const c10::Error&) {
    throw;
  } catch (const std::invalid_argument& e) {
    C10_THROW_ERROR(ValueError, std::string("fp8gemm.") + op + ": " + e.what());
  } catch (const std::exception& e) {
    C10_THROW_ERROR(Error, std::string("fp8gemm.") + op + ": " + e.what());
  }
}

// ---- argument checks ----------------------------------------------------------------------------

/// t is a defined CUDA tensor of `dtype` with `dims` dimensions, on `device` (the first tensor's).
void check_tensor(const char* op, const char* name, const at::Tensor& t, at::ScalarType dtype,
                  int dims, const char* shape_doc, const at::Device& device) {
  if (!t.defined()) fail(op, std::string(name) + " is an undefined tensor");
  if (!t.is_cuda())
    fail(op, std::string(name) + " must be a CUDA tensor; got a tensor on " + t.device().str() +
                 " (fp8gemm's ops run on NVIDIA Hopper GPUs only)");
  if (t.device() != device)
    fail(op, std::string(name) + " is on " + t.device().str() +
                 " but the call's first tensor is on " + device.str() +
                 ": all tensors of one call must be on the same GPU");
  if (t.scalar_type() != dtype)
    fail(op, std::string(name) + " must be " + torch_name(dtype) + "; got " +
                 torch_name(t.scalar_type()));
  if (t.dim() != dims)
    fail(op, std::string(name) + " must be " + std::to_string(dims) + "-D " + shape_doc +
                 "; got shape " + shape_str(t.sizes()));
}

/// The first tensor of a call: a CUDA tensor (its device is the call's).
at::Device call_device(const char* op, const char* name, const at::Tensor& t) {
  if (!t.defined()) fail(op, std::string(name) + " is an undefined tensor");
  if (!t.is_cuda())
    fail(op, std::string(name) + " must be a CUDA tensor; got a tensor on " + t.device().str() +
                 " (fp8gemm's ops run on NVIDIA Hopper GPUs only)");
  return t.device();
}

void check_size(const char* op, const char* name, const at::Tensor& t, int dim, std::int64_t want,
                const std::string& why) {
  if (t.size(dim) != want)
    fail(op, std::string(name) + " has shape " + shape_str(t.sizes()) + ": dimension " +
                 std::to_string(dim) + " must be " + std::to_string(want) + " (" + why + ")");
}

/// The leading dimension (row stride, elements) of a row-major matrix view: the last dimension
/// has unit stride; dimension `row_dim` strides whole rows (>= the row's length). Rows of a
/// one-row matrix have no stride of their own: ld = the row's length then.
std::int64_t row_major_ld(const char* op, const char* name, const at::Tensor& t, int row_dim) {
  const int last = int(t.dim()) - 1;
  const std::int64_t cols = t.size(last);
  if (t.stride(last) != 1 && cols > 1)
    fail(op, std::string(name) +
                 " must be row-major (unit stride along its last dimension); got "
                 "strides " +
                 shape_str(t.strides()) + " for shape " + shape_str(t.sizes()) +
                 " (call .contiguous())");
  if (t.size(row_dim) <= 1) return cols;
  if (t.stride(row_dim) < cols)
    fail(op, std::string(name) + " must have a row stride >= its row length " +
                 std::to_string(cols) + "; got strides " + shape_str(t.strides()) +
                 " (call .contiguous())");
  return t.stride(row_dim);
}

/// A 3-D [G, rows, cols] operand laid out as one [G * rows, cols] row-major matrix (the grouped
/// kernels address group g at row g * rows): returns its ld.
std::int64_t stacked_ld(const char* op, const char* name, const at::Tensor& t) {
  const std::int64_t ld = row_major_ld(op, name, t, 1);
  if (t.size(0) > 1 && t.stride(0) != t.size(1) * ld)
    fail(op, std::string(name) + " must be one row-major [G * " + std::to_string(t.size(1)) + ", " +
                 std::to_string(t.size(2)) +
                 "] matrix (group stride = rows x row stride = " + std::to_string(t.size(1) * ld) +
                 "); got strides " + shape_str(t.strides()) + " (call .contiguous())");
  return ld;
}

/// A quantiser's input `name`: a 2-D bf16 row-major CUDA tensor, the call's first; its device,
/// its rows and columns and its ld.
struct Bf16Matrix {
  at::Device device;
  std::int64_t rows, cols, ld;
};
Bf16Matrix bf16_matrix(const char* op, const char* name, const at::Tensor& t,
                       const char* shape_doc) {
  const at::Device dev = call_device(op, name, t);
  check_tensor(op, name, t, at::kBFloat16, 2, shape_doc, dev);
  return {dev, t.size(0), t.size(1), row_major_ld(op, name, t, 0)};
}

/// A GEMM's A [M, K] and B [N, K]: e4m3, 2-D, on the device of a (the call's first tensor), the
/// same K; their device and M, N, K (strides are the caller's to check).
struct GemmOperands {
  at::Device device;
  std::int64_t M, N, K;
};
GemmOperands gemm_operands(const char* op, const at::Tensor& a, const at::Tensor& b) {
  const at::Device dev = call_device(op, "a", a);
  check_tensor(op, "a", a, at::kFloat8_e4m3fn, 2, "[M, K]", dev);
  check_tensor(op, "b", b, at::kFloat8_e4m3fn, 2, "[N, K]", dev);
  check_size(op, "b", b, 1, a.size(1), "K of a: b is [N, K]");
  return {dev, a.size(0), b.size(0), a.size(1)};
}

bool aligned(const void* p, std::uintptr_t bytes) {
  return reinterpret_cast<std::uintptr_t>(p) % bytes == 0;
}

/// Fills `t` from `from` (a scale tensor's copy into the kernels' layout) if `from` is defined,
/// then forgets it. The caller has called require_no_pending_error (kBeforeGpuWork) first.
void copy_scales_now(at::Tensor& t, at::Tensor& from) {
  if (!from.defined()) return;
  t.copy_(from);
  from = at::Tensor();
}

/// What a GEMM op names when an earlier CUDA error is pending as its plan is used: the op's own GPU
/// work before the GEMM (a scale copy, the tile counter's zeroing) would otherwise be launched by
/// torch, whose launch check takes that error for its own and clears it; the library's rule is to
/// report it as earlier, launch nothing and leave it pending (docs/contract.md).
constexpr const char* kBeforeGpuWork = "before its GPU work";

/// 1 x 128 group scales of a rows x K operand as the kernels read them: [rows, ceil(K / 128)]
/// float32, mn-major (strides (1, ld), ld >= rows, ld % 4 == 0, 16-byte aligned). A tensor already
/// in that layout is used as it is; any other is copied into it: `t` is then a new tensor in that
/// layout and `from` the caller's, and the copy waits for copy_now(), which the ops call once the
/// library has accepted the call (a plan built or re-pointed on `t`), so that a call the library
/// refuses has enqueued nothing (docs/contract.md).
struct GroupScales {
  at::Tensor t;
  GroupScaleLayout layout;
  at::Tensor from;  // defined when t still has to be filled from it
  void copy_now() { copy_scales_now(t, from); }
};
/// A new [rows, ceil(K / 128)] float32 tensor (`o`'s device) in that layout, ld = rows rounded up
/// to a multiple of 4: what the quantisers write.
GroupScales new_group_scales(std::int64_t rows, std::int64_t K, const at::TensorOptions& o) {
  const std::int64_t ld = round_up(rows, 4);
  return {at::empty_strided({rows, ceil_div(K, 128)}, {1, ld}, o.dtype(at::kFloat)),
          GroupScaleLayout{ScaleMajor::mn, ld}, at::Tensor()};
}
/// Checks s (dtype, device, rank, sizes) and returns it in the kernels' layout: s itself, or a new
/// tensor to be filled at copy_now(). No GPU work here (at most an allocation), so a later
/// refusal of the call, the op's or the library's, leaves nothing enqueued.
GroupScales group_scales(const char* op, const char* name, const at::Tensor& s, std::int64_t rows,
                         std::int64_t K, const char* rows_name, const char* k_name,
                         const at::Device& device) {
  const std::string doc = std::string("[") + rows_name + ", ceil(" + k_name + " / 128)]";
  check_tensor(op, name, s, at::kFloat, 2, doc.c_str(), device);
  const std::int64_t kg = ceil_div(K, 128);
  check_size(op, name, s, 0, rows, std::string(rows_name) + ": one scale row per row");
  check_size(op, name, s, 1, kg,
             std::string("ceil(") + k_name + " / 128) = " + std::to_string(kg) + " groups of 128");
  const bool ok = (rows == 1 || s.stride(0) == 1) &&
                  (kg == 1 || (s.stride(1) >= rows && s.stride(1) % 4 == 0)) &&
                  aligned(s.data_ptr(), 16);
  if (ok) {
    const std::int64_t ld = kg == 1 ? round_up(rows, 4) : s.stride(1);
    return {s, GroupScaleLayout{ScaleMajor::mn, ld}, at::Tensor()};
  }
  GroupScales copy = new_group_scales(rows, K, s.options());  // an allocation, no GPU work
  copy.from = s;
  return copy;
}

/// 128 x 128 block scales: [nb, kg] (one matrix) or [G, nb, kg] (G stacked), float32, k-major:
/// unit stride along kg, block rows ld >= kg apart (groups nb * ld apart). Other strides are
/// copied into the contiguous layout, at copy_now() as for GroupScales.
struct BlockScales {
  at::Tensor t;
  BlockScaleLayout layout;
  at::Tensor from;  // defined when t still has to be filled from it
  void copy_now() { copy_scales_now(t, from); }
};
/// As group_scales(), for 128 x 128 block scales.
BlockScales block_scales(const char* op, const char* name, const at::Tensor& s, std::int64_t G,
                         std::int64_t N, std::int64_t K, const at::Device& device) {
  const bool grouped = G > 0;
  check_tensor(op, name, s, at::kFloat, grouped ? 3 : 2,
               grouped ? "[G, ceil(N / 128), ceil(K / 128)]" : "[ceil(N / 128), ceil(K / 128)]",
               device);
  const std::int64_t nb = ceil_div(N, 128), kg = ceil_div(K, 128);
  const int d = grouped ? 1 : 0;
  if (grouped) check_size(op, name, s, 0, G, "G: one block grid per group");
  check_size(op, name, s, d, nb, "ceil(N / 128) = " + std::to_string(nb) + " block rows");
  check_size(op, name, s, d + 1, kg, "ceil(K / 128) = " + std::to_string(kg) + " block columns");
  std::int64_t ld = nb > 1 ? s.stride(d) : (grouped && G > 1 ? s.stride(0) : kg);
  bool ok = (kg == 1 || s.stride(d + 1) == 1) && ld >= kg;
  if (grouped && G > 1) ok = ok && s.stride(0) == nb * ld;
  if (ok) return {s, BlockScaleLayout{ld}, at::Tensor()};
  // A contiguous tensor of s's shape, filled at copy_now() (an allocation now, no GPU work).
  return {at::empty(s.sizes(), s.options().memory_format(at::MemoryFormat::Contiguous)),
          BlockScaleLayout{kg}, s};
}

/// The engine's K rule (rows of A and B 16 bytes apart for TMA), checked by the op with its other
/// arguments, before it plans a scale tensor's copy into the kernels' layout.
void check_k16(const char* op, const char* name, std::int64_t K) {
  if (K % 16 != 0)
    fail(op, std::string(name) + " = " + std::to_string(K) +
                 " must be a multiple of 16 (the rows of the FP8 operands must be 16 bytes apart "
                 "for TMA)");
}

/// offsets / masked_m: 1-D int32 on the device, unit stride, `count` entries.
void check_index_vector(const char* op, const char* name, const at::Tensor& t,
                        const at::Device& device, const char* doc) {
  check_tensor(op, name, t, at::kInt, 1, doc, device);
  if (t.size(0) > 1 && t.stride(0) != 1)
    fail(op, std::string(name) + " must be contiguous; got stride " + std::to_string(t.stride(0)));
}

cudaStream_t current_stream(const at::Device& device) {
  return c10::cuda::getCurrentCUDAStream(device.index()).stream();
}

const std::uint16_t* bf16_ptr(const at::Tensor& t) {
  return static_cast<const std::uint16_t*>(t.data_ptr());
}
std::uint8_t* e4m3_ptr(const at::Tensor& t) { return static_cast<std::uint8_t*>(t.data_ptr()); }
float* f32_ptr(const at::Tensor& t) { return static_cast<float*>(t.data_ptr()); }
int* i32_ptr(const at::Tensor& t) { return static_cast<int*>(t.data_ptr()); }

// ---- SMs the GEMMs may use ----------------------------------------------------------------------

// fp8gemm.ops.set_max_sms(n): SMs every GEMM op's persistent grid may use from the next call on
// (0: all), process-wide, as DeepGEMM's set_num_sms: it leaves the other SMs to kernels that run
// beside the GEMM (an expert-parallel all-to-all). Each op reads it once per call and passes it
// to its plan's options (max_sms); it is part of every GEMM plan's key, so a change builds new
// plans and never re-points one built for another count. The quantisers are not persistent
// grids and ignore it.
std::atomic<int> g_max_sms{0};

// ---- plan caches --------------------------------------------------------------------------------

// Never destroyed (allocated once, on purpose): at process exit the CUDA runtime may already be
// gone when static destructors run, and nothing here needs tearing down.
PlanCacheStats& g_stats = *new PlanCacheStats;
PlanCache<PerTensorPlan>& g_per_tensor = *new PlanCache<PerTensorPlan>(g_stats);
PlanCache<BlockScaledPlan>& g_block_scaled = *new PlanCache<BlockScaledPlan>(g_stats);
PlanCache<GroupedPlan>& g_grouped = *new PlanCache<GroupedPlan>(g_stats);
PlanCache<WeightGradPlan>& g_wgrad = *new PlanCache<WeightGradPlan>(g_stats);
PlanCache<MxPlan>& g_mx = *new PlanCache<MxPlan>(g_stats);

enum PlanKind : std::int64_t { kPerTensor = 1, kBlockScaled = 2, kGrouped = 3, kWgrad = 4, kMx = 5 };

/// The tile counter for a grouped plan that takes one (GroupedOptions::counter_schedule: the
/// counter kernel's CTAs draw their tiles from it; every run leaves it zero again). A counter
/// serves the runs that are ordered and must never serve two at once, so: eagerly, one per
/// (device, stream), made (zeroed on that stream) at its first use and kept; while `stream` is
/// capturing a CUDA graph, a fresh one for that call, zeroed inside the graph (`keep` holds it
/// until the launch is enqueued; the caching allocator keeps its memory for the graph), so that
/// graphs captured on one stream and replayed at once on others never share one.
bool capturing(cudaStream_t stream) {
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  const cudaError_t e = cudaStreamIsCapturing(stream, &capture);
  if (e != cudaSuccess)
    throw std::runtime_error(std::string("fp8gemm: cudaStreamIsCapturing: ") + cudaGetErrorString(e));
  return capture != cudaStreamCaptureStatusNone;
}

int* tile_counter_for(const at::Device& dev, cudaStream_t stream, at::Tensor& keep) {
  const auto options = at::TensorOptions().dtype(at::kInt).device(dev);
  if (capturing(stream)) {
    keep = at::zeros({2}, options);
    return i32_ptr(keep);
  }
  // Never destroyed, as the plan caches: a few bytes per stream used.
  static std::mutex& mutex = *new std::mutex;
  static auto& counters = *new std::map<std::pair<int, std::uintptr_t>, at::Tensor>;
  const std::lock_guard<std::mutex> lock(mutex);
  at::Tensor& c = counters[{int(dev.index()), reinterpret_cast<std::uintptr_t>(stream)}];
  if (!c.defined()) c = at::zeros({2}, options);  // zeroed on the current stream, `stream`
  return i32_ptr(c);
}

// ===================================== quantisers ================================================

std::tuple<at::Tensor, at::Tensor> quantize_1x128(const at::Tensor& x, bool pow2_scales) {
  constexpr const char* op = "quantize_1x128";
  const Bf16Matrix in = bf16_matrix(op, "x", x, "[M, K]");
  const std::int64_t M = in.rows, K = in.cols;
  at::Tensor q = at::empty({M, K}, x.options().dtype(at::kFloat8_e4m3fn));
  const GroupScales s = new_group_scales(M, K, x.options());
  if (M == 0 || K == 0) return {q, s.t};
  c10::cuda::CUDAGuard guard(in.device);
  library_call(op, [&] {
    fp8gemm::quantize_1x128(bf16_ptr(x), M, K, in.ld, e4m3_ptr(q), K, f32_ptr(s.t), s.layout,
                            QuantizeOptions{pow2_scales}, current_stream(in.device));
  });
  return {q, s.t};
}

std::tuple<at::Tensor, at::Tensor> quantize_128x128(const at::Tensor& w, bool pow2_scales) {
  constexpr const char* op = "quantize_128x128";
  const Bf16Matrix in = bf16_matrix(op, "w", w, "[N, K]");
  const std::int64_t N = in.rows, K = in.cols;
  const std::int64_t nb = ceil_div(N, 128), kg = ceil_div(K, 128);
  at::Tensor q = at::empty({N, K}, w.options().dtype(at::kFloat8_e4m3fn));
  at::Tensor s = at::empty({nb, kg}, w.options().dtype(at::kFloat));
  if (N == 0 || K == 0) return {q, s};
  c10::cuda::CUDAGuard guard(in.device);
  library_call(op, [&] {
    fp8gemm::quantize_128x128(bf16_ptr(w), N, K, in.ld, e4m3_ptr(q), K, f32_ptr(s),
                              BlockScaleLayout{kg}, QuantizeOptions{pow2_scales},
                              current_stream(in.device));
  });
  return {q, s};
}

/// w [N, K] -> (q [N, K], s [nb, kg], q_t [K, N], s_t [kg, nb]), all contiguous: W quantised
/// 128 x 128 and W^T (q and the grid transposed) from one read of w, one launch (Fp8Linear's
/// forward and input-gradient operands).
std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor> quantize_128x128_dual(const at::Tensor& w,
                                                                                 bool pow2_scales) {
  constexpr const char* op = "quantize_128x128_dual";
  const Bf16Matrix in = bf16_matrix(op, "w", w, "[N, K]");
  const std::int64_t N = in.rows, K = in.cols;
  const std::int64_t nb = ceil_div(N, 128), kg = ceil_div(K, 128);
  const auto o = w.options();
  at::Tensor q = at::empty({N, K}, o.dtype(at::kFloat8_e4m3fn));
  at::Tensor s = at::empty({nb, kg}, o.dtype(at::kFloat));
  at::Tensor q_t = at::empty({K, N}, o.dtype(at::kFloat8_e4m3fn));
  at::Tensor s_t = at::empty({kg, nb}, o.dtype(at::kFloat));
  if (N == 0 || K == 0) return {q, s, q_t, s_t};
  c10::cuda::CUDAGuard guard(in.device);
  library_call(op, [&] {
    fp8gemm::quantize_128x128_dual(bf16_ptr(w), N, K, in.ld, e4m3_ptr(q), K, f32_ptr(s),
                                   BlockScaleLayout{kg}, e4m3_ptr(q_t), N, f32_ptr(s_t),
                                   BlockScaleLayout{nb}, QuantizeOptions{pow2_scales},
                                   current_stream(in.device));
  });
  return {q, s, q_t, s_t};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor> quantize_1x128_dual(const at::Tensor& x,
                                                                               bool pow2_scales) {
  constexpr const char* op = "quantize_1x128_dual";
  const Bf16Matrix in = bf16_matrix(op, "x", x, "[M, K]");
  const std::int64_t M = in.rows, K = in.cols;
  const auto o = x.options();
  at::Tensor q = at::empty({M, K}, o.dtype(at::kFloat8_e4m3fn));
  const GroupScales s = new_group_scales(M, K, o);
  at::Tensor q_t = at::empty({K, M}, o.dtype(at::kFloat8_e4m3fn));
  const GroupScales s_t = new_group_scales(K, M, o);  // x^T: K rows in groups of 128 along M
  if (M == 0 || K == 0) return {q, s.t, q_t, s_t.t};
  c10::cuda::CUDAGuard guard(in.device);
  library_call(op, [&] {
    fp8gemm::quantize_1x128_dual(bf16_ptr(x), M, K, in.ld, e4m3_ptr(q), K, f32_ptr(s.t), s.layout,
                                 e4m3_ptr(q_t), M, f32_ptr(s_t.t), s_t.layout,
                                 QuantizeOptions{pow2_scales}, current_stream(in.device));
  });
  return {q, s.t, q_t, s_t.t};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> quantize_tokens_transposed_1x128(
    const at::Tensor& x, const at::Tensor& offsets, std::optional<std::int64_t> t_pad_capacity,
    bool pow2_scales) {
  constexpr const char* op = "quantize_tokens_transposed_1x128";
  const at::Device dev = call_device(op, "x", x);
  check_tensor(op, "x", x, at::kBFloat16, 2, "[T, C] (tokens sorted by expert)", dev);
  check_index_vector(op, "offsets", offsets, dev, "[G + 1] (each expert's first token, then T)");
  const std::int64_t T = x.size(0), C = x.size(1), G = offsets.size(0) - 1;
  if (G < 1) fail(op, "offsets must hold G + 1 >= 2 entries; got " + std::to_string(G + 1));
  if (G > kMaxTokenGroups)
    fail(op, "G = " + std::to_string(G) + " experts; at most " + std::to_string(kMaxTokenGroups));
  const std::int64_t ldx = row_major_ld(op, "x", x, 0);
  const std::int64_t cap = t_pad_capacity.value_or(max_padded_tokens(T, G));
  if (cap < 0) fail(op, "t_pad_capacity = " + std::to_string(cap) + " must be >= 0");
  const auto o = x.options();
  at::Tensor q_t = at::empty({C, cap}, o.dtype(at::kFloat8_e4m3fn));
  const GroupScales s_t = new_group_scales(C, cap, o);  // x^T: C rows in groups of 128 tokens
  at::Tensor padded = at::empty({G + 1}, o.dtype(at::kInt));
  if (T == 0 || C == 0) {  // nothing to quantise: zero codes, zero scales, zero offsets
    q_t.view(at::kByte).zero_();
    s_t.t.zero_();
    padded.zero_();
    return {q_t, s_t.t, padded};
  }
  c10::cuda::CUDAGuard guard(dev);
  library_call(op, [&] {
    fp8gemm::quantize_tokens_transposed_1x128(
        bf16_ptr(x), T, C, ldx, i32_ptr(offsets), int(G), e4m3_ptr(q_t), cap, cap, f32_ptr(s_t.t),
        s_t.layout, i32_ptr(padded), QuantizeOptions{pow2_scales}, current_stream(dev));
  });
  return {q_t, s_t.t, padded};
}

/// q [rows, cols] or [batch, rows, cols] e4m3 -> its transpose [cols, rows] / [batch, cols, rows],
/// contiguous. The kernel takes contiguous, 16-byte aligned input with rows and cols multiples of
/// 16 (what the layers' weights are); anything else is copied by torch (slower, same result).
at::Tensor transpose_e4m3(const at::Tensor& q) {
  constexpr const char* op = "transpose_e4m3";
  const at::Device dev = call_device(op, "q", q);
  if (q.dim() != 2 && q.dim() != 3)
    fail(op, "q must be 2-D [rows, cols] or 3-D [batch, rows, cols]; got shape " +
                 shape_str(q.sizes()));
  check_tensor(op, "q", q, at::kFloat8_e4m3fn, int(q.dim()), "", dev);
  const std::int64_t batch = q.dim() == 3 ? q.size(0) : 1;
  const std::int64_t rows = q.size(-2), cols = q.size(-1);
  at::Tensor out = q.dim() == 3 ? at::empty({batch, cols, rows}, q.options())
                                : at::empty({cols, rows}, q.options());
  if (q.numel() == 0) return out;
  // An earlier CUDA error still pending is reported as such before this op's GPU work, and left
  // for its owner (docs/contract.md): the kernel's launch check below (or torch's copy) would
  // take it for its own and clear it (session 70, from a review; as the GEMM ops do).
  require_no_pending_error("fp8gemm.transpose_e4m3");
  const bool fast = q.is_contiguous() && rows % 16 == 0 && cols % 16 == 0 &&
                    aligned(q.data_ptr(), 16) && ceil_div(rows, 64) <= 65535 && batch <= 65535;
  if (!fast) {
    out.copy_(q.transpose(-2, -1));
    return out;
  }
  c10::cuda::CUDAGuard guard(dev);
  const cudaError_t err =
      launch_transpose_bytes(e4m3_ptr(q), e4m3_ptr(out), batch, rows, cols, current_stream(dev));
  if (err != cudaSuccess)
    C10_THROW_ERROR(Error, std::string("fp8gemm.transpose_e4m3: launch failed: ") +
                               cudaGetErrorName(err) + " (" + cudaGetErrorString(err) + ")");
  return out;
}

// ===================================== MXFP8 =====================================================
// Chapter 9's recipe: e4m3 in blocks of 1 x 32 along K, one UE8M0 code per block, the codes as a
// flat torch.uint8 tensor in the swizzled 128 x 4 tile layout that tcgen05 and cuBLAS read
// (quantize_gpu.hpp, "MXFP8": mx_1x32_scale_bytes(rows, K) bytes, padding 0).

MxExponentRule mx_rule(const char* op, const std::string& rule) {
  if (rule == "floor_ocp") return MxExponentRule::floor_ocp;
  if (rule == "rceil") return MxExponentRule::rceil;
  fail(op, "rule = '" + rule + "' must be 'floor_ocp' (OCP MX v1.0) or 'rceil' (cuBLAS, torchao)");
}

/// MXFP8's K rule for a [rows, K] operand `t` named `name`: one UE8M0 scale per 1 x 32 block.
void require_mx_k(const char* op, const char* name, const at::Tensor& t) {
  const std::int64_t K = t.size(t.dim() - 1);
  if (K % 32 != 0)
    fail(op, std::string(name) + " has shape " + shape_str(t.sizes()) + ": K = " +
                 std::to_string(K) + " must be a multiple of 32 (one UE8M0 scale per 1 x 32 block)");
}

std::tuple<at::Tensor, at::Tensor> quantize_mx_1x32(const at::Tensor& x, std::string rule) {
  constexpr const char* op = "quantize_mx_1x32";
  const Bf16Matrix in = bf16_matrix(op, "x", x, "[M, K]");
  const std::int64_t M = in.rows, K = in.cols;
  const MxExponentRule r = mx_rule(op, rule);
  require_mx_k(op, "x", x);
  at::Tensor q = at::empty({M, K}, x.options().dtype(at::kFloat8_e4m3fn));
  at::Tensor s = at::empty({M == 0 || K == 0 ? 0 : mx_1x32_scale_bytes(M, K)},
                           x.options().dtype(at::kByte));
  if (M == 0 || K == 0) return {q, s};
  c10::cuda::CUDAGuard guard(in.device);
  library_call(op, [&] {
    fp8gemm::quantize_mx_1x32(bf16_ptr(x), M, K, in.ld, e4m3_ptr(q), K, e4m3_ptr(s), r,
                              current_stream(in.device));
  });
  return {q, s};
}

/// An operand's MX scale codes: a contiguous 1-D torch.uint8 tensor on the call's device with at
/// least mx_1x32_scale_bytes(rows, K) bytes.
void check_mx_scales(const char* op, const char* name, const at::Tensor& s, std::int64_t rows,
                     std::int64_t K, const char* rows_name, const at::Device& dev) {
  check_tensor(op, name, s, at::kByte, 1,
               "(the UE8M0 codes in the swizzled 128 x 4 tile layout, as quantize_mx_1x32 "
               "returns them)",
               dev);
  const std::int64_t need = mx_1x32_scale_bytes(rows, K);
  if (s.numel() < need)
    fail(op, std::string(name) + " has " + std::to_string(s.numel()) + " bytes; " + rows_name +
                 " = " + std::to_string(rows) + ", K = " + std::to_string(K) + " need " +
                 std::to_string(need) + " (round_up(" + rows_name +
                 ", 128) x round_up(K / 32, 4))");
  if (s.numel() > 1 && s.stride(0) != 1)
    fail(op, std::string(name) + " must be contiguous; got stride " + std::to_string(s.stride(0)));
}

/// MXFP8 -> chapter 7's format (fp8gemm::requantize_mx; NOT exact, common/mx.hpp states the rule):
/// q [rows, K] e4m3 (row-major, K a multiple of 32) and its swizzled UE8M0 scales -> (codes [rows,
/// K] e4m3 contiguous, FP32 scales) as quantize_1x128 (weights = false: one scale per 1 x 128
/// group, [rows, ceil(K / 128)] in its layout) or quantize_128x128 (weights = true: one per
/// 128 x 128 block, [ceil(rows / 128), ceil(K / 128)] contiguous) returns them, so the results
/// go to gemm_block_scaled as they are. For fixed MX weights: their call once, the activations'
/// per step (chapter 9's README, "Weights re-quantised once").
std::tuple<at::Tensor, at::Tensor> requantize_mx_op(const char* op, const at::Tensor& q,
                                                    const at::Tensor& scale, bool weights) {
  const at::Device dev = call_device(op, "q", q);
  check_tensor(op, "q", q, at::kFloat8_e4m3fn, 2, weights ? "[N, K]" : "[M, K]", dev);
  const std::int64_t rows = q.size(0), K = q.size(1);
  const std::int64_t ldq = row_major_ld(op, "q", q, 0);
  require_mx_k(op, "q", q);
  check_mx_scales(op, "scale", scale, rows, K, weights ? "N" : "M", dev);
  at::Tensor out = at::empty({rows, K}, q.options());
  GroupScales ga;
  at::Tensor sb;
  if (weights)
    sb = at::empty({ceil_div(rows, 128), ceil_div(K, 128)}, q.options().dtype(at::kFloat));
  else
    ga = new_group_scales(rows, K, q.options());
  if (rows == 0 || K == 0) return {out, weights ? sb : ga.t};
  c10::cuda::CUDAGuard guard(dev);
  library_call(op, [&] {
    const MxRequantOperand o{e4m3_ptr(q), rows, K, ldq, e4m3_ptr(scale), e4m3_ptr(out), K,
                             f32_ptr(weights ? sb : ga.t)};
    if (weights)
      fp8gemm::requantize_mx(nullptr, {}, &o, BlockScaleLayout{ceil_div(K, 128)},
                             current_stream(dev));
    else
      fp8gemm::requantize_mx(&o, ga.layout, nullptr, {}, current_stream(dev));
  });
  return {out, weights ? sb : ga.t};
}

std::tuple<at::Tensor, at::Tensor> requantize_mx_1x128(const at::Tensor& q, const at::Tensor& scale) {
  return requantize_mx_op("requantize_mx_1x128", q, scale, false);
}
std::tuple<at::Tensor, at::Tensor> requantize_mx_128x128(const at::Tensor& q,
                                                         const at::Tensor& scale) {
  return requantize_mx_op("requantize_mx_128x128", q, scale, true);
}

// ====================================== GEMMs ====================================================

/// A new [M, N] D for a dense GEMM whose a [M, K] and b [N, K] are e4m3 on one GPU (checked here),
/// of out_dtype: torch.bfloat16 (None) or torch.float32.
at::Tensor new_dense_out(const char* op, const at::Tensor& a, const at::Tensor& b,
                         std::optional<at::ScalarType> out_dtype) {
  const at::Device dev = call_device(op, "a", a);
  const at::ScalarType dt = out_dtype.value_or(at::kBFloat16);
  if (dt != at::kBFloat16 && dt != at::kFloat)
    fail(op, "out_dtype must be torch.bfloat16 or torch.float32; got " + torch_name(dt));
  check_tensor(op, "a", a, at::kFloat8_e4m3fn, 2, "[M, K]", dev);
  check_tensor(op, "b", b, at::kFloat8_e4m3fn, 2, "[N, K]", dev);
  return at::empty({a.size(0), b.size(0)}, a.options().dtype(dt));
}

/// The checks of a dense GEMM's out (block-scaled, per-tensor): [M, N] torch.bfloat16 or
/// torch.float32 on `dev` (any row stride: row_major_ld), float32 if `accumulate`. Returns
/// whether it is float32.
bool dense_out_is_f32(const char* op, const at::Tensor& out, std::int64_t M, std::int64_t N,
                      bool accumulate, const at::Device& dev) {
  if (!out.defined()) fail(op, "out is an undefined tensor");
  if (out.scalar_type() != at::kBFloat16 && out.scalar_type() != at::kFloat)
    fail(op, "out must be torch.bfloat16 or torch.float32; got " + torch_name(out.scalar_type()));
  const bool f32 = out.scalar_type() == at::kFloat;
  check_tensor(op, "out", out, out.scalar_type(), 2, "[M, N]", dev);
  check_size(op, "out", out, 0, M, "M, the rows of a");
  check_size(op, "out", out, 1, N, "N, the rows of b");
  if (accumulate && !f32)
    fail(op,
         "accumulate=True needs a torch.float32 out (D = A.B^T + D is kept in float32; a "
         "bf16 D would be rounded twice)");
  return f32;
}

/// D (+)= A . B^T block-scaled into `out`, `iters` times (iters > 1: the benchmark's C++ loop).
void block_scaled_into(const char* op, const at::Tensor& a, const at::Tensor& scale_a,
                       const at::Tensor& b, const at::Tensor& scale_b, const at::Tensor& out,
                       bool accumulate, std::int64_t iters) {
  const GemmOperands ab = gemm_operands(op, a, b);
  const at::Device dev = ab.device;
  const std::int64_t M = ab.M, N = ab.N, K = ab.K;
  const std::int64_t lda = row_major_ld(op, "a", a, 0), ldb = row_major_ld(op, "b", b, 0);
  const bool f32 = dense_out_is_f32(op, out, M, N, accumulate, dev);
  check_k16(op, "K", K);
  GroupScales sa = group_scales(op, "scale_a", scale_a, M, K, "M", "K", dev);
  BlockScales sb = block_scales(op, "scale_b", scale_b, 0, N, K, dev);
  const std::int64_t ldd = row_major_ld(op, "out", out, 0);
  if (iters < 1) fail(op, "iters = " + std::to_string(iters) + " must be >= 1");
  if (M == 0 || N == 0) return;
  c10::cuda::CUDAGuard guard(dev);
  library_call(op, [&] {
    const BlockScaledGemm g{.M = M,
                            .N = N,
                            .K = K,
                            .A = e4m3_ptr(a),
                            .lda = lda,
                            .B = e4m3_ptr(b),
                            .ldb = ldb,
                            .scale_a = f32_ptr(sa.t),
                            .scale_a_layout = sa.layout,
                            .scale_b = f32_ptr(sb.t),
                            .scale_b_layout = sb.layout,
                            .D = out.data_ptr(),
                            .ldd = ldd,
                            .output = f32 ? BlockScaledOutput::f32 : BlockScaledOutput::bf16,
                            .accumulate = accumulate};
    const int max_sms = g_max_sms.load(std::memory_order_relaxed);
    PlanKey key;  // everything but the buffers (plan_cache.hpp)
    key.add(kBlockScaled).add(dev.index()).add(M).add(N).add(K).add(lda).add(ldb).add(max_sms);
    key.add(sa.layout.ld).add(sb.layout.ld).add(ldd).add(std::int64_t(f32));
    key.add(std::int64_t(accumulate)).add(std::int64_t(aligned(g.D, 16)));
    PlanKey buffers;
    buffers.add(g.A).add(g.B).add(g.scale_a).add(g.scale_b).add(g.D);
    const cudaStream_t stream = current_stream(dev);
    g_block_scaled.run(
        key, buffers,
        [&] { return std::make_unique<BlockScaledPlan>(g, BlockScaledOptions{.max_sms = max_sms}); },
        [&](BlockScaledPlan& p) { p.rebind(g); },
        [&](BlockScaledPlan& p) {
          require_no_pending_error(kBeforeGpuWork);
          sa.copy_now();  // the library accepted the call: now the scales' copies, if any
          sb.copy_now();
          for (std::int64_t i = 0; i < iters; ++i) p.run(stream);
        });
  });
}

at::Tensor gemm_block_scaled(const at::Tensor& a, const at::Tensor& scale_a, const at::Tensor& b,
                             const at::Tensor& scale_b, std::optional<at::ScalarType> out_dtype) {
  constexpr const char* op = "gemm_block_scaled";
  at::Tensor out = new_dense_out(op, a, b, out_dtype);
  block_scaled_into(op, a, scale_a, b, scale_b, out, false, 1);
  return out;
}

void gemm_block_scaled_out(const at::Tensor& a, const at::Tensor& scale_a, const at::Tensor& b,
                           const at::Tensor& scale_b, const at::Tensor& out, bool accumulate) {
  block_scaled_into("gemm_block_scaled_out", a, scale_a, b, scale_b, out, accumulate, 1);
}

void gemm_block_scaled_loop(const at::Tensor& a, const at::Tensor& scale_a, const at::Tensor& b,
                            const at::Tensor& scale_b, const at::Tensor& out, std::int64_t iters) {
  block_scaled_into("_gemm_block_scaled_loop", a, scale_a, b, scale_b, out, false, iters);
}

/// At most one of gemm_mx's two converting paths: refused first, whatever the tensors.
void check_one_mx_path(const char* op, bool dequantize_bf16, bool requantize_block_scaled) {
  if (dequantize_bf16 && requantize_block_scaled)
    fail(op, "dequantize_bf16=True and requantize_block_scaled=True are two different paths: set "
             "one of them");
}

/// D (+)= A . B^T in MXFP8 into `out` ([M, N] bfloat16, or float32 on Hopper with accumulate
/// allowed; dense_out_is_f32's rules): gemm_mx and gemm_mx_out.
void mx_into(const char* op, const at::Tensor& a, const at::Tensor& scale_a, const at::Tensor& b,
             const at::Tensor& scale_b, const at::Tensor& out, bool accumulate,
             bool dequantize_bf16, bool requantize_block_scaled) {
  const GemmOperands ab = gemm_operands(op, a, b);
  const at::Device dev = ab.device;
  const std::int64_t M = ab.M, N = ab.N, K = ab.K;
  const std::int64_t lda = row_major_ld(op, "a", a, 0), ldb = row_major_ld(op, "b", b, 0);
  require_mx_k(op, "a", a);  // b's K is a's (gemm_operands)
  check_mx_scales(op, "scale_a", scale_a, M, K, "M", dev);
  check_mx_scales(op, "scale_b", scale_b, N, K, "N", dev);
  const bool f32 = dense_out_is_f32(op, out, M, N, accumulate, dev);
  const std::int64_t ldd = row_major_ld(op, "out", out, 0);
  if (M == 0 || N == 0) return;
  c10::cuda::CUDAGuard guard(dev);
  library_call(op, [&] {
    MxGemm g;
    g.M = M;
    g.N = N;
    g.K = K;
    g.A = e4m3_ptr(a);
    g.lda = lda;
    g.B = e4m3_ptr(b);
    g.ldb = ldb;
    g.scale_a = e4m3_ptr(scale_a);
    g.scale_a_bytes = scale_a.numel();
    g.scale_b = e4m3_ptr(scale_b);
    g.scale_b_bytes = scale_b.numel();
    g.D = out.data_ptr();
    g.ldd = ldd;
    g.output = f32 ? MxOutput::f32 : MxOutput::bf16;
    g.accumulate = accumulate;
    const int max_sms = g_max_sms.load(std::memory_order_relaxed);
    PlanKey key;  // everything but the buffers (plan_cache.hpp)
    key.add(kMx).add(dev.index()).add(M).add(N).add(K).add(lda).add(ldb).add(max_sms);
    key.add(std::int64_t(dequantize_bf16)).add(std::int64_t(requantize_block_scaled));
    key.add(std::int64_t(aligned(g.D, 16)));
    key.add(ldd).add(std::int64_t(f32)).add(std::int64_t(accumulate));
    const cudaStream_t stream = current_stream(dev);
    if (dequantize_bf16 || requantize_block_scaled) {
      // These paths' plans own a workspace that every run writes (the bf16 operands, or the
      // re-quantised ones): one plan per stream, so that two streams never share it; and no
      // CUDA-graph capture, since the cache may drop the plan, and free its workspace, while a
      // captured graph still reads it.
      const char* path = dequantize_bf16 ? "dequantize_bf16" : "requantize_block_scaled";
      if (capturing(stream))
        fail(op, std::string(path) +
                     "=True cannot be captured in a CUDA graph (its cached plan owns a workspace "
                     "that the plan cache may free while the graph still uses it); capture the "
                     "default path");
      key.add(std::int64_t(reinterpret_cast<std::uintptr_t>(stream)));
    }
    PlanKey buffers;
    buffers.add(g.A).add(g.B).add(g.scale_a).add(g.scale_b).add(g.D);
    g_mx.run(
        key, buffers,
        [&] {
          MxOptions o;
          o.hopper_dequantize_bf16 = dequantize_bf16;
          o.hopper_requantize_block_scaled = requantize_block_scaled;
          o.max_sms = max_sms;
          return std::make_unique<MxPlan>(g, o);
        },
        [&](MxPlan& p) { p.rebind(g); }, [&](MxPlan& p) { p.run(stream); });
  });
}

at::Tensor gemm_mx(const at::Tensor& a, const at::Tensor& scale_a, const at::Tensor& b,
                   const at::Tensor& scale_b, bool dequantize_bf16, bool requantize_block_scaled,
                   std::optional<at::ScalarType> out_dtype) {
  constexpr const char* op = "gemm_mx";
  check_one_mx_path(op, dequantize_bf16, requantize_block_scaled);
  at::Tensor out = new_dense_out(op, a, b, out_dtype);
  mx_into(op, a, scale_a, b, scale_b, out, false, dequantize_bf16, requantize_block_scaled);
  return out;
}

void gemm_mx_out(const at::Tensor& a, const at::Tensor& scale_a, const at::Tensor& b,
                 const at::Tensor& scale_b, const at::Tensor& out, bool accumulate,
                 bool dequantize_bf16, bool requantize_block_scaled) {
  constexpr const char* op = "gemm_mx_out";
  check_one_mx_path(op, dequantize_bf16, requantize_block_scaled);
  mx_into(op, a, scale_a, b, scale_b, out, accumulate, dequantize_bf16, requantize_block_scaled);
}

/// The index of kernel `name` in `all` (-1 for "": the plan's default), or a refusal that says it
/// is not `what` and lists the compiled ones.
std::int64_t find_kernel_index(const char* op, const std::string& name,
                               const std::vector<engine::KernelInfo>& all, const char* what) {
  if (name.empty()) return -1;
  std::string names;
  for (std::size_t i = 0; i < all.size(); ++i) {
    if (all[i].name == name) return std::int64_t(i);
    names += (i ? ", " : "") + all[i].name;
  }
  fail(op, "kernel '" + name + "' is not " + what + "; compiled: " + names);
}

/// A grouped forward kernel by name (ch08::kernels()).
std::int64_t grouped_kernel_index(const char* op, const std::string& name) {
  return find_kernel_index(op, name, ch08::kernels(), "a grouped forward kernel");
}

/// Where the grouped forward writes D and how: a new tensor of `out_dtype` (none: bf16, or
/// float32 for an FP32 kernel named), or the caller's `out` (accumulate: D = A.B^T + out,
/// float32 only).
struct GroupedOut {
  std::optional<at::ScalarType> out_dtype;
  const at::Tensor* out = nullptr;
  bool accumulate = false;
};

/// The grouped forward: contiguous (offsets) or masked (masked_m), into a new tensor or the
/// caller's out (GroupedOut), bf16 or float32. kernel: a name of ch08::kernels() ("" = the
/// plan's default; the benchmark's same-run comparison of kernels, _gemm_grouped_kernel).
/// check_offsets: chapter 8's checking mode (Options::check_offsets: the description validated
/// on the device before the GEMM, a violation raised; synchronises).
at::Tensor grouped(const char* op, bool masked, const at::Tensor& a, const at::Tensor& scale_a,
                   const at::Tensor& b, const at::Tensor& scale_b, const at::Tensor& groups,
                   const std::string& kernel = "", bool check_offsets = false,
                   const GroupedOut& into = {}) {
  const std::int64_t kernel_index = grouped_kernel_index(op, kernel);
  const at::Device dev = call_device(op, "a", a);
  check_tensor(op, "a", a, at::kFloat8_e4m3fn, masked ? 3 : 2,
               masked ? "[G, M_max, K]" : "[rows, K] (rows sorted by group)", dev);
  check_tensor(op, "b", b, at::kFloat8_e4m3fn, 3, "[G, N, K]", dev);
  const std::int64_t G = b.size(0), N = b.size(1), K = b.size(2);
  if (G < 1) fail(op, "b has G = 0 groups; at least one is needed");
  check_size(op, "a", a, masked ? 2 : 1, K, "K of b: b is [G, N, K]");
  if (masked) {
    check_size(op, "a", a, 0, G, "G of b: one [M_max, K] block per group");
    check_index_vector(op, "masked_m", groups, dev, "[G] (the valid rows of each group)");
    check_size(op, "masked_m", groups, 0, G, "G of b");
  } else {
    check_index_vector(op, "offsets", groups, dev, "[G + 1] (each group's first row, then rows)");
    check_size(op, "offsets", groups, 0, G + 1, "G + 1 for the G groups of b");
  }
  const std::int64_t rows = masked ? a.size(1) : a.size(0);  // M_max or all rows
  const std::int64_t all_rows = masked ? G * rows : rows;
  const std::int64_t lda = masked ? stacked_ld(op, "a", a) : row_major_ld(op, "a", a, 0);
  const std::int64_t ldb = stacked_ld(op, "b", b);
  check_k16(op, "K", K);
  GroupScales sa =
      group_scales(op, "scale_a", scale_a, all_rows, K, masked ? "G * M_max" : "rows", "K", dev);
  BlockScales sb = block_scales(op, "scale_b", scale_b, G, N, K, dev);
  at::Tensor out;
  std::int64_t ldd = N;
  if (into.out != nullptr) {
    // The caller's D: [G, M_max, N] (masked) or [rows, N], bfloat16 or float32, row-major with
    // any row stride (masked: one [G * M_max, N] matrix, as a and b are).
    out = *into.out;
    if (!out.defined()) fail(op, "out is an undefined tensor");
    if (out.scalar_type() != at::kBFloat16 && out.scalar_type() != at::kFloat)
      fail(op, "out must be torch.bfloat16 or torch.float32; got " + torch_name(out.scalar_type()));
    check_tensor(op, "out", out, out.scalar_type(), masked ? 3 : 2,
                 masked ? "[G, M_max, N]" : "[rows, N]", dev);
    if (masked) {
      check_size(op, "out", out, 0, G, "G of b");
      check_size(op, "out", out, 1, rows, "M_max of a");
      check_size(op, "out", out, 2, N, "N of b");
      ldd = stacked_ld(op, "out", out);
    } else {
      check_size(op, "out", out, 0, rows, "rows of a");
      check_size(op, "out", out, 1, N, "N of b");
      ldd = row_major_ld(op, "out", out, 0);
    }
    if (into.accumulate && out.scalar_type() != at::kFloat)
      fail(op, "accumulate=True needs a torch.float32 out (D = A.B^T + D is kept in float32; a "
               "bf16 D would be rounded twice)");
  } else {
    // No out_dtype: bf16, or float32 for an FP32 kernel named (the benchmark's
    // _gemm_grouped_kernel, which times every kernel by name with D of its type).
    const bool f32_kernel =
        kernel_index >= 0 &&
        engine::writes_f32(ch08::kernels()[std::size_t(kernel_index)].epilogue);
    const at::ScalarType dt = into.out_dtype.value_or(f32_kernel ? at::kFloat : at::kBFloat16);
    if (dt != at::kBFloat16 && dt != at::kFloat)
      fail(op, "out_dtype must be torch.bfloat16 or torch.float32; got " + torch_name(dt));
    out = masked ? at::empty({G, rows, N}, a.options().dtype(dt))
                 : at::empty({rows, N}, a.options().dtype(dt));
  }
  const bool f32 = out.scalar_type() == at::kFloat;
  if (all_rows == 0 || N == 0) return out;
  c10::cuda::CUDAGuard guard(dev);
  library_call(op, [&] {
    GroupedGemm g{.layout = masked ? GroupedLayout::masked : GroupedLayout::contiguous,
                  .groups = int(G),
                  .rows = rows,
                  .N = N,
                  .K = K,
                  .offsets = masked ? nullptr : i32_ptr(groups),
                  .masked_m = masked ? i32_ptr(groups) : nullptr,
                  .A = e4m3_ptr(a),
                  .lda = lda,
                  .B = e4m3_ptr(b),
                  .ldb = ldb,
                  .scale_a = f32_ptr(sa.t),
                  .scale_a_layout = sa.layout,
                  .scale_b = f32_ptr(sb.t),
                  .scale_b_layout = sb.layout,
                  .D = out.data_ptr(),
                  .ldd = ldd,
                  .output = f32 ? GroupedOutput::f32 : GroupedOutput::bf16,
                  .accumulate = into.accumulate};
    const int max_sms = g_max_sms.load(std::memory_order_relaxed);
    PlanKey key;  // everything but the buffers (plan_cache.hpp)
    key.add(kGrouped).add(dev.index()).add(std::int64_t(masked)).add(G).add(rows).add(N).add(K);
    key.add(max_sms);
    key.add(lda).add(ldb).add(sa.layout.ld).add(sb.layout.ld).add(kernel_index);
    key.add(std::int64_t(aligned(g.D, 16))).add(std::int64_t(check_offsets));
    key.add(ldd).add(std::int64_t(f32)).add(std::int64_t(into.accumulate));
    const cudaStream_t stream = current_stream(dev);
    // A kernel named here whose plan owns a workspace (stream-K's partial tiles and flags, the
    // _dyn kernel's own tile counter when chosen by name: fp8gemm.hpp, "Threads, streams and
    // devices") is run one stream at a time, so each stream gets its own plan of it: two streams
    // running one plan at once would share the workspace (mixed partials; tiles drawn by one
    // launch missing from the other). Launches on
    // one stream are ordered, so they may share one. The plans of the default (the counter
    // schedule's counter is given per run, below) and of every other kernel own nothing and serve
    // every stream.
    if (kernel_index >= 0) {
      const engine::KernelInfo& info = ch08::kernels()[std::size_t(kernel_index)];
      if (info.stream_k || info.dynamic_schedule)
        key.add(std::int64_t(reinterpret_cast<std::uintptr_t>(stream)));
    }
    PlanKey buffers;
    buffers.add(groups.data_ptr()).add(g.A).add(g.B).add(g.scale_a).add(g.scale_b).add(g.D);
    g_grouped.run(
        key, buffers,
        [&] {
          GroupedOptions o;
          o.kernel = kernel;
          o.max_sms = max_sms;
          // The default of a contiguous call: the counter schedule where it is faster (the
          // counter kernel for the 128 x 256 calls; README of chapter 8, "Session 33").
          o.counter_schedule = kernel.empty() && !masked;
          o.check_offsets = check_offsets;
          return std::make_unique<GroupedPlan>(g, o);
        },
        [&](GroupedPlan& p) { p.rebind(g); },
        [&](GroupedPlan& p) {
          require_no_pending_error(kBeforeGpuWork);
          sa.copy_now();  // the library accepted the call: now the scales' copies, if any
          sb.copy_now();
          at::Tensor keep;
          if (p.takes_tile_counter()) {
            p.run(stream, tile_counter_for(dev, stream, keep));
            g_stats.tile_counter_runs.fetch_add(1, std::memory_order_relaxed);
          } else {
            p.run(stream, nullptr);
          }
        });
  });
  return out;
}

at::Tensor gemm_grouped_contiguous(const at::Tensor& a, const at::Tensor& scale_a,
                                   const at::Tensor& b, const at::Tensor& scale_b,
                                   const at::Tensor& offsets, bool check_offsets,
                                   std::optional<at::ScalarType> out_dtype) {
  return grouped("gemm_grouped_contiguous", false, a, scale_a, b, scale_b, offsets, "",
                 check_offsets, GroupedOut{.out_dtype = out_dtype});
}

at::Tensor gemm_grouped_masked(const at::Tensor& a, const at::Tensor& scale_a, const at::Tensor& b,
                               const at::Tensor& scale_b, const at::Tensor& masked_m,
                               bool check_offsets, std::optional<at::ScalarType> out_dtype) {
  return grouped("gemm_grouped_masked", true, a, scale_a, b, scale_b, masked_m, "",
                 check_offsets, GroupedOut{.out_dtype = out_dtype});
}

void gemm_grouped_contiguous_out(const at::Tensor& a, const at::Tensor& scale_a,
                                 const at::Tensor& b, const at::Tensor& scale_b,
                                 const at::Tensor& offsets, const at::Tensor& out, bool accumulate,
                                 bool check_offsets) {
  grouped("gemm_grouped_contiguous_out", false, a, scale_a, b, scale_b, offsets, "",
          check_offsets, GroupedOut{.out = &out, .accumulate = accumulate});
}

void gemm_grouped_masked_out(const at::Tensor& a, const at::Tensor& scale_a, const at::Tensor& b,
                             const at::Tensor& scale_b, const at::Tensor& masked_m,
                             const at::Tensor& out, bool accumulate, bool check_offsets) {
  grouped("gemm_grouped_masked_out", true, a, scale_a, b, scale_b, masked_m, "", check_offsets,
          GroupedOut{.out = &out, .accumulate = accumulate});
}

/// The grouped forward with a chosen kernel (a name of ch08::kernels()), contiguous or masked as
/// `masked` says, D bf16 or (an FP32 kernel) float32: the benchmark's same-run comparison of the
/// compiled kernels.
at::Tensor gemm_grouped_kernel(const at::Tensor& a, const at::Tensor& scale_a, const at::Tensor& b,
                               const at::Tensor& scale_b, const at::Tensor& groups, bool masked,
                               const std::string& kernel) {
  return grouped("_gemm_grouped_kernel", masked, a, scale_a, b, scale_b, groups, kernel);
}

/// Index of the weight-gradient kernel `name` in ch08::wgrad_kernels() ("" = the plan's default:
/// -1), for the plan key; an unknown name is refused here, before any GPU work.
std::int64_t wgrad_kernel_index(const char* op, const std::string& name) {
  return find_kernel_index(op, name, ch08::wgrad_kernels(), "a weight-gradient kernel");
}

/// dB_g (+)= dD_g^T . A_g for every group, k-grouped over the tokens, into out [G, N, K] float32
/// (accumulate allowed) or bfloat16 (rounded once from the FP32 sums; no accumulate).
/// kernel: a name of ch08::wgrad_kernels() ("" = the plan's default; the benchmark's sweep).
/// check_offsets: the weight gradient's checking mode (WeightGradOptions::check_offsets).
void weight_grad_into(const char* op, const at::Tensor& dd_t, const at::Tensor& scale_dd_t,
                      const at::Tensor& a_t, const at::Tensor& scale_a_t, const at::Tensor& offsets,
                      const at::Tensor& out, bool accumulate, const std::string& kernel = "",
                      bool check_offsets = false) {
  const std::int64_t kernel_index = wgrad_kernel_index(op, kernel);
  const at::Device dev = call_device(op, "dd_t", dd_t);
  check_tensor(op, "dd_t", dd_t, at::kFloat8_e4m3fn, 2,
               "[N, T_cap] (dD^T, tokens padded per group)", dev);
  check_tensor(op, "a_t", a_t, at::kFloat8_e4m3fn, 2, "[K, T_cap] (A^T, tokens padded per group)",
               dev);
  check_index_vector(op, "offsets", offsets, dev, "[G + 1] (each group's first token, then T)");
  const std::int64_t N = dd_t.size(0), cap = dd_t.size(1), K = a_t.size(0);
  const std::int64_t G = offsets.size(0) - 1;
  if (G < 1) fail(op, "offsets must hold G + 1 >= 2 entries; got " + std::to_string(G + 1));
  check_size(op, "a_t", a_t, 1, cap, "T_cap of dd_t: both operands hold the same token columns");
  const std::int64_t ld_dd = row_major_ld(op, "dd_t", dd_t, 0);
  const std::int64_t ld_a = row_major_ld(op, "a_t", a_t, 0);
  check_k16(op, "T_cap (the token columns of dd_t and a_t)", cap);
  // Every check before out.zero_() (the scales' copies wait for copy_now(), below).
  GroupScales sd = group_scales(op, "scale_dd_t", scale_dd_t, N, cap, "N", "T_cap", dev);
  GroupScales sa = group_scales(op, "scale_a_t", scale_a_t, K, cap, "K", "T_cap", dev);
  if (!out.defined()) fail(op, "out is an undefined tensor");
  const bool bf16_out = out.scalar_type() == at::kBFloat16;
  check_tensor(op, "out", out, bf16_out ? at::kBFloat16 : at::kFloat, 3,
               "[G, N, K] (float32, or bfloat16 without accumulate)", dev);
  if (bf16_out && accumulate)
    fail(op, "accumulate=True needs a float32 out: a bfloat16 dB would be rounded at every "
             "accumulation (accumulate into float32, or write bfloat16 with accumulate=False)");
  check_size(op, "out", out, 0, G, "G = offsets.numel() - 1");
  check_size(op, "out", out, 1, N, "N, the rows of dd_t");
  check_size(op, "out", out, 2, K, "K, the rows of a_t");
  const std::int64_t lddb = stacked_ld(op, "out", out);
  if (N == 0 || K == 0) return;
  if (cap == 0) {  // no token columns: every gradient is zero
    if (!accumulate) out.zero_();
    return;
  }
  c10::cuda::CUDAGuard guard(dev);
  library_call(op, [&] {
    const WeightGradGemm g{.groups = int(G),
                           .N = N,
                           .K = K,
                           .token_capacity = cap,
                           .offsets = i32_ptr(offsets),
                           .dD_t = e4m3_ptr(dd_t),
                           .ld_dD_t = ld_dd,
                           .scale_dD_t = f32_ptr(sd.t),
                           .scale_dD_t_layout = sd.layout,
                           .A_t = e4m3_ptr(a_t),
                           .ld_A_t = ld_a,
                           .scale_A_t = f32_ptr(sa.t),
                           .scale_A_t_layout = sa.layout,
                           .dB = out.data_ptr(),
                           .lddb = lddb,
                           .output = bf16_out ? ch08::WeightGradOutput::bf16
                                              : ch08::WeightGradOutput::f32,
                           .accumulate = accumulate};
    const int max_sms = g_max_sms.load(std::memory_order_relaxed);
    PlanKey key;  // everything but the buffers (plan_cache.hpp)
    key.add(kWgrad).add(dev.index()).add(G).add(N).add(K).add(cap).add(ld_dd).add(sd.layout.ld);
    key.add(max_sms);
    key.add(ld_a).add(sa.layout.ld).add(lddb).add(std::int64_t(accumulate)).add(kernel_index);
    key.add(std::int64_t(bf16_out));
    key.add(std::int64_t(aligned(g.dB, 16)));  // the default kernel stores dB by TMA where it can
    key.add(std::int64_t(check_offsets));
    PlanKey buffers;
    buffers.add(g.offsets).add(g.dD_t).add(g.scale_dD_t).add(g.A_t).add(g.scale_A_t).add(g.dB);
    const cudaStream_t stream = current_stream(dev);
    g_wgrad.run(
        key, buffers,
        [&] {
          WeightGradOptions o;
          o.kernel = kernel;
          o.max_sms = max_sms;
          o.check_offsets = check_offsets;
          return std::make_unique<WeightGradPlan>(g, o);
        },
        [&](WeightGradPlan& p) { p.rebind(g); },
        [&](WeightGradPlan& p) {
          require_no_pending_error(kBeforeGpuWork);
          sd.copy_now();  // the library accepted the call: now the scales' copies, if any
          sa.copy_now();
          p.run(stream);
        });
  });
}

/// gemm_weight_grad with a chosen kernel ("" = the default): gemm_weight_grad itself and the
/// benchmark's sweep of the compiled weight-gradient kernels (_gemm_weight_grad_kernel), into a
/// new [G, N, K] tensor of `dtype` (float32 or bfloat16).
at::Tensor weight_grad_new(const char* op, const at::Tensor& dd_t, const at::Tensor& scale_dd_t,
                           const at::Tensor& a_t, const at::Tensor& scale_a_t,
                           const at::Tensor& offsets, const std::string& kernel,
                           at::ScalarType dtype, bool check_offsets = false) {
  const at::Device dev = call_device(op, "dd_t", dd_t);
  check_tensor(op, "dd_t", dd_t, at::kFloat8_e4m3fn, 2, "[N, T_cap]", dev);
  check_tensor(op, "a_t", a_t, at::kFloat8_e4m3fn, 2, "[K, T_cap]", dev);
  check_index_vector(op, "offsets", offsets, dev, "[G + 1]");
  if (dtype != at::kFloat && dtype != at::kBFloat16)
    fail(op, std::string("out_dtype must be torch.float32 or torch.bfloat16; got ") +
                 torch_name(dtype));
  const std::int64_t G = std::max<std::int64_t>(offsets.size(0) - 1, 0);
  at::Tensor out = at::empty({G, dd_t.size(0), a_t.size(0)}, dd_t.options().dtype(dtype));
  weight_grad_into(op, dd_t, scale_dd_t, a_t, scale_a_t, offsets, out, false, kernel,
                   check_offsets);
  return out;
}

at::Tensor gemm_weight_grad(const at::Tensor& dd_t, const at::Tensor& scale_dd_t,
                            const at::Tensor& a_t, const at::Tensor& scale_a_t,
                            const at::Tensor& offsets, std::optional<at::ScalarType> out_dtype,
                            bool check_offsets) {
  return weight_grad_new("gemm_weight_grad", dd_t, scale_dd_t, a_t, scale_a_t, offsets, "",
                         out_dtype.value_or(at::kFloat), check_offsets);
}

/// A named kernel writes the dB type it was compiled for (FP32: _f32 in its name; else bf16).
at::Tensor gemm_weight_grad_kernel(const at::Tensor& dd_t, const at::Tensor& scale_dd_t,
                                   const at::Tensor& a_t, const at::Tensor& scale_a_t,
                                   const at::Tensor& offsets, const std::string& kernel) {
  constexpr const char* op = "_gemm_weight_grad_kernel";
  const std::int64_t index = wgrad_kernel_index(op, kernel);
  const bool f32 = index < 0 || ch08::wgrad_output_of(ch08::wgrad_kernels()[std::size_t(index)]) ==
                                    ch08::WeightGradOutput::f32;
  return weight_grad_new(op, dd_t, scale_dd_t, a_t, scale_a_t, offsets, kernel,
                         f32 ? at::kFloat : at::kBFloat16);
}

/// The names of `all`, comma-separated (one string keeps the ops' schema to the simplest return
/// type).
std::string kernel_names(const std::vector<engine::KernelInfo>& all) {
  std::string r;
  for (const auto& k : all) r += (r.empty() ? "" : ",") + k.name;
  return r;
}

/// The compiled grouped forward kernels' names (ch08::kernels(); the plan's default is chosen by
/// layout and mean rows per group, not the first).
std::string grouped_kernel_names() { return kernel_names(ch08::kernels()); }

/// The compiled weight-gradient kernels' names (the first is the plan's default).
std::string wgrad_kernel_names() { return kernel_names(ch08::wgrad_kernels()); }

void gemm_weight_grad_out(const at::Tensor& dd_t, const at::Tensor& scale_dd_t,
                          const at::Tensor& a_t, const at::Tensor& scale_a_t,
                          const at::Tensor& offsets, const at::Tensor& out, bool accumulate,
                          bool check_offsets) {
  weight_grad_into("gemm_weight_grad_out", dd_t, scale_dd_t, a_t, scale_a_t, offsets, out,
                   accumulate, "", check_offsets);
}

/// The per-tensor GEMM into `out`: D = scale_a scale_b A . B^T, bf16 (chapter 6's plan) or float32
/// (chapter 6's math in the library's FP32 kernels; with accumulate, D = scale_a scale_b A . B^T +
/// D); a, b
/// and out row-major with any row stride the library takes (lda, ldb: multiples of 16 bytes;
/// ldd >= N).
void per_tensor_into(const char* op, const at::Tensor& a, const at::Tensor& b,
                     const at::Tensor& scale_a, const at::Tensor& scale_b, const at::Tensor& out,
                     bool accumulate, bool fast_accum, const std::string& kernel = "") {
  const GemmOperands ab = gemm_operands(op, a, b);
  const at::Device dev = ab.device;
  const std::int64_t M = ab.M, N = ab.N, K = ab.K;
  const std::int64_t lda = row_major_ld(op, "a", a, 0), ldb = row_major_ld(op, "b", b, 0);
  const auto check_scale = [&](const char* name, const at::Tensor& s) {
    if (!s.defined() || !s.is_cuda() || s.device() != dev || s.scalar_type() != at::kFloat ||
        s.numel() != 1)
      fail(op, std::string(name) + " must be a one-element torch.float32 tensor on " + dev.str() +
                   " (the dequantisation scale, read on the device); got " +
                   (s.defined() ? torch_name(s.scalar_type()) + " " + shape_str(s.sizes()) +
                                      " on " + s.device().str()
                                : std::string("an undefined tensor")));
  };
  check_scale("scale_a", scale_a);
  check_scale("scale_b", scale_b);
  const bool f32 = dense_out_is_f32(op, out, M, N, accumulate, dev);
  const std::int64_t ldd = row_major_ld(op, "out", out, 0);
  // A kernel by name (the benchmark's sweep): of per_tensor_f32_kernels() for float32 out, of
  // chapter 6's list for bf16.
  const std::int64_t kernel_index =
      f32 ? find_kernel_index(op, kernel, per_tensor_f32_kernels(), "a per-tensor FP32 kernel")
          : find_kernel_index(op, kernel, ch06::kernels(), "a chapter 6 kernel");
  if (M == 0 || N == 0) return;
  c10::cuda::CUDAGuard guard(dev);
  library_call(op, [&] {
    const PerTensorGemm g{.M = M,
                          .N = N,
                          .K = K,
                          .A = e4m3_ptr(a),
                          .B = e4m3_ptr(b),
                          .D = f32 ? nullptr : static_cast<std::uint16_t*>(out.data_ptr()),
                          .scale_a = f32_ptr(scale_a),
                          .scale_b = f32_ptr(scale_b),
                          .lda = lda,
                          .ldb = ldb,
                          .ldd = ldd};
    const PerTensorGemmF32 g32{.M = M,
                               .N = N,
                               .K = K,
                               .A = g.A,
                               .B = g.B,
                               .D = f32 ? static_cast<float*>(out.data_ptr()) : nullptr,
                               .scale_a = g.scale_a,
                               .scale_b = g.scale_b,
                               .lda = lda,
                               .ldb = ldb,
                               .ldd = ldd,
                               .accumulate = accumulate};
    const int max_sms = g_max_sms.load(std::memory_order_relaxed);
    PlanKey key;  // everything but the buffers (plan_cache.hpp)
    key.add(kPerTensor).add(dev.index()).add(M).add(N).add(K).add(lda).add(ldb).add(ldd);
    key.add(std::int64_t(fast_accum)).add(std::int64_t(f32)).add(std::int64_t(accumulate));
    key.add(max_sms).add(kernel_index);
    key.add(std::int64_t(aligned(out.data_ptr(), 16)));
    PlanKey buffers;
    buffers.add(g.A).add(g.B).add(out.data_ptr()).add(g.scale_a).add(g.scale_b);
    const cudaStream_t stream = current_stream(dev);
    g_per_tensor.run(
        key, buffers,
        [&] {
          PerTensorOptions o;
          o.accumulation = fast_accum ? Accumulation::fast : Accumulation::promoted;
          o.max_sms = max_sms;
          o.kernel = kernel;
          return f32 ? std::make_unique<PerTensorPlan>(g32, o) : std::make_unique<PerTensorPlan>(g, o);
        },
        [&](PerTensorPlan& p) {
          if (f32)
            p.rebind(g32);
          else
            p.rebind(g);
        },
        [&](PerTensorPlan& p) { p.run(stream); });
  });
}

at::Tensor gemm_per_tensor(const at::Tensor& a, const at::Tensor& b, const at::Tensor& scale_a,
                           const at::Tensor& scale_b, bool fast_accum,
                           std::optional<at::ScalarType> out_dtype) {
  constexpr const char* op = "gemm_per_tensor";
  at::Tensor out = new_dense_out(op, a, b, out_dtype);
  per_tensor_into(op, a, b, scale_a, scale_b, out, false, fast_accum);
  return out;
}

void gemm_per_tensor_out(const at::Tensor& a, const at::Tensor& b, const at::Tensor& scale_a,
                         const at::Tensor& scale_b, const at::Tensor& out, bool accumulate,
                         bool fast_accum) {
  per_tensor_into("gemm_per_tensor_out", a, b, scale_a, scale_b, out, accumulate, fast_accum);
}

/// gemm_per_tensor_out with a kernel by name (the benchmark's sweep of the FP32 kernels).
void gemm_per_tensor_kernel(const at::Tensor& a, const at::Tensor& b, const at::Tensor& scale_a,
                            const at::Tensor& scale_b, const at::Tensor& out, bool accumulate,
                            bool fast_accum, const std::string& kernel) {
  per_tensor_into("_gemm_per_tensor_kernel", a, b, scale_a, scale_b, out, accumulate, fast_accum,
                  kernel);
}

/// The library's per-tensor FP32 kernels' names.
std::string per_tensor_f32_kernel_names() { return kernel_names(per_tensor_f32_kernels()); }

// ---- test and benchmark helpers -----------------------------------------------------------------

std::vector<std::int64_t> plan_cache_stats() {
  const std::size_t size = g_per_tensor.size() + g_block_scaled.size() + g_grouped.size() +
                           g_wgrad.size() + g_mx.size();
  return {g_stats.hits.load(), g_stats.misses.load(), std::int64_t(size),
          std::int64_t(g_block_scaled.capacity()), g_stats.rebinds.load(),
          g_stats.tile_counter_runs.load()};
}

void plan_cache_clear() {
  g_per_tensor.clear();
  g_block_scaled.clear();
  g_grouped.clear();
  g_wgrad.clear();
  g_mx.clear();
  g_stats.hits = 0;
  g_stats.misses = 0;
  g_stats.rebinds = 0;
  g_stats.tile_counter_runs = 0;
}

void plan_cache_set_capacity(std::int64_t capacity) {
  if (capacity < 0) fail("_plan_cache_set_capacity", "capacity must be >= 0");
  g_per_tensor.set_capacity(std::size_t(capacity));
  g_block_scaled.set_capacity(std::size_t(capacity));
  g_grouped.set_capacity(std::size_t(capacity));
  g_wgrad.set_capacity(std::size_t(capacity));
  g_mx.set_capacity(std::size_t(capacity));
}

std::string library_version() { return fp8gemm::version(); }

void set_max_sms(std::int64_t max_sms) {
  if (max_sms < 0 || max_sms > std::int64_t(1) << 20)
    fail("set_max_sms", "max_sms = " + std::to_string(max_sms) +
                            " must be >= 0 (0: all SMs) and at most 2^20");
  g_max_sms.store(int(max_sms), std::memory_order_relaxed);
}
std::int64_t max_sms() { return g_max_sms.load(std::memory_order_relaxed); }

}  // namespace
}  // namespace fp8gemm::torch_ops

// ===================================== registration ==============================================
// Schemas: "Tensor(a!) out" marks the tensor an op writes (torch.compile functionalises it).
// needs_exact_strides: the kernels read row-major operands with given row strides, and the scale
// tensors' strides are their layout, so the compiler must pass every tensor with the strides the
// eager program has.

TORCH_LIBRARY(fp8gemm, m) {
  using namespace fp8gemm::torch_ops;
  m.set_python_module("fp8gemm.ops");  // the fake (meta) implementations live there
  const std::vector<at::Tag> tags{at::Tag::needs_exact_strides};
  m.def("quantize_1x128(Tensor x, bool pow2_scales=False) -> (Tensor, Tensor)", tags);
  m.def("quantize_128x128(Tensor w, bool pow2_scales=False) -> (Tensor, Tensor)", tags);
  m.def("quantize_1x128_dual(Tensor x, bool pow2_scales=False) -> (Tensor, Tensor, Tensor, Tensor)",
        tags);
  m.def(
      "quantize_128x128_dual(Tensor w, bool pow2_scales=False) -> (Tensor, Tensor, Tensor, Tensor)",
      tags);
  m.def(
      "quantize_tokens_transposed_1x128(Tensor x, Tensor offsets, int? t_pad_capacity=None, "
      "bool pow2_scales=False) -> (Tensor, Tensor, Tensor)",
      tags);
  m.def(
      "gemm_block_scaled(Tensor a, Tensor scale_a, Tensor b, Tensor scale_b, "
      "ScalarType? out_dtype=None) -> Tensor",
      tags);
  m.def(
      "gemm_block_scaled_out(Tensor a, Tensor scale_a, Tensor b, Tensor scale_b, "
      "Tensor(a!) out, bool accumulate=False) -> ()",
      tags);
  m.def(
      "gemm_grouped_contiguous(Tensor a, Tensor scale_a, Tensor b, Tensor scale_b, "
      "Tensor offsets, bool check_offsets=False, ScalarType? out_dtype=None) -> Tensor",
      tags);
  m.def(
      "gemm_grouped_masked(Tensor a, Tensor scale_a, Tensor b, Tensor scale_b, "
      "Tensor masked_m, bool check_offsets=False, ScalarType? out_dtype=None) -> Tensor",
      tags);
  m.def(
      "gemm_grouped_contiguous_out(Tensor a, Tensor scale_a, Tensor b, Tensor scale_b, "
      "Tensor offsets, Tensor(a!) out, bool accumulate=False, bool check_offsets=False) -> ()",
      tags);
  m.def(
      "gemm_grouped_masked_out(Tensor a, Tensor scale_a, Tensor b, Tensor scale_b, "
      "Tensor masked_m, Tensor(a!) out, bool accumulate=False, bool check_offsets=False) -> ()",
      tags);
  m.def(
      "gemm_weight_grad(Tensor dd_t, Tensor scale_dd_t, Tensor a_t, Tensor scale_a_t, "
      "Tensor offsets, ScalarType? out_dtype=None, bool check_offsets=False) -> Tensor",
      tags);
  m.def(
      "gemm_weight_grad_out(Tensor dd_t, Tensor scale_dd_t, Tensor a_t, Tensor scale_a_t, "
      "Tensor offsets, Tensor(a!) out, bool accumulate=False, bool check_offsets=False) -> ()",
      tags);
  m.def(
      "gemm_per_tensor(Tensor a, Tensor b, Tensor scale_a, Tensor scale_b, "
      "bool fast_accum=False, ScalarType? out_dtype=None) -> Tensor",
      tags);
  m.def(
      "gemm_per_tensor_out(Tensor a, Tensor b, Tensor scale_a, Tensor scale_b, Tensor(a!) out, "
      "bool accumulate=False, bool fast_accum=False) -> ()",
      tags);
  m.def("transpose_e4m3(Tensor q) -> Tensor", tags);
  m.def("quantize_mx_1x32(Tensor x, str rule=\"floor_ocp\") -> (Tensor, Tensor)", tags);
  m.def("requantize_mx_1x128(Tensor q, Tensor scale) -> (Tensor, Tensor)", tags);
  m.def("requantize_mx_128x128(Tensor q, Tensor scale) -> (Tensor, Tensor)", tags);
  m.def(
      "gemm_mx(Tensor a, Tensor scale_a, Tensor b, Tensor scale_b, bool dequantize_bf16=False, "
      "bool requantize_block_scaled=False, ScalarType? out_dtype=None) -> Tensor",
      tags);
  m.def(
      "gemm_mx_out(Tensor a, Tensor scale_a, Tensor b, Tensor scale_b, Tensor(a!) out, "
      "bool accumulate=False, bool dequantize_bf16=False, bool requantize_block_scaled=False) "
      "-> ()",
      tags);
  // Test and benchmark helpers (not part of the API).
  m.def(
      "_gemm_block_scaled_loop(Tensor a, Tensor scale_a, Tensor b, Tensor scale_b, "
      "Tensor(a!) out, int iters) -> ()");
  m.def(
      "_gemm_weight_grad_kernel(Tensor dd_t, Tensor scale_dd_t, Tensor a_t, Tensor scale_a_t, "
      "Tensor offsets, str kernel) -> Tensor");
  m.def(
      "_gemm_grouped_kernel(Tensor a, Tensor scale_a, Tensor b, Tensor scale_b, Tensor groups, "
      "bool masked, str kernel) -> Tensor");
  m.def("_grouped_kernel_names() -> str", &grouped_kernel_names);
  m.def("_wgrad_kernel_names() -> str", &wgrad_kernel_names);
  m.def("_per_tensor_f32_kernel_names() -> str", &per_tensor_f32_kernel_names);
  m.def(
      "_gemm_per_tensor_kernel(Tensor a, Tensor b, Tensor scale_a, Tensor scale_b, Tensor(a!) out, "
      "bool accumulate, bool fast_accum, str kernel) -> ()");
  m.def("_plan_cache_stats() -> int[]", &plan_cache_stats);
  m.def("_plan_cache_clear() -> ()", &plan_cache_clear);
  m.def("_plan_cache_set_capacity(int capacity) -> ()", &plan_cache_set_capacity);
  m.def("_library_version() -> str", &library_version);
  m.def("_set_max_sms(int max_sms) -> ()", &set_max_sms);
  m.def("_max_sms() -> int", &max_sms);
}

// CUDA tensors run the library; CPU tensors reach the same functions, which refuse them with a
// message saying why (rather than the dispatcher's "no kernel for CPU").
#define FP8GEMM_IMPLS(m)                                                           \
  m.impl("quantize_1x128", &fp8gemm::torch_ops::quantize_1x128);                   \
  m.impl("quantize_128x128", &fp8gemm::torch_ops::quantize_128x128);               \
  m.impl("quantize_1x128_dual", &fp8gemm::torch_ops::quantize_1x128_dual);         \
  m.impl("quantize_128x128_dual", &fp8gemm::torch_ops::quantize_128x128_dual);     \
  m.impl("quantize_tokens_transposed_1x128",                                       \
         &fp8gemm::torch_ops::quantize_tokens_transposed_1x128);                   \
  m.impl("gemm_block_scaled", &fp8gemm::torch_ops::gemm_block_scaled);             \
  m.impl("gemm_block_scaled_out", &fp8gemm::torch_ops::gemm_block_scaled_out);     \
  m.impl("gemm_grouped_contiguous", &fp8gemm::torch_ops::gemm_grouped_contiguous); \
  m.impl("gemm_grouped_masked", &fp8gemm::torch_ops::gemm_grouped_masked);         \
  m.impl("gemm_grouped_contiguous_out", &fp8gemm::torch_ops::gemm_grouped_contiguous_out); \
  m.impl("gemm_grouped_masked_out", &fp8gemm::torch_ops::gemm_grouped_masked_out); \
  m.impl("gemm_weight_grad", &fp8gemm::torch_ops::gemm_weight_grad);               \
  m.impl("gemm_weight_grad_out", &fp8gemm::torch_ops::gemm_weight_grad_out);       \
  m.impl("gemm_per_tensor", &fp8gemm::torch_ops::gemm_per_tensor);                 \
  m.impl("gemm_per_tensor_out", &fp8gemm::torch_ops::gemm_per_tensor_out);         \
  m.impl("transpose_e4m3", &fp8gemm::torch_ops::transpose_e4m3);                   \
  m.impl("quantize_mx_1x32", &fp8gemm::torch_ops::quantize_mx_1x32);               \
  m.impl("requantize_mx_1x128", &fp8gemm::torch_ops::requantize_mx_1x128);         \
  m.impl("requantize_mx_128x128", &fp8gemm::torch_ops::requantize_mx_128x128);     \
  m.impl("gemm_mx", &fp8gemm::torch_ops::gemm_mx);                                 \
  m.impl("gemm_mx_out", &fp8gemm::torch_ops::gemm_mx_out);                         \
  m.impl("_gemm_block_scaled_loop", &fp8gemm::torch_ops::gemm_block_scaled_loop);   \
  m.impl("_gemm_weight_grad_kernel", &fp8gemm::torch_ops::gemm_weight_grad_kernel);   \
  m.impl("_gemm_grouped_kernel", &fp8gemm::torch_ops::gemm_grouped_kernel);        \
  m.impl("_gemm_per_tensor_kernel", &fp8gemm::torch_ops::gemm_per_tensor_kernel);

TORCH_LIBRARY_IMPL(fp8gemm, CUDA, m){FP8GEMM_IMPLS(m)} TORCH_LIBRARY_IMPL(fp8gemm, CPU, m) {
  FP8GEMM_IMPLS(m)
}
