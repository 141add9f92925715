// Fixture for tools/check_table.py's self-test: 8192^3 mapped to a kernel that the library's
// dispatch sweep at 945b0eb confirmed more than 3% slower than the fastest
// (256x128_s4_c1x2_promoted_tma_b1: 1002.6 us against 192x128_s4_c1x1's 920.8 us, interleaved).
constexpr TableEntry kTable[] = {
    {8192, 8192, 8192, "256x128_s4_c1x2_promoted_tma_b1"},
    {4096, 7168, 16384, "256x128_s3_c1x2_promoted_tma_b4"},
};
