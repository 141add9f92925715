// fp8gemm_dispatch_picks: what the library's dispatcher chooses (no option, no environment, bf16
// D that TMA can store) for every family on the DeepSeek-V3 shapes, 8192^3 and every shape of the
// table, one line each:
//
//   <family> <MxNxK> <library's kernel> <rule> <the chapter's own choice>
//
// tools/gen_dispatch_table.py --check --picks-exe reads it and checks every pick against the
// committed sweep (CTest library_dispatch_table). Pure CPU: the dispatch is host code.
//
//   fp8gemm_dispatch_picks [--sms=N] [--why]
//     --sms=N  the choices of plans whose grid may use N SMs (the table rescaled to them, rule
//              table_sms; default: as the sweep's)
//     --why    after each line, "  why: " and the choice's reason (what describe() says)
#include <cstdio>
#include <set>
#include <stdexcept>
#include <string>
#include <tuple>

#include "common/chapter_args.hpp"
#include "fp8gemm/fp8gemm.hpp"

using namespace fp8gemm;

int main(int argc, char** argv) {
  int sms = 0;
  bool why = false;
  const bool args_ok = parse_arguments("fp8gemm_dispatch_picks", [&] {
    for (int i = 1; i < argc; ++i) {
      const std::string a = argv[i];
      if (a.rfind("--sms=", 0) == 0)
        sms = int(parse_count(a, "--sms=", 1));
      else if (a == "--why")
        why = true;
      else
        throw std::invalid_argument("unknown argument '" + a +
                                    "'\nusage: fp8gemm_dispatch_picks [--sms=N] [--why]");
    }
  });
  if (!args_ok) return 1;
  std::set<std::tuple<std::int64_t, std::int64_t, std::int64_t>> shapes;
  for (const Shape& s : standard_shapes({8192}, true)) shapes.insert({s.M, s.N, s.K});
  for (const DispatchEntry& e : dispatch_table()) shapes.insert({e.M, e.N, e.K});
  // The chapters' own choice for the same SMs (their rules' reference count when none is given).
  const int rule_sms = engine::sms_or_reference(sms);
  std::printf("# family shape kernel rule chapter_kernel\n");
  for (const auto& [M, N, K] : shapes) {
    const std::string shape = std::to_string(M) + "x" + std::to_string(N) + "x" + std::to_string(K);
    auto line = [&](DispatchFamily f, const KernelChoice& c, const std::string& chapter) {
      std::printf("%s %s %s %s %s\n", to_string(f), shape.c_str(), c.kernel.c_str(),
                  to_string(c.rule), chapter.c_str());
      if (why) std::printf("  why: %s\n", c.why.c_str());
    };
    line(DispatchFamily::block_scaled, choose_block_scaled(M, N, K, false, true, "", nullptr, sms),
         ch07::choose_kernel(M, N, K, ch07::Output::bf16, true, rule_sms).name);
    for (Accumulation a : {Accumulation::promoted, Accumulation::fast})
      line(a == Accumulation::fast ? DispatchFamily::per_tensor_fast
                                   : DispatchFamily::per_tensor_promoted,
           choose_per_tensor(M, N, K, a, true, "", nullptr, sms),
           ch06::choose_kernel(M, N, K, a, true, rule_sms).name);
    if (K % 32 == 0) {  // MXFP8 blocks are 32 wide
      std::string chapter;
      for (const auto& k : ch09::hopper_kernels())
        if (k.epilogue == engine::EpilogueKind::tma_store && chapter.empty()) chapter = k.name;
      line(DispatchFamily::mxfp8_hopper, choose_mx_hopper(M, N, K, true, "", nullptr, sms), chapter);
    }
  }
  return 0;
}
