# CTest `library_readme_tables` (cpu): chapters/10_production/tools/readme_tables.py --check. The
# chapter-10 README's generated tables (the library benchmark's parts (a)-(c) beside the dispatch
# sweep, the PyTorch package's tests, overhead, Fp8Linear and scaled_mm comparison) must be what
# the committed H200 logs give, and every logged number it uses must agree with the JSON written
# by the same run. Standard-library Python only; about a second.
find_package(Python3 COMPONENTS Interpreter QUIET)
if(Python3_Interpreter_FOUND)
  add_test(NAME library_readme_tables
           COMMAND ${Python3_EXECUTABLE}
                   ${PROJECT_SOURCE_DIR}/chapters/10_production/tools/readme_tables.py --check
           WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
  set_tests_properties(library_readme_tables PROPERTIES LABELS cpu TIMEOUT 60)
endif()
