// CPU tests of the accuracy study (common/accuracy_study.hpp, shared by chapter 7's study and
// chapter 9's MXFP8 rows): that moving it out of chapter 7 changed nothing (the committed numbers
// recomputed, the JSON bytes), that its error metrics are what the README says on hand-computed
// cases, and that chapter 9's part measures what it claims (its quantised reference is the
// definition the chapter-9 kernels are validated against, and the whole pipeline, with the CPU
// model of the block-scaled MMA standing in for the GPU GEMM, gives the errors the README
// explains).
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "accuracy_study.hpp"  // chapter 9's
#include "catch.hpp"
#include "common/accuracy_study.hpp"
#include "common/check.hpp"
#include "common/mx.hpp"
#include "common/quantize.hpp"
#include "common/reference.hpp"
#include "mx_emulate.hpp"

namespace {

using namespace fp8gemm;

std::string read_file(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

/// bf16 bits of the CPU model's FP32 result: what a GEMM that rounds D to bf16 would write.
std::vector<std::uint16_t> model_d_bf16(const MxQuantized& a, const MxQuantized& b) {
  const std::vector<float> d = mx_gemm_reference(a, b);
  std::vector<std::uint16_t> r(d.size());
  for (std::size_t i = 0; i < d.size(); ++i) r[i] = float_to_bf16(d[i]);
  return r;
}

/// |x - want| <= rel |want| (Catch2 2 and 3 spell Approx differently).
bool near(double x, double want, double rel) {
  return std::fabs(x - want) <= rel * std::fabs(want);
}

}  // namespace

TEST_CASE("accuracy study: the points are chapter 7's (order, K, seeds 900..923)", "[study]") {
  const auto pts = study::points();
  REQUIRE(pts.size() == 12);
  const study::Data kinds[] = {study::Data::normal, study::Data::outliers, study::Data::positive};
  const std::int64_t ks[] = {1024, 4096, 16384, 65536};
  for (std::size_t i = 0; i < pts.size(); ++i) {
    CHECK(pts[i].data == kinds[i / 4]);
    CHECK(pts[i].K == ks[i % 4]);
    CHECK(pts[i].K % 128 == 0);  // the 1 x 128 recipe; so also MXFP8's 32
    CHECK(pts[i].seed_a == 900 + 2 * i);
    CHECK(pts[i].seed_b == 901 + 2 * i);
  }
  const auto rows = study::compared_rows();
  REQUIRE(rows.size() == 64);
  CHECK(rows.front() == 0);
  CHECK(rows.back() == 252);
  CHECK(std::string(study::name(study::Data::outliers)) == "outlier_channels");
}

// The strongest check that the refactor left chapter 7's study alone: the quantisation-only
// errors of plots/data/h200/ch07/accuracy.json (commit 29be3e8, written by the study before it
// was split) are recomputed from the shared pieces: the generators, the seeds, the reference and
// the metric all enter them. Literal values, so that a later rerun of the study does not move them.
TEST_CASE("accuracy study: chapter 7's committed quantisation-only errors, recomputed", "[study]") {
#if !defined(__GLIBCXX__)
  WARN("not checked: std::normal_distribution is library-specific, these values are libstdc++'s");
  return;
#endif
  struct Want {
    study::Data data;
    double per_tensor, block_scaled;
  };
  const Want want[] = {{study::Data::normal, 0.0370626, 0.0366653},
                       {study::Data::outliers, 0.0365257, 0.0255708},
                       {study::Data::positive, 0.00125257, 0.00125948}};
  const auto rows = study::compared_rows();
  const std::int64_t M = study::kM, N = study::kN;
  for (const study::Point& p : study::points()) {
    if (p.K != 1024) continue;  // the cheap points; K enters only through the generators' length
    const Want* w = nullptr;
    for (const Want& x : want)
      if (x.data == p.data) w = &x;
    REQUIRE(w != nullptr);
    const auto [a, b, ref_exact] = study::point_data(p, rows);
    const auto pa = quantize<PerTensor>(a.data(), M, p.K);
    const auto pb = quantize<PerTensor>(b.data(), N, p.K);
    const auto ba = quantize<Group1x128>(a.data(), M, p.K);
    const auto bb = quantize<Block128x128>(b.data(), N, p.K);
    const double q_pt = study::quantisation_only(
        reference_gemm_rows(M, N, p.K, dequantize(pa).data(), dequantize(pb).data(), rows),
        ref_exact);
    const double q_bs = study::quantisation_only(
        reference_gemm_rows(M, N, p.K, dequantize(ba).data(), dequantize(bb).data(), rows),
        ref_exact);
    INFO(study::name(p.data));
    // The JSON keeps 6 significant digits.
    CHECK(std::fabs(q_pt / w->per_tensor - 1) < 2e-6);
    CHECK(std::fabs(q_bs / w->block_scaled - 1) < 2e-6);
  }
}

TEST_CASE("accuracy study: the JSON bytes are chapter 7's", "[study]") {
  const std::string path = "test_accuracy_study_rows.json";
  {
    study::JsonWriter out(path, "29be3e8824a395716fef4ad83e815de39fe64561-dirty", 64);
    out.row("normal", 1024,
            {{"per_tensor_fast", {0.0371056, 0.00173198}},
             {"per_tensor_promoted", {0.0371001, 0.00165516}},
             {"block_scaled_promoted", {0.0366984, 0.00166853}}},
            {{"per_tensor", 0.0370626}, {"block_scaled", 0.0366653}});
    out.row("all_positive", 65536, {{"per_tensor_fast", {0.710102, 0.710103}}},
            {{"per_tensor", 0.000138398}});
  }
  // The first result line is plots/data/h200/ch07/accuracy.json's, byte for byte.
  const std::string want =
      "{\n  \"commit\": \"29be3e8824a395716fef4ad83e815de39fe64561-dirty\",\n"
      "  \"shape\": \"256 x 256 x K\",\n  \"rows_compared\": 64,\n"
      "  \"metric\": \"relative Frobenius error of bf16 D\",\n  \"results\": [\n"
      "    {\"data\": \"normal\", \"K\": 1024, \"per_tensor_fast\": {\"vs_exact\": 0.0371056, "
      "\"vs_quantised\": 0.00173198}, \"per_tensor_promoted\": {\"vs_exact\": 0.0371001, "
      "\"vs_quantised\": 0.00165516}, \"block_scaled_promoted\": {\"vs_exact\": 0.0366984, "
      "\"vs_quantised\": 0.00166853}, \"quantisation_only\": {\"per_tensor\": 0.0370626, "
      "\"block_scaled\": 0.0366653}},\n"
      "    {\"data\": \"all_positive\", \"K\": 65536, \"per_tensor_fast\": {\"vs_exact\": "
      "0.710102, \"vs_quantised\": 0.710103}, \"quantisation_only\": {\"per_tensor\": "
      "0.000138398}}\n  ]\n}\n";
  CHECK(read_file(path) == want);
  // Extra header fields go after "metric", extra row fields at the end of the row.
  {
    study::JsonWriter out(path, "c", 2, {{"gpu", "\"G\""}});
    out.row("normal", 32, {{"r", {1, 0.5}}}, {{"r", 0.25}}, ", \"x\": true");
  }
  CHECK(read_file(path) ==
        "{\n  \"commit\": \"c\",\n  \"shape\": \"256 x 256 x K\",\n  \"rows_compared\": 2,\n"
        "  \"metric\": \"relative Frobenius error of bf16 D\",\n  \"gpu\": \"G\",\n"
        "  \"results\": [\n    {\"data\": \"normal\", \"K\": 32, \"r\": {\"vs_exact\": 1, "
        "\"vs_quantised\": 0.5}, \"quantisation_only\": {\"r\": 0.25}, \"x\": true}\n  ]\n}\n");
  std::remove(path.c_str());
}

TEST_CASE("accuracy study: the error metrics on a hand-computed case", "[study]") {
  // D is 3 x 2; rows 0 and 2 compared. Exact: [1 2; 5 6], the dequantised operands' product
  // [1 2; 5 6.5]; the GEMM wrote [1 2; x x; 5 7] (all exact in bf16).
  const std::vector<std::int64_t> rows = {0, 2};
  const std::vector<double> ref_exact = {1, 2, 5, 6}, ref_q = {1, 2, 5, 6.5};
  std::vector<std::uint16_t> d = {float_to_bf16(1),   float_to_bf16(2), float_to_bf16(100),
                                  float_to_bf16(100), float_to_bf16(5), float_to_bf16(7)};
  const study::Errors e = study::errors_of(d.data(), 2, rows, ref_exact, ref_q);
  CHECK(near(e.vs_exact, 1.0 / std::sqrt(66.0), 1e-15));       // |7 - 6| / ||(1,2,5,6)||
  CHECK(near(e.vs_quantised, 0.5 / std::sqrt(72.25), 1e-15));  // |7 - 6.5| / ...
  CHECK(near(study::quantisation_only(ref_q, ref_exact), 0.5 / std::sqrt(66.0), 1e-15));
  // A non-finite entry of D makes the error infinite (a NaN-poisoned entry left unwritten).
  d[5] = 0xFFFF;
  CHECK(std::isinf(study::errors_of(d.data(), 2, rows, ref_exact, ref_q).vs_exact));
}

TEST_CASE("MXFP8 study: floor_ocp saturates the top of a binade, rceil does not (by hand)",
          "[study][mx]") {
  // One row, one block: a = 31/32 everywhere, b = 1 everywhere; exact D = 32 * 31/32 = 31.
  //   floor_ocp: exponent floor(log2(31/32)) - 8 = -9 (code 118), a / 2^-9 = 496 > 464: saturates
  //              to 448 (code 0x7E), a dequantises to 0.875, D = 28: quantisation error 3/31.
  //   rceil:     exponent ceil(log2(31/32 / 448)) = -8 (code 119), a / 2^-8 = 248, halfway
  //              between e4m3's 240 and 256, to even: 256 (code 0x78), a -> 1, D = 32: 1/31.
  //   b = 1:     floor_ocp -8, rceil ceil(log2(1/448)) = -8: 256 exactly (code 0x78) both.
  const std::vector<float> a(32, 31.0f / 32.0f), b(32, 1.0f);
  const std::vector<std::int64_t> rows = {0};
  const std::vector<double> ref_exact = {31.0};
  const auto fl =
      ch09::mx_study_operands(a, b, 1, 1, 32, rows, MxExponentRule::floor_ocp, ref_exact);
  CHECK(fl.a.scale(0, 0) == 118);
  CHECK(fl.a.values[0] == 0x7E);
  CHECK(fl.b.scale(0, 0) == 119);
  CHECK(fl.b.values[0] == 0x78);
  CHECK(fl.ref_quantised[0] == 28.0);
  CHECK(near(fl.quantisation_only, 3.0 / 31.0, 1e-15));
  const auto rc = ch09::mx_study_operands(a, b, 1, 1, 32, rows, MxExponentRule::rceil, ref_exact);
  CHECK(rc.a.scale(0, 0) == 119);
  CHECK(rc.a.values[0] == 0x78);
  CHECK(rc.b.scale(0, 0) == 119);
  CHECK(rc.ref_quantised[0] == 32.0);
  CHECK(near(rc.quantisation_only, 1.0 / 31.0, 1e-15));
  CHECK(ch09::recipe_key(MxExponentRule::floor_ocp) == "mxfp8_floor_ocp");
  CHECK(ch09::recipe_key(MxExponentRule::rceil) == "mxfp8_rceil");
}

// What makes the GPU rows trustworthy, checked on the CPU: the study's quantised reference is the
// float64 definition chapter 9's kernels are validated against (mx_emulate.hpp), the operands fit
// the chapter-9 call (scale buffer sizes), and the whole pipeline with the CPU model of the
// block-scaled MMA as "the GEMM" gives a GEMM error of bf16 size and a total error the
// quantisation-only error explains.
TEST_CASE("MXFP8 study: its reference is chapter 9's definition; the CPU model as the GEMM",
          "[study][mx]") {
  const std::int64_t M = 136, N = 40, K = 384;  // a partial second 128-row tile of scales
  const std::vector<std::int64_t> rows = {0, 5, 77, 135};
  for (study::Data kind : {study::Data::normal, study::Data::outliers, study::Data::positive}) {
    const auto a = study::make_data(kind, M, K, 11, true);
    const auto b = study::make_data(kind, N, K, 12, false);
    const auto ref_exact =
        reference_gemm_rows(M, N, K, study::to_double(a).data(), study::to_double(b).data(), rows);
    for (MxExponentRule rule : {MxExponentRule::floor_ocp, MxExponentRule::rceil}) {
      INFO(study::name(kind) << " " << to_string(rule));
      const auto o = ch09::mx_study_operands(a, b, M, N, K, rows, rule, ref_exact);
      const ch09::MxOperands ops = ch09::to_operands(o.a, o.b);
      CHECK(std::int64_t(ops.sa.size()) == ch09::scale_bytes(M, K));
      CHECK(std::int64_t(ops.sb.size()) == ch09::scale_bytes(N, K));
      // Bit for bit: the same products (exact in double) summed in the same k order.
      CHECK(ch09::reference_f64_rows(ops, rows) == o.ref_quantised);
      // The sm_100a kernel's CPU walk-through (block sums, then scaled): the same up to rounding.
      const auto walk = ch09::emulate_kernel(ops);
      double worst = 0;
      for (std::size_t i = 0; i < rows.size(); ++i)
        for (std::int64_t n = 0; n < N; ++n) {
          const double r = o.ref_quantised[i * std::size_t(N) + std::size_t(n)];
          worst = std::max(worst, std::fabs(walk[std::size_t(rows[i] * N + n)] - r) /
                                      std::max(1.0, std::fabs(r)));
        }
      CHECK(worst < 1e-12);
      // The CPU model (FP32 accumulation of exact block sums), rounded to bf16, as the GEMM.
      const auto d = model_d_bf16(o.a, o.b);
      const study::Errors e = study::errors_of(d.data(), N, rows, ref_exact, o.ref_quantised);
      CHECK(e.vs_quantised < 4e-3);  // bf16 rounding of D: ~1.5e-3 rms
      CHECK(e.vs_quantised <= per_tensor_tolerance(K));
      CHECK(std::fabs(e.vs_exact - o.quantisation_only) <= 1.1 * e.vs_quantised + 1e-12);
      CHECK(o.quantisation_only > 1e-4);  // e4m3 did round something
    }
  }
}

// The README's explanation of the all-positive rows, pinned: U[0.5, 1] puts nearly every block's
// amax in [0.875, 1), where floor_ocp's scale maps it to [448, 512): every element above
// 464 / 512 = 0.906 saturates to 0.875, a bias of about -2% per operand, -4% in D, whatever K;
// rceil's scale never saturates and its rounding errors average out like chapter 7's.
TEST_CASE("MXFP8 study: all-positive data, floor_ocp biased low by ~4%, rceil unbiased",
          "[study][mx]") {
  const std::int64_t M = 32, N = 32, K = 1024;
  std::vector<std::int64_t> rows;
  for (std::int64_t r = 0; r < M; ++r) rows.push_back(r);
  const auto a = study::make_data(study::Data::positive, M, K, 5, true);
  const auto b = study::make_data(study::Data::positive, N, K, 6, false);
  const auto ref_exact =
      reference_gemm_rows(M, N, K, study::to_double(a).data(), study::to_double(b).data(), rows);
  const auto fl =
      ch09::mx_study_operands(a, b, M, N, K, rows, MxExponentRule::floor_ocp, ref_exact);
  const auto rc = ch09::mx_study_operands(a, b, M, N, K, rows, MxExponentRule::rceil, ref_exact);
  double ratio_fl = 0, ratio_rc = 0;
  for (std::size_t i = 0; i < ref_exact.size(); ++i) {
    ratio_fl += fl.ref_quantised[i] / ref_exact[i];
    ratio_rc += rc.ref_quantised[i] / ref_exact[i];
  }
  ratio_fl /= double(ref_exact.size());
  ratio_rc /= double(ref_exact.size());
  CHECK(std::fabs(ratio_fl - 0.961) < 0.004);  // (1 - 0.0195)^2
  CHECK(std::fabs(ratio_rc - 1.0) < 0.001);
  CHECK(fl.quantisation_only > 3.5e-2);
  CHECK(rc.quantisation_only < 3e-3);
}

// ====================== MX re-quantised into chapter 7's format: the study ======================
// A third Hopper path for MXFP8 (issue 11; chapter 9's HopperPath::requantize_block_scaled since
// session 53), evaluated here for accuracy: the MX operands re-quantised into chapter 7's 1 x 128
// (A) / 128 x 128 (B) format (mx_requantize_1x128 / _128x128, common/mx.hpp) so that chapter 7's
// kernel can multiply them. At every point of the
// study (the same data), the quantisation-only errors (float64 product of the dequantised
// operands against that of the unquantised data) of
//   (i)   MXFP8, floor_ocp and rceil (the "quantisation only, MXFP8" columns of chapter 9's table),
//   (ii)  the same MX operands re-quantised to 1 x 128 / 128 x 128,
//   (iii) chapter 7's direct 1 x 128 / 128 x 128 quantisation (its "block-scaled" column),
// plus the distance of (ii) from (i) (what the re-quantisation alone adds) and the share of
// non-zero MX elements it flushes to zero. (i) and (iii) must reproduce the committed JSON
// (plots/data/h200/ch09/accuracy.json, plots/data/h200/ch07/accuracy.json; 6 digits).
// Hidden (it takes a minute or two); run from the repository root by the command below, which
// writes the table to plots/data/cpu/ch09_requant_study.txt.
TEST_CASE("MX re-quantised to 1 x 128 / 128 x 128: accuracy study (CPU)",
          "[.study][requant_study]") {
  const char* command =
      "cmake --build build -j2 --target test_accuracy_study && "
      "build/bin/test_accuracy_study \"[requant_study]\"";
  const char* path = "plots/data/cpu/ch09_requant_study.txt";
  {
    std::ifstream marker("plots/data/h200/ch09/accuracy.json");
    if (!marker) FAIL("run from the repository root (no plots/data/h200/ch09/accuracy.json)");
  }
  // The committed quantisation-only errors: ch09 {floor_ocp, rceil}, ch07 block_scaled, as
  // those JSON files print them (literal values, as in the test of chapter 7's errors above:
  // a later rerun of the study must not move what this reproduces).
  struct Committed {
    double floor_ocp, rceil, block_scaled;
  };
  const Committed committed[12] = {
      {0.0414864, 0.0370081, 0.0366653},   {0.0408947, 0.0370024, 0.0367231},
      {0.0416981, 0.0373803, 0.0370128},   {0.0419531, 0.0377619, 0.036907},
      {0.0449321, 0.0359628, 0.0255708},   {0.0472611, 0.0374799, 0.028169},
      {0.0502824, 0.0382197, 0.029541},    {0.0453673, 0.0395525, 0.0334389},
      {0.0414384, 0.00108839, 0.00125948}, {0.0412412, 0.000535531, 0.000588817},
      {0.0412821, 0.000283453, 0.000284208}, {0.0412712, 0.000132778, 0.000135971}};
  const auto rows = study::compared_rows();
  const std::int64_t M = study::kM, N = study::kN;
  std::string text;
  auto emit = [&](const char* fmt, auto... args) {  // to stdout and to the file's text
    std::vector<char> buf(std::size_t(std::snprintf(nullptr, 0, fmt, args...)) + 1);
    std::snprintf(buf.data(), buf.size(), fmt, args...);
    text += buf.data();
    std::fputs(buf.data(), stdout);
    std::fflush(stdout);
  };
  emit("%s\n", command);
  emit("%s",
       "# MX re-quantised into chapter 7's format, quantisation only: relative Frobenius error of\n"
       "# the float64 product of the dequantised operands against the float64 product of the\n"
       "# unquantised data. Chapter 7's study data (common/accuracy_study.hpp: same generators\n"
       "# and seeds), 256 x 256 x K, 64 rows of D compared (every 4th).\n"
       "#   MX:  quantize_mx (1 x 32, UE8M0), floor_ocp / rceil\n"
       "#   RQ:  those MX operands through mx_requantize_1x128 (A) / mx_requantize_128x128 (B)\n"
       "#   ch7: quantize<Group1x128> (A) / quantize<Block128x128> (B), chapter 7's recipe\n"
       "#   RQ-MX: ||D_RQ - D_MX|| / ||D_exact||, what the re-quantisation alone adds\n"
       "#   flushed: non-zero MX elements of A / B that re-quantise to zero, rceil (% of all)\n"
       "#   (i) and (iii) equal plots/data/h200/ch09|ch07/accuracy.json's (6 digits; checked)\n");
  emit("%-17s %6s %10s %10s %10s %10s %10s %10s %10s %8s %15s\n", "data", "K", "MX floor",
       "MX rceil", "RQ floor", "RQ rceil", "ch7 1x128", "RQ-MX flr", "RQ-MX rcl", "RQrc/ch7",
       "flushed A / B");
  // One row of the table: the data's MX (both rules), re-quantised and chapter-7 errors.
  struct Row {
    double q_mx[2], q_rq[2], rq_vs_mx[2], q_bs, flushed_a = 0, flushed_b = 0;
  };
  auto measure_row = [&](const char* name, std::int64_t K, const std::vector<float>& a,
                         const std::vector<float>& b, const std::vector<double>& ref_exact) {
    auto product = [&](const std::vector<double>& da, const std::vector<double>& db) {
      return reference_gemm_rows(M, N, K, da.data(), db.data(), rows);
    };
    Row r;
    const MxExponentRule rules[2] = {MxExponentRule::floor_ocp, MxExponentRule::rceil};
    for (int ri = 0; ri < 2; ++ri) {
      const MxQuantized qa = quantize_mx(a.data(), M, K, rules[ri]);
      const MxQuantized qb = quantize_mx(b.data(), N, K, rules[ri]);
      const auto ra = mx_requantize_1x128(qa);
      const auto rb = mx_requantize_128x128(qb);
      const auto ref_mx = product(dequantize_mx(qa), dequantize_mx(qb));
      const auto ref_rq = product(dequantize(ra), dequantize(rb));
      r.q_mx[ri] = study::quantisation_only(ref_mx, ref_exact);
      r.q_rq[ri] = study::quantisation_only(ref_rq, ref_exact);
      double num = 0, den = 0;
      for (std::size_t i = 0; i < ref_exact.size(); ++i) {
        num += (ref_rq[i] - ref_mx[i]) * (ref_rq[i] - ref_mx[i]);
        den += ref_exact[i] * ref_exact[i];
      }
      r.rq_vs_mx[ri] = std::sqrt(num / den);
      if (rules[ri] == MxExponentRule::rceil) {
        auto flushed = [](const std::vector<std::uint8_t>& from,
                          const std::vector<std::uint8_t>& to) {
          std::int64_t n = 0;
          for (std::size_t i = 0; i < from.size(); ++i)
            n += (from[i] & 0x7F) != 0 && (to[i] & 0x7F) == 0;
          return 100.0 * double(n) / double(from.size());
        };
        r.flushed_a = flushed(qa.values, ra.values);
        r.flushed_b = flushed(qb.values, rb.values);
      }
    }
    const auto ba = quantize<Group1x128>(a.data(), M, K);
    const auto bb = quantize<Block128x128>(b.data(), N, K);
    r.q_bs = study::quantisation_only(product(dequantize(ba), dequantize(bb)), ref_exact);
    emit("%-17s %6lld %10.3e %10.3e %10.3e %10.3e %10.3e %10.3e %10.3e %8.3f %6.3f%% / %5.3f%%\n",
         name, static_cast<long long>(K), r.q_mx[0], r.q_mx[1], r.q_rq[0], r.q_rq[1], r.q_bs,
         r.rq_vs_mx[0], r.rq_vs_mx[1], r.q_rq[1] / r.q_bs, r.flushed_a, r.flushed_b);
    return r;
  };
  const auto pts = study::points();
  for (std::size_t pi = 0; pi < pts.size(); ++pi) {
    const study::Point& p = pts[pi];
    const auto [a, b, ref_exact] = study::point_data(p, rows);
    const Row r = measure_row(study::name(p.data), p.K, a, b, ref_exact);
    INFO(study::name(p.data) << " K = " << p.K);
    // Equal as the JSON prints them (std::ostream's default 6 significant digits).
    auto json = [](double x) {
      std::ostringstream s;
      s << x;
      return s.str();
    };
    CHECK(json(r.q_mx[0]) == json(committed[pi].floor_ocp));
    CHECK(json(r.q_mx[1]) == json(committed[pi].rceil));
    CHECK(json(r.q_bs) == json(committed[pi].block_scaled));
  }
  // Data made to defeat the rule (session 53): the 1 x 32 blocks of one 1 x 128 group (and of
  // one 128 x 128 block of B) of very different magnitudes, where MX keeps every block's own
  // scale and the re-quantised group has one.
  //   spread S: N(0, 1) times 2^u per 1 x 32 block of A and of B, u uniform in [-S/2, S/2];
  //   complementary: N(0, 1), with block 0 of every 1 x 128 group of A and blocks 1-3 of every
  //     group of B times 2^16: three quarters of each dot product come from A's quiet blocks times
  //     B's loud ones, and those quiet blocks of A are 2^16 below their group's loud block (as is
  //     B's quiet block 0 below its 128 x 128 block's).
  emit("%s",
       "# Adversarial for the re-quantisation (not chapter 7's study data; fixed seeds), K = 4096:\n"
       "#   spread_S: N(0, 1) x 2^u per 1 x 32 block of A and B, u uniform in [-S/2, S/2]\n"
       "#   complementary: N(0, 1); block 0 of each 1 x 128 group of A, blocks 1-3 of B, x 2^16\n");
  const std::int64_t K = 4096;
  std::mt19937_64 gen(53053);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  auto make = [&](std::int64_t rows_, int spread, int loud_mask) {
    std::vector<float> v(std::size_t(rows_ * K));
    std::uniform_int_distribution<int> u(-spread / 2, spread / 2);
    for (std::int64_t r = 0; r < rows_; ++r)
      for (std::int64_t blk = 0; blk < K / 32; ++blk) {
        const int e = (loud_mask >> (blk % 4) & 1) ? 16 : spread > 0 ? u(gen) : 0;
        for (std::int64_t c = blk * 32; c < blk * 32 + 32; ++c)
          v[std::size_t(r * K + c)] = std::ldexp(normal(gen), e);
      }
    return v;
  };
  auto exact = [&](const std::vector<float>& a, const std::vector<float>& b) {
    return reference_gemm_rows(M, N, K, study::to_double(a).data(), study::to_double(b).data(),
                               rows);
  };
  for (const int spread : {8, 14, 20, 28}) {
    const auto a = make(M, spread, 0), b = make(N, spread, 0);
    const std::string name = "spread_" + std::to_string(spread);
    measure_row(name.c_str(), K, a, b, exact(a, b));
  }
  {
    const auto a = make(M, 0, 0x1), b = make(N, 0, 0xE);
    const Row r = measure_row("complementary", K, a, b, exact(a, b));
    CHECK(r.rq_vs_mx[1] > 1e-2);  // the case is what it says: the rule loses much of D here
  }
  std::filesystem::create_directories("plots/data/cpu");
  std::ofstream out(path);
  REQUIRE(out);
  out << text;
  std::printf("written to %s\n", path);
}
