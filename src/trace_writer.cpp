// Trace file writer (CSV after study 002, Chrome trace-event JSON). See trace_writer.hpp and
// docs/tracing.md. Depends on nothing else in src/: tools/ompt/ compiles this file too.
#include "trace_writer.hpp"

#include "trace_dag.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <queue>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>

namespace plait::trace {
namespace {

enum class format { none, csv, json };

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

format format_of(std::string_view path) {
  if (ends_with(path, ".csv")) return format::csv;
  if (ends_with(path, ".json")) return format::json;
  return format::none;
}

std::string dir_of(const std::string& path) {
  auto slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

std::string sys_error(int e) { return std::strerror(e); }

// Buffered output to a file descriptor: one write(2) per MiB, no iostreams.
class out_file {
 public:
  explicit out_file(int fd) : fd_(fd) { buf_.reserve(cap + 256); }
  out_file(const out_file&) = delete;
  out_file& operator=(const out_file&) = delete;

  void put(char c) {
    buf_.push_back(c);
    maybe_flush();
  }
  void put(std::string_view s) {
    buf_.append(s);
    maybe_flush();
  }
  void u64(std::uint64_t v) {
    char tmp[24];
    auto r = std::to_chars(tmp, tmp + sizeof tmp, v);
    buf_.append(tmp, static_cast<std::size_t>(r.ptr - tmp));
    maybe_flush();
  }
  // ns as microseconds with three decimals (the trace-event format counts in us).
  void us(std::uint64_t ns) {
    u64(ns / 1000);
    char tmp[4] = {'.', static_cast<char>('0' + ns / 100 % 10), static_cast<char>('0' + ns / 10 % 10),
                   static_cast<char>('0' + ns % 10)};
    buf_.append(tmp, 4);
  }
  void json_string(std::string_view s) {
    buf_.push_back('"');
    for (char ch : s) {
      auto c = static_cast<unsigned char>(ch);
      if (c == '"' || c == '\\') {
        buf_.push_back('\\');
        buf_.push_back(ch);
      } else if (c < 0x20) {
        static const char hex[] = "0123456789abcdef";
        char esc[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
        buf_.append(esc, 6);
      } else {
        buf_.push_back(ch);
      }
    }
    buf_.push_back('"');
    maybe_flush();
  }
  bool flush() {
    std::size_t off = 0;
    while (off < buf_.size() && err_ == 0) {
      ssize_t n = ::write(fd_, buf_.data() + off, buf_.size() - off);
      if (n < 0) {
        if (errno == EINTR) continue;
        err_ = errno;
        break;
      }
      off += static_cast<std::size_t>(n);
    }
    buf_.clear();
    return err_ == 0;
  }
  int error() const { return err_; }

 private:
  static constexpr std::size_t cap = std::size_t{1} << 20;
  void maybe_flush() {
    if (buf_.size() >= cap) flush();
  }
  int fd_;
  int err_ = 0;
  std::string buf_;
};

// ---- CSV: study 002, Table 1 ---------------------------------------------------------------

void write_csv(const Trace& t, out_file& o) {
  o.put("timestamp_ns,executing_thread,task_id,creating_thread,start\n");
  const std::size_t nw = t.workers.size();
  std::vector<std::size_t> pos(nw, 0);
  std::vector<std::vector<std::uint32_t>> creators(nw);  // open tasks per worker (they nest)
  auto next_task_event = [&](std::size_t w) {
    const auto& evs = t.workers[w];
    while (pos[w] < evs.size() && evs[pos[w]].kind != ev::task_begin && evs[pos[w]].kind != ev::task_end) ++pos[w];
    return pos[w] < evs.size();
  };
  using item = std::pair<std::uint64_t, std::size_t>;  // (time, worker): ties go to the lower worker
  std::priority_queue<item, std::vector<item>, std::greater<>> heap;
  for (std::size_t w = 0; w < nw; ++w)
    if (next_task_event(w)) heap.emplace(t.workers[w][pos[w]].t_ns, w);
  while (!heap.empty()) {
    auto w = heap.top().second;
    heap.pop();
    const Event& e = t.workers[w][pos[w]++];
    std::uint32_t creator = 0;
    if (e.kind == ev::task_begin) {
      creator = e.other;
      creators[w].push_back(creator);
    } else if (!creators[w].empty()) {
      creator = creators[w].back();
      creators[w].pop_back();
    }
    o.u64(e.t_ns);
    o.put(',');
    o.u64(w);
    o.put(',');
    o.u64(e.task);
    o.put(',');
    o.u64(creator);
    o.put(e.kind == ev::task_begin ? ",1\n" : ",0\n");
    if (next_task_event(w)) heap.emplace(t.workers[w][pos[w]].t_ns, w);
  }
}

// ---- JSON: Chrome trace-event format -------------------------------------------------------

// One worker's counts (or their total), in the order and under the names of the JSON's "counters".
struct counts {
  enum : unsigned { tasks, spawns, steals, steal_fails, sleeps, wakes, idle_ns, task_ns, n };
  static constexpr const char* names[n] = {"tasks", "spawns", "steals", "steal_fails",
                                           "sleeps", "wakes", "idle_ns", "task_ns"};
  std::uint64_t v[n] = {};
  std::uint64_t first_ns = 0, last_ns = 0;
  bool any = false;
};

void put_counts(out_file& o, const counts& c) {
  for (unsigned i = 0; i < counts::n; ++i) {
    o.put(i == 0 ? "{\"" : ",\"");
    o.put(counts::names[i]);
    o.put("\":");
    o.u64(c.v[i]);
  }
  o.put('}');
}

class json_writer {
 public:
  json_writer(const Trace& t, out_file& o) : t_(t), o_(o) {}

  void write() {
    prepare();
    o_.put("{\"displayTimeUnit\":\"ns\",\"otherData\":{\"format\":\"plait-trace-2\",\"dag\":");
    o_.put(dag_.recorded ? "true" : "false");
    o_.put(",\"runtime\":");
    o_.json_string(t_.runtime);
    o_.put(",\"program\":");
    o_.json_string(t_.program);
    num("t0_unix_ns", t_.t0_unix_ns);
    num("workers", t_.workers.size());
    o_.put(",\"counters\":");
    counts total;
    for (const auto& c : per_worker_)
      for (unsigned i = 0; i < counts::n; ++i) total.v[i] += c.v[i];
    put_counts(o_, total);
    o_.put(",\"per_worker\":[");
    for (std::size_t w = 0; w < per_worker_.size(); ++w) {
      if (w) o_.put(',');
      put_counts(o_, per_worker_[w]);
    }
    o_.put("]},\n\"traceEvents\":[\n");
    o_.put("{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":1,\"tid\":0,\"args\":{\"name\":");
    o_.json_string(t_.runtime + (t_.program.empty() ? std::string() : ": " + t_.program));
    o_.put("}}");
    for (std::size_t w = 0; w < t_.workers.size(); ++w) {
      o_.put(",\n{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":1,\"tid\":");
      o_.u64(w);
      o_.put(",\"args\":{\"name\":\"worker ");
      o_.u64(w);
      o_.put("\"}},\n{\"ph\":\"M\",\"name\":\"thread_sort_index\",\"pid\":1,\"tid\":");
      o_.u64(w);
      o_.put(",\"args\":{\"sort_index\":");
      o_.u64(w);
      o_.put("}}");
    }
    for (std::size_t w = 0; w < t_.workers.size(); ++w) write_worker(w);
    o_.put("\n]}\n");
  }

 private:
  // ,"key":value — a number, or a time in microseconds from nanoseconds
  void key(const char* k) {
    o_.put(",\"");
    o_.put(k);
    o_.put("\":");
  }
  void num(const char* k, std::uint64_t v) {
    key(k);
    o_.u64(v);
  }
  void us(const char* k, std::uint64_t ns) {
    key(k);
    o_.us(ns);
  }
  struct open_task {
    std::uint64_t task, t;
    std::uint32_t creator, label;
  };

  // Counters, the ids of stolen tasks and where they were spawned (for the flow arrows).
  void prepare() {
    dag_ = resolve_dag(t_);
    flows_.resize(t_.workers.size());
    if (dag_.recorded && dag_.tasks.size() <= max_dag_flows) dag_flows();
    per_worker_.resize(t_.workers.size());
    for (std::size_t w = 0; w < t_.workers.size(); ++w) {
      counts& c = per_worker_[w];
      std::uint64_t idle_since = 0;
      bool idle = false;
      std::vector<std::uint64_t> open;
      for (const Event& e : t_.workers[w]) {
        if (!c.any) c.first_ns = e.t_ns, c.any = true;
        c.last_ns = e.t_ns;
        switch (e.kind) {
          case ev::task_begin:
            ++c.v[counts::tasks];
            open.push_back(e.t_ns);
            break;
          case ev::task_end:
            if (!open.empty()) {
              if (open.size() == 1) c.v[counts::task_ns] += e.t_ns - open.back();
              open.pop_back();
            }
            break;
          case ev::spawn: ++c.v[counts::spawns]; break;
          case ev::steal:
            ++c.v[counts::steals];
            stolen_.insert(e.task);
            break;
          case ev::steal_fail: ++c.v[counts::steal_fails]; break;
          case ev::sleep: ++c.v[counts::sleeps]; break;
          case ev::wake: ++c.v[counts::wakes]; break;
          case ev::idle_begin:
            if (!idle) idle = true, idle_since = e.t_ns;
            break;
          case ev::idle_end:
            if (idle) idle = false, c.v[counts::idle_ns] += e.t_ns - idle_since;
            break;
          default: break;  // the DAG's events (trace_dag.cpp)
        }
      }
      if (idle) c.v[counts::idle_ns] += c.last_ns - idle_since;
      if (!open.empty()) c.v[counts::task_ns] += c.last_ns - open.front();
    }
    if (stolen_.empty()) return;
    for (std::size_t w = 0; w < t_.workers.size(); ++w)
      for (const Event& e : t_.workers[w])
        if (e.kind == ev::spawn && stolen_.count(e.task)) spawned_at_.emplace(e.task, std::make_pair(e.t_ns, w));
  }

  // Perfetto arrows for the DAG's edges (cat "dag"): spawn (parent at the spawn -> the child's
  // begin), join (the child's end -> the waiter where its wait ends) and dep (a data-flow
  // predecessor's end -> the task's begin). Each flow is an "s" and an "f" event on the two
  // workers' tracks, written with those tracks.
  void dag_flows() {
    std::unordered_map<std::uint64_t, std::pair<std::uint64_t, std::uint32_t>> begin, end;  // task -> (t, worker)
    for (std::uint32_t w = 0; w < t_.workers.size(); ++w) {
      std::vector<std::uint64_t> open;
      for (const Event& e : t_.workers[w]) {
        if (e.kind == ev::task_begin) {
          begin[e.task] = {e.t_ns, w};
          open.push_back(e.task);
        } else if (e.kind == ev::task_end && !open.empty()) {
          end[open.back()] = {e.t_ns, w};
          open.pop_back();
        }
      }
    }
    std::uint64_t id = std::uint64_t{1} << 32;  // above the steal arrows' ids
    auto arrow = [&](const char* name, std::pair<std::uint64_t, std::uint32_t> from,
                     std::pair<std::uint64_t, std::uint32_t> to) {
      ++id;
      flows_[from.second].push_back({from.first, id, name, 's'});
      flows_[to.second].push_back({to.first, id, name, 'f'});
    };
    for (const auto& [task, c] : dag_.tasks) {
      auto b = begin.find(task);
      if (b == begin.end()) continue;
      if (c.parent != 0) arrow("spawn", {c.spawn_ns, c.spawn_worker}, b->second);
      auto e = end.find(task);
      if (e == end.end()) continue;
      if (c.join != 0) arrow("join", e->second, {c.join_ns, c.join_worker});
      for (std::uint64_t p : c.preds)
        if (auto pe = end.find(p); pe != end.end()) arrow("dep", pe->second, b->second);
    }
  }

  std::string_view label(std::uint32_t i) const {
    return i != 0 && i < t_.labels.size() && !t_.labels[i].empty() ? std::string_view(t_.labels[i]) : "task";
  }

  void head(char ph, std::string_view name, std::string_view cat, std::size_t w, std::uint64_t ts) {
    o_.put(",\n{\"ph\":\"");
    o_.put(ph);
    o_.put("\",\"name\":");
    o_.json_string(name);
    o_.put(",\"cat\":\"");
    o_.put(cat);
    o_.put("\",\"pid\":1,\"tid\":");
    o_.u64(w);
    us("ts", ts);
  }

  void task_slice(std::size_t w, const open_task& ot, std::uint64_t end, bool unfinished) {
    head('X', label(ot.label), "task", w, ot.t);
    us("dur", end - ot.t);
    o_.put(",\"args\":{\"task\":");
    o_.u64(ot.task);
    num("creator", ot.creator);
    if (ot.label != 0) {
      o_.put(",\"label\":");
      o_.json_string(label(ot.label));
    }
    if (unfinished) o_.put(",\"unfinished\":1");
    if (auto it = dag_.tasks.find(ot.task); dag_.recorded && it != dag_.tasks.end()) {
      const DagTask& c = it->second;
      num("parent", c.parent);
      if (c.parent != 0) {
        us("spawn", c.spawn_ns);
        num("spawn_worker", c.spawn_worker);
      }
      if (c.join != 0) {
        num("join", c.join);
        us("join_ts", c.join_ns);
      }
      if (!c.preds.empty()) {
        o_.put(",\"preds\":[");
        for (std::size_t i = 0; i < c.preds.size(); ++i) {
          if (i) o_.put(',');
          o_.u64(c.preds[i]);
        }
        o_.put(']');
      }
    }
    o_.put("}}");
  }

  void idle_slice(std::size_t w, std::uint64_t b, std::uint64_t e) {
    if (e <= b) return;
    head('X', "idle", "idle", w, b);
    us("dur", e - b);
    o_.put('}');
  }

  void instant(std::size_t w, std::string_view name, std::string_view cat, std::uint64_t ts) {
    head('i', name, cat, w, ts);
    o_.put(",\"s\":\"t\"");
  }

  void write_worker(std::size_t w) {
    const auto& evs = t_.workers[w];
    std::vector<open_task> stack;
    bool idle = false;
    std::uint64_t idle_since = 0, last = 0;
    std::unordered_map<std::uint64_t, std::uint64_t> pending;  // stolen task -> flow id, until it begins
    // Idle slices must nest with the task slices: a task boundary ends an open idle interval.
    auto end_idle = [&](std::uint64_t ts) {
      if (idle) idle_slice(w, idle_since, ts), idle = false;
    };
    for (const Event& e : evs) {
      last = e.t_ns;
      switch (e.kind) {
        case ev::task_begin: {
          end_idle(e.t_ns);
          stack.push_back({e.task, e.t_ns, e.other, e.label});
          auto it = pending.find(e.task);
          if (it != pending.end()) {
            head('f', "steal", "steal", w, e.t_ns);
            o_.put(",\"bp\":\"e\",\"id\":");
            o_.u64(it->second);
            o_.put('}');
            pending.erase(it);
          }
          break;
        }
        case ev::task_end:
          end_idle(e.t_ns);
          if (!stack.empty()) {
            task_slice(w, stack.back(), e.t_ns, false);
            stack.pop_back();
          } else {
            instant(w, "task_end without task_begin", "error", e.t_ns);
            o_.put(",\"args\":{\"task\":");
            o_.u64(e.task);
            o_.put("}}");
          }
          break;
        case ev::steal: {
          std::uint64_t id = ++flow_id_;
          auto sp = spawned_at_.find(e.task);
          bool known = sp != spawned_at_.end() && sp->second.second == e.other;
          head('s', "steal", "steal", e.other, known ? sp->second.first : e.t_ns);
          num("id", id);
          o_.put('}');
          pending[e.task] = id;
          instant(w, "steal", "steal", e.t_ns);
          o_.put(",\"args\":{\"task\":");
          o_.u64(e.task);
          num("victim", e.other);
          o_.put("}}");
          break;
        }
        case ev::idle_begin:
          if (!idle) idle = true, idle_since = e.t_ns;
          break;
        case ev::idle_end: end_idle(e.t_ns); break;
        case ev::sleep:
          instant(w, "sleep", "idle", e.t_ns);
          o_.put('}');
          break;
        case ev::wake:
          instant(w, "wake", "idle", e.t_ns);
          o_.put('}');
          break;
        case ev::spawn:
        case ev::steal_fail: break;  // counted in otherData only (there are millions)
        default: break;              // the DAG's events: written as the tasks' args, waits and arrows
      }
    }
    end_idle(last);
    for (const DagWait& wt : dag_.waits[w]) {
      head('X', "wait", "wait", w, wt.begin_ns);
      us("dur", wt.end_ns - wt.begin_ns);
      o_.put(",\"args\":{\"task\":");
      o_.u64(wt.task);
      o_.put("}}");
    }
    for (const flow& f : flows_[w]) {
      head(f.ph, f.name, "dag", w, f.t);
      if (f.ph == 'f') o_.put(",\"bp\":\"e\"");
      num("id", f.id);
      o_.put('}');
    }
    for (auto& p : pending) {  // stolen but never begun here: end the arrow at the steal's track
      head('f', "steal", "steal", w, last);
      o_.put(",\"bp\":\"e\",\"id\":");
      o_.u64(p.second);
      o_.put('}');
    }
    while (!stack.empty()) {
      task_slice(w, stack.back(), last, true);
      stack.pop_back();
    }
  }

  // Above this many tasks the DAG stays in the tasks' args only: the arrows would triple the file
  // (~250 bytes per task) for a viewer that cannot display that many anyway.
  static constexpr std::size_t max_dag_flows = 100000;
  struct flow {
    std::uint64_t t, id;
    const char* name;
    char ph;
  };

  const Trace& t_;
  out_file& o_;
  Dag dag_;
  std::vector<std::vector<flow>> flows_;
  std::vector<counts> per_worker_;
  std::unordered_set<std::uint64_t> stolen_;
  std::unordered_map<std::uint64_t, std::pair<std::uint64_t, std::size_t>> spawned_at_;
  std::uint64_t flow_id_ = 0;
};

bool fail(std::string* err, std::string msg) {
  if (err) *err = std::move(msg);
  return false;
}

}  // namespace

bool check_trace_path(const std::string& path, std::string* err) {
  if (path.empty()) return fail(err, "empty path (accepted: FILE.csv, FILE.json)");
  if (format_of(path) == format::none) return fail(err, "unknown extension (accepted: .csv, .json)");
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) return fail(err, "it is a directory");
  std::string dir = dir_of(path);
  if (::stat(dir.c_str(), &st) != 0) return fail(err, "directory '" + dir + "': " + sys_error(errno));
  if (!S_ISDIR(st.st_mode)) return fail(err, "'" + dir + "' is not a directory");
  if (::access(dir.c_str(), W_OK) != 0) return fail(err, "directory '" + dir + "' is not writable: " + sys_error(errno));
  // access() answers from the permission bits (root passes everywhere): /proc, a read-only mount or
  // a full file system refuses only the file itself. So make one, as the writer will, and remove it.
  static std::atomic<unsigned> probe_seq{0};
  const std::string probe = path + ".probe." + std::to_string(::getpid()) + "." + std::to_string(probe_seq.fetch_add(1));
  const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd < 0) return fail(err, "cannot create a file in '" + dir + "': " + sys_error(errno));
  ::close(fd);
  ::unlink(probe.c_str());
  return true;
}

bool write_trace(const Trace& t, const std::string& path, std::string* err) {
  if (!check_trace_path(path, err)) return false;
  static std::atomic<unsigned> seq{0};
  std::string tmp = path + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(seq.fetch_add(1));
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd < 0) return fail(err, "cannot create '" + tmp + "': " + sys_error(errno));
  int e = 0;
  {
    out_file o(fd);
    if (format_of(path) == format::csv)
      write_csv(t, o);
    else
      json_writer(t, o).write();
    o.flush();
    e = o.error();
  }
  if (e == 0 && ::fsync(fd) != 0 && errno != EINVAL && errno != EROFS) e = errno;
  if (::close(fd) != 0 && e == 0) e = errno;
  if (e == 0 && ::rename(tmp.c_str(), path.c_str()) != 0) e = errno;
  if (e != 0) {
    ::unlink(tmp.c_str());
    return fail(err, sys_error(e));
  }
  return true;
}

}  // namespace plait::trace
