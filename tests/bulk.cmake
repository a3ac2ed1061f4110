# bulk.cmake - tests of bulk dataset encoding: `simdbpe encode`
# with JSON Lines / compressed / many inputs, every output format read back
# by readers written from the published layouts, threads, shards + merge
# through a Dask LocalCluster, bad inputs. Uses simdbpe_tests_add() from
# core.cmake. Python tests run with /usr/bin/python3 (Debian's, which has
# python3-distributed).
#
# Tests that need ../shared/corpus (or $SIMDBPE_CORPUS_DIR) print
# "SIMDBPE BULK CORPUS TESTS SKIPPED: ..." and ctest reports them skipped.

# C unit tests of the dataset engine's JSON Lines reader, compiled from
# src/dataset/.
set(BULK_DATASET ${PROJECT_SOURCE_DIR}/src/dataset)
simdbpe_tests_add(test_bulk_jsonl bulk/test_jsonl.c ${BULK_DATASET}/reader_jsonl.c)
target_include_directories(test_bulk_jsonl PRIVATE ${BULK_DATASET})

# Tests that run the real binary.
set(BULK_PY /usr/bin/python3)
set(BULK_ENV "SIMDBPE_CLI=$<TARGET_FILE:simdbpe_cli>")
if(SIMDBPE_SANITIZE)
  # Peak-memory bounds mean nothing under ASan (shadow memory, quarantine):
  # the tests say they do not check them there; the plain build does.
  list(APPEND BULK_ENV "SIMDBPE_SANITIZED=1")
endif()
function(bulk_py_test name script)
  add_test(NAME ${name} COMMAND ${BULK_PY} ${CMAKE_CURRENT_SOURCE_DIR}/bulk/${script} ${ARGN})
  set_tests_properties(${name} PROPERTIES
    ENVIRONMENT "${BULK_ENV}"
    SKIP_REGULAR_EXPRESSION "SIMDBPE BULK CORPUS TESTS SKIPPED"
    SKIP_RETURN_CODE 77
    TIMEOUT 600)
endfunction()

bulk_py_test(bulk_formats_golden test_formats.py golden)
bulk_py_test(bulk_formats_mixed test_formats.py mixed)
bulk_py_test(bulk_split test_split.py)
bulk_py_test(bulk_split_families test_split.py families)
bulk_py_test(bulk_errors test_errors.py)
bulk_py_test(bulk_outputs test_outputs.py)
bulk_py_test(bulk_memory test_memory.py)
bulk_py_test(bulk_dask_shards_merge test_dask.py)
bulk_py_test(bulk_progress_summary test_progress.py)
bulk_py_test(bulk_inputs test_inputs.py)
