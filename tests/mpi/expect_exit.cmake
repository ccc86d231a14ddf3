# cmake -DCMD=... -DARGS=a;b;c -DWANT_RC=N -DWANT_ERR=text -P expect_exit.cmake: runs the command,
# fails unless it exits with WANT_RC and its stderr holds WANT_ERR on one line.
execute_process(COMMAND ${CMD} ${ARGS} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 50)
if(NOT rc STREQUAL "${WANT_RC}")
  message(FATAL_ERROR "exit status ${rc}, want ${WANT_RC}\nstdout: ${out}\nstderr: ${err}")
endif()
string(FIND "${err}" "${WANT_ERR}" at)
if(at EQUAL -1)
  message(FATAL_ERROR "stderr does not say '${WANT_ERR}':\n${err}")
endif()
if(NOT out STREQUAL "")
  message(FATAL_ERROR "bad input must print nothing on stdout, got:\n${out}")
endif()
