# cli.cmake - tests that run the real simdbpe binary (cli/test_cli.c forks and
# execs $<TARGET_FILE:simdbpe_cli>) and check output, exit status and the
# text of error messages. Uses simdbpe_tests_add() from core.cmake.
simdbpe_tests_add(test_cli cli/test_cli.c)
target_compile_definitions(test_cli PRIVATE SIMDBPE_CLI="$<TARGET_FILE:simdbpe_cli>")
add_dependencies(test_cli simdbpe_cli)
