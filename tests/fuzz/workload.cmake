# Request traces for --trace (formats/workload-trace-v1.md): files from outside.
tt_add_fuzzer(fuzz_workload ${CMAKE_CURRENT_LIST_DIR}/fuzz_workload.c
  ${CMAKE_CURRENT_LIST_DIR}/corpus/workload)
