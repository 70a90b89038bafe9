"""Writes FILE.raw beside each HDF5 FILE given, for h5_stub.f90: int32 ndim, dims(3) and a
scale flag, then each scale (dim1, dim2, ...) and the data set as float64, in Fortran order."""
import struct
import sys

import h5py
import numpy as np

for path in sys.argv[1:]:
    with h5py.File(path, "r") as f:
        data = np.asarray(f["Data"], dtype="<f8")
        dims = list(reversed(data.shape)) + [1] * (3 - data.ndim)
        names = ["dim%d" % (i + 1) for i in range(data.ndim)]
        scales = [np.asarray(f[n], dtype="<f8") for n in names] if all(n in f for n in names) else []
        if any(len(s) != n for s, n in zip(scales, dims)):
            sys.exit("h5raw.py: %s: scales do not match the data set" % path)
        with open(path + ".raw", "wb") as out:
            out.write(struct.pack("<5i", data.ndim, *dims, 1 if scales else 0))
            for s in scales:
                out.write(s.tobytes())
            out.write(data.tobytes())
