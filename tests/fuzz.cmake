# fuzz.cmake - fuzz targets (tests/fuzz/) and the replay of their corpora.
#
# Every target tests/fuzz/fuzz_<name>.c is built
#   - always: as fuzz_replay_<name> (replay_main.c, any compiler), and run
#     by ctest as fuzz_replay_<name> over tests/fuzz/corpus/<name>/;
#   - with -DSIMDBPE_FUZZ=ON (clang only): as the libFuzzer binary
#     fuzz_<name>, with the library instrumented for coverage and built with
#     AddressSanitizer + UndefinedBehaviorSanitizer. tests/fuzz/run.sh runs
#     one for a while.
# Adding a target is one file (fuzz_<name>.c, plus seeds in corpus/<name>/)
# and one simdbpe_fuzz_target(<name>) line at the end of this file; a target
# that needs more code names it: SOURCES (e.g. tools/ files), LIBS, INCLUDES.
set(SIMDBPE_FUZZ_DIR ${CMAKE_CURRENT_SOURCE_DIR}/fuzz)

if(SIMDBPE_FUZZ)
  if(NOT CMAKE_C_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "SIMDBPE_FUZZ=ON needs clang (libFuzzer): configure with "
                        "-DCMAKE_C_COMPILER=clang")
  endif()
  # Coverage feedback must come from the library, not only the harness.
  set(SIMDBPE_FUZZ_SAN -fsanitize=address,undefined -fno-sanitize-recover=all)
  target_compile_options(simdbpe PRIVATE -fsanitize=fuzzer-no-link ${SIMDBPE_FUZZ_SAN}
                                         -fno-omit-frame-pointer -g)
  target_link_options(simdbpe INTERFACE ${SIMDBPE_FUZZ_SAN})
endif()

function(simdbpe_fuzz_target name)
  cmake_parse_arguments(F "" "" "SOURCES;LIBS;INCLUDES" ${ARGN})
  set(sources ${SIMDBPE_FUZZ_DIR}/fuzz_${name}.c ${F_SOURCES})
  set(includes ${SIMDBPE_FUZZ_DIR} ${PROJECT_SOURCE_DIR}/src ${PROJECT_SOURCE_DIR}/kernels
               ${F_INCLUDES})

  add_executable(fuzz_replay_${name} ${SIMDBPE_FUZZ_DIR}/replay_main.c ${sources})
  target_include_directories(fuzz_replay_${name} PRIVATE ${includes})
  target_link_libraries(fuzz_replay_${name} PRIVATE simdbpe ${F_LIBS})
  add_test(NAME fuzz_replay_${name}
           COMMAND fuzz_replay_${name} ${SIMDBPE_FUZZ_DIR}/corpus/${name})

  if(SIMDBPE_FUZZ)
    add_executable(fuzz_${name} ${sources})
    target_include_directories(fuzz_${name} PRIVATE ${includes})
    target_compile_options(fuzz_${name} PRIVATE -fsanitize=fuzzer ${SIMDBPE_FUZZ_SAN} -g)
    target_link_options(fuzz_${name} PRIVATE -fsanitize=fuzzer ${SIMDBPE_FUZZ_SAN})
    target_link_libraries(fuzz_${name} PRIVATE simdbpe ${F_LIBS})
  endif()
endfunction()

# ---- the targets, one line each
simdbpe_fuzz_target(roundtrip)
simdbpe_fuzz_target(replace)
simdbpe_fuzz_target(model_load)
simdbpe_fuzz_target(kernels)
