/* Shared by the OMPT programs (ompt_*.c): the tool inside the program. A program defines
 * TEST_NAME, includes this header and defines
 *     static void tool_callbacks(void)
 * which registers its callbacks with SET (each must be answered ompt_set_always) or with
 * ot_set directly; the header's ompt_start_tool looks up the entry points the programs use first.
 * Helpers: val (a data's value, 0 for none), new_id, my_thread (the thread's id, given by
 * ot_thread_begin: 1, 2, ... in the order threads begin), current_task (ompt_get_task_info(0)'s
 * data), and plait_runtime (the runtime names itself "Plait ...": what only Plait is checked for). */
#ifndef PLAIT_OMPT_TEST_H
#define PLAIT_OMPT_TEST_H

#include <omp-tools.h>
#include <omp.h>
#include <stdint.h>

#include "omp_test.h"

static ompt_set_callback_t ot_set;
static ompt_get_thread_data_t get_thread_data;
static ompt_get_task_info_t get_task_info;
static ompt_get_parallel_info_t get_parallel_info;
static int plait_runtime;
static int thread_count;
static uint64_t next_id = 1;

static inline uint64_t val(ompt_data_t *d) { return d == NULL ? 0 : d->value; }
static inline uint64_t new_id(void) { return __atomic_fetch_add(&next_id, 1, __ATOMIC_RELAXED); }
static inline int my_thread(void) {
  ompt_data_t *d = get_thread_data();
  return d == NULL ? -1 : (int)d->value;
}
/* thread_begin's part every program needs: the thread's id */
static inline void ot_thread_begin(ompt_thread_t type, ompt_data_t *data) {
  (void)type;
  data->value = (uint64_t)__atomic_add_fetch(&thread_count, 1, __ATOMIC_RELAXED);
}
static inline uint64_t current_task(void) {
  ompt_data_t *d = NULL;
  int flags = 0;
  CHECK(get_task_info(0, &flags, &d, NULL, NULL, NULL) == 2, "ompt_get_task_info(0) found no task");
  return val(d);
}

#define SET(e, f) CHECK(ot_set(e, (ompt_callback_t)(f)) == ompt_set_always, "ompt_set_callback(" #e ") is not always")

static void tool_callbacks(void);

static int ot_initialize(ompt_function_lookup_t lookup, int device, ompt_data_t *tool) {
  (void)device, (void)tool;
  ot_set = (ompt_set_callback_t)lookup("ompt_set_callback");
  get_thread_data = (ompt_get_thread_data_t)lookup("ompt_get_thread_data");
  get_task_info = (ompt_get_task_info_t)lookup("ompt_get_task_info");
  get_parallel_info = (ompt_get_parallel_info_t)lookup("ompt_get_parallel_info");
  if (ot_set == NULL || get_thread_data == NULL || get_task_info == NULL || get_parallel_info == NULL) return 0;
  tool_callbacks();
  return 1;
}
static void ot_finalize(ompt_data_t *tool) { (void)tool; }

ompt_start_tool_result_t *ompt_start_tool(unsigned int version, const char *runtime) {
  (void)version;
  plait_runtime = runtime != NULL && strncmp(runtime, "Plait", 5) == 0;
  static ompt_start_tool_result_t r = {&ot_initialize, &ot_finalize, {0}};
  return &r;
}

#endif
