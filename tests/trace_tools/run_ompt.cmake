# Runs PROG ARGS under the OMPT tool TOOL with PLAIT_TRACE=TRACE (4 threads) and checks:
#  - the program exits 0 (it verifies its own result);
#  - UNWRITABLE: exactly one "plait-ompt: cannot write trace" line on stderr and no file;
#  - otherwise the trace exists and, if UV is set, `plait-bench trace check TRACE --expect-tasks EXPECT`.
file(REMOVE ${TRACE})
execute_process(
  COMMAND ${CMAKE_COMMAND} -E env OMP_TOOL_LIBRARIES=${TOOL} PLAIT_TRACE=${TRACE} OMP_NUM_THREADS=4 ${PROG} ${ARGS}
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${PROG} ${ARGS} under the tool: exit ${rc}\nstdout: ${out}\nstderr: ${err}")
endif()
if(UNWRITABLE)
  string(REGEX MATCHALL "plait-ompt: cannot write trace[^\n]*\n" lines "${err}")
  list(LENGTH lines nlines)
  if(NOT nlines EQUAL 1 OR EXISTS ${TRACE})
    message(FATAL_ERROR "expected one 'plait-ompt: cannot write trace' line and no file, got stderr:\n${err}")
  endif()
  message(STATUS "ok: ${err}")
  return()
endif()
if(NOT EXISTS ${TRACE})
  message(FATAL_ERROR "no trace written at ${TRACE}\nstderr: ${err}")
endif()
if(err MATCHES "plait-ompt")
  message(FATAL_ERROR "the tool complained:\n${err}")
endif()
if(UV)
  execute_process(
    COMMAND ${UV} run --frozen --quiet --project ${PYPROJECT} python -m plait_bench trace check ${TRACE}
            --expect-tasks ${EXPECT}
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE cerr)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "trace check ${TRACE}: exit ${rc}\n${out}${cerr}")
  endif()
  message(STATUS "${out}")
else()
  message(STATUS "uv not found: only checked that ${TRACE} was written")
endif()
