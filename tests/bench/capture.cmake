# tokentrace-capture benchmarks (run on demand; they print figures):
#   capture_latency RUN TRUTH   recorded arrival - simulator emission, per chunk
#   loopback_floor              the machine's floor for the same timing
#   capture_bench.sh BUILD      throughput and timing runs against tokentrace-sim
add_executable(capture_firehose ${CMAKE_CURRENT_LIST_DIR}/capture_firehose.c)
if(TARGET tokentrace-sim) # tt_sim_client (tests/sim) reads the truth log
  add_executable(capture_latency ${CMAKE_CURRENT_LIST_DIR}/capture_latency.c)
  target_link_libraries(capture_latency PRIVATE tokentrace::tokentrace tt_sim_client m)
  add_executable(loopback_floor ${CMAKE_CURRENT_LIST_DIR}/loopback_floor.c)
  target_link_libraries(loopback_floor PRIVATE tt_sim_client)
endif()
