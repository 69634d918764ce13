# Trace replay (issue 26): reading and scheduling a 100,000-request trace.
add_executable(bench_workload_load ${CMAKE_CURRENT_LIST_DIR}/bench_workload_load.c)
target_link_libraries(bench_workload_load PRIVATE tokentrace::tokentrace)
