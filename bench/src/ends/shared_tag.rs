//! The tag of every 8-byte word a shared pipe's writer sends (its writer, the
//! message's number and the word's place in it), and a reader's judgement of the
//! stream it saw: which messages arrived torn, which split over two reads.

use std::collections::BTreeMap;

/// The word at `index` of message `seq` of writer `writer`.
pub fn word(writer: u32, seq: u64, index: u64) -> u64 {
    ((writer as u64 & 0xff) << 56) | ((seq & 0xffff_ffff) << 24) | (index & 0xff_ffff)
}

/// A word's writer, message and place.
fn unword(w: u64) -> (u32, u64, u64) {
    ((w >> 56) as u32, (w >> 24) & 0xffff_ffff, w & 0xff_ffff)
}

/// A reader's judgement of the stream it saw, read by read.
#[derive(Debug, Default)]
pub(crate) struct Judge {
    words_per_msg: u64,
    /// The only reader: it sees the whole stream, so a message its previous
    /// read ended in must go on at the start of its next.
    sole: bool,
    /// The message the previous read ended in: (writer, seq, next index).
    open: Option<(u32, u64, u64)>,
    /// Bytes by writer.
    pub per_writer: BTreeMap<u32, u64>,
    /// Messages torn, (writer, seq): each counted once.
    torn_ids: std::collections::HashSet<(u32, u64)>,
    /// Messages torn.
    pub torn: u64,
    /// Messages split over reads.
    pub split: u64,
}

impl Judge {
    /// For messages of `msg_size` bytes, read by one of `readers` readers.
    pub(crate) fn new(msg_size: u64, readers: usize) -> Self {
        Judge {
            words_per_msg: msg_size / 8,
            sole: readers == 1,
            ..Judge::default()
        }
    }

    fn tear(&mut self, writer: u32, seq: u64) {
        if self.torn_ids.insert((writer, seq)) {
            self.torn += 1;
        }
    }

    /// One read's bytes (a multiple of 8: every write is).
    pub(crate) fn read(&mut self, chunk: &[u8]) {
        // (writer, seq, next index) of the message being walked in this read.
        let mut current: Option<(u32, u64, u64)> = None;
        let mut first = true;
        for bytes in chunk.chunks_exact(8) {
            let (writer, seq, index) = unword(u64::from_ne_bytes(bytes.try_into().unwrap()));
            *self.per_writer.entry(writer).or_default() += 8;
            match current {
                Some((w, s, next)) if w == writer && s == seq && next == index => {
                    current = Some((w, s, next + 1));
                }
                _ => {
                    // A message ends here, or another begins.
                    if let Some((w, s, next)) = current {
                        if next != self.words_per_msg {
                            // Cut off by another message inside one read.
                            self.tear(w, s);
                        }
                    }
                    // A read may begin with the rest of a message (this reader's
                    // previous read, or another reader's, ended in it: counted as
                    // split there); anywhere else, starting in the middle means
                    // another message came between its parts.
                    if index != 0 && !first {
                        self.tear(writer, seq);
                    }
                    if first && self.sole {
                        let goes_on = self.open == Some((writer, seq, index));
                        // The sole reader's previous read ended inside a message
                        // and this one does not carry on with it: cut off.
                        if let Some((w, s, _)) = self.open.filter(|_| !goes_on) {
                            self.tear(w, s);
                        }
                        // Or it begins inside a message it never saw begin.
                        if index != 0 && !goes_on {
                            self.tear(writer, seq);
                        }
                    }
                    current = Some((writer, seq, index + 1));
                }
            }
            first = false;
        }
        // Ending inside a message: its rest comes in another read.
        self.open = current.filter(|&(_, _, next)| next != self.words_per_msg);
        if self.open.is_some() {
            self.split += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(writer: u32, seq: u64, words: u64) -> Vec<u8> {
        (0..words)
            .flat_map(|i| word(writer, seq, i).to_ne_bytes())
            .collect()
    }

    #[test]
    fn whole_messages_are_not_torn_and_interleaved_ones_are() {
        let mut judge = Judge::new(64, 2);
        judge.read(&message(0, 0, 8));
        judge.read(&message(1, 0, 8));
        assert_eq!((judge.torn, judge.split), (0, 0));
        // Writer 0's message with writer 1's in the middle of it, in one read.
        let a = message(0, 1, 8);
        let b = message(1, 1, 8);
        let mut chunk = a[..32].to_vec();
        chunk.extend_from_slice(&b);
        chunk.extend_from_slice(&a[32..]);
        judge.read(&chunk);
        assert_eq!(judge.torn, 1, "cut off, then resumed: one message torn");
        assert_eq!(judge.per_writer[&0], 128);
        assert_eq!(judge.per_writer[&1], 128);
    }

    #[test]
    fn a_message_over_two_reads_is_split_not_torn() {
        let mut judge = Judge::new(64, 1);
        let a = message(2, 5, 8);
        judge.read(&a[..24]);
        judge.read(&a[24..]);
        assert_eq!(judge.torn, 0);
        assert_eq!(judge.split, 1);
    }

    #[test]
    fn a_sole_reader_sees_a_tear_between_two_reads() {
        let a = message(0, 0, 8);
        let b = message(1, 0, 8);
        let mut sole = Judge::new(64, 1);
        sole.read(&a[..32]);
        sole.read(&b);
        sole.read(&a[32..]);
        // a was cut off, then resumed after b: one message torn.
        assert_eq!(sole.torn, 1);
        // With another reader, the rest might have been read there: no verdict.
        let mut shared = Judge::new(64, 2);
        shared.read(&a[..32]);
        shared.read(&b);
        assert_eq!(shared.torn, 0);
    }
}
