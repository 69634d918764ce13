# Chart and report benchmark (run on demand; prints figures):
#   chart_report_bench [RUN] [REPS]   all charts + HTML + PDF vs the table report
add_executable(chart_report_bench ${CMAKE_CURRENT_LIST_DIR}/chart_report_bench.c)
target_link_libraries(chart_report_bench PRIVATE tokentrace::tokentrace m)
target_compile_definitions(chart_report_bench PRIVATE TT_FIXTURES="${TT_FIXTURES}")
