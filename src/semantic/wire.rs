//! A compact byte encoding for what crosses the pipe to the libclang worker process and for
//! the entries of the result cache (`crate::cache`): unsigned LEB128 integers and
//! length-prefixed strings and bytes. Decoding never panics; malformed input gives `None`.

#[derive(Default)]
pub struct Writer {
    pub buf: Vec<u8>,
}

impl Writer {
    #[inline]
    pub fn uint(&mut self, mut v: u64) {
        while v >= 0x80 {
            self.buf.push(v as u8 | 0x80);
            v >>= 7;
        }
        self.buf.push(v as u8);
    }

    pub fn usize(&mut self, v: usize) {
        self.uint(v as u64);
    }

    /// `None` as 0, `Some(v)` as v + 1.
    pub fn opt(&mut self, v: Option<usize>) {
        self.uint(v.map_or(0, |v| v as u64 + 1));
    }

    pub fn bool(&mut self, v: bool) {
        self.uint(u64::from(v));
    }

    pub fn int(&mut self, v: i64) {
        // Zig-zag: small negative numbers stay small.
        self.uint(((v << 1) ^ (v >> 63)) as u64);
    }

    pub fn str(&mut self, s: &str) {
        self.usize(s.len());
        self.buf.extend_from_slice(s.as_bytes());
    }

    pub fn bytes(&mut self, b: &[u8]) {
        self.usize(b.len());
        self.buf.extend_from_slice(b);
    }

    pub fn range(&mut self, r: &std::ops::Range<usize>) {
        self.usize(r.start);
        self.usize(r.end);
    }

    pub fn list<T>(&mut self, items: &[T], mut each: impl FnMut(&mut Self, &T)) {
        self.usize(items.len());
        for it in items {
            each(self, it);
        }
    }
}

pub struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    pub fn new(buf: &'a [u8]) -> Self {
        Reader { buf, pos: 0 }
    }

    pub fn at_end(&self) -> bool {
        self.pos == self.buf.len()
    }

    #[inline]
    pub fn uint(&mut self) -> Option<u64> {
        // Most numbers are one byte.
        if let Some(&b) = self.buf.get(self.pos)
            && b < 0x80
        {
            self.pos += 1;
            return Some(u64::from(b));
        }
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let b = *self.buf.get(self.pos)?;
            self.pos += 1;
            v |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Some(v);
            }
        }
        None
    }

    pub fn usize(&mut self) -> Option<usize> {
        usize::try_from(self.uint()?).ok()
    }

    pub fn opt(&mut self) -> Option<Option<usize>> {
        Some(self.usize()?.checked_sub(1))
    }

    pub fn bool(&mut self) -> Option<bool> {
        match self.uint()? {
            0 => Some(false),
            1 => Some(true),
            _ => None,
        }
    }

    pub fn int(&mut self) -> Option<i64> {
        let u = self.uint()?;
        Some(((u >> 1) as i64) ^ -((u & 1) as i64))
    }

    pub fn str(&mut self) -> Option<String> {
        let n = self.usize()?;
        let end = self.pos.checked_add(n)?;
        let s = std::str::from_utf8(self.buf.get(self.pos..end)?).ok()?;
        self.pos = end;
        Some(s.to_string())
    }

    pub fn bytes(&mut self) -> Option<&'a [u8]> {
        let n = self.usize()?;
        let end = self.pos.checked_add(n)?;
        let b = self.buf.get(self.pos..end)?;
        self.pos = end;
        Some(b)
    }

    pub fn range(&mut self) -> Option<std::ops::Range<usize>> {
        Some(self.usize()?..self.usize()?)
    }

    /// A list of at most what the remaining bytes can hold (one byte per item at least).
    pub fn list<T>(&mut self, mut each: impl FnMut(&mut Self) -> Option<T>) -> Option<Vec<T>> {
        let n = self.usize()?;
        if n > self.buf.len() - self.pos {
            return None;
        }
        let mut out = Vec::with_capacity(n);
        for _ in 0..n {
            out.push(each(self)?);
        }
        Some(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_truncation() {
        let mut w = Writer::default();
        w.uint(u64::MAX);
        w.int(-5);
        w.opt(None);
        w.opt(Some(7));
        w.str("héllo");
        w.list(&[1usize, 300], |w, v| w.usize(*v));
        w.bytes(b"\xff\x00");
        let mut r = Reader::new(&w.buf);
        assert_eq!(r.uint(), Some(u64::MAX));
        assert_eq!(r.int(), Some(-5));
        assert_eq!(r.opt(), Some(None));
        assert_eq!(r.opt(), Some(Some(7)));
        assert_eq!(r.str().as_deref(), Some("héllo"));
        assert_eq!(r.list(|r| r.usize()), Some(vec![1, 300]));
        assert_eq!(r.bytes(), Some(&b"\xff\x00"[..]));
        assert!(r.at_end());
        for cut in 0..w.buf.len() {
            let mut r = Reader::new(&w.buf[..cut]);
            let all = (|| {
                r.uint()?;
                r.int()?;
                r.opt()?;
                r.opt()?;
                r.str()?;
                r.list(|r| r.usize())?;
                r.bytes()
            })();
            assert!(all.is_none(), "cut at {cut}");
        }
        let mut r = Reader::new(&[0xff; 12]);
        assert_eq!(r.uint(), None);
    }
}
