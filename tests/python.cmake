# python.cmake - the Python package (python/): built into a fresh virtual
# environment from this build's libsimdbpe.a and tested with pytest
# (tests/python/run.sh says which interpreter it uses). Not in the sanitizer
# build: an ASan-instrumented extension cannot load into an uninstrumented
# Python; the C code under it is the library the other tests cover there.
if(SIMDBPE_SANITIZE)
  return()
endif()
add_test(NAME python COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/python/run.sh ${PROJECT_BINARY_DIR})
set_tests_properties(python PROPERTIES TIMEOUT 900)
