//! SplitMix64 (Steele, Lea and Flood, 2014): a 64-bit generator of a few lines,
//! chosen so the page's `labchecks.js` can draw the very same numbers with BigInt and
//! judge a lab exactly as the server does. Not for secrets.

/// A seeded SplitMix64 stream.
#[derive(Debug, Clone)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    /// The stream that starts from `seed`.
    pub fn new(seed: u64) -> Self {
        SplitMix64(seed)
    }

    /// The next 64 bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// An index below `n` (`n` > 0). The modulo's bias is below n / 2^64: nothing
    /// a bootstrap of a few hundred pairs can feel, and trivial to repeat in JS.
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_the_reference_sequence() {
        // Rosetta Code, "Pseudo-random numbers/Splitmix64": the first outputs of
        // the reference algorithm seeded with 1234567.
        let mut rng = SplitMix64::new(1234567);
        let got: Vec<u64> = (0..3).map(|_| rng.next_u64()).collect();
        assert_eq!(
            got,
            vec![
                6457827717110365317,
                3203168211198807973,
                9817491932198370423
            ]
        );
    }
}
