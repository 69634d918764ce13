# Importers of other tools' files (issue 11): one fuzz program per format,
# each replaying its own corpus (tests/fuzz/corpus/import-NAME/, written by
# tests/fuzz/corpus/make_import_corpus.py from fixtures/foreign/).
foreach(pair "lib_json;TT_IMPORT_LIB_JSON" "lib_report;TT_IMPORT_LIB_REPORT"
             "vllm;TT_IMPORT_VLLM" "genai_perf;TT_IMPORT_GENAI_PERF"
             "aiperf;TT_IMPORT_AIPERF" "guidellm;TT_IMPORT_GUIDELLM")
  list(GET pair 0 name)
  list(GET pair 1 format)
  tt_add_fuzzer(fuzz_import_${name} ${CMAKE_CURRENT_LIST_DIR}/fuzz_import.c
    ${CMAKE_CURRENT_LIST_DIR}/corpus/import-${name})
  target_compile_definitions(fuzz_import_${name} PRIVATE TT_FUZZ_FORMAT=${format})
endforeach()
