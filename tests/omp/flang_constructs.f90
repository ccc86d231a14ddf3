! OpenMP constructs as LLVM 16's flang lowers them (libomp's __kmpc_* ABI): parallel do with a
! reduction and the static, dynamic and guided schedules, ordered, critical, single and sections.
! Prints "PASS flang_constructs" (exit 0) or stops with code 1 naming what failed. flang 16 does
! not lower everything (atomic and master in a parallel region fail in its code generator; its
! tasks ignore firstprivate): tests/omp/README.md, "flang".
program flang_constructs
  use omp_lib
  implicit none
  integer :: i, s, cnt, nt, ref
  integer :: a(1000)
  s = 0
  !$omp parallel do reduction(+:s) schedule(static)
  do i = 1, 1000
    s = s + i
  end do
  !$omp end parallel do
  if (s /= 500500) call fail('reduction')
  !$omp parallel do schedule(dynamic, 7)
  do i = 1, 1000
    a(i) = 2*i
  end do
  !$omp end parallel do
  if (sum(a) /= 1001000) call fail('schedule(dynamic, 7)')
  !$omp parallel do schedule(guided)
  do i = 1, 1000
    a(i) = 3*i
  end do
  !$omp end parallel do
  if (sum(a) /= 1501500) call fail('schedule(guided)')
  s = 0
  !$omp parallel do ordered schedule(dynamic)
  do i = 1, 100
    !$omp ordered
    s = mod(s * 3 + i, 100003)
    !$omp end ordered
  end do
  !$omp end parallel do
  ref = 0
  do i = 1, 100
    ref = mod(ref * 3 + i, 100003)
  end do
  if (s /= ref) call fail('ordered')
  cnt = 0
  !$omp parallel
  !$omp critical
  cnt = cnt + 1
  !$omp end critical
  !$omp end parallel
  if (cnt /= omp_get_max_threads()) call fail('critical')
  nt = 0
  !$omp parallel
  !$omp single
  nt = nt + 1
  !$omp end single
  !$omp end parallel
  if (nt /= 1) call fail('single')
  a(1:2) = 0
  !$omp parallel sections
  !$omp section
  a(1) = 5
  !$omp section
  a(2) = 7
  !$omp end parallel sections
  if (a(1) + a(2) /= 12) call fail('sections')
  print '(a)', 'PASS flang_constructs'
contains
  subroutine fail(what)
    character(*), intent(in) :: what
    print '(a)', 'FAIL flang_constructs: '//what
    stop 1
  end subroutine
end program
