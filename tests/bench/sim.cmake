# tokentrace-sim throughput benchmark (run on demand; prints figures):
#   sim_throughput [STREAMS [SECONDS [sim flags...]]]   default 256 streams, 5 s
# Not a ctest: it measures speed, and it wants both cores to itself.
if(TARGET tokentrace-sim)
  add_executable(sim_throughput ${CMAKE_CURRENT_LIST_DIR}/sim_throughput.c)
  target_compile_definitions(sim_throughput PRIVATE
    TT_SIM_PATH="$<TARGET_FILE:tokentrace-sim>")
  add_dependencies(sim_throughput tokentrace-sim)
endif()
# The simulator's request-rate ceiling with the cheapest client (keep-alive
# sockets, nothing parsed or recorded): sim_ceiling URL [CONNS [SECONDS [MAX]]]
add_executable(sim_ceiling ${CMAKE_CURRENT_LIST_DIR}/sim_ceiling.c)
