! A one-rank stand-in for mpif.h (see mpi.f90 beside it).
      integer MPI_COMM_WORLD, MPI_DOUBLE_PRECISION, MPI_INTEGER
      integer MPI_MAX, MPI_MIN, MPI_SUM, MPI_STATUS_SIZE, MPI_PROC_NULL
      parameter (MPI_COMM_WORLD = 0, MPI_DOUBLE_PRECISION = 1)
      parameter (MPI_INTEGER = 2, MPI_MAX = 1, MPI_MIN = 2, MPI_SUM = 3)
      parameter (MPI_STATUS_SIZE = 6, MPI_PROC_NULL = -1)
      double precision mpi_wtime
      external mpi_wtime
