# core.cmake - unit tests of the core library, one Criterion executable per
# module, plus the differential test against a textbook reference encoder.
# Included by tests/CMakeLists.txt before golden.cmake and cli.cmake, which
# use simdbpe_tests_add() defined here.
pkg_check_modules(TESTS_JANSSON REQUIRED IMPORTED_TARGET jansson)

# simdbpe_tests_add(NAME SOURCE...): a Criterion executable NAME linked to
# the library (internal headers visible: tests may test internals), jansson
# for reading golden JSON, and registered with ctest as NAME.
function(simdbpe_tests_add name)
  add_executable(${name} ${ARGN})
  target_include_directories(${name} PRIVATE
    ${PROJECT_SOURCE_DIR}/src ${PROJECT_SOURCE_DIR}/src/common ${CMAKE_CURRENT_SOURCE_DIR})
  target_compile_definitions(${name} PRIVATE
    SIMDBPE_TEST_DATA_DIR="${CMAKE_CURRENT_SOURCE_DIR}/data"
    SIMDBPE_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
  target_link_libraries(${name} PRIVATE simdbpe PkgConfig::TESTS_JANSSON ${CRITERION_LIB})
  add_test(NAME ${name} COMMAND ${name})
endfunction()

simdbpe_tests_add(test_status common/test_status.c)
simdbpe_tests_add(test_model model/test_model.c)
simdbpe_tests_add(test_model_files model/test_model_files.c)
simdbpe_tests_add(test_hub model/test_hub.c)
simdbpe_tests_add(test_pretok pretok/test_pretok.c)
simdbpe_tests_add(test_regex pretok/test_regex.c)
simdbpe_tests_add(test_bpe encode/test_bpe.c)
simdbpe_tests_add(test_encode encode/test_encode.c)
simdbpe_tests_add(test_offsets encode/test_offsets.c)
simdbpe_tests_add(test_decode encode/test_decode.c)
simdbpe_tests_add(test_sentencepiece encode/test_sentencepiece.c)
simdbpe_tests_add(test_cut encode/test_cut.c)
simdbpe_tests_add(test_batch encode/test_batch.c)
simdbpe_tests_add(test_dataset dataset/test_dataset.c)
# The tokenizer.json loader with an id limit of 300 instead of 2^24: its own
# copy of load_hf.c, so the library's is not linked (model/test_id_limit.c).
simdbpe_tests_add(test_id_limit model/test_id_limit.c ${PROJECT_SOURCE_DIR}/src/model/load_hf.c)
target_compile_definitions(test_id_limit PRIVATE MAX_VOCAB_ID=300u)
target_include_directories(test_id_limit PRIVATE ${SIMDE_INCLUDE_DIR})

simdbpe_tests_add(test_nfc encode/test_nfc.c)
target_link_libraries(test_nfc PRIVATE PkgConfig::SIMDBPE_DEPS)
simdbpe_tests_add(test_normalizer encode/test_normalizer.c)

pkg_check_modules(TESTS_PCRE2 REQUIRED IMPORTED_TARGET libpcre2-8)
simdbpe_tests_add(test_pretok_families pretok/test_pretok_families.c)
target_link_libraries(test_pretok_families PRIVATE PkgConfig::TESTS_PCRE2)
# One Criterion worker: with two, Criterion's runner itself leaks 48-96
# bytes (LeakSanitizer, calloc in libcriterion.so.3) once these files' long
# tests overlap; ctest runs other programs beside them.
set_tests_properties(test_pretok_families test_regex PROPERTIES ENVIRONMENT "CRITERION_JOBS=1")

# The family scanners against HF's own pieces (tests/data/pretok/, zstd).
pkg_check_modules(PRETOK_TESTS_ZSTD REQUIRED IMPORTED_TARGET libzstd)
simdbpe_tests_add(test_pretok_hf pretok/test_pretok_hf.c)
target_link_libraries(test_pretok_hf PRIVATE PkgConfig::PRETOK_TESTS_ZSTD)
