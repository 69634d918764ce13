# Run format parsers: trace files and manifests come from outside (archives
# people send each other), so both have fuzz entry points.
tt_add_fuzzer(fuzz_trace ${CMAKE_CURRENT_LIST_DIR}/fuzz_trace.c ${CMAKE_CURRENT_LIST_DIR}/corpus/trace)
tt_add_fuzzer(fuzz_manifest ${CMAKE_CURRENT_LIST_DIR}/fuzz_manifest.c ${CMAKE_CURRENT_LIST_DIR}/corpus/manifest)
