//! The bytes every IPC mechanism moves, and the checksum the consumer computes.
//!
//! The pattern is deliberately cheaper than the pipe steps' verification pattern
//! (one multiply per 8-byte word instead of a full mixer): producers of the
//! shared-memory mechanisms generate it straight into the shared pages, and that
//! generation is part of what they are timed on, so it must run near memory speed
//! or it would hide the mechanism. Each word still depends on its position, so a
//! byte delivered at the wrong offset changes the checksum.

/// The pattern word at word index `w` (= stream offset / 8).
#[inline(always)]
fn word(w: u64) -> u64 {
    (w ^ 0x5049_5045_4245_4e43).wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

/// Fills `buf` with the pattern bytes at stream offsets `offset..`.
///
/// `offset` must be a multiple of 8 (producers always start chunks there); a
/// trailing partial word is truncated, so a stream of any length is the prefix of
/// the infinite pattern.
pub(crate) fn fill(buf: &mut [u8], offset: u64) {
    debug_assert!(offset.is_multiple_of(8));
    let mut w = offset / 8;
    let mut words = buf.chunks_exact_mut(8);
    for chunk in &mut words {
        chunk.copy_from_slice(&word(w).to_le_bytes());
        w += 1;
    }
    let rest = words.into_remainder();
    let len = rest.len();
    rest.copy_from_slice(&word(w).to_le_bytes()[..len]);
}

const PRIME: u64 = 0x9FB2_1C65_1E98_DF25;

/// A streaming 64-bit checksum over bytes that may arrive in pieces of any size.
///
/// Four independent lanes take one 32-byte block at a time (xor, multiply,
/// rotate), so the multiplies overlap and the hash runs far above the speed of any
/// mechanism it checks; lanes are position-dependent, so reordered data does not
/// hash the same. Bytes that do not fill a block wait in `tail`.
#[derive(Debug, Clone)]
pub(crate) struct Checksum {
    lanes: [u64; 4],
    tail: [u8; 32],
    tail_len: usize,
    total: u64,
}

impl Default for Checksum {
    fn default() -> Self {
        Checksum {
            lanes: [1, 2, 3, 4],
            tail: [0; 32],
            tail_len: 0,
            total: 0,
        }
    }
}

impl Checksum {
    #[inline(always)]
    fn block(&mut self, block: &[u8]) {
        for (lane, word) in self.lanes.iter_mut().zip(block.chunks_exact(8)) {
            let w = u64::from_le_bytes(word.try_into().expect("8 bytes"));
            *lane = ((*lane ^ w).wrapping_mul(PRIME)).rotate_left(29);
        }
    }

    /// Adds `bytes` to the stream.
    pub(crate) fn update(&mut self, mut bytes: &[u8]) {
        self.total += bytes.len() as u64;
        if self.tail_len > 0 {
            let take = (32 - self.tail_len).min(bytes.len());
            self.tail[self.tail_len..self.tail_len + take].copy_from_slice(&bytes[..take]);
            self.tail_len += take;
            bytes = &bytes[take..];
            if self.tail_len < 32 {
                return;
            }
            let tail = self.tail;
            self.block(&tail);
            self.tail_len = 0;
        }
        let mut blocks = bytes.chunks_exact(32);
        for block in &mut blocks {
            self.block(block);
        }
        let rest = blocks.remainder();
        self.tail[..rest.len()].copy_from_slice(rest);
        self.tail_len = rest.len();
    }

    /// Bytes seen so far.
    pub(crate) fn len(&self) -> u64 {
        self.total
    }

    /// The checksum of everything added.
    pub(crate) fn finish(&self) -> u64 {
        let mut h = self.total.wrapping_mul(PRIME);
        for (i, lane) in self.lanes.iter().enumerate() {
            h = (h ^ lane.rotate_left(i as u32 * 16)).wrapping_mul(PRIME);
        }
        for &b in &self.tail[..self.tail_len] {
            h = (h ^ u64::from(b)).wrapping_mul(PRIME);
        }
        h ^ (h >> 32)
    }
}

/// The checksum of the first `bytes` bytes of the pattern, computed the way a
/// consumer would, in `chunk`-sized pieces of a scratch buffer.
pub(crate) fn expected_checksum(bytes: u64) -> u64 {
    let mut sum = Checksum::default();
    let mut buf = vec![0u8; 1 << 20];
    let mut offset = 0u64;
    while offset < bytes {
        let n = (bytes - offset).min(buf.len() as u64) as usize;
        fill(&mut buf[..n], offset);
        sum.update(&buf[..n]);
        offset += n as u64;
    }
    sum.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checksum_ignores_how_the_stream_is_cut_but_not_the_order() {
        let mut data = vec![0u8; 100_003];
        fill(&mut data, 0);
        let mut whole = Checksum::default();
        whole.update(&data);
        let mut pieces = Checksum::default();
        for piece in data.chunks(777) {
            pieces.update(piece);
        }
        assert_eq!(whole.finish(), pieces.finish());
        assert_eq!(whole.finish(), expected_checksum(data.len() as u64));
        data.swap(10, 4000);
        let mut swapped = Checksum::default();
        swapped.update(&data);
        assert_ne!(whole.finish(), swapped.finish());
    }

    #[test]
    fn pattern_is_a_prefix_whatever_the_chunking() {
        let mut a = vec![0u8; 4096 + 5];
        fill(&mut a, 0);
        let mut b = vec![0u8; 4096 + 5];
        fill(&mut b[..1024], 0);
        fill(&mut b[1024..], 1024);
        assert_eq!(a, b);
    }
}
