! A stand-in for the PnetCDF module that writes nothing: output is not what the test checks.
module pnetcdf
  use mpi, only: MPI_OFFSET_KIND
  implicit none
  integer, parameter :: NF_NOERR = 0, NF_CLOBBER = 0, NF_WRITE = 1, NF_UNLIMITED = 0
  integer, parameter :: NF90_CLOBBER = 0, NF90_WRITE = 1, NF90_UNLIMITED = 0
  integer, parameter :: NF90_REAL = 5, NF90_DOUBLE = 6
contains
  integer function nfmpi_create(comm, path, mode, info, ncid)
    integer, intent(in) :: comm, mode, info
    character(*), intent(in) :: path
    integer, intent(out) :: ncid
    ncid = 1
    nfmpi_create = NF_NOERR
  end function nfmpi_create
  integer function nfmpi_open(comm, path, mode, info, ncid)
    integer, intent(in) :: comm, mode, info
    character(*), intent(in) :: path
    integer, intent(out) :: ncid
    ncid = 1
    nfmpi_open = NF_NOERR
  end function nfmpi_open
  integer function nfmpi_def_dim(ncid, name, len, dimid)
    integer, intent(in) :: ncid
    character(*), intent(in) :: name
    integer(MPI_OFFSET_KIND), intent(in) :: len
    integer, intent(out) :: dimid
    dimid = 1
    nfmpi_def_dim = NF_NOERR
  end function nfmpi_def_dim
  integer function nfmpi_def_var(ncid, name, xtype, ndims, dimids, varid)
    integer, intent(in) :: ncid, xtype, ndims, dimids(*)
    character(*), intent(in) :: name
    integer, intent(out) :: varid
    varid = 1
    nfmpi_def_var = NF_NOERR
  end function nfmpi_def_var
  integer function nfmpi_inq_varid(ncid, name, varid)
    integer, intent(in) :: ncid
    character(*), intent(in) :: name
    integer, intent(out) :: varid
    varid = 1
    nfmpi_inq_varid = NF_NOERR
  end function nfmpi_inq_varid
  integer function nfmpi_enddef(ncid)
    integer, intent(in) :: ncid
    nfmpi_enddef = NF_NOERR
  end function nfmpi_enddef
  integer function nfmpi_close(ncid)
    integer, intent(in) :: ncid
    nfmpi_close = NF_NOERR
  end function nfmpi_close
  integer function nfmpi_begin_indep_data(ncid)
    integer, intent(in) :: ncid
    nfmpi_begin_indep_data = NF_NOERR
  end function nfmpi_begin_indep_data
  integer function nfmpi_end_indep_data(ncid)
    integer, intent(in) :: ncid
    nfmpi_end_indep_data = NF_NOERR
  end function nfmpi_end_indep_data
  integer function nfmpi_put_vara_double_all(ncid, varid, start, count, buf)
    integer, intent(in) :: ncid, varid
    integer(MPI_OFFSET_KIND), intent(in) :: start(*), count(*)
    real(8), intent(in) :: buf(*)
    nfmpi_put_vara_double_all = NF_NOERR
  end function nfmpi_put_vara_double_all
  integer function nfmpi_put_vara_double(ncid, varid, start, count, buf)
    integer, intent(in) :: ncid, varid
    integer(MPI_OFFSET_KIND), intent(in) :: start(*), count(*)
    real(8), intent(in) :: buf(*)
    nfmpi_put_vara_double = NF_NOERR
  end function nfmpi_put_vara_double
  integer function nfmpi_put_vara_real_all(ncid, varid, start, count, buf)
    integer, intent(in) :: ncid, varid
    integer(MPI_OFFSET_KIND), intent(in) :: start(*), count(*)
    real(4), intent(in) :: buf(*)
    nfmpi_put_vara_real_all = NF_NOERR
  end function nfmpi_put_vara_real_all
  integer function nfmpi_put_vara_real(ncid, varid, start, count, buf)
    integer, intent(in) :: ncid, varid
    integer(MPI_OFFSET_KIND), intent(in) :: start(*), count(*)
    real(4), intent(in) :: buf(*)
    nfmpi_put_vara_real = NF_NOERR
  end function nfmpi_put_vara_real
  character(80) function nfmpi_strerror(status)
    integer, intent(in) :: status
    nfmpi_strerror = 'pnetcdf stub'
  end function nfmpi_strerror
  integer function nf90mpi_create(comm, path, mode, info, ncid)
    integer, intent(in) :: comm, mode, info
    character(*), intent(in) :: path
    integer, intent(out) :: ncid
    nf90mpi_create = nfmpi_create(comm, path, mode, info, ncid)
  end function nf90mpi_create
  integer function nf90mpi_close(ncid)
    integer, intent(in) :: ncid
    nf90mpi_close = NF_NOERR
  end function nf90mpi_close
  character(80) function nf90mpi_strerror(status)
    integer, intent(in) :: status
    nf90mpi_strerror = 'pnetcdf stub'
  end function nf90mpi_strerror
end module pnetcdf
