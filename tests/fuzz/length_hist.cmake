# Output-length histograms (formats/length-hist-v1.md): a file from outside.
tt_add_fuzzer(fuzz_length_hist ${CMAKE_CURRENT_LIST_DIR}/fuzz_length_hist.c
  ${CMAKE_CURRENT_LIST_DIR}/corpus/length_hist)
