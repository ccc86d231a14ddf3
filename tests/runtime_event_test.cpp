// Events (plait/event.hpp) and polling services (pool::add_poller): tasks finished by an outside
// fulfil, in task groups and data-flow groups, fulfilled in the body, later from a plain thread,
// by a poller, never; with exceptions and cancellation.
#include "test_util.hpp"

#include <atomic>
#include <chrono>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace std::chrono_literals;

class Events : public plait_test::Workers {};

// Threads that fulfil events later; joined by the test (after the group's wait).
struct Later {
  std::vector<std::thread> threads;
  std::mutex mu;
  void fulfil_after(plait::event e, std::chrono::milliseconds d, std::atomic<int>* flag = nullptr) {
    std::lock_guard<std::mutex> lk(mu);
    threads.emplace_back([e = std::move(e), d, flag]() mutable {
      std::this_thread::sleep_for(d);
      if (flag != nullptr) flag->store(1, std::memory_order_relaxed);
      e.fulfill();
    });
  }
  ~Later() {
    for (auto& t : threads) t.join();
  }
};

TEST_P(Events, FulfilledInTheBody) {
  std::atomic<int> ran{0};
  pool().run([&] {
    plait::task_group g;
    for (int i = 0; i < 1000; ++i)
      g.run_detached([&](plait::event e) {
        ran.fetch_add(1, std::memory_order_relaxed);
        e.fulfill();
      });
    g.wait();
  });
  EXPECT_EQ(ran.load(), 1000);
}

TEST_P(Events, GroupWaitsForAFulfilFromAnotherThread) {
  Later later;
  std::atomic<int> fulfilled{0};
  std::atomic<int> seen_at_wait{-1};
  pool().run([&] {
    plait::task_group g;
    for (int i = 0; i < 8; ++i)
      g.run_detached([&](plait::event e) { later.fulfil_after(std::move(e), 20ms, &fulfilled); });
    g.run([] {});
    g.wait();
    seen_at_wait = fulfilled.load(std::memory_order_relaxed);
  });
  EXPECT_EQ(seen_at_wait.load(), 1);  // wait() returned only after the (every) fulfil
}

TEST_P(Events, APollerCompletesTheEventOfAWaitingGroup) {
  // The only worker waits in the group: progress must come from the poller it runs meanwhile.
  std::mutex mu;
  std::vector<plait::event> pending;
  std::atomic<int> calls{0};
  auto id = pool().add_poller([&] {
    calls.fetch_add(1, std::memory_order_relaxed);
    std::lock_guard<std::mutex> lk(mu);
    if (!pending.empty() && calls.load(std::memory_order_relaxed) > 3) {
      for (auto& e : pending) e.fulfill();
      pending.clear();
    }
  });
  pool().run([&] {
    plait::task_group g;
    for (int i = 0; i < 16; ++i)
      g.run_detached([&](plait::event e) {
        std::lock_guard<std::mutex> lk(mu);
        pending.push_back(std::move(e));
      });
    g.wait();
  });
  EXPECT_TRUE(pool().remove_poller(id));
  EXPECT_FALSE(pool().remove_poller(id));
  EXPECT_GT(calls.load(), 3);
  const int after = calls.load();
  std::this_thread::sleep_for(5ms);
  EXPECT_EQ(calls.load(), after);  // removed: never called again
}

TEST_P(Events, ADroppedEventFinishesItsTaskWithAnError) {
  pool().run([&] {
    plait::task_group g;
    g.run_detached([](plait::event) {});
    try {
      g.wait();
      ADD_FAILURE() << "wait() returned without the dropped event's error";
    } catch (const std::logic_error& e) {
      EXPECT_NE(std::string(e.what()).find("destroyed without fulfill"), std::string::npos) << e.what();
    }
  });
}

TEST_P(Events, TheBodysExceptionWinsOverItsDroppedEvent) {
  pool().run([&] {
    plait::task_group g;
    g.run_detached([](plait::event) { throw std::runtime_error("body"); });
    EXPECT_THROW(g.wait(), std::runtime_error);
  });
}

TEST_P(Events, ABodyThatThrowsAfterHandingItsEventOnIsWaitedFor) {
  Later later;
  std::atomic<int> fulfilled{0};
  pool().run([&] {
    plait::task_group g;
    g.run_detached([&](plait::event e) {
      later.fulfil_after(std::move(e), 10ms, &fulfilled);
      throw std::runtime_error("body");
    });
    EXPECT_THROW(g.wait(), std::runtime_error);
    EXPECT_EQ(fulfilled.load(), 1);
  });
}

TEST_P(Events, ACanceledGroupSkipsDetachedChildrenWithoutError) {
  std::atomic<int> ran{0};
  pool().run([&] {
    plait::task_group g;
    g.cancel();
    for (int i = 0; i < 10; ++i) g.run_detached([&](plait::event e) { ran++, e.fulfill(); });
    EXPECT_NO_THROW(g.wait());
  });
  EXPECT_EQ(ran.load(), 0);
}

TEST_P(Events, DataflowSuccessorsWaitForTheFulfil) {
  for (int round = 0; round < 20; ++round) {
    Later later;
    int x = 0;
    int seen = -1;
    pool().run([&] {
      plait::dataflow_group df;
      df.run_detached({plait::out(x)}, [&](plait::event e) {
        // The write happens outside, after the body returned; the fulfil publishes it.
        later.fulfil_after(std::move(e), 1ms, nullptr);
      });
      df.run({plait::in(x)}, [&] { seen = x; });
      df.wait();
    });
    EXPECT_EQ(seen, 0);
  }
}

TEST_P(Events, DataflowOutsideWriteIsSeenBySuccessors) {
  Later later;
  std::vector<int> x(64, 0);
  std::atomic<long> sum{0};
  pool().run([&] {
    plait::dataflow_group df;
    for (int i = 0; i < 64; ++i) {
      df.run_detached({plait::out(x[i])}, [&, i](plait::event e) {
        std::lock_guard<std::mutex> lk(later.mu);
        later.threads.emplace_back([&, i, e = std::move(e)]() mutable {
          std::this_thread::sleep_for(1ms);
          x[i] = i + 1;  // the outside writes, then fulfils
          e.fulfill();
        });
      });
      df.run({plait::in(x[i])}, [&, i] { sum += x[i]; });
    }
    df.wait();
  });
  EXPECT_EQ(sum.load(), 64L * 65 / 2);
}

TEST_P(Events, DataflowFulfilledInTheBodyAndChained) {
  long v = 0;
  pool().run([&] {
    plait::dataflow_group df;
    for (int i = 0; i < 200; ++i) {
      if (i % 2 == 0)
        df.run_detached({plait::inout(v)}, [&](plait::event e) {
          ++v;
          e.fulfill();
        });
      else
        df.run({plait::inout(v)}, [&] { v *= 1; ++v; });
    }
    df.wait();
  });
  EXPECT_EQ(v, 200);
}

TEST_P(Events, DataflowDroppedEventIsAnErrorAndNothingHangs) {
  int x = 0;
  pool().run([&] {
    plait::dataflow_group df;
    df.run_detached({plait::out(x)}, [](plait::event) {});
    df.run({plait::in(x)}, [&] { x = 7; });
    EXPECT_THROW(df.wait(), std::logic_error);
    // The group is reusable afterwards.
    df.run_detached({plait::out(x)}, [&](plait::event e) {
      x = 3;
      e.fulfill();
    });
    EXPECT_NO_THROW(df.wait());
  });
  EXPECT_EQ(x, 3);
}

TEST_P(Events, PollersComeAndGoWhileTasksRun) {
  std::atomic<bool> stop{false};
  std::atomic<long> calls{0};
  std::thread churn([&] {
    while (!stop.load()) {
      auto id = pool().add_poller([&] { calls.fetch_add(1, std::memory_order_relaxed); });
      std::this_thread::sleep_for(200us);
      EXPECT_TRUE(pool().remove_poller(id));
    }
  });
  std::atomic<long> sum{0};
  for (int r = 0; r < 20; ++r)
    pool().run([&] {
      plait::task_group g;
      for (int i = 0; i < 2000; ++i) g.run([&] { sum.fetch_add(1, std::memory_order_relaxed); });
      g.wait();
    });
  stop = true;
  churn.join();
  EXPECT_EQ(sum.load(), 20 * 2000);
}

TEST_P(Events, APollerMayRemoveItself) {
  // The poller removes itself at its first call after add_poller returned its id (idle workers
  // may call it before that: a preempted test thread stores the id late).
  std::atomic<int> calls{0};
  std::atomic<plait::pool::poller_id> idv{0};
  std::atomic<bool> removed{false};
  const plait::pool::poller_id id = pool().add_poller([&] {
    calls++;
    if (const plait::pool::poller_id i = idv.load(); i != 0 && !removed.load()) {
      EXPECT_TRUE(pool().remove_poller(i));
      removed = true;
    }
  });
  idv = id;
  for (int i = 0; i < 200 && !removed.load(); ++i) {
    pool().run([] {
      plait::task_group g;
      g.run([] { std::this_thread::sleep_for(1ms); });
      g.wait();
    });
    std::this_thread::sleep_for(1ms);
  }
  ASSERT_TRUE(removed.load());
  const int n = calls.load();
  std::this_thread::sleep_for(5ms);
  EXPECT_EQ(calls.load(), n);  // never called again
  EXPECT_GE(n, 1);
  EXPECT_FALSE(pool().remove_poller(id));
}

INSTANTIATE_TEST_SUITE_P(Runtime, Events, plait_test::worker_counts, plait_test::workers_name);

TEST(EventsDeath, FulfillingAnEmptyEventStopsTheProcess) {
  EXPECT_DEATH(
      {
        plait::event e;
        e.fulfill();
      },
      "fulfill on an empty event");
}

TEST(EventsDeath, APollerThatThrowsStopsTheProcess) {
  EXPECT_DEATH(
      {
        plait::pool p(plait::pool_options{.num_workers = 1});
        p.add_poller([] { throw std::runtime_error("boom"); });
        p.run([] {
          plait::task_group g;
          g.run([] {});
          g.wait();
        });
        std::this_thread::sleep_for(50ms);
      },
      "a poller threw \\(boom\\)");
}

// A hand-in (a data-flow event fulfilled by a thread that is no worker) pins its pool until its
// wake-up is done: the pool is destroyed as soon as the region ends, while the fulfilling thread
// may still be between making the completion visible and waking a sleeper. The hook widens that
// gap. Under TSan or ASan a touch of the freed pool is a report; in other builds it may crash.
std::atomic<unsigned> hand_in_hook_calls{0};
void linger_after_hand_in(plait::detail::protocol_point p) noexcept {
  if (p != plait::detail::protocol_point::hand_in) return;
  const unsigned k = hand_in_hook_calls.fetch_add(1, std::memory_order_relaxed);
  if (k % 4 == 0) std::this_thread::sleep_for(std::chrono::microseconds(50));
  else
    for (unsigned i = 0; i < k % 4; ++i) std::this_thread::yield();
}

TEST(EventsLifetime, OutsideFulfilWhilePoolsDie) {
  const plait::detail::protocol_hook saved = plait::detail::g_protocol_hook;
  plait::detail::g_protocol_hook = &linger_after_hand_in;
  hand_in_hook_calls.store(0);
  constexpr int rounds = 2000;
  long total = 0;
  for (int round = 0; round < rounds; ++round) {
    auto p = std::make_unique<plait::pool>(plait::pool_options{.num_workers = 1u + static_cast<unsigned>(round % 3)});
    std::vector<std::thread> fulfillers;
    std::mutex mu;
    int x = 0, y = 0;
    long seen = 0;
    p->run([&] {
      plait::dataflow_group df;
      df.run_detached({plait::out(x)}, [&](plait::event e) {
        std::lock_guard<std::mutex> lk(mu);
        fulfillers.emplace_back([&x, round, e = std::move(e)]() mutable {
          x = round;
          e.fulfill();
        });
      });
      // The second one: fulfilled from outside after a successor already waits for it.
      df.run_detached({plait::in(x), plait::out(y)}, [&](plait::event e) {
        std::lock_guard<std::mutex> lk(mu);
        fulfillers.emplace_back([&x, &y, e = std::move(e)]() mutable {
          y = x + 1;
          e.fulfill();
        });
      });
      df.run({plait::in(y)}, [&] { seen = y; });
      df.wait();
    });
    p.reset();  // at once: a fulfiller may still be inside its hand-in
    for (auto& t : fulfillers) t.join();
    ASSERT_EQ(seen, round + 1) << "round " << round;
    total += seen;
  }
  plait::detail::g_protocol_hook = saved;
  EXPECT_EQ(total, static_cast<long>(rounds) * (rounds + 1) / 2);
  // The gap was exercised: every round handed in at least the second event's completion.
  EXPECT_GE(hand_in_hook_calls.load(), static_cast<unsigned>(rounds));
}

TEST(PollOptions, PeriodFromTheEnvironmentAndRange) {
  EXPECT_THROW(plait::pool(plait::pool_options{.num_workers = 1, .poll_period_us = 20'000'000}), std::invalid_argument);
  plait::pool p(plait::pool_options{.num_workers = 1, .poll_period_us = 250});
  EXPECT_EQ(p.options().poll_period_us, 250u);
}

}  // namespace
