//! The byte-level pieces of the columns' format (r2, and what r3 carries): LEB128 varints, zigzag for signed values,
//! little-endian `f64`s and length-prefixed strings, written to growable columns and read back
//! with every length checked against the bytes that remain (a hostile link can only make a
//! read fail, never allocate more than it holds).

use crate::ShareError;

/// One column being written.
#[derive(Debug, Default, Clone)]
pub(crate) struct Column(pub(crate) Vec<u8>);

impl Column {
    /// An unsigned integer (LEB128: 7 bits per byte, low bits first).
    pub(crate) fn u(&mut self, mut v: u64) {
        while v >= 0x80 {
            self.0.push((v as u8) | 0x80);
            v >>= 7;
        }
        self.0.push(v as u8);
    }

    /// A signed integer, zigzag-coded so small magnitudes of either sign take one byte.
    pub(crate) fn i(&mut self, v: i64) {
        self.u(((v << 1) ^ (v >> 63)) as u64);
    }

    /// A float, all 64 bits.
    pub(crate) fn f(&mut self, v: f64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }

    /// A string: its length in bytes, then the UTF-8.
    pub(crate) fn s(&mut self, v: &str) {
        self.u(v.len() as u64);
        self.0.extend_from_slice(v.as_bytes());
    }
}

/// One column being read.
#[derive(Debug, Clone)]
pub(crate) struct Cursor<'a> {
    bytes: &'a [u8],
    at: usize,
    /// Which column, for the error message.
    name: &'static str,
}

impl<'a> Cursor<'a> {
    pub(crate) fn new(bytes: &'a [u8], name: &'static str) -> Self {
        Self { bytes, at: 0, name }
    }

    fn damaged(&self, what: &str) -> ShareError {
        ShareError::Damaged(format!("{what} in the {} column", self.name))
    }

    /// Bytes not read yet: an upper bound on how many more values the column can hold.
    pub(crate) fn remaining(&self) -> usize {
        self.bytes.len() - self.at
    }

    pub(crate) fn u(&mut self) -> Result<u64, ShareError> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let Some(&b) = self.bytes.get(self.at) else {
                return Err(self.damaged("a number runs past the end"));
            };
            self.at += 1;
            v |= u64::from(b & 0x7F) << shift;
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err(self.damaged("a number longer than 64 bits"))
    }

    pub(crate) fn i(&mut self) -> Result<i64, ShareError> {
        let v = self.u()?;
        Ok(((v >> 1) as i64) ^ -((v & 1) as i64))
    }

    pub(crate) fn f(&mut self) -> Result<f64, ShareError> {
        let end = self.at + 8;
        let b = self
            .bytes
            .get(self.at..end)
            .ok_or_else(|| self.damaged("a float runs past the end"))?;
        self.at = end;
        Ok(f64::from_le_bytes(b.try_into().expect("8 bytes")))
    }

    /// A count of items that each take at least one byte of this column.
    pub(crate) fn count(&mut self) -> Result<usize, ShareError> {
        let n = self.u()?;
        usize::try_from(n)
            .ok()
            .filter(|n| *n <= self.remaining())
            .ok_or_else(|| self.damaged("a count larger than the data"))
    }

    /// A count of items stored in other columns (bounded by `limit`).
    pub(crate) fn count_of(&mut self, limit: usize) -> Result<usize, ShareError> {
        let n = self.u()?;
        usize::try_from(n)
            .ok()
            .filter(|n| *n <= limit)
            .ok_or_else(|| self.damaged("a count larger than the data"))
    }

    pub(crate) fn s(&mut self) -> Result<String, ShareError> {
        let n = self.u()?;
        self.s_of(n)
    }

    /// A string of `n` bytes (its length stored elsewhere).
    pub(crate) fn s_of(&mut self, n: u64) -> Result<String, ShareError> {
        let n = usize::try_from(n)
            .ok()
            .filter(|n| *n <= self.remaining())
            .ok_or_else(|| self.damaged("a count larger than the data"))?;
        let b = &self.bytes[self.at..self.at + n];
        self.at += n;
        String::from_utf8(b.to_vec()).map_err(|_| self.damaged("text that is not UTF-8"))
    }

    /// A small code that must be below `limit`.
    pub(crate) fn code(&mut self, limit: u64) -> Result<u64, ShareError> {
        let v = self.u()?;
        if v < limit {
            Ok(v)
        } else {
            Err(self.damaged("an unknown code"))
        }
    }

    /// Fails unless every byte was read (a column with trailing bytes was not written by
    /// this encoder).
    pub(crate) fn finish(&self) -> Result<(), ShareError> {
        if self.at == self.bytes.len() {
            Ok(())
        } else {
            Err(self.damaged("bytes left over"))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_round_trip_and_short_input_is_an_error() {
        let mut c = Column::default();
        let values = [0i64, 1, -1, 63, -64, 64, 1 << 40, i64::MIN, i64::MAX];
        for v in values {
            c.i(v);
        }
        c.u(u64::MAX);
        c.f(-0.125);
        c.s("héllo");
        let mut r = Cursor::new(&c.0, "test");
        for v in values {
            assert_eq!(r.i().unwrap(), v);
        }
        assert_eq!(r.u().unwrap(), u64::MAX);
        assert_eq!(r.f().unwrap(), -0.125);
        assert_eq!(r.s().unwrap(), "héllo");
        r.finish().unwrap();
        // Small magnitudes take one byte.
        let mut one = Column::default();
        one.i(-64);
        one.i(63);
        assert_eq!(one.0.len(), 2);
        // Cut short, too long, or claiming more than it holds.
        let mut long = Column::default();
        long.u(1 << 40);
        let mut r = Cursor::new(&long.0[..2], "test");
        assert!(matches!(r.u(), Err(ShareError::Damaged(_))));
        let mut r = Cursor::new(&long.0[..2], "test");
        assert!(matches!(r.f(), Err(ShareError::Damaged(_))));
        let mut r = Cursor::new(&[0xFF; 11], "test");
        assert!(matches!(r.u(), Err(ShareError::Damaged(_))));
        let mut r = Cursor::new(&[100, 1, 2], "test");
        assert!(matches!(r.count(), Err(ShareError::Damaged(_))));
        let mut r = Cursor::new(&[100, 1, 2], "test");
        assert!(matches!(r.s(), Err(ShareError::Damaged(_))));
    }
}
