# dataset.cmake - tests of dataset encoding: `simdbpe encode`
# with JSON Lines / compressed / many inputs, every output format read back
# by readers written from the published layouts, threads, shards + merge
# through a Dask LocalCluster, bad inputs. Uses simdbpe_tests_add() from
# core.cmake. Python tests run with /usr/bin/python3 (Debian's, which has
# python3-distributed).
#
# Tests that need ../shared/corpus (or $SIMDBPE_CORPUS_DIR) print
# "SIMDBPE DATASET CORPUS TESTS SKIPPED: ..." and ctest reports them skipped.

# C unit tests of the dataset engine's JSON Lines reader, compiled from
# src/dataset/.
set(DATASET_SRC ${PROJECT_SOURCE_DIR}/src/dataset)
simdbpe_tests_add(test_dataset_jsonl dataset/test_jsonl.c ${DATASET_SRC}/reader_jsonl.c)
target_include_directories(test_dataset_jsonl PRIVATE ${DATASET_SRC})

# Tests that run the real binary.
set(DATASET_PY /usr/bin/python3)
set(DATASET_ENV "SIMDBPE_CLI=$<TARGET_FILE:simdbpe_cli>")
if(SIMDBPE_SANITIZE)
  # Peak-memory bounds mean nothing under ASan (shadow memory, quarantine):
  # the tests say they do not check them there; the plain build does.
  list(APPEND DATASET_ENV "SIMDBPE_SANITIZED=1")
endif()
function(dataset_py_test name script)
  add_test(NAME ${name} COMMAND ${DATASET_PY} ${CMAKE_CURRENT_SOURCE_DIR}/dataset/${script} ${ARGN})
  set_tests_properties(${name} PROPERTIES
    ENVIRONMENT "${DATASET_ENV}"
    SKIP_REGULAR_EXPRESSION "SIMDBPE DATASET CORPUS TESTS SKIPPED"
    SKIP_RETURN_CODE 77
    TIMEOUT 600)
endfunction()

dataset_py_test(dataset_formats_golden test_formats.py golden)
dataset_py_test(dataset_formats_mixed test_formats.py mixed)
dataset_py_test(dataset_split test_split.py)
dataset_py_test(dataset_split_families test_split.py families)
dataset_py_test(dataset_errors test_errors.py)
dataset_py_test(dataset_outputs test_outputs.py)
dataset_py_test(dataset_memory test_memory.py)
dataset_py_test(dataset_dask_shards_merge test_dask.py)
dataset_py_test(dataset_progress_summary test_progress.py)
dataset_py_test(dataset_inputs test_inputs.py)
