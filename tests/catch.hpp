// Catch2 2.x (Debian 12's) or 3.x, whichever CMake found.
#pragma once
#if defined(FP8GEMM_CATCH2_V3)
#include <catch2/catch_all.hpp>
#else
#include <catch2/catch.hpp>
#endif
