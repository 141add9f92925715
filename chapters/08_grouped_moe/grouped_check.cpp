#include "grouped_check.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>

#include "common/check.hpp"
#include "common/fp8.hpp"
#include "common/quantize.hpp"  // random_normal
#include "common/reference.hpp"

namespace fp8gemm::ch08 {

namespace {

/// Scales 2^x, x ~ N(0, 1.5) clipped to [-4, 4]: a spread of 2^8 between scales, so that one
/// read for the wrong row, K block or group shows in the error.
std::vector<float> random_pow2_scales(std::size_t n, std::uint64_t seed) {
  std::vector<float> v = random_normal(n, seed, 0.0f, 1.5f);
  for (auto& x : v) x = std::exp2(std::clamp(x, -4.0f, 4.0f));
  return v;
}

/// Rows `rows` (sorted, of a row-major [*, width] device array of T starting at row `base`),
/// downloaded into a compact host array, one cudaMemcpy per run of consecutive rows.
template <class T>
std::vector<T> download_rows(const T* device, std::int64_t width, std::int64_t base,
                             const std::vector<std::int64_t>& rows) {
  std::vector<T> host(rows.size() * std::size_t(width));
  for (std::size_t i = 0; i < rows.size();) {
    std::size_t j = i + 1;
    while (j < rows.size() && rows[j] == rows[j - 1] + 1) ++j;
    FP8GEMM_CUDA_CHECK(cudaMemcpy(host.data() + i * std::size_t(width),
                                  device + (base + rows[i]) * width,
                                  (j - i) * std::size_t(width) * sizeof(T), cudaMemcpyDeviceToHost));
    i = j;
  }
  return host;
}

/// A float D's contents before an accumulating call: one float per entry of the operands' D.
void require_d_before(const GroupedOperands& ops, const std::vector<float>* d_before,
                      const char* who) {
  if (d_before != nullptr && (ops.output != Output::f32 || d_before->size() != ops.D_f32.size()))
    throw std::invalid_argument(std::string(who) +
                                ": d_before needs a float D and one float per entry");
}

}  // namespace

GroupedOperands::GroupedOperands(const GroupedShape& shape, std::uint64_t seed, Output out)
    : layout(shape.layout), groups(shape.groups()),
      rows(shape.layout == Layout::contiguous ? shape.all_rows() : shape.m_max),
      all_rows(shape.all_rows()), N(shape.N), K(shape.K),
      A(std::size_t(all_rows * K)), B(std::size_t(std::int64_t(groups) * N * K)),
      scale_a(random_pow2_scales(std::size_t(scale_a_layout().required_elements(all_rows, K)),
                                 seed * 7 + 1)),
      scale_b(random_pow2_scales(std::size_t(scale_b_group_stride() * groups), seed * 7 + 2)),
      output(out), D(out == Output::bf16 ? std::size_t(all_rows * N) : 0),
      D_f32(out == Output::f32 ? std::size_t(all_rows * N) : 0),
      description(shape.device_description()) {
  fill_random_e4m3(A.data(), A.size(), seed * 7 + 3, 1.0f);
  fill_random_e4m3(B.data(), B.size(), seed * 7 + 4, 1.0f);
  FP8GEMM_CUDA_CHECK(cudaDeviceSynchronize());
}

GroupedGemm GroupedOperands::gemm() const {
  const bool contiguous = layout == Layout::contiguous;
  return {.layout = layout, .groups = groups, .rows = rows, .N = N, .K = K,
          .offsets = contiguous ? description.data() : nullptr,
          .masked_m = contiguous ? nullptr : description.data(), .A = A.data(), .B = B.data(),
          .scale_a = scale_a.data(), .scale_a_layout = scale_a_layout(),
          .scale_b = scale_b.data(), .scale_b_layout = scale_b_layout(),
          .D = output == Output::f32 ? static_cast<void*>(D_f32.data()) : D.data(),
          .output = output};
}

void GroupedOperands::poison_d(cudaStream_t stream) const {
  if (output == Output::f32)
    FP8GEMM_CUDA_CHECK(cudaMemsetAsync(D_f32.data(), 0xFF, D_f32.bytes(), stream));
  else
    poison_bf16(D.data(), D.size(), stream);
}

void GroupedOperands::upload_description(const std::vector<int>& values) {
  description.upload(values);  // checks the length (G + 1 or G)
  // A copy from pageable memory may still be in flight when cudaMemcpy returns; the next call
  // may run on another stream (a graph replay).
  FP8GEMM_CUDA_CHECK(cudaDeviceSynchronize());
}

GroupedCheck check_grouped(const GroupedOperands& ops, const GroupedShape& shape,
                           std::int64_t rows_per_group, std::uint64_t seed,
                           const std::vector<float>* d_before) {
  if (shape.layout != ops.layout || shape.groups() != ops.groups || shape.all_rows() != ops.all_rows ||
      shape.N != ops.N || shape.K != ops.K)
    throw std::invalid_argument("check_grouped: shape '" + shape.name +
                                "' does not match the operands (layout, G, rows, N, K)");
  const std::int64_t N = ops.N, K = ops.K;
  const GroupScaleLayout la = ops.scale_a_layout();
  const BlockScaleLayout lb = ops.scale_b_layout();
  const bool f32 = ops.output == Output::f32;
  require_d_before(ops, d_before, "check_grouped");
  const std::vector<std::uint16_t> d = f32 ? std::vector<std::uint16_t>{} : ops.D.download();
  const std::vector<float> d32 = f32 ? ops.D_f32.download() : std::vector<float>{};
  const std::vector<float> sa = ops.scale_a.download(), sb = ops.scale_b.download();
  // e4m3 -> double once per code: the large cases dequantise ~10^9 weights.
  double e4m3[256];
  for (int c = 0; c < 256; ++c) e4m3[c] = double(e4m3_decode(std::uint8_t(c)));
  GroupedCheck r;
  r.tolerance = f32 ? kF32Tolerance : per_tensor_tolerance(K);
  bool ok = true;
  std::vector<char> owned(std::size_t(ops.all_rows), 0);
  for (int g = 0; g < shape.groups(); ++g) {
    const auto [begin, end] = shape.group_rows(g);
    std::fill(owned.begin() + begin, owned.begin() + end, 1);
    if (end == begin) continue;
    // Rows local to the group (0 = its first row), so that worst_tile_error's 128-row tiles are
    // the kernel's row tiles, which start at the group's first row.
    std::vector<std::int64_t> local;
    if (rows_per_group <= 0) {
      for (std::int64_t i = 0; i < end - begin; ++i) local.push_back(i);
    } else {
      local = sample_rows(end - begin, rows_per_group, seed + std::uint64_t(g));
    }
    const std::vector<std::uint8_t> a = download_rows(ops.A.data(), K, begin, local);
    std::vector<double> da(a.size());
    for (std::size_t i = 0; i < local.size(); ++i)
      for (std::int64_t k = 0; k < K; ++k)
        da[i * std::size_t(K) + std::size_t(k)] =
            e4m3[a[i * std::size_t(K) + std::size_t(k)]] *
            double(sa[std::size_t(la.offset(begin + local[i], k / 128))]);
    std::vector<std::uint8_t> b(std::size_t(N * K));
    FP8GEMM_CUDA_CHECK(cudaMemcpy(b.data(), ops.B.data() + std::int64_t(g) * N * K, b.size(),
                                  cudaMemcpyDeviceToHost));
    std::vector<double> db(b.size());
    const float* sb_g = sb.data() + std::int64_t(g) * ops.scale_b_group_stride();
    for (std::int64_t n = 0; n < N; ++n)
      for (std::int64_t k = 0; k < K; ++k)
        db[std::size_t(n * K + k)] =
            e4m3[b[std::size_t(n * K + k)]] * double(sb_g[lb.offset(n / 128, k / 128)]);
    std::vector<std::int64_t> compact(local.size());
    for (std::size_t i = 0; i < compact.size(); ++i) compact[i] = std::int64_t(i);
    std::vector<double> ref =
        reference_gemm_rows(std::int64_t(local.size()), N, K, da.data(), db.data(), compact);
    if (d_before != nullptr)  // D = A.B^T + D
      for (std::size_t i = 0; i < local.size(); ++i)
        for (std::int64_t n = 0; n < N; ++n) {
          r.earlier.add_to(ref[i * std::size_t(N) + std::size_t(n)],
                           double((*d_before)[std::size_t((begin + local[i]) * N + n)]));
        }
    ErrorStats e;
    double tile = 0;
    if (f32) {
      const float* d_g = d32.data() + begin * N;
      e = compare_f32_rows(d_g, N, local, ref.data());
      tile = worst_tile_error(d_g, N, local, ref.data());
    } else {
      const std::uint16_t* d_g = d.data() + begin * N;
      e = compare_bf16_rows(d_g, N, local, ref.data());
      tile = worst_tile_error(d_g, N, local, ref.data());
    }
    ok &= e.non_finite == 0 && e.rel_frobenius <= r.tolerance && tile <= r.tolerance;
    if (r.worst_group < 0 || e.rel_frobenius > r.worst_rel) {
      r.worst_rel = e.rel_frobenius;
      r.worst_group = g;
    }
    r.worst_tile = std::max(r.worst_tile, tile);
    r.non_finite += e.non_finite;
    r.rows_checked += std::int64_t(local.size());
    ++r.groups_checked;
  }
  // A row of no group: still the poison, or (accumulating) what D held, bit for bit.
  auto untouched = [&](std::size_t i) {
    if (!f32) return d[i] == 0xFFFF;
    std::uint32_t got = 0, want = 0xFFFFFFFFu;
    std::memcpy(&got, &d32[i], 4);
    if (d_before != nullptr) std::memcpy(&want, &(*d_before)[i], 4);
    return got == want;
  };
  for (std::int64_t row = 0; row < ops.all_rows; ++row)
    if (!owned[std::size_t(row)])
      for (std::int64_t n = 0; n < N; ++n) r.stray_entries += !untouched(std::size_t(row * N + n));
  // A check of D = A.B^T + D whose earlier values are too small beside the product could not
  // see a skipped add (session 65: chapter 9's could not): not ok, said so.
  const bool blind = d_before != nullptr && !r.earlier.visible(0.01);
  r.ok = ok && r.stray_entries == 0 && !blind;
  char buf[320];
  std::snprintf(buf, sizeof buf,
                "worst group %d rel %.2e, worst tile %.2e, %lld rows of %d groups, %lld stray "
                "entries%s",
                r.worst_group, r.worst_rel, r.worst_tile, static_cast<long long>(r.rows_checked),
                r.groups_checked, static_cast<long long>(r.stray_entries),
                r.non_finite ? ", NON-FINITE entries" : "");
  if (blind)
    std::snprintf(buf + std::strlen(buf), sizeof buf - std::strlen(buf),
                  ", BLIND: D's earlier values are %.1e of the result (a skipped add would pass)",
                  r.earlier.share());
  r.describe = buf;
  return r;
}

GroupedCheck run_and_check(const GroupedOperands& ops, const GroupedShape& shape,
                           const std::function<void(cudaStream_t)>& launch,
                           std::int64_t rows_per_group, std::uint64_t seed,
                           const std::vector<float>* d_before) {
  require_d_before(ops, d_before, "run_and_check");
  if (d_before != nullptr) {
    FP8GEMM_CUDA_CHECK(cudaMemcpy(ops.D_f32.data(), d_before->data(), ops.D_f32.bytes(),
                                  cudaMemcpyHostToDevice));
  } else {
    ops.poison_d();
  }
  launch(nullptr);
  FP8GEMM_CUDA_CHECK(cudaDeviceSynchronize());
  return check_grouped(ops, shape, rows_per_group, seed, d_before);
}

}  // namespace fp8gemm::ch08
