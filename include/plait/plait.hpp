// Umbrella header: everything public in Plait.
#pragma once

#include <plait/config.hpp>
#include <plait/counters.hpp>
#include <plait/dataflow.hpp>
#include <plait/event.hpp>
#include <plait/pool.hpp>
#include <plait/spawn.hpp>
#include <plait/parallel_for.hpp>
#include <plait/task_group.hpp>
