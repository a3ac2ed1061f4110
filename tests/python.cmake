# python.cmake - the Python package (python/): built into a fresh virtual
# environment from this build's libsimdbpe.a (the python_install fixture),
# then each test file of tests/python/ as a test of its own, which ctest
# shows as skipped when pytest skipped any of its tests (run.sh says why),
# and the package's calls under valgrind memcheck. Not in the sanitizer
# build: an ASan-instrumented extension cannot load into an uninstrumented
# Python; the C code under it is the library the other tests cover there.
if(SIMDBPE_SANITIZE)
  return()
endif()
set(PYTHON_RUN ${CMAKE_CURRENT_SOURCE_DIR}/python/run.sh)
add_test(NAME python_install COMMAND ${PYTHON_RUN} ${PROJECT_BINARY_DIR} install)
set_tests_properties(python_install PROPERTIES TIMEOUT 600 FIXTURES_SETUP python_env)
file(GLOB PYTHON_TEST_FILES CONFIGURE_DEPENDS RELATIVE ${CMAKE_CURRENT_SOURCE_DIR}/python
     ${CMAKE_CURRENT_SOURCE_DIR}/python/test_*.py)
foreach(file ${PYTHON_TEST_FILES})
  string(REGEX REPLACE "^test_(.*)\\.py$" "python_\\1" name ${file})
  add_test(NAME ${name} COMMAND ${PYTHON_RUN} ${PROJECT_BINARY_DIR} test ${file})
  set_tests_properties(${name} PROPERTIES TIMEOUT 900 FIXTURES_REQUIRED python_env
                       SKIP_RETURN_CODE 77)
endforeach()
add_test(NAME python_memcheck COMMAND ${PYTHON_RUN} ${PROJECT_BINARY_DIR} memcheck)
set_tests_properties(python_memcheck PROPERTIES TIMEOUT 900 FIXTURES_REQUIRED python_env)
