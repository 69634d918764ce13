# Foundation benchmark: analysis cost vs plain decompression, memory, size.
add_executable(bench_analyze ${CMAKE_CURRENT_LIST_DIR}/bench_analyze.c
  ${PROJECT_SOURCE_DIR}/tests/unit/testutil.c)
target_include_directories(bench_analyze PRIVATE ${PROJECT_SOURCE_DIR}/tests/unit)
target_link_libraries(bench_analyze PRIVATE tokentrace::tokentrace PkgConfig::ZSTD)
