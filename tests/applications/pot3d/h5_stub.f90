! Stand-ins for POT3D's HDF5 reader and writer (zm_sds.f's rdh5 and wrh5, which
! tests/applications/pot3d.sh removes): read the data set from FNAME.raw, written by h5raw.py
! beside it (int32 ndim, dims(3), scale flag; then each scale and the data as real(8), in
! Fortran order); write nothing.
subroutine rdh5 (fname, s, ierr)
  use number_types
  use sds_def
  implicit none
  character(*) :: fname
  type(sds) :: s
  integer :: ierr, u, i, head(5)
  ierr = 0
  open (newunit=u, file=trim(fname)//'.raw', access='stream', form='unformatted', &
        status='old', iostat=ierr)
  if (ierr /= 0) return
  read (u) head
  s%ndim = head(1)
  s%dims = head(2:4)
  s%scale = head(5) /= 0
  s%hdf32 = .false.
  do i = 1, 3
    if (s%scale) then
      allocate (s%scales(i)%f(s%dims(i)))
      if (i <= s%ndim) read (u) s%scales(i)%f
    else
      allocate (s%scales(i)%f(1))
    end if
  end do
  allocate (s%f(s%dims(1), s%dims(2), s%dims(3)))
  read (u) s%f
  close (u)
end subroutine

subroutine wrh5 (fname, s, ierr)
  use number_types
  use sds_def
  implicit none
  character(*) :: fname
  type(sds) :: s
  integer :: ierr
  ierr = 0
end subroutine
