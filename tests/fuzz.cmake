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
# that needs more code names it: SOURCES (e.g. tools/ files), LIBS, INCLUDES,
# DEFINES (e.g. where its data lies).
set(SIMDBPE_FUZZ_DIR ${CMAKE_CURRENT_SOURCE_DIR}/fuzz)

if(SIMDBPE_FUZZ)
  if(NOT CMAKE_C_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "SIMDBPE_FUZZ=ON needs clang (libFuzzer): configure with "
                        "-DCMAKE_C_COMPILER=clang")
  endif()
  # Coverage feedback must come from the library, not only the harness, so
  # every library target of the top directory (however the library is split
  # into object/static libraries) is instrumented; executables there that
  # link its objects directly need the sanitizer runtimes.
  set(SIMDBPE_FUZZ_SAN -fsanitize=address,undefined -fno-sanitize-recover=all)
  get_property(top_targets DIRECTORY ${PROJECT_SOURCE_DIR} PROPERTY BUILDSYSTEM_TARGETS)
  foreach(t ${top_targets})
    get_target_property(type ${t} TYPE)
    if(type MATCHES "^(OBJECT|STATIC|SHARED)_LIBRARY$")
      target_compile_options(${t} PRIVATE -fsanitize=fuzzer-no-link ${SIMDBPE_FUZZ_SAN}
                                          -fno-omit-frame-pointer -g)
    elseif(type STREQUAL "EXECUTABLE")
      target_link_options(${t} PRIVATE ${SIMDBPE_FUZZ_SAN})
    endif()
  endforeach()
  target_link_options(simdbpe INTERFACE ${SIMDBPE_FUZZ_SAN})
endif()

function(simdbpe_fuzz_target name)
  cmake_parse_arguments(F "" "" "SOURCES;LIBS;INCLUDES;DEFINES" ${ARGN})
  set(sources ${SIMDBPE_FUZZ_DIR}/fuzz_${name}.c ${F_SOURCES})
  set(includes ${SIMDBPE_FUZZ_DIR} ${PROJECT_SOURCE_DIR}/src ${PROJECT_SOURCE_DIR}/kernels
               ${F_INCLUDES})

  add_executable(fuzz_replay_${name} ${SIMDBPE_FUZZ_DIR}/replay_main.c ${sources})
  target_include_directories(fuzz_replay_${name} PRIVATE ${includes})
  target_link_libraries(fuzz_replay_${name} PRIVATE simdbpe ${F_LIBS})
  target_compile_definitions(fuzz_replay_${name} PRIVATE ${F_DEFINES})
  add_test(NAME fuzz_replay_${name}
           COMMAND fuzz_replay_${name} ${SIMDBPE_FUZZ_DIR}/corpus/${name})

  if(SIMDBPE_FUZZ)
    add_executable(fuzz_${name} ${sources})
    target_include_directories(fuzz_${name} PRIVATE ${includes})
    target_compile_options(fuzz_${name} PRIVATE -fsanitize=fuzzer ${SIMDBPE_FUZZ_SAN} -g)
    target_link_options(fuzz_${name} PRIVATE -fsanitize=fuzzer ${SIMDBPE_FUZZ_SAN})
    target_link_libraries(fuzz_${name} PRIVATE simdbpe ${F_LIBS})
    target_compile_definitions(fuzz_${name} PRIVATE ${F_DEFINES})
  endif()
endfunction()

# ---- the targets, one line each
simdbpe_fuzz_target(roundtrip)
simdbpe_fuzz_target(replace)
simdbpe_fuzz_target(model_load)
simdbpe_fuzz_target(kernels)
simdbpe_fuzz_target(model_compiled LIBS PkgConfig::SIMDBPE_DEPS)
simdbpe_fuzz_target(jsonl SOURCES ${PROJECT_SOURCE_DIR}/src/dataset/reader_jsonl.c
                    INCLUDES ${PROJECT_SOURCE_DIR}/src/dataset LIBS PkgConfig::SIMDBPE_DEPS m)
simdbpe_fuzz_target(train SOURCES ${SIMDBPE_FUZZ_DIR}/train_ref.c)
simdbpe_fuzz_target(pretok_family INCLUDES ${CMAKE_CURRENT_SOURCE_DIR} LIBS PkgConfig::TESTS_PCRE2)
simdbpe_fuzz_target(hf_json)
simdbpe_fuzz_target(tiktoken)
simdbpe_fuzz_target(exact SOURCES ${SIMDBPE_FUZZ_DIR}/exact_ref.c
                    INCLUDES ${CMAKE_CURRENT_SOURCE_DIR} LIBS PkgConfig::SIMDBPE_DEPS
                    DEFINES SIMDBPE_GPT2_DIR="${PROJECT_SOURCE_DIR}/src/model/gpt2")
# The references of fuzz_exact and fuzz_train without coverage
# instrumentation: their loops are not what the fuzzer should explore, and
# instrumented they took most (exact) or half (train) of each input's time.
if(SIMDBPE_FUZZ)
  set_source_files_properties(${SIMDBPE_FUZZ_DIR}/exact_ref.c ${SIMDBPE_FUZZ_DIR}/train_ref.c
    PROPERTIES COMPILE_OPTIONS
    "-fno-sanitize-coverage=inline-8bit-counters,indirect-calls,trace-cmp,pc-table")
endif()
# Without comparison tracing (their edges are still counted):
#   - the kernels (kernels/*.c): their compares are loop bounds and
#     byte-class table bits, traced once per byte in every encoding target;
#     in fuzz_kernels they took 80% of an input's time (5,424 executions
#     per CPU second without them, 1,602 with; from an empty corpus 60 s of
#     each reached the same 162 edges);
#   - the trainer's merge loop and heaps (src/train/merge.c, trainer.c):
#     their compares are of pair counts, ids and slots, not of input bytes,
#     and took a third of fuzz_train's time; from an empty corpus 120 s
#     without them made 1.49 times the executions and reached 628 edges /
#     2,598 features, with them 623 / 2,490.
if(SIMDBPE_FUZZ)
  set_property(SOURCE ${PROJECT_SOURCE_DIR}/kernels/scalar.c ${PROJECT_SOURCE_DIR}/kernels/sse42.c
                      ${PROJECT_SOURCE_DIR}/kernels/avx2.c ${PROJECT_SOURCE_DIR}/src/train/merge.c
                      ${PROJECT_SOURCE_DIR}/src/train/trainer.c
               DIRECTORY ${PROJECT_SOURCE_DIR} APPEND PROPERTY COMPILE_OPTIONS
               -fno-sanitize-coverage=trace-cmp)
endif()

# Writes the seeds of model_compiled from those of model_load (run by hand).
add_executable(fuzz_make_sbpe_seeds ${SIMDBPE_FUZZ_DIR}/make_sbpe_seeds.c)
target_link_libraries(fuzz_make_sbpe_seeds PRIVATE simdbpe)

# ---- adversarial inputs (tests/adversarial/test_adversarial.c, data in tests/adversarial/)
# One ctest per long kind so `ctest -j` spreads them over the cores.
pkg_check_modules(ADV_DEPS REQUIRED IMPORTED_TARGET jansson libcrypto)
add_executable(test_adversarial adversarial/test_adversarial.c)
target_include_directories(test_adversarial PRIVATE
  ${CMAKE_CURRENT_SOURCE_DIR}/adversarial ${PROJECT_SOURCE_DIR}/kernels)
target_compile_definitions(test_adversarial PRIVATE
  SIMDBPE_ADV_DIR="${CMAKE_CURRENT_SOURCE_DIR}/adversarial")
target_link_libraries(test_adversarial PRIVATE simdbpe PkgConfig::ADV_DEPS ${CRITERION_LIB})
add_test(NAME adversarial_cases COMMAND test_adversarial --filter=cases/*)
foreach(kind one_letter letters digits punctuation spaces whitespace cjk emoji letters_mixed
             nul mixture overlong surrogates late_invalid)
  add_test(NAME adversarial_long_${kind} COMMAND test_adversarial --filter=long/${kind})
endforeach()

# JSON Lines records that are huge or escaped everywhere, through the CLI.
add_executable(test_adversarial_jsonl adversarial/test_adversarial_jsonl.c)
target_include_directories(test_adversarial_jsonl PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/adversarial)
target_compile_definitions(test_adversarial_jsonl PRIVATE
  SIMDBPE_ADV_DIR="${CMAKE_CURRENT_SOURCE_DIR}/adversarial")
target_link_libraries(test_adversarial_jsonl PRIVATE PkgConfig::ADV_DEPS ${CRITERION_LIB})
add_test(NAME adversarial_jsonl COMMAND test_adversarial_jsonl)
set_tests_properties(adversarial_jsonl PROPERTIES
  ENVIRONMENT "SIMDBPE_CLI=$<TARGET_FILE:simdbpe_cli>")
simdbpe_fuzz_target(dataset)
simdbpe_fuzz_target(reader INCLUDES ${PROJECT_SOURCE_DIR}/src/dataset LIBS PkgConfig::SIMDBPE_DEPS)
simdbpe_fuzz_target(hf_added LIBS PkgConfig::SIMDBPE_DEPS
                    DEFINES SIMDBPE_QWEN3_2K="${PROJECT_SOURCE_DIR}/tests/data/hf/qwen3_2k.json")
