! fails: flang-offload, flang-offload-reverse
! A 'simd' loop nested in a 'parallel do' inside a target region, its private scalar
! computed from the enclosing loops' variables, each iteration writing its own element:
! valid OpenMP. Built with -O2, flang-22 offloaded gives wrong values (arr(33) is 33, not
! 36: the update of the simd body is lost); -O1, the host build and gfortran are right.
! The translation writes such a 'simd' with 'safelen(128)', which flang-22 compiles right
! (src/fortran/nested_simd.rs).
program simd_in_parallel_do
  implicit none
  integer :: x, i, j, k, arr(0:32767)
  do i = 0, 32767
    arr(i) = i
  end do
  !$omp target map(tofrom: arr)
  !$omp parallel do
  do i = 0, 31
    do j = 0, 31
      !$omp simd private(x)
      do k = 0, 31
        x = ieor(i, j * 3)
        arr(i * 1024 + j * 32 + k) = arr(i * 1024 + j * 32 + k) + x * k
      end do
    end do
  end do
  !$omp end target
  do i = 0, 31
    do j = 0, 31
      do k = 0, 31
        if (arr(i * 1024 + j * 32 + k) /= i * 1024 + j * 32 + k + ieor(i, j * 3) * k) stop 1
      end do
    end do
  end do
end program simd_in_parallel_do
