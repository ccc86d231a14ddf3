// The Fortran entry points of the OpenMP API (what gfortran's omp_lib module and omp_lib.h call):
// the C routine's name with a trailing underscore, every argument by reference, and an `_8_`
// twin for each routine that takes an integer, called when the program passes an integer(8).
//
// The conventions, fixed by gfortran 12 and libgomp's omp_lib (probed with gfortran-12 here):
//   * integer(4) and logical(4) are int32 (a logical is 0 or 1); a result is returned by value.
//   * An integer(8) argument outside int's range is clamped to it.
//   * omp_lock_kind is 4 and omp_nest_lock_kind 8. A simple lock (4 bytes in C as well) lives in
//     the program's integer(4) itself; a nestable lock (16 bytes) does not fit its integer(8), which
//     holds the address of one allocated by omp_init_nest_lock_ and freed by
//     omp_destroy_nest_lock_ (which zeroes it).
//   * A character argument comes as its address plus a hidden length (size_t) after the other
//     arguments; a Fortran string has no terminating NUL. A format is taken with its whole length,
//     trailing blanks included, as libgomp does; an empty one means the affinity-format ICV. A
//     result string is blank-padded to the buffer's length, or truncated to it; the function
//     returns the whole length.
//   * omp_get_schedule_ reports the kind without the monotonic bit (OpenMP 4.5 Fortran code does
//     not expect it).
//   * omp_alloctrait is {integer(c_int) key, integer(c_intptr_t) value}: the C layout.
#include "omp_internal.hpp"

#include <climits>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

using plait::omp::AllocTrait;

// The C routines (src/omp/api.cpp, places.cpp, affinity.cpp, alloc.cpp, task.cpp), as defined there.
extern "C" {
int omp_get_dynamic(void);
int omp_get_max_threads(void);
int omp_get_nested(void);
int omp_get_num_procs(void);
int omp_get_num_threads(void);
int omp_get_thread_num(void);
int omp_in_parallel(void);
void omp_set_dynamic(int v);
void omp_set_nested(int v);
void omp_set_num_threads(int n);
double omp_get_wtick(void);
double omp_get_wtime(void);
void omp_init_lock(void* l);
void omp_destroy_lock(void*);
void omp_set_lock(void* l);
void omp_unset_lock(void* l);
int omp_test_lock(void* l);
void omp_init_nest_lock(void* p);
void omp_destroy_nest_lock(void*);
void omp_set_nest_lock(void* p);
void omp_unset_nest_lock(void* p);
int omp_test_nest_lock(void* p);
int omp_get_active_level(void);
int omp_get_ancestor_thread_num(int level);
int omp_get_level(void);
int omp_get_max_active_levels(void);
void omp_set_max_active_levels(int v);
int omp_get_supported_active_levels(void);
void omp_get_schedule(int* kind, int* chunk);
void omp_set_schedule(int kind, int chunk);
int omp_get_team_size(int level);
int omp_get_thread_limit(void);
int omp_in_final(void);
int omp_get_cancellation(void);
int omp_get_default_device(void);
void omp_set_default_device(int);
int omp_get_num_devices(void);
int omp_get_device_num(void);
int omp_get_initial_device(void);
int omp_is_initial_device(void);
int omp_get_num_teams(void);
int omp_get_team_num(void);
int omp_get_max_teams(void);
void omp_set_num_teams(int n);
int omp_get_teams_thread_limit(void);
void omp_set_teams_thread_limit(int n);
int omp_get_proc_bind(void);
int omp_get_max_task_priority(void);
int omp_get_num_places(void);
int omp_get_place_num_procs(int place);
void omp_get_place_proc_ids(int place, int* ids);
int omp_get_place_num(void);
int omp_get_partition_num_places(void);
void omp_get_partition_place_nums(int* place_nums);
int omp_pause_resource(int kind, int device_num);
int omp_pause_resource_all(int kind);
uintptr_t omp_init_allocator(std::uintptr_t memspace, int ntraits, const AllocTrait* traits);
void omp_destroy_allocator(std::uintptr_t allocator);
void omp_set_default_allocator(std::uintptr_t allocator);
uintptr_t omp_get_default_allocator(void);
void omp_display_env(int verbose);
void omp_fulfill_event(void* event);
}

namespace {

int clamp_int(std::int64_t v) noexcept {
  return v < INT_MIN ? INT_MIN : v > INT_MAX ? INT_MAX : static_cast<int>(v);
}

// The nestable lock an integer(omp_nest_lock_kind) holds the address of.
void* nest_lock_of(const std::int64_t* l) noexcept {
  void* p;
  std::memcpy(&p, l, sizeof p);
  return p;
}

// A Fortran string argument as a std::string (its whole length: no NUL, trailing blanks kept).
std::string from_fortran(const char* s, std::size_t len) { return len == 0 ? std::string() : std::string(s, len); }

// Writes s into a Fortran buffer of len characters: blank-padded, or truncated. Returns s's length.
int to_fortran(const std::string& s, char* buf, std::size_t len) noexcept {
  if (len > 0) {
    const std::size_t n = s.size() < len ? s.size() : len;
    std::memcpy(buf, s.data(), n);
    if (n < len) std::memset(buf + n, ' ', len - n);
  }
  return clamp_int(static_cast<std::int64_t>(s.size()));
}

// The integer(8) form of a routine that fills an int array of n entries: fill a temporary, widen.
template <class Fill>
void widened(int n, std::int64_t* out, Fill fill) {
  if (n <= 0) return;
  std::vector<int> v(static_cast<std::size_t>(n));
  fill(v.data());
  for (int i = 0; i < n; ++i) out[i] = v[static_cast<std::size_t>(i)];
}

}  // namespace

// The one-line forwards, each defining exactly the entry points it names (scripts/gen_omp_abi.py
// reads these invocations as the definitions they are):
//   FORTRAN_GETTER(omp_x)       int omp_x_(void), returning omp_x();
//   FORTRAN_SETTER(omp_x)       void omp_x_(const int*) and omp_x_8_(const int64_t*): omp_x(v), the
//                               integer(8) clamped to int;
//   FORTRAN_FLAG_SETTER(omp_x)  the same for a logical: the integer(8) one passes v != 0;
//   FORTRAN_INT_QUERY(omp_x)    int omp_x_(const int*) and omp_x_8_(const int64_t*): omp_x(v), clamped.
#define FORTRAN_GETTER(name)                                                 \
  int name##_(void) { return name(); }
#define FORTRAN_SETTER(name)                                                 \
  void name##_(const int* v) { name(*v); }                                   \
  void name##_8_(const std::int64_t* v) { name(clamp_int(*v)); }
#define FORTRAN_FLAG_SETTER(name)                                            \
  void name##_(const int* v) { name(*v); }                                   \
  void name##_8_(const std::int64_t* v) { name(*v != 0); }
#define FORTRAN_INT_QUERY(name)                                              \
  int name##_(const int* v) { return name(*v); }                             \
  int name##_8_(const std::int64_t* v) { return name(clamp_int(*v)); }

extern "C" {

// ---- threads and teams ----------------------------------------------------------------------

FORTRAN_SETTER(omp_set_num_threads)
FORTRAN_GETTER(omp_get_num_threads)
FORTRAN_GETTER(omp_get_max_threads)
FORTRAN_GETTER(omp_get_thread_num)
FORTRAN_GETTER(omp_get_num_procs)
FORTRAN_GETTER(omp_in_parallel)
FORTRAN_FLAG_SETTER(omp_set_dynamic)
FORTRAN_GETTER(omp_get_dynamic)
FORTRAN_FLAG_SETTER(omp_set_nested)
FORTRAN_GETTER(omp_get_nested)
FORTRAN_GETTER(omp_get_thread_limit)
FORTRAN_SETTER(omp_set_max_active_levels)
FORTRAN_GETTER(omp_get_max_active_levels)
FORTRAN_GETTER(omp_get_supported_active_levels)
FORTRAN_GETTER(omp_get_level)
FORTRAN_GETTER(omp_get_active_level)
FORTRAN_INT_QUERY(omp_get_ancestor_thread_num)
FORTRAN_INT_QUERY(omp_get_team_size)
FORTRAN_GETTER(omp_in_final)
FORTRAN_GETTER(omp_get_cancellation)
FORTRAN_GETTER(omp_get_max_task_priority)
FORTRAN_GETTER(omp_get_num_teams)
FORTRAN_GETTER(omp_get_team_num)
FORTRAN_SETTER(omp_set_num_teams)
FORTRAN_GETTER(omp_get_max_teams)
FORTRAN_SETTER(omp_set_teams_thread_limit)
FORTRAN_GETTER(omp_get_teams_thread_limit)

// ---- schedule -------------------------------------------------------------------------------

void omp_set_schedule_(const int* kind, const int* chunk) { omp_set_schedule(*kind, *chunk); }
void omp_set_schedule_8_(const int* kind, const std::int64_t* chunk) { omp_set_schedule(*kind, clamp_int(*chunk)); }
void omp_get_schedule_(int* kind, int* chunk) {
  omp_get_schedule(kind, chunk);
  *kind = static_cast<int>(static_cast<unsigned>(*kind) & 0x7fffffffu);  // without the monotonic bit
}
void omp_get_schedule_8_(int* kind, std::int64_t* chunk) {
  int c;
  omp_get_schedule_(kind, &c);
  *chunk = c;
}

// ---- time -----------------------------------------------------------------------------------

double omp_get_wtime_(void) { return omp_get_wtime(); }
double omp_get_wtick_(void) { return omp_get_wtick(); }

// ---- locks ----------------------------------------------------------------------------------

void omp_init_lock_(std::int32_t* l) { omp_init_lock(l); }
void omp_destroy_lock_(std::int32_t* l) { omp_destroy_lock(l); }
void omp_set_lock_(std::int32_t* l) { omp_set_lock(l); }
void omp_unset_lock_(std::int32_t* l) { omp_unset_lock(l); }
int omp_test_lock_(std::int32_t* l) { return omp_test_lock(l); }

void omp_init_nest_lock_(std::int64_t* l) {
  void* p = std::malloc(16);  // gcc's omp_nest_lock_t: 16 bytes, 8-aligned
  if (p == nullptr) plait::omp::fatal("omp_init_nest_lock: out of memory for a nestable lock");
  omp_init_nest_lock(p);
  std::memcpy(l, &p, sizeof p);
}
void omp_destroy_nest_lock_(std::int64_t* l) {
  void* p = nest_lock_of(l);
  omp_destroy_nest_lock(p);
  std::free(p);
  *l = 0;
}
void omp_set_nest_lock_(std::int64_t* l) { omp_set_nest_lock(nest_lock_of(l)); }
void omp_unset_nest_lock_(std::int64_t* l) { omp_unset_nest_lock(nest_lock_of(l)); }
int omp_test_nest_lock_(std::int64_t* l) { return omp_test_nest_lock(nest_lock_of(l)); }

// ---- devices, binding, places ---------------------------------------------------------------

FORTRAN_SETTER(omp_set_default_device)
FORTRAN_GETTER(omp_get_default_device)
FORTRAN_GETTER(omp_get_num_devices)
FORTRAN_GETTER(omp_get_device_num)
FORTRAN_GETTER(omp_get_initial_device)
FORTRAN_GETTER(omp_is_initial_device)
FORTRAN_GETTER(omp_get_proc_bind)
FORTRAN_GETTER(omp_get_num_places)
FORTRAN_INT_QUERY(omp_get_place_num_procs)
void omp_get_place_proc_ids_(const int* place, int* ids) { omp_get_place_proc_ids(*place, ids); }
void omp_get_place_proc_ids_8_(const std::int64_t* place, std::int64_t* ids) {
  const int p = clamp_int(*place);
  widened(omp_get_place_num_procs(p), ids, [p](int* v) { omp_get_place_proc_ids(p, v); });
}
FORTRAN_GETTER(omp_get_place_num)
FORTRAN_GETTER(omp_get_partition_num_places)
void omp_get_partition_place_nums_(int* nums) { omp_get_partition_place_nums(nums); }
void omp_get_partition_place_nums_8_(std::int64_t* nums) {
  widened(omp_get_partition_num_places(), nums, [](int* v) { omp_get_partition_place_nums(v); });
}

// ---- affinity display, pausing, the environment block ---------------------------------------

void omp_set_affinity_format_(const char* format, std::size_t len) {
  plait::omp::set_affinity_format_icv(from_fortran(format, len));
}
int omp_get_affinity_format_(char* buffer, std::size_t len) {
  return to_fortran(plait::omp::affinity_format_icv(), buffer, len);
}
void omp_display_affinity_(const char* format, std::size_t len) {
  plait::omp::print_affinity_line(plait::omp::affinity_text(from_fortran(format, len)));
}
int omp_capture_affinity_(char* buffer, const char* format, std::size_t buffer_len, std::size_t format_len) {
  return to_fortran(plait::omp::affinity_text(from_fortran(format, format_len)), buffer, buffer_len);
}
int omp_pause_resource_(const int* kind, const int* device) { return omp_pause_resource(*kind, *device); }
int omp_pause_resource_all_(const int* kind) { return omp_pause_resource_all(*kind); }
FORTRAN_FLAG_SETTER(omp_display_env)

// ---- allocators, events ---------------------------------------------------------------------

intptr_t omp_init_allocator_(const intptr_t* memspace, const int* ntraits, const AllocTrait* traits) {
  return static_cast<intptr_t>(omp_init_allocator(static_cast<std::uintptr_t>(*memspace), *ntraits, traits));
}
intptr_t omp_init_allocator_8_(const intptr_t* memspace, const std::int64_t* ntraits, const AllocTrait* traits) {
  return static_cast<intptr_t>(omp_init_allocator(static_cast<std::uintptr_t>(*memspace), clamp_int(*ntraits), traits));
}
void omp_destroy_allocator_(const intptr_t* a) { omp_destroy_allocator(static_cast<std::uintptr_t>(*a)); }
void omp_set_default_allocator_(const intptr_t* a) { omp_set_default_allocator(static_cast<std::uintptr_t>(*a)); }
intptr_t omp_get_default_allocator_(void) { return static_cast<intptr_t>(omp_get_default_allocator()); }

// The event handle comes by value (omp_lib declares it `value`).
void omp_fulfill_event_(intptr_t event) { omp_fulfill_event(reinterpret_cast<void*>(event)); }

}  // extern "C"
