# tests/fuzzers/fuzz.cmake - fuzz targets: replay tests in every build, libFuzzer binaries with SLDA_FUZZ.
#
# Included from the top-level CMakeLists.txt after the library and enable_testing():
#     include(${CMAKE_SOURCE_DIR}/tests/fuzzers/fuzz.cmake)
#
# Every target tests/fuzzers/fuzz_<name>.c (see fuzzutil.h) is always built with
# replay.c into fuzz_replay_<name>, a ctest test that runs it over
# tests/fuzzers/corpus/<corpus>/ plus deterministic variants and generated
# inputs. With -DSLDA_FUZZ=ON and clang, each is also built as a libFuzzer
# binary fuzz_<name> (-fsanitize=fuzzer,address,undefined), and the library
# gets coverage and sanitizer instrumentation so findings inside it show;
# scripts/fuzz.sh drives those.

include_guard(GLOBAL)

option(SLDA_FUZZ "Build libFuzzer fuzz targets (clang only; see scripts/fuzz.sh)" OFF)

set(SLDA_FUZZ_DIR ${CMAKE_SOURCE_DIR}/tests/fuzzers)
# name | source | corpus directory | extra compile definition (or -)
set(SLDA_FUZZ_TARGETS
    "message|fuzz_message.c|message|-"
    "json|fuzz_json.c|json|-"
    "snapshot|fuzz_snapshot.c|snapshot|-"
    "snapshot_fixsum|fuzz_snapshot.c|snapshot|SLDA_FUZZ_FIX_CHECKSUM"
    "reader|fuzz_reader.c|reader|-"
    "tokenize|fuzz_tokenize.c|tokenize|-"
    "segment|fuzz_segment.c|tokenize|-"
    "update|fuzz_update.c|update|-"
    "update_fixsum|fuzz_update.c|update|SLDA_FUZZ_FIX_CHECKSUM")

set(SLDA_FUZZ_BUILD_LIBFUZZER OFF)
if(SLDA_FUZZ)
  if(CMAKE_C_COMPILER_ID MATCHES "Clang")
    set(SLDA_FUZZ_BUILD_LIBFUZZER ON)
    # Coverage feedback and sanitizer checks inside the library, where the
    # decoders live; every program linked with it then needs the runtimes.
    target_compile_options(slda PRIVATE -fsanitize=fuzzer-no-link,address,undefined
                           -fno-sanitize-recover=undefined -fno-omit-frame-pointer)
    target_link_options(slda INTERFACE -fsanitize=address,undefined)
  else()
    message(WARNING "SLDA_FUZZ=ON needs clang (CMAKE_C_COMPILER=clang); "
                    "building only the replay tests")
  endif()
endif()

foreach(entry ${SLDA_FUZZ_TARGETS})
  string(REPLACE "|" ";" fields "${entry}")
  list(GET fields 0 name)
  list(GET fields 1 source)
  list(GET fields 2 corpus)
  list(GET fields 3 define)
  set(sources ${SLDA_FUZZ_DIR}/${source} ${SLDA_FUZZ_DIR}/fuzzutil.c)

  add_executable(fuzz_replay_${name} ${sources} ${SLDA_FUZZ_DIR}/replay.c)
  set(targets fuzz_replay_${name})
  if(SLDA_FUZZ_BUILD_LIBFUZZER)
    add_executable(fuzz_${name} ${sources})
    target_compile_options(fuzz_${name} PRIVATE -fsanitize=fuzzer,address,undefined
                           -fno-sanitize-recover=undefined -fno-omit-frame-pointer)
    target_link_options(fuzz_${name} PRIVATE -fsanitize=fuzzer,address,undefined)
    list(APPEND targets fuzz_${name})
  endif()
  foreach(t ${targets})
    target_include_directories(${t} PRIVATE ${SLDA_INTERNAL_INCLUDES} ${SLDA_FUZZ_DIR})
    target_link_libraries(${t} PRIVATE slda)
    if(NOT define STREQUAL "-")
      target_compile_definitions(${t} PRIVATE ${define})
    endif()
  endforeach()

  add_test(NAME fuzz_replay_${name}
           COMMAND fuzz_replay_${name} ${SLDA_FUZZ_DIR}/corpus/${corpus})
  # Allocations a hostile size asks for must fail softly (SLDA_ERR_NOMEM),
  # not end the process inside the sanitizer's allocator. The limit is far above what a
  # loaded machine needs: fuzz_replay_reader makes two models an input (about 2,500 inputs);
  # it took 295 s under AddressSanitizer on a quiet machine and ran out of 600 s once with
  # both cores loaded three times over (2026-12-07), until the tokenizers shared the auto
  # stop lists built once a process (src/text/stopset.c): 23 s since.
  set_tests_properties(fuzz_replay_${name} PROPERTIES
    ENVIRONMENT "ASAN_OPTIONS=allocator_may_return_null=1;UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1"
    TIMEOUT 1800 LABELS fuzz)
endforeach()
