! fails: flang-offload, flang-offload-reverse
! 'target enter data map(to: p)' of a derived-type POINTER variable, then its pointer-array
! component mapped on its own ('map(alloc: p%v)', which OpenMP 5.1 attaches to the device
! copy of p: pointer initialization for device data environments) and written in a target
! region: flang-22 does not bring the device values back with 'target exit data map(from:
! p%v)' (the host keeps -1). Without the first 'map(to: p)' the same program passes.
module holder_mod
  implicit none
  type :: holder
    real, pointer :: v(:) => null()
  end type holder
end module holder_mod

program pointer_to_derived_type
  use holder_mod
  implicit none
  type(holder), pointer :: p
  integer :: i
  allocate (p)
  allocate (p%v(100))
  p%v = -1.0
  !$omp target enter data map(to: p)
  !$omp target enter data map(alloc: p%v)
  !$omp target teams distribute parallel do map(alloc: p%v)
  do i = 1, 100
    p%v(i) = i * 2
  end do
  !$omp target exit data map(from: p%v)
  !$omp target exit data map(release: p)
  do i = 1, 100
    if (p%v(i) /= i * 2) stop 1
  end do
end program pointer_to_derived_type
