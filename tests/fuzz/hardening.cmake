# Issue 14: every parser of outside input has an entry point.  The archive
# path of the run reader (our gzip/zstd decoders and libarchive's formats,
# then manifest, traces, analysis and tables), and the profile CSV.
tt_add_fuzzer(fuzz_run_archive ${CMAKE_CURRENT_LIST_DIR}/fuzz_run_archive.c ${CMAKE_CURRENT_LIST_DIR}/corpus/run_archive)
tt_add_fuzzer(fuzz_profile ${CMAKE_CURRENT_LIST_DIR}/fuzz_profile.c ${CMAKE_CURRENT_LIST_DIR}/corpus/profile)
