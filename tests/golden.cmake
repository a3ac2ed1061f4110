# golden.cmake - parity with the reference tokenizers: the golden files
# shipped in tests/data/golden (always run) and the full public corpora
# (run when ../shared/corpus or $SIMDBPE_CORPUS_DIR has them; otherwise the
# test prints "SIMDBPE CORPUS PARITY SKIPPED" and ctest reports it skipped).
# Uses simdbpe_tests_add() from core.cmake.
pkg_check_modules(TESTS_ZSTD REQUIRED IMPORTED_TARGET libzstd)
pkg_check_modules(TESTS_CRYPTO REQUIRED IMPORTED_TARGET libcrypto)

simdbpe_tests_add(test_golden golden/test_golden.c)

simdbpe_tests_add(test_corpus golden/test_corpus.c)
target_link_libraries(test_corpus PRIVATE PkgConfig::TESTS_ZSTD PkgConfig::TESTS_CRYPTO)
set_tests_properties(test_corpus PROPERTIES
  SKIP_REGULAR_EXPRESSION "SIMDBPE CORPUS PARITY SKIPPED"
  TIMEOUT 1200)

# Every model simdbpe claims, on every golden document (shared/golden/models).
simdbpe_tests_add(test_models golden/test_models.c)
target_link_libraries(test_models PRIVATE PkgConfig::TESTS_ZSTD PkgConfig::TESTS_CRYPTO
                      PkgConfig::SIMDBPE_DEPS)
if(SIMDBPE_SANITIZE)
  target_compile_definitions(test_models PRIVATE SIMDBPE_TESTS_SANITIZE=1)
endif()
set_tests_properties(test_models PROPERTIES
  SKIP_REGULAR_EXPRESSION "SIMDBPE CORPUS PARITY SKIPPED"
  TIMEOUT 1800)
