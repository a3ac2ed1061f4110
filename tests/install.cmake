# install.cmake - the library as other projects get it: installed into a
# temporary prefix, then a program built against it with find_package and
# with pkg-config (install/run.sh). Needs the shared library and the CLI;
# not under the sanitizers (a consumer would need their runtimes too).
if(SIMDBPE_SANITIZE OR NOT SIMDBPE_BUILD_SHARED OR NOT SIMDBPE_INSTALL)
  return()
endif()
add_test(NAME install_consumer
         COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/install/run.sh ${PROJECT_BINARY_DIR}
                 ${CMAKE_CURRENT_BINARY_DIR}/install ${PROJECT_VERSION})
set_tests_properties(install_consumer PROPERTIES TIMEOUT 300)
