//! The verification pattern: every byte is a function of its stream offset.
//!
//! Each 8-byte word at stream offset `o` holds a mix of `o / 8`, so any byte that
//! arrives at the wrong position, or a page that was rewritten after it was handed
//! to the pipe, shows up as a mismatch.

/// The pattern word for word index `w` (= stream offset / 8).
#[inline]
fn word(w: u64) -> u64 {
    // splitmix64's finaliser: every output bit depends on every input bit, so data
    // from any other position (even a whole page away) differs in nearly all bytes.
    let mut z = w.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The expected byte at stream offset `offset`.
#[inline]
pub(crate) fn expected_byte(offset: u64) -> u8 {
    word(offset / 8).to_le_bytes()[(offset % 8) as usize]
}

/// Fills `buf` with the bytes that belong at stream offsets `offset..`.
pub fn fill(buf: &mut [u8], offset: u64) {
    if offset.is_multiple_of(8) {
        let mut words = buf.chunks_exact_mut(8);
        let mut w = offset / 8;
        for chunk in &mut words {
            chunk.copy_from_slice(&word(w).to_le_bytes());
            w += 1;
        }
        let rest = words.into_remainder();
        for (i, byte) in rest.iter_mut().enumerate() {
            *byte = expected_byte(w * 8 + i as u64);
        }
    } else {
        for (i, byte) in buf.iter_mut().enumerate() {
            *byte = expected_byte(offset + i as u64);
        }
    }
}

/// A byte that was not what the pattern says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mismatch {
    /// Stream offset of the byte.
    pub offset: u64,
    /// What should be there.
    pub expected: u8,
    /// What arrived.
    pub got: u8,
}

/// The first mismatching byte of `buf`, received at stream offset `offset`.
pub(crate) fn first_mismatch(buf: &[u8], offset: u64) -> Option<Mismatch> {
    let bad = count_or_find(buf, offset, true).1?;
    Some(bad)
}

/// How many bytes of `buf` do not match the pattern.
pub(crate) fn count_mismatches(buf: &[u8], offset: u64) -> u64 {
    count_or_find(buf, offset, false).0
}

fn count_or_find(buf: &[u8], offset: u64, stop_at_first: bool) -> (u64, Option<Mismatch>) {
    let mut bad = 0u64;
    let mut first = None;
    let mut i = 0usize;
    // Fast path: whole aligned words compared at once; bytes only where a word differs.
    let misalign = ((8 - offset % 8) % 8) as usize;
    let head = misalign.min(buf.len());
    let check_byte = |i: usize, bad: &mut u64, first: &mut Option<Mismatch>| {
        let at = offset + i as u64;
        let expected = expected_byte(at);
        if buf[i] != expected {
            *bad += 1;
            first.get_or_insert(Mismatch {
                offset: at,
                expected,
                got: buf[i],
            });
        }
    };
    while i < head {
        check_byte(i, &mut bad, &mut first);
        i += 1;
    }
    if stop_at_first && first.is_some() {
        return (bad, first);
    }
    while i + 8 <= buf.len() {
        let w = (offset + i as u64) / 8;
        let got = u64::from_le_bytes(buf[i..i + 8].try_into().expect("8 bytes"));
        if got != word(w) {
            for j in i..i + 8 {
                check_byte(j, &mut bad, &mut first);
            }
            if stop_at_first {
                return (bad, first);
            }
        }
        i += 8;
    }
    while i < buf.len() {
        check_byte(i, &mut bad, &mut first);
        i += 1;
    }
    (bad, first)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filled_buffers_check_clean_at_any_offset() {
        for offset in [0u64, 3, 8, 4093, 1 << 33] {
            let mut buf = vec![0u8; 10_007];
            fill(&mut buf, offset);
            assert_eq!(first_mismatch(&buf, offset), None, "offset {offset}");
            // A buffer split at an odd place checks clean piecewise too.
            assert_eq!(first_mismatch(&buf[..5], offset), None);
            assert_eq!(first_mismatch(&buf[5..], offset + 5), None);
        }
    }

    #[test]
    fn stale_or_shifted_data_is_caught() {
        let mut buf = vec![0u8; 4096];
        fill(&mut buf, 4096);
        // Data meant for an earlier chunk does not pass as this one.
        let bad = first_mismatch(&buf, 0).unwrap();
        assert_eq!(bad.offset, 0);
        assert!(count_mismatches(&buf, 0) > 4000);
        buf[100] ^= 1;
        let flipped = first_mismatch(&buf, 4096).unwrap();
        assert_eq!(flipped.offset, 4196);
        assert_eq!(count_mismatches(&buf, 4096), 1);
    }
}
