// CPU tests of common/chapter_args.hpp, the command line the engine chapters' executables share:
// which shapes each option selects, what goes to the chapter's own handler and what to Google
// Benchmark, and that a malformed shape is refused.
#include <stdexcept>
#include <string>
#include <vector>

#include "catch.hpp"
#include "common/chapter_args.hpp"

using fp8gemm::float_d_kernels;
using fp8gemm::parse_chapter_args;

namespace {
std::vector<std::string> names(const std::vector<fp8gemm::Shape>& v) {
  std::vector<std::string> out;
  for (const auto& s : v) out.push_back(s.name());
  return out;
}
}  // namespace

TEST_CASE("chapter command line: shapes, options, pass-through", "[cli][cpu]") {
  std::vector<std::string> storage;
  auto parse = [&](std::vector<std::string> a, bool* flag = nullptr) {
    storage = a;
    storage.insert(storage.begin(), "exe");
    std::vector<char*> argv;
    for (auto& s : storage) argv.push_back(s.data());
    return parse_chapter_args(int(argv.size()), argv.data(), {1024, 8192}, "exe.json",
                              [flag](const std::string& x) {
                                if (x != "--mine") return false;
                                if (flag) *flag = true;
                                return true;
                              });
  };
  const auto d = parse({});
  CHECK(d.shapes().size() == 2 + 18);  // the squares and the DeepSeek-V3 set
  CHECK(d.shapes().front().name() == "1024x1024x1024");
  CHECK(d.shapes().back().name() == "4096x7168x2048");
  CHECK(d.json == "exe.json");
  CHECK(d.bench);
  CHECK(d.rest.size() == 1);

  const auto s = parse({"--sizes=256,512"});
  CHECK(names(s.shapes()) == std::vector<std::string>{"256x256x256", "512x512x512"});

  bool mine = false;
  const auto c = parse({"--shapes=1x2x16,3x4x32", "--no-bench", "--kernels=a,b", "--json=o.json",
                        "--accuracy=acc.json", "--mine", "--benchmark_filter=x"},
                       &mine);
  CHECK(names(c.shapes()) == std::vector<std::string>{"1x2x16", "3x4x32"});
  CHECK_FALSE(c.bench);
  CHECK(c.kernels == std::vector<std::string>{"a", "b"});
  CHECK(c.json == "o.json");
  CHECK(c.accuracy_json == "acc.json");
  CHECK(mine);
  REQUIRE(c.rest.size() == 2);
  CHECK(std::string(c.rest[1]) == "--benchmark_filter=x");

  CHECK_THROWS_AS(parse({"--shapes=12x34"}), std::invalid_argument);
  CHECK_THROWS_AS(parse({"--shapes=0x1x16"}), std::invalid_argument);
  CHECK_THROWS_AS(parse({"--shapes=1x2x16junk"}), std::invalid_argument);
  CHECK_THROWS_AS(parse({"--sizes=12abc"}), std::invalid_argument);  // was read as 12
  CHECK_THROWS_AS(parse({"--sizes=0"}), std::invalid_argument);
  CHECK_THROWS_AS(parse({"--sizes=-256"}), std::invalid_argument);
}

TEST_CASE("chapter command line: FP32 kernels need --float-d", "[cli][cpu]") {
  const auto is_f32 = [](const std::string& k) { return k.find("_f32") != std::string::npos; };
  const std::vector<std::string> named = {"a_f32", "b", "c_f32", "a_f32"};
  // With --float-d: the float D's kernels, once each, in the order named.
  CHECK(float_d_kernels(named, true, is_f32) == std::vector<std::string>{"a_f32", "c_f32"});
  // Without: the first is refused by name.
  try {
    float_d_kernels(named, false, is_f32);
    FAIL("an FP32 kernel without --float-d was accepted");
  } catch (const std::invalid_argument& e) {
    CHECK(std::string(e.what()) ==
          "--kernels: 'a_f32' writes a float D: pass --float-d to time it");
  }
  // No FP32 kernel named: nothing to refuse.
  CHECK(float_d_kernels({"b", "all"}, false, is_f32).empty());
}

TEST_CASE("chapter command line: numeric arguments", "[cli][cpu]") {
  using fp8gemm::parse_count;
  CHECK(parse_count("--reps=7", "--reps=", 1) == 7);
  CHECK(parse_count("--kblocks=2048", "--kblocks=", 1) == 2048);
  CHECK(parse_count("--n=0", "--n=", 0) == 0);
  for (const char* bad : {"--reps=", "--reps=0", "--reps=-3", "--reps=+3", "--reps=7x", "--reps= 7",
                          "--reps=0x10", "--reps=99999999999999999999"})
    CHECK_THROWS_AS(parse_count(bad, "--reps=", 1), std::invalid_argument);
  try {
    parse_count("--reps=abc", "--reps=", 1);
    FAIL("not refused");
  } catch (const std::invalid_argument& e) {
    CHECK(std::string(e.what()) == "bad --reps=abc (want an integer >= 1)");
  }
}

TEST_CASE("chapter command line: comma-separated lists", "[cli][cpu]") {
  using fp8gemm::split_list;
  CHECK(split_list("a,b,c") == std::vector<std::string>{"a", "b", "c"});
  CHECK(split_list("2,,3,") == std::vector<std::string>{"2", "3"});  // empty items dropped
  CHECK(split_list("").empty());
  CHECK(split_list("128x256_s4_c1x1_promoted_tma_b1") ==
        std::vector<std::string>{"128x256_s4_c1x1_promoted_tma_b1"});
}
