#include <random>
#include <sstream>
#include <stdexcept>

#include "common/quantize.hpp"
#include "common/scaling.hpp"
#include "common/scale_layout.hpp"

namespace fp8gemm {

const char* to_string(ScaleRecipe recipe) {
  switch (recipe) {
    case ScaleRecipe::per_tensor: return "per-tensor";
    case ScaleRecipe::rowwise: return "rowwise";
    case ScaleRecipe::group_1x128: return "1x128";
    case ScaleRecipe::block_128x128: return "128x128";
    case ScaleRecipe::mx_1x32: return "MX 1x32";
  }
  return "unknown";
}

std::int64_t scale_count(ScaleRecipe recipe, std::int64_t rows, std::int64_t cols) {
  switch (recipe) {
    case ScaleRecipe::per_tensor: return PerTensor(rows, cols).size();
    case ScaleRecipe::rowwise: return Rowwise(rows, cols).size();
    case ScaleRecipe::group_1x128: return Group1x128(rows, cols).size();
    case ScaleRecipe::block_128x128: return Block128x128(rows, cols).size();
    case ScaleRecipe::mx_1x32: return Mx1x32(rows, cols).size();
  }
  throw std::invalid_argument("scale_count: unknown ScaleRecipe");
}

std::string describe_scale_layout(ScaleRecipe recipe, std::int64_t rows, std::int64_t cols,
                                  const char* R) {
  std::ostringstream s;
  switch (recipe) {
    case ScaleRecipe::per_tensor: s << "1 float"; break;
    case ScaleRecipe::rowwise: s << R << " = " << rows << " floats"; break;
    case ScaleRecipe::group_1x128: {
      Group1x128 g(rows, cols);
      s << "ceil(K/128) x " << R << " = " << g.scale_cols() << " x " << rows << " = " << g.size()
        << " floats, " << R << " contiguous";
      break;
    }
    case ScaleRecipe::block_128x128: {
      Block128x128 b(rows, cols);
      s << "ceil(" << R << "/128) x round_up(ceil(K/128), 4) = " << b.scale_rows() << " x "
        << b.padded_scale_cols() << " = " << b.size() << " floats, K-major";
      break;
    }
    case ScaleRecipe::mx_1x32: {
      Mx1x32 m(rows, cols);
      s << "round_up(" << R << ", 128) x round_up(ceil(K/32), 4) = " << m.padded_scale_rows()
        << " x " << m.padded_scale_cols() << " = " << m.size() << " UE8M0 bytes in 128x4 tiles";
      break;
    }
  }
  return s.str();
}

std::vector<double> dequantize_e4m3(const std::vector<std::uint8_t>& bits, double scale) {
  std::vector<double> out(bits.size());
  for (std::size_t i = 0; i < bits.size(); ++i) out[i] = double(e4m3_decode(bits[i])) * scale;
  return out;
}

std::vector<float> random_normal(std::size_t count, std::uint64_t seed, float mean, float stddev) {
  std::mt19937_64 gen(seed);
  std::normal_distribution<float> dist(mean, stddev);
  std::vector<float> out(count);
  for (auto& v : out) v = dist(gen);
  return out;
}

std::vector<std::uint8_t> random_e4m3(std::size_t count, std::uint64_t seed, float stddev) {
  std::mt19937_64 gen(seed);
  std::normal_distribution<float> dist(0.0f, stddev);
  std::vector<std::uint8_t> out(count);
  bool any_nonzero = false;
  for (auto& v : out) {
    v = e4m3_encode(dist(gen));
    any_nonzero |= (v & 0x7F) != 0;
  }
  if (count > 0 && !any_nonzero) out[0] = 0x38;  // 1.0: never an all-zero operand
  return out;
}

}  // namespace fp8gemm

namespace fp8gemm {
std::string describe(const GroupScaleLayout& layout) {
  return std::string(to_string(layout.major)) + ", ld " + std::to_string(layout.ld);
}
}  // namespace fp8gemm
