# Diff benchmark (run on demand; prints figures):
#   diff_bench [REPS]   diff of two seed-scale runs with all charts vs the
#                       table report of one; peak memory at 1x, 2x, 4x the tokens
add_executable(diff_bench ${CMAKE_CURRENT_LIST_DIR}/diff_bench.c)
target_link_libraries(diff_bench PRIVATE tokentrace::tokentrace m)
target_compile_definitions(diff_bench PRIVATE TT_FIXTURES="${TT_FIXTURES}")
