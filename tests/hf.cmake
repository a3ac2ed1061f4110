# hf.cmake - checks against HF tokenizers itself, run with node (npm
# `tokenizers`, installed by the test into the build directory).
add_test(NAME hf_trained_tokenizer_json
  COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/hf/run.sh $<TARGET_FILE:simdbpe_cli>
          ${CMAKE_CURRENT_BINARY_DIR}/hf)
set_tests_properties(hf_trained_tokenizer_json PROPERTIES TIMEOUT 600)
