# Fuzz entry points for the parsers of outside input used by tokentrace-capture.
tt_add_fuzzer(fuzz_prom ${CMAKE_CURRENT_LIST_DIR}/fuzz_prom.c ${CMAKE_CURRENT_LIST_DIR}/corpus/prom)
tt_add_fuzzer(fuzz_sse ${CMAKE_CURRENT_LIST_DIR}/fuzz_sse.c ${CMAKE_CURRENT_LIST_DIR}/corpus/sse)
tt_add_fuzzer(fuzz_unchunk ${CMAKE_CURRENT_LIST_DIR}/fuzz_unchunk.c ${CMAKE_CURRENT_LIST_DIR}/corpus/unchunk)
