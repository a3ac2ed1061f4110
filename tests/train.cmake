# train.cmake - tests of the trainer (include/simdbpe_train.h, src/train/,
# tools/cmd_train.c). Data: tests/data/train (see its README.md).
#
#   test_train      golden files (HF BpeTrainer), prefix property, streaming and
#                   thread-count independence, documents mode, bad input,
#                   train -> encode round trips (HF ids and a reference encoder)
#   test_train_corpus  the public English corpus against HF's merges, when
#                   ../shared/corpus or $SIMDBPE_CORPUS_DIR has it (otherwise it
#                   prints "SIMDBPE TRAIN CORPUS SKIPPED" and ctest reports the
#                   test skipped)
#   test_train_ref  a slow textbook trainer against the fast one on random,
#                   tie-heavy and overlap-heavy corpora and on real text
#   test_train_cli  the real `simdbpe train` binary: files, messages, exit codes
pkg_check_modules(TRAIN_TESTS_JANSSON REQUIRED IMPORTED_TARGET jansson)
pkg_check_modules(TRAIN_TESTS_ZSTD REQUIRED IMPORTED_TARGET libzstd)
pkg_check_modules(TRAIN_TESTS_CRYPTO REQUIRED IMPORTED_TARGET libcrypto)

function(simdbpe_train_test name)
  add_executable(${name} ${ARGN})
  target_include_directories(${name} PRIVATE
    ${PROJECT_SOURCE_DIR}/src ${PROJECT_SOURCE_DIR}/src/common ${CMAKE_CURRENT_SOURCE_DIR})
  target_compile_definitions(${name} PRIVATE
    SIMDBPE_TEST_DATA_DIR="${CMAKE_CURRENT_SOURCE_DIR}/data"
    SIMDBPE_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
    SIMDBPE_CLI_PATH="$<TARGET_FILE:simdbpe_cli>")
  target_link_libraries(${name} PRIVATE simdbpe PkgConfig::TRAIN_TESTS_JANSSON
    PkgConfig::TRAIN_TESTS_ZSTD PkgConfig::TRAIN_TESTS_CRYPTO ${CRITERION_LIB})
  add_test(NAME ${name} COMMAND ${name})
endfunction()

simdbpe_train_test(test_train train/test_train.c)
simdbpe_train_test(test_train_corpus train/test_train_corpus.c)
set_tests_properties(test_train_corpus PROPERTIES
  SKIP_REGULAR_EXPRESSION "SIMDBPE TRAIN CORPUS SKIPPED" TIMEOUT 600)
simdbpe_train_test(test_train_ref train/test_train_ref.c)
simdbpe_train_test(test_train_cli train/test_train_cli.c)
add_dependencies(test_train_cli simdbpe_cli)
