! The OpenMP API and the common constructs from Fortran (gfortran-12 -fopenmp, `use omp_lib`): every
! Fortran entry point the library exports (the C routine's name with a trailing underscore, and the
! `_8_` twin taken for integer(8) arguments), called with the argument kinds a program passes, and
! the constructs gfortran lowers to the same GOMP_* calls as C (parallel, do with every schedule,
! ordered, reductions, sections, single copyprivate, workshare, critical, atomic, threadprivate
! with copyin, tasks with depend, detach, final, taskloop, taskgroup, host teams).
! Prints "PASS fortran_api" (exit 0) or "FAIL fortran_api: <what>" (exit 1), as the C programs do.
module fortran_api_checks
  use, intrinsic :: iso_c_binding, only: c_int
  implicit none
  integer :: tp = -1
  !$omp threadprivate(tp)
  interface
    subroutine c_exit(status) bind(c, name='_Exit')
      import :: c_int
      integer(c_int), value :: status
    end subroutine
  end interface
contains
  subroutine check(cond, what)
    logical, intent(in) :: cond
    character(*), intent(in) :: what
    if (.not. cond) then
      !$omp critical (fortran_api_report)
      write (*, '(a)') 'FAIL fortran_api: '//what
      flush (6)
      call c_exit(1_c_int)
      !$omp end critical (fortran_api_report)
    end if
  end subroutine

  recursive function fib(n) result(r)
    integer, intent(in) :: n
    integer :: r, a, b
    if (n < 2) then
      r = n
      return
    end if
    !$omp task shared(a) firstprivate(n)
    a = fib(n - 1)
    !$omp end task
    !$omp task shared(b) firstprivate(n)
    b = fib(n - 2)
    !$omp end task
    !$omp taskwait
    r = a + b
  end function

  character(len=16) function itoa(i)
    integer, intent(in) :: i
    write (itoa, '(i0)') i
  end function
end module

program fortran_api
  use omp_lib
  use fortran_api_checks
  implicit none
  integer, parameter :: n = 1000
  integer :: nt, team, i, j, k, kind4, chunk4, lev, counter, hits(n), seen(0:63), order(9), pos
  integer(8) :: chunk8, s8, chain, ids8(64), nums8(64)
  integer :: ids4(64), nums4(64), np, fl, after, copied, nthr, inner
  integer(omp_lock_kind) :: lck
  integer(omp_nest_lock_kind) :: nlck
  integer(omp_event_handle_kind) :: ev
  integer(omp_allocator_handle_kind) :: al
  type(omp_alloctrait) :: traits(1)
  logical :: final_seen
  real(8) :: t0, t1, a(n), c(n)
  character(len=40) :: buf
  character(len=5) :: short
  character(len=64) :: cap, want
  integer :: m, sect(2)

  ! ---- threads, levels, ICVs ------------------------------------------------------------------
  nt = omp_get_max_threads()
  call check(nt >= 1 .and. nt <= 64, 'omp_get_max_threads out of range: '//itoa(nt))
  call check(omp_get_num_threads() == 1 .and. omp_get_thread_num() == 0, 'outside: not thread 0 of 1')
  call check(.not. omp_in_parallel() .and. omp_get_level() == 0, 'outside: in a parallel region')
  call check(omp_get_num_procs() >= 1, 'omp_get_num_procs < 1')
  seen = 0
  team = -1
  !$omp parallel private(i) shared(seen, team)
  i = omp_get_thread_num()
  !$omp atomic
  seen(i) = seen(i) + 1
  !$omp single
  team = omp_get_num_threads()
  !$omp end single
  call check(omp_get_level() == 1, 'a region at level '//itoa(omp_get_level()))
  call check(omp_get_ancestor_thread_num(1) == i .and. omp_get_ancestor_thread_num(1_8) == i, &
             'ancestor thread number at level 1')
  call check(omp_get_ancestor_thread_num(0) == 0 .and. omp_get_ancestor_thread_num(2) == -1, &
             'ancestor thread number at levels 0 and 2')
  call check(omp_get_team_size(1) == omp_get_num_threads() .and. omp_get_team_size(1_8) == omp_get_num_threads(), &
             'omp_get_team_size(1)')
  call check(omp_in_parallel() .eqv. (omp_get_num_threads() > 1), 'omp_in_parallel inside')
  call check(omp_get_active_level() == merge(1, 0, omp_get_num_threads() > 1), 'omp_get_active_level inside')
  !$omp end parallel
  call check(team == nt, 'a region had '//trim(itoa(team))//' threads, want '//itoa(nt))
  do i = 0, team - 1
    call check(seen(i) == 1, 'thread '//trim(itoa(i))//' ran the region '//itoa(seen(i))//' times')
  end do

  call omp_set_num_threads(3_8)
  call check(omp_get_max_threads() == 3, 'omp_set_num_threads(3_8)')
  !$omp parallel
  !$omp single
  team = omp_get_num_threads()
  !$omp end single
  !$omp end parallel
  call check(team == 3, 'after omp_set_num_threads(3_8) a region had '//itoa(team))
  call omp_set_num_threads(nt)
  call check(omp_get_max_threads() == nt, 'omp_set_num_threads(nt)')

  call omp_set_dynamic(.true.)
  call check(omp_get_dynamic(), 'omp_set_dynamic(.true.)')
  call omp_set_dynamic(.false._8)
  call check(.not. omp_get_dynamic(), 'omp_set_dynamic(.false._8)')
  call check(omp_get_supported_active_levels() >= 1, 'omp_get_supported_active_levels < 1')
  call omp_set_max_active_levels(3_8)
  lev = omp_get_max_active_levels()
  call check(lev == min(3, omp_get_supported_active_levels()), 'omp_set_max_active_levels(3_8) gave '//itoa(lev))
  call omp_set_max_active_levels(1)
  call check(omp_get_max_active_levels() == 1, 'omp_set_max_active_levels(1)')
  call check(omp_get_thread_limit() >= nt, 'omp_get_thread_limit below the team size')
  call check(omp_get_max_task_priority() >= 0, 'omp_get_max_task_priority < 0')
  call check(.not. omp_get_cancellation(), 'cancellation on without OMP_CANCELLATION')
  call check(.not. omp_in_final(), 'omp_in_final outside every task')

  ! ---- schedules ------------------------------------------------------------------------------
  call omp_set_schedule(omp_sched_dynamic, 5)
  call omp_get_schedule(kind4, chunk4)
  call check(kind4 == omp_sched_dynamic .and. chunk4 == 5, 'omp_set_schedule(dynamic, 5) read back')
  call omp_set_schedule(omp_sched_guided, 7_8)
  call omp_get_schedule(kind4, chunk8)
  call check(kind4 == omp_sched_guided .and. chunk8 == 7_8, 'omp_set_schedule(guided, 7_8) read back')
  call omp_set_schedule(ior(omp_sched_dynamic, -huge(1) - 1), 2)  ! omp_sched_monotonic (0x80000000; not in gcc 12's omp_lib)
  call omp_get_schedule(kind4, chunk4)
  call check(kind4 == omp_sched_dynamic .and. chunk4 == 2, 'a monotonic schedule reads back without the bit')
  hits = 0
  !$omp parallel do schedule(runtime)
  do i = 1, n
    hits(i) = hits(i) + 1
  end do
  !$omp end parallel do
  call check(all(hits == 1), 'schedule(runtime): an iteration ran other than once')
  hits = 0
  !$omp parallel do schedule(dynamic, 3)
  do i = 1, n
    hits(i) = hits(i) + 1
  end do
  !$omp end parallel do
  call check(all(hits == 1), 'schedule(dynamic, 3): an iteration ran other than once')
  hits = 0
  !$omp parallel do schedule(guided) collapse(2)
  do i = 1, 10
    do j = 1, 100
      hits((i - 1)*100 + j) = hits((i - 1)*100 + j) + 1
    end do
  end do
  !$omp end parallel do
  call check(all(hits == 1), 'collapse(2) schedule(guided): an iteration ran other than once')
  pos = 0
  order = 0
  !$omp parallel do ordered schedule(dynamic)
  do i = 1, 9
    !$omp ordered
    pos = pos + 1
    order(pos) = i
    !$omp end ordered
  end do
  !$omp end parallel do
  call check(all(order == [(i, i=1, 9)]), 'ordered: the iterations did not run in order')

  ! ---- reductions, critical, atomic, sections, single, workshare, threadprivate -----------------
  s8 = 0
  m = -huge(m)
  !$omp parallel do reduction(+:s8) reduction(max:m)
  do i = 1, 100000
    s8 = s8 + i
    m = max(m, mod(i*7919, 100003))
  end do
  !$omp end parallel do
  call check(s8 == 5000050000_8, 'reduction(+): wrong sum')
  call check(m == 100002, 'reduction(max): wrong maximum '//itoa(m))
  counter = 0
  k = 0
  !$omp parallel private(i)
  do i = 1, 1000
    !$omp critical
    counter = counter + 1
    !$omp end critical
    !$omp atomic update
    k = k + 2
  end do
  !$omp end parallel
  call check(counter == 1000*nt .and. k == 2000*nt, 'critical / atomic: lost updates')
  sect = 0
  !$omp parallel sections
  !$omp section
  sect(1) = 1
  !$omp section
  sect(2) = 2
  !$omp end parallel sections
  call check(sect(1) == 1 .and. sect(2) == 2, 'sections: a section did not run')
  copied = -1
  k = 0
  !$omp parallel private(copied) reduction(+:k)
  !$omp single
  copied = 42
  !$omp end single copyprivate(copied)
  if (copied == 42) k = 1
  !$omp end parallel
  call check(k == nt, 'single copyprivate: a thread did not get the value')
  c = [(real(i, 8), i=1, n)]
  !$omp parallel workshare
  a = c*2 + 1
  !$omp end parallel workshare
  call check(all(a == [(2*real(i, 8) + 1, i=1, n)]), 'workshare: wrong array')
  tp = 7
  k = 0
  !$omp parallel copyin(tp) reduction(+:k)
  if (tp == 7) k = 1
  tp = omp_get_thread_num()
  !$omp end parallel
  call check(k == nt, 'threadprivate copyin: a thread did not see the master''s value')

  ! ---- locks ----------------------------------------------------------------------------------
  call omp_init_lock(lck)
  counter = 0
  !$omp parallel private(i)
  do i = 1, 1000
    call omp_set_lock(lck)
    counter = counter + 1
    call omp_unset_lock(lck)
  end do
  !$omp end parallel
  call check(counter == 1000*nt, 'omp_set_lock: lost updates')
  !$omp parallel num_threads(2)
  if (omp_get_thread_num() == 0) call omp_set_lock(lck)
  !$omp barrier
  if (omp_get_thread_num() == 1) call check(.not. omp_test_lock(lck), 'omp_test_lock got a held lock')
  !$omp barrier
  if (omp_get_thread_num() == 0) call omp_unset_lock(lck)
  !$omp barrier
  if (omp_get_thread_num() == 1) then
    call check(omp_test_lock(lck), 'omp_test_lock did not get a free lock')
    call omp_unset_lock(lck)
  end if
  !$omp end parallel
  call omp_destroy_lock(lck)
  call omp_init_nest_lock(nlck)
  call omp_set_nest_lock(nlck)
  call omp_set_nest_lock(nlck)
  call check(omp_test_nest_lock(nlck) == 3, 'omp_test_nest_lock by the owner: not the nesting count 3')
  call omp_unset_nest_lock(nlck)
  call omp_unset_nest_lock(nlck)
  call omp_unset_nest_lock(nlck)
  counter = 0
  !$omp parallel private(i)
  do i = 1, 500
    call omp_set_nest_lock(nlck)
    call omp_set_nest_lock(nlck)
    counter = counter + 1
    call omp_unset_nest_lock(nlck)
    call omp_unset_nest_lock(nlck)
  end do
  !$omp end parallel
  call check(counter == 500*nt, 'omp_set_nest_lock: lost updates')
  call omp_destroy_nest_lock(nlck)

  ! ---- tasks ----------------------------------------------------------------------------------
  k = -1
  !$omp parallel
  !$omp single
  k = fib(20)
  !$omp end single
  !$omp end parallel
  call check(k == 6765, 'task fib(20) = '//itoa(k))
  chain = 0
  !$omp parallel
  !$omp single
  do i = 1, 9
    !$omp task depend(inout: chain) firstprivate(i)
    chain = chain*10 + i
    !$omp end task
  end do
  !$omp end single
  !$omp end parallel
  call check(chain == 123456789_8, 'depend(inout): the chain ran out of order')
  hits = 0
  !$omp parallel
  !$omp single
  !$omp taskloop grainsize(10)
  do i = 1, n
    hits(i) = hits(i) + 1
  end do
  !$omp end taskloop
  !$omp end single
  !$omp end parallel
  call check(all(hits == 1), 'taskloop: an iteration ran other than once')
  hits = 0
  !$omp parallel
  !$omp single
  !$omp taskgroup
  do i = 1, 100
    !$omp task firstprivate(i)
    hits(i) = 1
    !$omp end task
  end do
  !$omp end taskgroup
  call check(all(hits(1:100) == 1), 'taskgroup: ended before its tasks')
  !$omp end single
  !$omp end parallel
  final_seen = .false.
  !$omp parallel
  !$omp single
  !$omp task final(.true.) shared(final_seen)
  final_seen = omp_in_final()
  !$omp end task
  !$omp end single
  !$omp end parallel
  call check(final_seen, 'omp_in_final in a final task')
  fl = 0
  after = 0
  !$omp parallel num_threads(2)
  !$omp single
  !$omp task detach(ev) depend(out: fl) shared(fl)
  fl = 1
  !$omp end task
  !$omp task depend(in: fl) shared(fl, after)
  after = fl + 1
  !$omp end task
  call omp_fulfill_event(ev)
  !$omp taskwait
  !$omp end single
  !$omp end parallel
  call check(after == 2, 'detach: the dependent task ran before the event was fulfilled')

  ! ---- teams on the host ----------------------------------------------------------------------
  call omp_set_num_teams(2)
  call omp_set_teams_thread_limit(3_8)
  call check(omp_get_max_teams() == 2 .and. omp_get_teams_thread_limit() == 3, 'the teams ICVs did not read back')
  k = 0
  inner = 0
  !$omp teams reduction(+:k)
  k = 1
  if (omp_get_team_num() == 0) inner = omp_get_num_teams()
  !$omp end teams
  call check(k == 2 .and. inner == 2, 'teams: '//trim(itoa(k))//' teams ran, omp_get_num_teams '//itoa(inner))
  call omp_set_num_teams(0_8)
  call omp_set_teams_thread_limit(0)

  ! ---- devices, places, binding ---------------------------------------------------------------
  call check(omp_get_num_devices() >= 0, 'omp_get_num_devices < 0')
  call check(omp_is_initial_device(), 'omp_is_initial_device on the host')
  call check(omp_get_device_num() == omp_get_initial_device(), 'omp_get_device_num on the host')
  call omp_set_default_device(0_8)
  call check(omp_get_default_device() == 0, 'omp_set_default_device(0_8)')
  call check(omp_get_proc_bind() >= omp_proc_bind_false .and. omp_get_proc_bind() <= omp_proc_bind_spread, &
             'omp_get_proc_bind out of range')
  np = omp_get_num_places()
  call check(np >= 0 .and. np <= 64, 'omp_get_num_places out of range: '//itoa(np))
  do i = 0, np - 1
    k = omp_get_place_num_procs(i)
    call check(k >= 1 .and. k <= 64 .and. omp_get_place_num_procs(int(i, 8)) == k, 'omp_get_place_num_procs')
    ids4 = -1
    ids8 = -1
    call omp_get_place_proc_ids(i, ids4)
    call omp_get_place_proc_ids(int(i, 8), ids8)
    call check(all(int(ids4(1:k), 8) == ids8(1:k)) .and. ids8(k + 1) == -1, 'omp_get_place_proc_ids 4 and 8 differ')
  end do
  call check(omp_get_place_num() >= -1 .and. omp_get_place_num() < max(np, 1), 'omp_get_place_num out of range')
  k = omp_get_partition_num_places()
  call check(k >= 0 .and. k <= 64, 'omp_get_partition_num_places out of range')
  nums4 = -1
  nums8 = -1
  call omp_get_partition_place_nums(nums4)
  call omp_get_partition_place_nums(nums8)
  call check(all(int(nums4(1:k), 8) == nums8(1:k)) .and. nums8(k + 1) == -1, 'omp_get_partition_place_nums 4 and 8 differ')

  ! ---- affinity format, display, capture ------------------------------------------------------
  call omp_set_affinity_format('T%n of %N')
  buf = 'x'
  k = omp_get_affinity_format(buf)
  call check(k == 9 .and. buf == 'T%n of %N', 'omp_get_affinity_format: '//trim(itoa(k))//' "'//trim(buf)//'"')
  call check(len_trim(buf) == 9, 'omp_get_affinity_format: the buffer is not blank-padded')
  k = omp_get_affinity_format(short)
  call check(k == 9 .and. short == 'T%n o', 'omp_get_affinity_format into 5 characters: "'//short//'"')
  nthr = 0
  !$omp parallel private(cap, want, k) reduction(+:nthr)
  cap = '?'
  k = omp_capture_affinity(cap, '')
  want = 'T'//trim(itoa(omp_get_thread_num()))//' of '//trim(itoa(omp_get_num_threads()))
  if (k == len_trim(want) .and. cap == want) nthr = 1
  k = omp_capture_affinity(cap, '%{thread_num}')
  if (k /= len_trim(itoa(omp_get_thread_num())) .or. cap /= itoa(omp_get_thread_num())) nthr = -1000
  !$omp end parallel
  call check(nthr == nt, 'omp_capture_affinity: a thread''s line differs from its own numbers')
  call omp_display_affinity('')
  call omp_display_affinity('fortran %{nesting_level}')

  ! ---- time, allocators, pausing, the environment block ----------------------------------------
  t0 = omp_get_wtime()
  t1 = omp_get_wtime()
  call check(t1 >= t0 .and. omp_get_wtick() > 0, 'omp_get_wtime / omp_get_wtick')
  traits(1) = omp_alloctrait(omp_atk_alignment, 64)
  al = omp_init_allocator(omp_default_mem_space, 1, traits)
  call check(al /= omp_null_allocator, 'omp_init_allocator with alignment 64 failed')
  call omp_set_default_allocator(al)
  call check(omp_get_default_allocator() == al, 'omp_set_default_allocator did not read back')
  call omp_set_default_allocator(omp_default_mem_alloc)
  call omp_destroy_allocator(al)
  traits(1) = omp_alloctrait(omp_atk_alignment, 3)
  al = omp_init_allocator(omp_default_mem_space, 1_8, traits)
  call check(al == omp_null_allocator, 'omp_init_allocator took alignment 3')
  call check(omp_pause_resource_all(omp_pause_soft) == 0, 'omp_pause_resource_all outside every region')
  call check(omp_pause_resource(omp_pause_soft, omp_get_initial_device()) == 0, 'omp_pause_resource on the host')
  k = 0
  !$omp parallel reduction(+:k)
  k = 1
  !$omp end parallel
  call check(k == nt, 'a region after a pause had '//itoa(k)//' threads')
  call omp_display_env(.false.)
  write (*, '(a)') 'PASS fortran_api'
end program
