// fp8gemm_dispatch_sweep: the sweep the library's dispatch table is learned from. Every compiled
// kernel of every family the table covers, on every shape asked for (default: the DeepSeek-V3
// dense set, M in {64, 128, 4096}, and 8192^3), in one process and one run:
//   block_scaled         chapter 7's TMA-store kernels (what a bf16 D that TMA can store runs)
//   per_tensor_promoted  chapter 6's TMA-store kernels with promoted accumulation
//   per_tensor_fast      the same with fast accumulation
//   mxfp8_hopper         chapter 9's Hopper TMA-store kernels (shapes with K % 32 == 0)
// and cuBLASLt (block-scaled, per-tensor promoted and fast) beside them as the peers.
//
// Correctness before time: per shape and family one reference D — block-scaled: chapter 7's
// default plan, itself checked against float64 on sampled rows (ch07::sampled_check); MXFP8:
// chapter 9's default Hopper kernel, checked against the float64 definition on sampled rows;
// per-tensor: cuBLASLt promoted (chapter 6's sweep's criterion) — and every kernel's D compared
// with it on the GPU (relative Frobenius difference; D poisoned before each run). A kernel that
// differs is recorded with ok = false and never enters the table.
// Time: chapter 6's sweep's method — 3 warm-up launches, then per repetition an L2 flush and one
// launch between CUDA events, the median; repetitions = min(--reps, --budget_ms / first
// estimate), at least 5, so a kernel that is slow for a shape costs little. Then the
// confirmation (confirm() below): the --confirm (4) fastest correct kernels of each family and
// shape, the chapter's own rule's kernel and the committed table's, timed again interleaved,
// launch by launch; the table is learned from those medians (confirm_median_us) where they
// exist. With --sustain_ms=X the same kernels are then timed once more, each alone for about
// X / 2 ms of its own time (the flushes between launches come on top), twice, in the order A B C .. C B A (sustain_median_us): alone under sustained load at the
// power cap kernels can rank otherwise than in the interleaved rounds (session 49); the table
// prefers these medians where they exist (gen_dispatch_table.py).
//
//   fp8gemm_dispatch_sweep [--json=PATH] [--reps=30] [--budget_ms=40] [--shapes=MxNxK,...]
//                          [--families=block_scaled,per_tensor,mxfp8] [--filter=SUBSTRING]
//                          [--confirm=4]   (0: no confirmation) [--max_sms=0]
//                          [--sustain_ms=0] (0: no sustained timing; it needs the confirmation)
// --max_sms=N runs every kernel of the families (not the reference plans, not cuBLASLt, which
// has no such limit here) on at most N SMs (Options::max_sms; 0: all): what the kernels do when
// training code keeps SMs for communication kernels. The committed table is learned with 0.
// The JSON (rewritten after every shape, so a run cut short keeps what it measured) is what
// chapters/10_production/tools/gen_dispatch_table.py reads from
// plots/data/h200/ch10/dispatch_sweep.json.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <functional>
#include <memory>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "bs_check.hpp"
#include "common/bench.hpp"
#include "common/chapter_args.hpp"
#include "common/check.hpp"
#include "common/cublaslt.hpp"
#include "common/cuda.hpp"
#include "common/reference.hpp"
#include "common/scaling.hpp"
#include "fp8gemm/fp8gemm.hpp"
#include "mx_emulate.hpp"

using namespace fp8gemm;

namespace {

struct Timing {
  double median_us = 0, min_us = 0;
  int reps = 0;
};

Timing time_launch(const std::function<void(cudaStream_t)>& launch, int max_reps, double budget_ms,
                   L2Flush& l2) {
  for (int i = 0; i < 3; ++i) launch(nullptr);
  FP8GEMM_CUDA_CHECK(cudaDeviceSynchronize());
  EventTimer t;
  l2.flush(nullptr);
  t.start();
  launch(nullptr);
  t.stop();
  const double estimate_ms = std::max(1e-3, double(t.elapsed_ms()));
  const int reps = int(std::clamp(budget_ms / estimate_ms, 5.0, double(std::max(5, max_reps))));
  std::vector<double> ms;
  for (int i = 0; i < reps; ++i) {
    l2.flush(nullptr);  // outside the timed region
    t.start();
    launch(nullptr);
    t.stop();
    ms.push_back(t.elapsed_ms());
  }
  std::sort(ms.begin(), ms.end());
  return {ms[ms.size() / 2] * 1e3, ms.front() * 1e3, reps};
}

struct Record {
  std::string family, kernel, shape, error;
  Timing t;
  double diff = 0;
  bool ok = false, peer = false;
  Timing confirm;  ///< the interleaved confirmation's timing (reps 0: not confirmed)
  Timing sustain;  ///< the sustained timing, each kernel alone (reps: its launches in both
                   ///< passes; 0: not timed so). confirm.reps counts rounds.
};

/// A launch of one kernel of a family on the shape's operands (the plan kept alive by the
/// closure).
using MakeLaunch = std::function<std::function<void(cudaStream_t)>(const std::string& kernel)>;

/// The confirmation: the block timing above gives each kernel its own block of launches, and
/// clock / power drift between blocks ranks close kernels wrongly (at 74d644d by 10.6% at one
/// shape, which the library benchmark's interleaved part (c) found). So the `top` fastest correct
/// kernels of (family, shape) by block median, plus the chapter's own rule's kernel and the
/// committed table's (dispatch_table(), where it has the shape), are timed
/// again interleaved: rounds of one launch each, the order rotating every round, an L2 flush
/// before each launch outside the events; per kernel the median. The table is learned from these
/// medians where they exist (gen_dispatch_table.py).
/// With `sustain_ms` > 0 the same kernels are then timed each alone, back to back (an L2 flush
/// before each launch, outside the events; time_launch with a budget of sustain_ms / 2 of the
/// kernel's own time) in the order A B C .. and again in
/// the order .. C B A, the mean of the two passes' medians (Record::sustain). Why: alone under
/// sustained load kernels ran at different clocks at the same power and ranked otherwise than
/// interleaved (session 49, an H100 at 8192^3 on 112 SMs: chapter 7's 256x128 tile in 1 x 2
/// clusters 6.5% behind 192x128 interleaved, level alone; chapter 10's NOTEBOOK.md, "Session 49").
void confirm(std::vector<Record>& records, const std::string& family, const std::string& shape,
             const std::string& rule_kernel, const MakeLaunch& make, int top, double budget_ms,
             double sustain_ms, L2Flush& l2) {
  std::vector<Record*> mine;
  for (Record& r : records)
    if (!r.peer && r.ok && r.family == family && r.shape == shape) mine.push_back(&r);
  std::sort(mine.begin(), mine.end(),
            [](const Record* a, const Record* b) { return a->t.median_us < b->t.median_us; });
  std::vector<Record*> chosen(mine.begin(), mine.begin() + std::min<std::size_t>(mine.size(), top));
  // The committed table's kernel for (family, shape) too, where it has a row: a re-learned
  // table's old and new picks are then timed the same way.
  std::string table_kernel;
  for (const DispatchEntry& e : dispatch_table())
    if (family == e.family && shape == Shape{e.M, e.N, e.K}.name()) table_kernel = e.kernel;
  for (Record* r : mine)
    if ((r->kernel == rule_kernel || r->kernel == table_kernel) &&
        std::find(chosen.begin(), chosen.end(), r) == chosen.end())
      chosen.push_back(r);
  if (chosen.size() < 2) {
    if (sustain_ms > 0)
      std::printf("%-20s %-16s fewer than 2 correct kernels to compare: no confirmation, no "
                  "sustained timing\n",
                  family.c_str(), shape.c_str());
    return;
  }
  std::vector<std::function<void(cudaStream_t)>> launches;
  double round_ms = 0;
  for (Record* r : chosen) {
    launches.push_back(make(r->kernel));
    for (int i = 0; i < 2; ++i) launches.back()(nullptr);  // warm-up
    round_ms += r->t.median_us * 1e-3;
  }
  FP8GEMM_CUDA_CHECK(cudaDeviceSynchronize());
  const std::size_t n = chosen.size();
  const int rounds = int(std::clamp(budget_ms / std::max(round_ms, 1e-3), 6.0, 60.0));
  std::vector<std::vector<double>> ms(n);
  EventTimer t;
  for (int round = 0; round < rounds; ++round)
    for (std::size_t j = 0; j < n; ++j) {
      const std::size_t i = (j + std::size_t(round)) % n;
      l2.flush(nullptr);
      t.start();
      launches[i](nullptr);
      t.stop();
      ms[i].push_back(t.elapsed_ms());
    }
  for (std::size_t i = 0; i < n; ++i) {
    std::sort(ms[i].begin(), ms[i].end());
    chosen[i]->confirm = {ms[i][ms[i].size() / 2] * 1e3, ms[i].front() * 1e3, rounds};
    std::printf("%-20s %-16s %-36s %9.2f us  confirmed interleaved (%d rounds of %zu)%s%s\n",
                family.c_str(), shape.c_str(), chosen[i]->kernel.c_str(),
                chosen[i]->confirm.median_us, rounds, n,
                chosen[i]->kernel == rule_kernel ? "  [the chapter's rule]" : "",
                chosen[i]->kernel == table_kernel ? "  [the table's]" : "");
  }
  if (sustain_ms <= 0) return;
  // Each pass is the block timing above with a time budget instead of a count (what session 49's
  // calls 3-6 ran by hand: --reps=100000 --budget_ms=2000): its warm-up, its launches, its median.
  // The budget counts the kernel's own time; the count cap (one launch per 50 us of budget: a
  // flush and a synchronisation take about that) keeps a short kernel's pass near the budget.
  const int max_launches = std::max(5, int(sustain_ms / 2 / 0.05));
  std::vector<Timing> passes[2] = {std::vector<Timing>(n), std::vector<Timing>(n)};
  for (int pass = 0; pass < 2; ++pass)
    for (std::size_t j = 0; j < n; ++j) {
      const std::size_t i = pass == 0 ? j : n - 1 - j;
      passes[pass][i] =
          time_launch(launches[i], max_launches, sustain_ms / 2, l2);
    }
  for (std::size_t i = 0; i < n; ++i) {
    const Timing &a = passes[0][i], &b = passes[1][i];
    chosen[i]->sustain = {(a.median_us + b.median_us) / 2, std::min(a.min_us, b.min_us),
                          a.reps + b.reps};
    std::printf("%-20s %-16s %-36s %9.2f us  sustained alone (passes %.2f, %.2f us; %d launches)\n",
                family.c_str(), shape.c_str(), chosen[i]->kernel.c_str(),
                chosen[i]->sustain.median_us, a.median_us, b.median_us, chosen[i]->sustain.reps);
  }
}

std::string json_escape(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (c == '"' || c == '\\') o += '\\';
    if (c == '\n') {
      o += "\\n";
      continue;
    }
    o += c;
  }
  return o;
}

std::string json_number(double v) {
  if (!std::isfinite(v)) return "null";
  std::ostringstream s;
  s.precision(6);
  s << v;
  return s.str();
}

/// The whole JSON, written to a temporary file and renamed (a run cut short leaves a valid file).
void write_json(const std::string& path, const std::string& context,
                const std::vector<Record>& records) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp);
    out << "{\n  \"context\": " << context << ",\n  \"results\": [\n";
    for (std::size_t i = 0; i < records.size(); ++i) {
      const Record& r = records[i];
      out << "    {\"family\": \"" << r.family << "\", \"kernel\": \"" << r.kernel
          << "\", \"shape\": \"" << r.shape << "\", \"median_us\": " << json_number(r.t.median_us)
          << ", \"min_us\": " << json_number(r.t.min_us) << ", \"reps\": " << r.t.reps
          << ", \"diff\": " << json_number(r.diff) << ", \"ok\": " << (r.ok ? "true" : "false")
          << (r.confirm.reps > 0 ? ", \"confirm_median_us\": " + json_number(r.confirm.median_us) +
                                       ", \"confirm_reps\": " + std::to_string(r.confirm.reps)
                                 : std::string())
          << (r.sustain.reps > 0 ? ", \"sustain_median_us\": " + json_number(r.sustain.median_us) +
                                       ", \"sustain_reps\": " + std::to_string(r.sustain.reps)
                                 : std::string())
          << ", \"peer\": " << (r.peer ? "true" : "false");
      if (!r.error.empty()) out << ", \"error\": \"" << json_escape(r.error) << "\"";
      out << "}" << (i + 1 < records.size() ? "," : "") << "\n";
    }
    out << "  ]\n}\n";
  }
  std::rename(tmp.c_str(), path.c_str());
}

std::string context_json(int reps, double budget_ms, int confirm_top, int max_sms,
                         double sustain_ms) {
  char date[32];
  const std::time_t now = std::time(nullptr);
  std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  std::ostringstream s;
  s << "{\"date\": \"" << date << "\"";
  for (const auto& [key, value] : gpu_context()) s << ", \"" << key << "\": \"" << value << "\"";
  s << ", \"git_commit\": \"" << git_commit()
    << "\", \"executable\": \"fp8gemm_dispatch_sweep\", \"max_sms\": " << max_sms
    << ", \"method\": \"3 warm-up "
    << "launches, then min(" << reps << ", " << budget_ms
    << " ms / first estimate) launches (at least 5), each after an L2 flush, CUDA events around "
       "each launch, median"
    << (confirm_top > 0
            ? "; then the " + std::to_string(confirm_top) +
                  " fastest correct kernels per family and shape, the chapter's own rule's "
                  "kernel and the committed table's again, interleaved: rounds of one launch each, the order rotating, an L2 "
                  "flush before each launch, 6-60 rounds in about " +
                  json_number(budget_ms * 4) + " ms, the median (confirm_median_us)"
            : std::string())
    << (confirm_top > 0 && sustain_ms > 0
            ? "; then the same kernels each alone, back to back, an L2 flush before each launch, "
                  "about " +
                  json_number(sustain_ms / 2) +
                  " ms of the kernel's own time each in the order A B C .. and again .. C B A, the mean of the two passes' "
                  "medians (sustain_median_us)"
            : std::string())
    << (max_sms > 0 ? "; every kernel of the families on at most " + std::to_string(max_sms) +
                          " SMs (Options::max_sms), cuBLASLt on all"
                    : std::string())
    << "\"}";
  return s.str();
}

/// The kernels of a list that the table may hold: TMA-store epilogue, the accumulation asked for,
/// each tile's default promoted loop (not the loop comparisons' instances, KernelInfo::
/// comparison_only; gen_dispatch_table.py skips their names too).
std::vector<std::string> candidates(const std::vector<engine::KernelInfo>& list,
                                    engine::Accumulation acc, const std::string& filter) {
  std::vector<std::string> out;
  for (const auto& k : list)
    if (k.epilogue == engine::EpilogueKind::tma_store && k.accumulation == acc &&
        !k.comparison_only &&
        (filter.empty() || k.name.find(filter) != std::string::npos))
      out.push_back(k.name);
  return out;
}

/// MXFP8 operands on the device: e4m3 A, B from the GPU's counter-based generator, UE8M0
/// exponents 127 +- 6 in the Mx1x32 layout from the host (small), and their host copy for the
/// float64 check (downloaded, not generated on the CPU: the large shapes would take seconds).
struct MxOperandsOnDevice {
  ch09::MxOperands host;
  DeviceBuffer<std::uint8_t> A, B, sa, sb;
  MxOperandsOnDevice(const Shape& s, std::uint64_t seed)
      : A(std::size_t(s.M * s.K)), B(std::size_t(s.N * s.K)) {
    host.M = s.M;
    host.N = s.N;
    host.K = s.K;
    fill_random_e4m3(A.data(), A.size(), seed, 1.0f);
    fill_random_e4m3(B.data(), B.size(), seed + 1, 1.0f);
    std::mt19937_64 rng(seed + 2);
    host.sa = ch09::random_mx_scales(s.M, s.K, rng);
    host.sb = ch09::random_mx_scales(s.N, s.K, rng);
    sa = DeviceBuffer<std::uint8_t>(host.sa);
    sb = DeviceBuffer<std::uint8_t>(host.sb);
    FP8GEMM_CUDA_CHECK(cudaDeviceSynchronize());
    host.A = A.download();
    host.B = B.download();
  }
};

}  // namespace

int main(int argc, char** argv) {
  // The arguments first, so that a bad or unknown one is refused with a message, GPU or not.
  std::string json = "dispatch_sweep.json", filter, families = "block_scaled,per_tensor,mxfp8";
  int reps = 30, confirm_top = 4, max_sms = 0;
  double budget_ms = 40, sustain_ms = 0;
  std::vector<Shape> shapes;
  const bool args_ok = parse_arguments("fp8gemm_dispatch_sweep", [&] {
    for (int i = 1; i < argc; ++i) {
      const std::string a = argv[i];
      if (a.rfind("--json=", 0) == 0)
        json = a.substr(7);
      else if (a.rfind("--reps=", 0) == 0)
        reps = int(parse_count(a, "--reps=", 1));
      else if (a.rfind("--budget_ms=", 0) == 0)
        budget_ms = std::stod(a.substr(12));
      else if (a.rfind("--filter=", 0) == 0)
        filter = a.substr(9);
      else if (a.rfind("--confirm=", 0) == 0)
        confirm_top = int(parse_count(a, "--confirm=", 0));
      else if (a.rfind("--sustain_ms=", 0) == 0) {
        // Plain decimal milliseconds (std::stod alone would take "0x10" or " 5").
        const std::string v = a.substr(13);
        const bool plain = !v.empty() && v.find_first_not_of("0123456789.") == std::string::npos;
        std::size_t used = 0;
        if (plain) try {
            sustain_ms = std::stod(v, &used);
          } catch (const std::exception&) {
            used = 0;
          }
        if (!plain || used != v.size() || !(sustain_ms >= 0 && sustain_ms <= 60000))
          throw std::invalid_argument("bad --sustain_ms=" + a.substr(13) +
                                      ": want a number of milliseconds in [0, 60000]");
      } else if (a.rfind("--max_sms=", 0) == 0)
        max_sms = int(parse_count(a, "--max_sms=", 0));
      else if (a.rfind("--families=", 0) == 0)
        families = a.substr(11);
      else if (a.rfind("--shapes=", 0) == 0) {
        for (const auto& t : split_list(a.substr(9))) shapes.push_back(parse_shape(t));
      } else {
        throw std::invalid_argument(
            "unknown argument '" + a +
            "'\nusage: fp8gemm_dispatch_sweep [--json=PATH] [--reps=N] [--budget_ms=X] "
            "[--shapes=MxNxK,...] [--families=block_scaled,per_tensor,mxfp8] "
            "[--filter=SUBSTRING] [--confirm=N] [--max_sms=N] [--sustain_ms=X]");
      }
    }
  });
  if (args_ok && sustain_ms > 0 && confirm_top == 0) {
    std::fprintf(stderr, "fp8gemm_dispatch_sweep: --sustain_ms times the confirmed kernels, and "
                         "--confirm=0 confirms none: give --confirm=N with N >= 1\n");
    return 1;
  }
  if (!args_ok) return 1;
  if (cuda_device_count() == 0) {
    std::printf("No CUDA GPU found: fp8gemm_dispatch_sweep needs an NVIDIA Hopper GPU (sm_90a).\n");
    return 2;
  }
  if (shapes.empty()) shapes = standard_shapes({8192}, true);
  const bool do_bs = families.find("block_scaled") != std::string::npos;
  const bool do_pt = families.find("per_tensor") != std::string::npos;
  const bool do_mx = families.find("mxfp8") != std::string::npos;
  std::printf("GPU: %s\ncommit: %s\n", describe_device().c_str(), git_commit());
  const auto started = std::chrono::steady_clock::now();
  const std::string context = context_json(reps, budget_ms, confirm_top, max_sms, sustain_ms);
  std::vector<Record> records;
  CublasLtGemm cublas;
  L2Flush l2;
  std::uint64_t seed = 10000;

  // Checks a kernel's D against the shape's reference, times it, records it.
  auto sweep_kernel = [&](const std::string& family, const std::string& kernel, const Shape& s,
                          const DeviceBuffer<std::uint16_t>& D,
                          const DeviceBuffer<std::uint16_t>& ref, bool ref_ok, double tolerance,
                          const std::function<std::function<void(cudaStream_t)>()>& make) {
    Record r{family, kernel, s.name()};
    try {
      const std::function<void(cudaStream_t)> launch = make();  // builds the plan
      poison_bf16(D.data(), D.size());
      launch(nullptr);
      FP8GEMM_CUDA_CHECK(cudaDeviceSynchronize());
      r.diff = relative_difference_bf16(D.data(), ref.data(), D.size());
      r.ok = ref_ok && std::isfinite(r.diff) && r.diff <= tolerance;
      r.t = time_launch(launch, reps, budget_ms, l2);
    } catch (const std::exception& e) {
      r.error = e.what();
    }
    std::printf("%-20s %-16s %-36s %9.2f us  diff %.1e%s%s\n", family.c_str(), s.name().c_str(),
                kernel.c_str(), r.t.median_us, r.diff, r.ok ? "" : "  NOT OK",
                r.error.empty() ? "" : ("  " + r.error).c_str());
    records.push_back(r);
  };
  auto peer = [&](const std::string& family, const std::string& name, const Shape& s,
                  const std::function<void(cudaStream_t)>& launch) {
    Record r{family, name, s.name()};
    r.peer = true;
    try {
      r.t = time_launch(launch, reps, budget_ms, l2);
      r.ok = true;
    } catch (const std::exception& e) {
      r.error = e.what();
    }
    std::printf("%-20s %-16s %-36s %9.2f us  (peer)\n", family.c_str(), s.name().c_str(),
                name.c_str(), r.t.median_us);
    records.push_back(r);
  };

  for (const Shape& s : shapes) {
    // ---- block-scaled (chapter 7) ----
    if (do_bs) {
      ch07::DeviceOperands ops(s.M, s.N, s.K, seed++);
      DeviceBuffer<std::uint16_t> ref(ops.D.size());
      const ch07::Plan def(ops.gemm());
      const ch07::SampledCheck chk = ch07::sampled_check(ops, def, 4, seed++);
      FP8GEMM_CUDA_CHECK(
          cudaMemcpy(ref.data(), ops.D.data(), ops.D.bytes(), cudaMemcpyDeviceToDevice));
      std::printf("%-20s %-16s reference: chapter 7's %s against float64: %s %s\n", "block_scaled",
                  s.name().c_str(), def.kernel().name.c_str(), chk.ok ? "ok" : "FAILED",
                  chk.describe.c_str());
      DeviceBuffer<std::uint16_t>& D = ops.D;
      const MakeLaunch make = [&](const std::string& k) {
        auto p = std::make_shared<ch07::Plan>(ops.gemm(), ch07::Options{.max_sms = max_sms, .kernel = k});
        return std::function<void(cudaStream_t)>([p](cudaStream_t st) { p->run(st); });
      };
      for (const auto& k : candidates(ch07::kernels(), engine::Accumulation::promoted, filter))
        sweep_kernel("block_scaled", k, s, D, ref, chk.ok, 1e-3, [&] { return make(k); });
      if (confirm_top > 0)
        // The chapter's rule on the SMs the kernels run on here (the reference plan `def` runs on
        // all of them, so its kernel is the all-SM pick).
        confirm(records, "block_scaled", s.name(),
                ch07::choose_kernel(s.M, s.N, s.K, ch07::Output::bf16, true,
                                    engine::rule_sms(max_sms))
                    .name,
                make, confirm_top, budget_ms * 4, sustain_ms, l2);
      const ch07::BlockScaledGemm g = ops.gemm();
      if (s.M % 4 == 0 && s.N % 8 == 0)
        peer("block_scaled", "cublaslt_block_scaled", s, [&](cudaStream_t st) {
          cublas.block_scaled(g.M, g.N, g.K, g.A, g.B, static_cast<std::uint16_t*>(g.D), g.scale_a,
                              g.scale_b, st);
        });
    }
    // ---- per-tensor (chapter 6), both accumulations ----
    if (do_pt) {
      DeviceBuffer<std::uint8_t> A(std::size_t(s.M * s.K)), B(std::size_t(s.N * s.K));
      DeviceBuffer<std::uint16_t> D(std::size_t(s.M * s.N)), ref(std::size_t(s.M * s.N));
      DeviceBuffer<float> scales(std::vector<float>{0.75f, 0, 0, 0, 1.25f});  // 16-byte aligned
      fill_random_e4m3(A.data(), A.size(), seed++, 1.0f);
      fill_random_e4m3(B.data(), B.size(), seed++, 1.0f);
      const PerTensorGemm g{s.M,      s.N,      s.K,           A.data(),
                            B.data(), D.data(), scales.data(), scales.data() + 4};
      bool ref_ok = true;
      try {
        cublas.per_tensor(s.M, s.N, s.K, g.A, g.B, ref.data(), g.scale_a, g.scale_b, false,
                          nullptr);
        FP8GEMM_CUDA_CHECK(cudaDeviceSynchronize());
      } catch (const std::exception& e) {
        std::printf("per_tensor %s: no cuBLASLt reference (%s): kernels not ok\n", s.name().c_str(),
                    e.what());
        ref_ok = false;
      }
      for (auto acc : {engine::Accumulation::promoted, engine::Accumulation::fast}) {
        const std::string family = std::string("per_tensor_") + engine::to_string(acc);
        const MakeLaunch make = [&, acc](const std::string& k) {
          ch06::Options o;
          o.accumulation = acc;
          o.kernel = k;
          o.max_sms = max_sms;
          auto p = std::make_shared<ch06::Plan>(g, o);
          return std::function<void(cudaStream_t)>([p](cudaStream_t st) { p->run(st); });
        };
        for (const auto& k : candidates(ch06::kernels(), acc, filter))
          sweep_kernel(family, k, s, D, ref, ref_ok, 2e-2, [&] { return make(k); });
        if (confirm_top > 0)
          confirm(records, family, s.name(),
                  ch06::choose_kernel(s.M, s.N, s.K, acc, true, engine::rule_sms(max_sms)).name,
                  make, confirm_top, budget_ms * 4, sustain_ms, l2);
        const bool fast = acc == engine::Accumulation::fast;
        peer(family, fast ? "cublaslt_fast" : "cublaslt_promoted", s, [&, fast](cudaStream_t st) {
          cublas.per_tensor(s.M, s.N, s.K, g.A, g.B, g.D, g.scale_a, g.scale_b, fast, st);
        });
      }
    }
    // ---- MXFP8 on Hopper (chapter 9) ----
    if (do_mx && s.K % 32 == 0) {
      const MxOperandsOnDevice ops(s, seed);
      seed += 3;
      DeviceBuffer<std::uint16_t> D(std::size_t(s.M * s.N)), ref(std::size_t(s.M * s.N));
      const ch09::MxGemm g = ch09::mx_call(ops.host, ops.A.data(), ops.B.data(), ops.sa.data(),
                                           ops.sb.data(), D.data());
      const ch09::HopperPlan def(g);
      poison_bf16(D.data(), D.size());
      def.run(nullptr);
      FP8GEMM_CUDA_CHECK(cudaDeviceSynchronize());
      const auto rows = sample_rows(s.M, std::min<std::int64_t>(4, s.M), seed++);
      const auto want = ch09::reference_f64_rows(ops.host, rows);
      const auto all = D.download();
      const ErrorStats e = compare_bf16_rows(all.data(), s.N, rows, want.data());
      const bool ref_ok = e.ok(per_tensor_tolerance(s.K));
      FP8GEMM_CUDA_CHECK(cudaMemcpy(ref.data(), D.data(), D.bytes(), cudaMemcpyDeviceToDevice));
      std::printf("%-20s %-16s reference: chapter 9's default (%s) against float64: %s rel %.2e\n",
                  "mxfp8_hopper", s.name().c_str(), def.describe().c_str(),
                  ref_ok ? "ok" : "FAILED", e.rel_frobenius);
      const MakeLaunch make = [&](const std::string& k) {
        auto p = std::make_shared<ch09::HopperPlan>(g, ch09::HopperOptions{k, ch09::HopperPath::promote_per_block, max_sms});
        return std::function<void(cudaStream_t)>([p](cudaStream_t st) { p->run(st); });
      };
      for (const auto& k :
           candidates(ch09::hopper_kernels(), engine::Accumulation::promoted, filter))
        sweep_kernel("mxfp8_hopper", k, s, D, ref, ref_ok, 1e-3, [&] { return make(k); });
      // Chapter 9's own choice: the first TMA-store kernel of its list (hopper_mx.cpp).
      std::string rule9;
      for (const auto& k : ch09::hopper_kernels())
        if (rule9.empty() && k.epilogue == engine::EpilogueKind::tma_store) rule9 = k.name;
      if (confirm_top > 0)
        confirm(records, "mxfp8_hopper", s.name(), rule9, make, confirm_top, budget_ms * 4,
                sustain_ms, l2);
    }
    write_json(json, context, records);
    std::printf("-- %s done, %.0f s so far\n", s.name().c_str(),
                std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
  }
  int not_ok = 0;
  for (const Record& r : records) not_ok += !r.peer && !r.ok;
  std::printf("\n%zu results (%d kernels not ok) -> %s\n", records.size(), not_ok, json.c_str());
  return 0;
}
