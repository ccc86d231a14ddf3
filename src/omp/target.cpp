// Target constructs on a machine without offload devices: every target region runs on the host
// (host fallback), as libgomp does when it has no device; the data-mapping constructs have nothing
// to copy, since the host's memory is the device's. Rules, each as libgomp 12 behaves here (probed
// with gcc-built programs, docs/openmp.md "Target constructs"):
//   * The only device is the host: omp_get_num_devices() is 0 and the initial device is 0. A device
//     number that names no device runs on the host too, unless OMP_TARGET_OFFLOAD=mandatory: then
//     the program stops with one line.
//   * A target region is a new initial task: it starts from the initial ICVs (an omp_set_num_threads
//     outside does not reach it) and leaves the encountering task's ICVs as they were. A
//     thread_limit clause bounds its parallel regions. Inside a parallel region, the region's
//     thread and level queries keep answering for the enclosing team (libgomp starts a new thread
//     state there), and parallel regions inside it run as teams of one (Plait's nested rule).
//   * firstprivate variables are copied at the construct (the region writes its copies); with
//     nowait inside a team the region is a deferred task with the construct's dependences, its
//     map pointers and firstprivate copies carried in the task's argument block; without nowait,
//     depend clauses wait for the earlier sibling tasks they name.
//   * teams inside a target region (GOMP_teams4): the lower bound of num_teams teams (1 without the
//     clause), one after another on the encountering thread.
#include "omp_internal.hpp"

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <new>

extern "C" {
void GOMP_task(void (*fn)(void*), void* data, void (*cpyfn)(void*, void*), long arg_size, long arg_align,
               bool if_clause, unsigned flags, void** depend, int priority, void* detach);
void GOMP_taskwait_depend(void** depend);
}

namespace plait::omp {
namespace {

constexpr int device_icv = -1;            // no device clause: default-device-var
constexpr int device_host_fallback = -2;  // the compiler's "run on the host"
constexpr int host_device = 0;            // omp_get_initial_device(): omp_get_num_devices() is 0
constexpr unsigned target_nowait = 1u << 0;
// gomp-constants.h's GOMP_MAP_FIRSTPRIVATE. (GOMP_MAP_FIRSTPRIVATE_INT, 13, carries its value in the
// host address itself: nothing to copy.)
constexpr unsigned map_firstprivate = 12;
// The args array of GOMP_target_ext: (id | device) words, a value in the high bits or in the next
// word; 0 ends it.
constexpr std::uintptr_t arg_device_mask = (1u << 7) - 1, arg_subsequent = 1u << 7, arg_id_mask = 0xffu << 8,
                         arg_thread_limit = 2u << 8;
constexpr int arg_value_shift = 16;

// The device a construct names: the host, or a stop when OMP_TARGET_OFFLOAD=mandatory asks for one
// that does not exist.
void resolve_device(int device) {
  if (device == device_icv) device = thread_state().icv.default_device;
  if (device == device_host_fallback || device == host_device) return;
  if (global().target_offload == target_offload_mandatory)
    fatal("OMP_TARGET_OFFLOAD is set to MANDATORY, but device %d does not exist (this machine has no "
          "offload device: the host is device %d)",
          device, host_device);
}

// The thread_limit a GOMP_target_ext argument list carries for every device (0: none).
unsigned thread_limit_of(void** args) {
  if (args == nullptr) return 0;
  while (*args != nullptr) {
    const auto id = reinterpret_cast<std::uintptr_t>(*args++);
    std::intptr_t val;
    if (id & arg_subsequent) val = reinterpret_cast<std::intptr_t>(*args++);
    else val = static_cast<std::intptr_t>(id) >> arg_value_shift;
    if ((id & arg_device_mask) != 0 || (id & arg_id_mask) != arg_thread_limit) continue;
    return val <= 0 ? 0u : val > INT_MAX ? static_cast<unsigned>(INT_MAX) : static_cast<unsigned>(val);
  }
  return 0;
}

bool is_firstprivate(const unsigned short* kinds, std::size_t i) { return (kinds[i] & 0xffu) == map_firstprivate; }
std::size_t align_of(const unsigned short* kinds, std::size_t i) { return std::size_t{1} << (kinds[i] >> 8); }

// Room for the firstprivate copies: their total size with each one aligned, and the largest
// alignment (0: none).
void firstprivate_room(std::size_t mapnum, const std::size_t* sizes, const unsigned short* kinds, std::size_t* size,
                       std::size_t* align) {
  *size = 0;
  *align = 0;
  for (std::size_t i = 0; i < mapnum; ++i)
    if (is_firstprivate(kinds, i)) {
      const std::size_t a = align_of(kinds, i);
      if (a > *align) *align = a;
      *size = (*size + a - 1) & ~(a - 1);
      *size += sizes[i];
    }
}

// Copies the firstprivate variables into buf (aligned for them) and points hostaddrs at the copies.
void copy_firstprivate(char* buf, std::size_t mapnum, void** hostaddrs, const std::size_t* sizes,
                       const unsigned short* kinds) {
  std::size_t at = 0;
  for (std::size_t i = 0; i < mapnum; ++i)
    if (is_firstprivate(kinds, i)) {
      const std::size_t a = align_of(kinds, i);
      at = (at + a - 1) & ~(a - 1);
      std::memcpy(buf + at, hostaddrs[i], sizes[i]);
      hostaddrs[i] = buf + at;
      at += sizes[i];
    }
}

// Runs a target region's body on this thread as the region's initial task: the initial ICVs, the
// thread limit given, no teams; everything restored afterwards.
void run_region(void (*fn)(void*), void** hostaddrs, unsigned thread_limit) {
  Thread& t = thread_state();
  const Icv saved = t.icv;
  const int team_num = t.team_num, num_teams = t.num_teams;
  t.icv = global().icv;
  if (thread_limit != 0) t.icv.thread_limit = thread_limit;
  t.team_num = 0;
  t.num_teams = 1;
  fn(hostaddrs);
  t.icv = saved;
  t.team_num = team_num;
  t.num_teams = num_teams;
}

// A nowait target region deferred as a task: the block GOMP_task copies holds the body, the map
// pointers and where each firstprivate copy lies in the block, then the copies.
struct Deferred {
  void (*fn)(void*);
  std::size_t mapnum;
  std::size_t fp_at;  // offset of the copies in the block
  unsigned thread_limit;
  // followed by: void* addrs[mapnum]; std::size_t fp_off[mapnum] (SIZE_MAX: not firstprivate);
  // then, at fp_at, the copies
};

void run_deferred(void* p) {
  auto* d = static_cast<Deferred*>(p);
  char* const base = static_cast<char*>(p);
  void** addrs = reinterpret_cast<void**>(d + 1);
  const auto* off = reinterpret_cast<const std::size_t*>(addrs + d->mapnum);
  for (std::size_t i = 0; i < d->mapnum; ++i)
    if (off[i] != SIZE_MAX) addrs[i] = base + d->fp_at + off[i];  // this block's copy
  run_region(d->fn, addrs, d->thread_limit);
}

void defer(void (*fn)(void*), std::size_t mapnum, void** hostaddrs, const std::size_t* sizes,
           const unsigned short* kinds, void** depend, unsigned thread_limit) {
  std::size_t fp_size, fp_align;
  firstprivate_room(mapnum, sizes, kinds, &fp_size, &fp_align);
  const std::size_t align = fp_align > alignof(Deferred) ? fp_align : alignof(Deferred);
  const std::size_t head = sizeof(Deferred) + mapnum * (sizeof(void*) + sizeof(std::size_t));
  const std::size_t fp_at = (head + align - 1) & ~(align - 1);
  const std::size_t total = fp_at + fp_size;
  // The block is built here and copied by GOMP_task into the task's own argument block.
  void* raw = std::aligned_alloc(align, (total + align - 1) & ~(align - 1));
  if (raw == nullptr) fatal("GOMP_target_ext: out of memory for a nowait target region's block");
  auto* d = new (raw) Deferred{fn, mapnum, fp_at, thread_limit};
  void** addrs = reinterpret_cast<void**>(d + 1);
  auto* off = reinterpret_cast<std::size_t*>(addrs + mapnum);
  char* const copies = static_cast<char*>(raw) + fp_at;
  std::memcpy(addrs, hostaddrs, mapnum * sizeof(void*));
  copy_firstprivate(copies, mapnum, addrs, sizes, kinds);  // addrs[i] now points at its copy
  for (std::size_t i = 0; i < mapnum; ++i)
    off[i] = is_firstprivate(kinds, i) ? static_cast<std::size_t>(static_cast<char*>(addrs[i]) - copies) : SIZE_MAX;
  GOMP_task(&run_deferred, raw, nullptr, static_cast<long>(total), static_cast<long>(align), true,
            depend != nullptr ? task_depend : 0u, depend, 0, nullptr);
  std::free(raw);
}

// Both devices of a copy must be the host: the only device there is.
bool host(int device) { return device == host_device; }

// omp_target_memcpy_rect's copy of one block of `dims` dimensions; false on an overflow.
bool copy_rect(char* dst, const char* src, std::size_t es, int dims, const std::size_t* volume,
               const std::size_t* dst_off, const std::size_t* src_off, const std::size_t* dst_dim,
               const std::size_t* src_dim) {
  if (dims == 1) {
    std::size_t n, d, s;
    if (__builtin_mul_overflow(es, volume[0], &n) || __builtin_mul_overflow(es, dst_off[0], &d) ||
        __builtin_mul_overflow(es, src_off[0], &s))
      return false;
    std::memmove(dst + d, src + s, n);
    return true;
  }
  std::size_t dslice = es, sslice = es;
  for (int k = 1; k < dims; ++k)
    if (__builtin_mul_overflow(dslice, dst_dim[k], &dslice) || __builtin_mul_overflow(sslice, src_dim[k], &sslice))
      return false;
  for (std::size_t j = 0; j < volume[0]; ++j) {
    std::size_t d, s;
    if (__builtin_mul_overflow(dst_off[0] + j, dslice, &d) || __builtin_mul_overflow(src_off[0] + j, sslice, &s))
      return false;
    if (!copy_rect(dst + d, src + s, es, dims - 1, volume + 1, dst_off + 1, src_off + 1, dst_dim + 1, src_dim + 1))
      return false;
  }
  return true;
}

}  // namespace
}  // namespace plait::omp

using namespace plait::omp;

extern "C" {

// ---- target regions -----------------------------------------------------------------------------

void GOMP_target_ext(int device, void (*fn)(void*), std::size_t mapnum, void** hostaddrs, std::size_t* sizes,
                     unsigned short* kinds, unsigned flags, void** depend, void** args) {
  resolve_device(device);
  const unsigned limit = thread_limit_of(args);
  if ((flags & target_nowait) != 0 && thread_state().team != nullptr) {
    defer(fn, mapnum, hostaddrs, sizes, kinds, depend, limit);
    return;
  }
  if (depend != nullptr) GOMP_taskwait_depend(depend);
  std::size_t fp_size, fp_align;
  firstprivate_room(mapnum, sizes, kinds, &fp_size, &fp_align);
  if (fp_align == 0) {
    run_region(fn, hostaddrs, limit);
    return;
  }
  // the copies live as long as the region: on this frame's heap block, aligned
  void* buf = std::aligned_alloc(fp_align, (fp_size + fp_align - 1) & ~(fp_align - 1));
  if (buf == nullptr) fatal("GOMP_target_ext: out of memory for %zu bytes of firstprivate copies", fp_size);
  copy_firstprivate(static_cast<char*>(buf), mapnum, hostaddrs, sizes, kinds);
  run_region(fn, hostaddrs, limit);
  std::free(buf);
}

// The OpenMP 4.0 form: no firstprivate, nowait or depend.
void GOMP_target(int device, void (*fn)(void*), const void* /*unused*/, std::size_t /*mapnum*/, void** hostaddrs,
                 std::size_t* /*sizes*/, unsigned char* /*kinds*/) {
  resolve_device(device);
  run_region(fn, hostaddrs, 0);
}

// teams inside a target region: the lower bound's teams (at least 1), one after another; gcc
// calls it with first = true, then after each team's body until it returns false.
bool GOMP_teams4(unsigned num_teams_low, unsigned /*num_teams_high*/, unsigned thread_limit, bool first) {
  Thread& t = thread_state();
  if (first) {
    if (thread_limit != 0) t.icv.thread_limit = thread_limit;  // omp_get_thread_limit clamps
    t.num_teams = num_teams_low == 0 ? 1 : static_cast<int>(num_teams_low > INT_MAX ? INT_MAX : num_teams_low);
    t.team_num = 0;
    return true;
  }
  if (t.team_num + 1 >= t.num_teams) return false;
  ++t.team_num;
  return true;
}

// The OpenMP 4.0 teams inside a target region: one team; the thread limit holds in it.
void GOMP_teams(unsigned /*num_teams*/, unsigned thread_limit) {
  if (thread_limit != 0) thread_state().icv.thread_limit = thread_limit;
}

// ---- data mapping: nothing to copy; dependences are waited for --------------------------------

void GOMP_target_data_ext(int device, std::size_t, void**, std::size_t*, unsigned short*) { resolve_device(device); }
void GOMP_target_data(int device, const void*, std::size_t, void**, std::size_t*, unsigned char*) {
  resolve_device(device);
}
void GOMP_target_end_data(void) {}
void GOMP_target_update_ext(int device, std::size_t, void**, std::size_t*, unsigned short*, unsigned /*flags*/,
                            void** depend) {
  resolve_device(device);
  if (depend != nullptr) GOMP_taskwait_depend(depend);
}
void GOMP_target_update(int device, const void*, std::size_t, void**, std::size_t*, unsigned char*) {
  resolve_device(device);
}
void GOMP_target_enter_exit_data(int device, std::size_t, void**, std::size_t*, unsigned short*, unsigned /*flags*/,
                                 void** depend) {
  resolve_device(device);
  if (depend != nullptr) GOMP_taskwait_depend(depend);
}

// Offload images (a program built with -foffload): no device to load them onto.
void GOMP_offload_register_ver(unsigned, const void*, int, const void*) {}
void GOMP_offload_register(const void*, int, const void*) {}
void GOMP_offload_unregister_ver(unsigned, const void*, int, const void*) {}
void GOMP_offload_unregister(const void*, int, const void*) {}

// ---- device memory routines: the host is the only device ----------------------------------------

void* omp_target_alloc(size_t size, int device) { return host(device) ? std::malloc(size) : nullptr; }

void omp_target_free(void* p, int device) {
  if (p != nullptr && host(device)) std::free(p);
}

int omp_target_is_present(const void* p, int device) { return p == nullptr || host(device) ? 1 : 0; }

int omp_target_memcpy(void* dst, const void* src, size_t length, size_t dst_offset, size_t src_offset,
                      int dst_device, int src_device) {
  if (!host(dst_device) || !host(src_device)) return EINVAL;
  std::memmove(static_cast<char*>(dst) + dst_offset, static_cast<const char*>(src) + src_offset, length);
  return 0;
}

// dst and src both null: the number of dimensions supported (any).
int omp_target_memcpy_rect(void* dst, const void* src, size_t element_size, int num_dims, const size_t* volume,
                           const size_t* dst_offsets, const size_t* src_offsets, const size_t* dst_dimensions,
                           const size_t* src_dimensions, int dst_device, int src_device) {
  if (dst == nullptr && src == nullptr) return INT_MAX;
  if (dst == nullptr || src == nullptr || num_dims < 1 || !host(dst_device) || !host(src_device)) return EINVAL;
  return copy_rect(static_cast<char*>(dst), static_cast<const char*>(src), element_size, num_dims, volume,
                   dst_offsets, src_offsets, dst_dimensions, src_dimensions)
             ? 0
             : EINVAL;
}

// Associating host memory with device memory needs a device other than the host.
int omp_target_associate_ptr(const void*, const void*, size_t, size_t, int) { return EINVAL; }
int omp_target_disassociate_ptr(const void*, int) { return EINVAL; }

}  // extern "C"
