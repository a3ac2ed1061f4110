# speed.cmake - tests of the speed work: kernels (every supported set
# against the scalar one), the block pre-tokenizer (against the code-point
# scanner) and compiled models (round trip, corruption, truncation).
function(simdbpe_speed_test name)
  add_executable(${name} ${ARGN})
  target_include_directories(${name} PRIVATE
    ${PROJECT_SOURCE_DIR}/src ${PROJECT_SOURCE_DIR}/src/common ${PROJECT_SOURCE_DIR})
  target_compile_definitions(${name} PRIVATE
    SIMDBPE_TEST_DATA_DIR="${CMAKE_CURRENT_SOURCE_DIR}/data"
    SIMDBPE_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
  target_link_libraries(${name} PRIVATE simdbpe ${CRITERION_LIB})
  add_test(NAME ${name} COMMAND ${name})
endfunction()

simdbpe_speed_test(test_kernels encode/test_kernels.c)
simdbpe_speed_test(test_compiled model/test_compiled.c)
target_link_libraries(test_compiled PRIVATE PkgConfig::SIMDBPE_DEPS)
