//! The fields of a query record's payload: version 0.1's bare fields and
//! version 0.2's bit map of the fields that follow.

use std::io::Read;

use super::RocksTraceReader;

impl<R: Read> RocksTraceReader<R> {
    /// A version 0.2 payload's field map, checked against the fields a
    /// record of this kind may have.
    fn field_map(
        &self,
        c: &mut Cursor<'_>,
        allowed: std::ops::RangeInclusive<u32>,
    ) -> Result<u64, (usize, String)> {
        let map = c.fixed64()?;
        for bit in 0..64 {
            if map & (1 << bit) != 0 && !allowed.contains(&bit) {
                return Err((
                    0,
                    format!(
                        "payload map names field {bit}; this record kind has fields {} to {}",
                        allowed.start(),
                        allowed.end()
                    ),
                ));
            }
        }
        Ok(map)
    }

    pub(super) fn write_fields(&self) -> Result<Fields, (usize, String)> {
        let mut c = Cursor::new(&self.buf);
        let mut f = Fields::default();
        if self.minor < 2 {
            f.spans[0] = 0..self.buf.len();
            return Ok(f);
        }
        let map = self.field_map(&mut c, 1..=1)?;
        if map & 2 != 0 {
            f.spans[0] = c.prefixed()?;
        }
        c.finish()?;
        Ok(f)
    }

    pub(super) fn get_fields(&self) -> Result<Fields, (usize, String)> {
        let mut c = Cursor::new(&self.buf);
        let mut f = Fields::default();
        let map = if self.minor < 2 {
            0b1100
        } else {
            self.field_map(&mut c, 2..=3)?
        };
        if map & (1 << 2) != 0 {
            f.cf = c.fixed32()?;
        }
        if map & (1 << 3) != 0 {
            f.spans[1] = c.prefixed()?;
        }
        c.finish()?;
        Ok(f)
    }

    pub(super) fn seek_fields(&self) -> Result<Fields, (usize, String)> {
        let mut c = Cursor::new(&self.buf);
        let mut f = Fields::default();
        let map = if self.minor < 2 {
            0b11_0000
        } else {
            self.field_map(&mut c, 4..=7)?
        };
        if map & (1 << 4) != 0 {
            f.cf = c.fixed32()?;
        }
        for (bit, slot) in [(5, 1), (6, 2), (7, 3)] {
            if map & (1 << bit) != 0 {
                f.spans[slot] = c.prefixed()?;
            }
        }
        c.finish()?;
        Ok(f)
    }

    pub(super) fn multiget_fields(&mut self) -> Result<Fields, (usize, String)> {
        let mut c = Cursor::new(&self.buf);
        let map = self.field_map(&mut c, 8..=10)?;
        let (mut n, mut cfs, mut keys) = (0u32, 0..0, 0..0);
        if map & (1 << 8) != 0 {
            n = c.fixed32()?;
        }
        if map & (1 << 9) != 0 {
            cfs = c.prefixed()?;
        }
        if map & (1 << 10) != 0 {
            keys = c.prefixed()?;
        }
        c.finish()?;
        if n == 0 {
            return Err((0, "a MultiGet of no keys".into()));
        }
        self.spans.clear();
        let mut ids = Cursor {
            b: &self.buf[..cfs.end],
            pos: cfs.start,
        };
        let mut ks = Cursor {
            b: &self.buf[..keys.end],
            pos: keys.start,
        };
        for i in 0..n {
            let cf = ids
                .fixed32()
                .map_err(|(at, w)| (at, format!("column family {i} of {n}: {w}")))?;
            let k = ks
                .prefixed()
                .map_err(|(at, w)| (at, format!("key {i} of {n}: {w}")))?;
            self.spans.push((cf, k.start, k.end));
        }
        if ids.pos != cfs.end || ks.pos != keys.end {
            return Err((
                cfs.start,
                format!("a MultiGet of {n} keys has more column families or keys than that"),
            ));
        }
        Ok(Fields::default())
    }
}

/// Where a record's fields lie in the payload: a Write's batch (0), a
/// key (1), an iterator's lower (2) and upper (3) bound; a column family.
#[derive(Default)]
pub(super) struct Fields {
    pub(super) spans: [std::ops::Range<usize>; 4],
    pub(super) cf: u32,
}

impl std::ops::Index<usize> for Fields {
    type Output = std::ops::Range<usize>;
    fn index(&self, i: usize) -> &Self::Output {
        &self.spans[i]
    }
}

/// Reads a payload's fields; an error is the offset in the payload and
/// what was expected, which the reader turns into a file offset.
pub(crate) struct Cursor<'a> {
    pub(crate) b: &'a [u8],
    pub(crate) pos: usize,
}

impl<'a> Cursor<'a> {
    pub(crate) fn new(b: &'a [u8]) -> Self {
        Cursor { b, pos: 0 }
    }
    pub(crate) fn take(
        &mut self,
        n: usize,
        what: &str,
    ) -> Result<std::ops::Range<usize>, (usize, String)> {
        let left = self.b.len() - self.pos;
        if left < n {
            return Err((
                self.pos,
                format!("expected {n} bytes of {what}, found {left}"),
            ));
        }
        self.pos += n;
        Ok(self.pos - n..self.pos)
    }
    pub(crate) fn fixed32(&mut self) -> Result<u32, (usize, String)> {
        let r = self.take(4, "a fixed32")?;
        Ok(u32::from_le_bytes(self.b[r].try_into().unwrap_or_default()))
    }
    pub(crate) fn fixed64(&mut self) -> Result<u64, (usize, String)> {
        let r = self.take(8, "a fixed64")?;
        Ok(u64::from_le_bytes(self.b[r].try_into().unwrap_or_default()))
    }
    pub(crate) fn varint32(&mut self) -> Result<u32, (usize, String)> {
        let at = self.pos;
        let mut v: u64 = 0;
        for i in 0..5 {
            let Some(&byte) = self.b.get(self.pos) else {
                return Err((
                    at,
                    "expected a varint32, found the end of the payload".into(),
                ));
            };
            self.pos += 1;
            v |= u64::from(byte & 0x7f) << (7 * i);
            if byte & 0x80 == 0 {
                return u32::try_from(v)
                    .map_err(|_| (at, format!("varint32 of {v} does not fit 32 bits")));
            }
        }
        Err((at, "varint32 longer than 5 bytes".into()))
    }
    /// A varint32-length-prefixed string.
    pub(crate) fn prefixed(&mut self) -> Result<std::ops::Range<usize>, (usize, String)> {
        let at = self.pos;
        let n = self.varint32()? as usize;
        let left = self.b.len() - self.pos;
        if left < n {
            return Err((
                at,
                format!("a string of {n} bytes, but {left} are left in the payload"),
            ));
        }
        self.pos += n;
        Ok(self.pos - n..self.pos)
    }
    pub(crate) fn finish(&self) -> Result<(), (usize, String)> {
        if self.pos == self.b.len() {
            Ok(())
        } else {
            Err((
                self.pos,
                format!(
                    "{} bytes left over after the record's fields",
                    self.b.len() - self.pos
                ),
            ))
        }
    }
}
