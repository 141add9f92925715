# Writes ${CMAKE_BINARY_DIR}/generated/git_commit.cpp at every build (only touching it when the
# commit or the dirty flag changed), so benchmark JSON names the exact source it was built from;
# and bin/commit.txt, so that scripts/gpu_loop.sh names it too (the GPU machine's copy of the
# repository may carry another HEAD than the binaries were built from).
set(FP8GEMM_GIT_COMMIT_CPP ${CMAKE_BINARY_DIR}/generated/git_commit.cpp)
add_custom_target(fp8gemm_git_commit
  COMMAND ${CMAKE_COMMAND} -DSOURCE_DIR=${CMAKE_SOURCE_DIR} -DOUTPUT=${FP8GEMM_GIT_COMMIT_CPP}
          -DCOMMIT_TXT=${CMAKE_BINARY_DIR}/bin/commit.txt
          -P ${CMAKE_SOURCE_DIR}/cmake/WriteGitCommit.cmake
  BYPRODUCTS ${FP8GEMM_GIT_COMMIT_CPP}
  COMMENT "Recording the git commit")
