! fails: flang-offload, flang-offload-reverse
! A 'simd reduction' nested in a 'parallel do reduction' of the same variable inside a
! target region: valid OpenMP (the simd construct reduces the parallel region's private
! copy, the reduction clause of OpenMP 5.1 gives each simd lane its own copy). Built with
! -O2, flang-22 marks the loads and stores of the simd construct's private copy as free of
! loop-carried dependences (llvm.access.group) and the vectoriser drops updates: 290 instead
! of 1010. -O0, the host build and gfortran give 1010.
! The translation writes such a 'simd' with 'safelen(128)', which flang-22 compiles right
! (src/fortran/nested_simd.rs).
program simd_reduction_in_parallel_do
  implicit none
  integer(8) :: var
  integer :: j, k
  var = 10
  !$omp target map(tofrom: var)
  !$omp parallel do reduction(+: var)
  do k = 1, 10
    !$omp simd reduction(+: var)
    do j = 1, 100
      var = var + 1
    end do
  end do
  !$omp end target
  if (var /= 1010) stop 1
end program simd_reduction_in_parallel_do
