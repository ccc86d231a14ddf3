# Runs one amr binary and checks the bench protocol's exit status.
#   cmake "-DCMD=prog|arg|..." -DEXPECT=<code> [-DSTDERR_RE=regex] -P expect_exit.cmake
# For EXPECT != 0: stderr must be one line (matching STDERR_RE) and stdout empty.
string(REPLACE "|" ";" cmd "${CMD}")
execute_process(COMMAND ${cmd} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
string(STRIP "${err}" e)
if(NOT rc STREQUAL "${EXPECT}")
  message(FATAL_ERROR "exit status ${rc}, expected ${EXPECT}\nstdout: ${out}\nstderr: ${err}")
endif()
if(NOT EXPECT STREQUAL "0")
  string(FIND "${e}" "\n" nl)
  if(e STREQUAL "" OR NOT nl EQUAL -1 OR NOT out STREQUAL "")
    message(FATAL_ERROR "expected one stderr line and no stdout\nstdout: ${out}\nstderr: ${err}")
  endif()
endif()
if(DEFINED STDERR_RE AND NOT e MATCHES "${STDERR_RE}")
  message(FATAL_ERROR "stderr does not match '${STDERR_RE}': ${err}")
endif()
message(STATUS "ok: exit ${rc}: ${e}")
