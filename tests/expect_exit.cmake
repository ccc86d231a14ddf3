# Runs a benchmark binary (or any command) and checks its exit status and output against the bench
# protocol (tests/amr, tests/uts).
#   cmake -DCMD="prog|arg|arg" -DEXPECT=2 [-DSTDERR_RE=regex] [-DSTDOUT_RE=regex] -P expect_exit.cmake
# CMD separates arguments with '|'. Passes when the exit status is EXPECT and
#   - for EXPECT != 0: stderr is exactly one line (matching STDERR_RE when given) and stdout is
#     empty (a failed run prints no JSON line);
#   - for EXPECT == 0: stdout matches STDOUT_RE when given.
string(REPLACE "|" ";" cmd "${CMD}")
execute_process(COMMAND ${cmd} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
string(STRIP "${err}" err_stripped)
if(NOT rc STREQUAL "${EXPECT}")
  message(FATAL_ERROR "exit status ${rc}, expected ${EXPECT}\nstdout: ${out}\nstderr: ${err}")
endif()
if(NOT EXPECT STREQUAL "0")
  string(FIND "${err_stripped}" "\n" nl)
  if(err_stripped STREQUAL "" OR NOT nl EQUAL -1)
    message(FATAL_ERROR "stderr should be one line, got:\n${err}")
  endif()
  if(NOT out STREQUAL "")
    message(FATAL_ERROR "stdout should be empty, got:\n${out}")
  endif()
endif()
if(DEFINED STDERR_RE AND NOT err_stripped MATCHES "${STDERR_RE}")
  message(FATAL_ERROR "stderr does not match '${STDERR_RE}':\n${err}")
endif()
if(DEFINED STDOUT_RE AND NOT out MATCHES "${STDOUT_RE}")
  message(FATAL_ERROR "stdout does not match '${STDOUT_RE}':\n${out}")
endif()
message(STATUS "ok: exit ${rc}: ${err_stripped}")
