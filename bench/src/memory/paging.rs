//! Splitting a virtual address the way the x86-64 MMU walks its page table.
//!
//! With 4-level paging a 64-bit address has 16 unused bits that must copy bit 47,
//! four 9-bit indices into 512-entry tables (PGD, PUD, PMD, PTE) and a 12-bit
//! offset into a 4 KiB page. 5-level paging adds a level (Linux's P4D sits
//! between PGD and PUD) and uses 57 bits, so bits 63..57 must copy bit 56. A
//! 2 MiB huge page stops one level early: the PMD entry points at the page itself
//! and the offset grows to 21 bits.
//!
//! The page's walk drawing (book/theme/pipebook/walk.js) does the same arithmetic
//! in JavaScript; both are tested against one file of vectors,
//! book/tests/paging-vectors.json.

use serde::{Deserialize, Serialize};

/// How many levels the page table has: 4 (48-bit addresses) or 5 (57-bit).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(into = "u32", try_from = "u32")]
pub enum Paging {
    /// PGD, PUD, PMD, PTE: 48-bit virtual addresses.
    #[default]
    FourLevel,
    /// PGD, P4D, PUD, PMD, PTE: 57-bit virtual addresses (la57).
    FiveLevel,
}

impl Paging {
    /// The number of levels.
    pub fn levels(self) -> u32 {
        match self {
            Paging::FourLevel => 4,
            Paging::FiveLevel => 5,
        }
    }

    /// How many low bits of an address are translated.
    pub(crate) fn address_bits(self) -> u32 {
        12 + 9 * self.levels()
    }

    /// From a number of levels; `None` unless 4 or 5.
    pub fn from_levels(levels: u32) -> Option<Paging> {
        match levels {
            4 => Some(Paging::FourLevel),
            5 => Some(Paging::FiveLevel),
            _ => None,
        }
    }

    /// The level names from the root down, for a walk to a 4 KiB page.
    fn names(self) -> &'static [&'static str] {
        match self {
            Paging::FourLevel => &["PGD", "PUD", "PMD", "PTE"],
            Paging::FiveLevel => &["PGD", "P4D", "PUD", "PMD", "PTE"],
        }
    }
}

impl TryFrom<u32> for Paging {
    type Error = String;

    fn try_from(levels: u32) -> Result<Self, Self::Error> {
        Paging::from_levels(levels)
            .ok_or_else(|| format!("{levels} levels: x86-64 paging has 4 or 5"))
    }
}

impl From<Paging> for u32 {
    fn from(paging: Paging) -> u32 {
        paging.levels()
    }
}

/// The size of the page the walk ends at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum PageSize {
    /// 4 KiB: the walk goes down to a PTE, 12-bit offset.
    #[default]
    #[serde(rename = "4KiB")]
    Small,
    /// 2 MiB: the PMD entry maps the page, 21-bit offset.
    #[serde(rename = "2MiB")]
    Huge,
}

impl PageSize {
    /// Bits of the offset inside the page.
    pub fn offset_bits(self) -> u32 {
        match self {
            PageSize::Small => 12,
            PageSize::Huge => 21,
        }
    }
}

/// One step of a walk: which table, and which of its 512 entries.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Level {
    /// PGD, P4D, PUD, PMD or PTE.
    pub name: String,
    /// The entry, 0..=511.
    pub index: u64,
    /// The lowest address bit of this index.
    pub shift: u32,
}

/// An address taken apart for a walk of the page table.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Walk {
    /// The address itself.
    pub address: u64,
    /// 4- or 5-level paging.
    pub paging: Paging,
    /// The page size the walk ends at.
    pub page: PageSize,
    /// The tables from the root down, each with its entry.
    pub levels: Vec<Level>,
    /// The offset inside the page.
    pub offset: u64,
    /// How many bits the offset has (12 or 21).
    pub offset_bits: u32,
}

/// Why an address cannot be walked.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AddressError {
    /// Not a hex (`0x...`) or decimal number.
    #[error("`{text}` is not an address: write it in hex like 0x0000f2705af953c0, or in decimal")]
    Unparsable {
        /// What was given.
        text: String,
    },
    /// A number, but wider than 64 bits.
    #[error("`{text}` is wider than 64 bits: an x86-64 virtual address has at most 16 hex digits")]
    TooWide {
        /// What was given.
        text: String,
    },
    /// Bits above the translated ones do not all copy the highest translated bit.
    #[error("{address:#018x} is not canonical for {levels}-level paging: bits 63..{bits} must all equal bit {top} (user addresses start 0x0000, kernel ones 0xffff){more}", levels = paging.levels(), bits = paging.address_bits(), top = paging.address_bits() - 1, more = if *paging == Paging::FourLevel && is_canonical(*address, Paging::FiveLevel) { "; it is canonical with 5-level paging (57 bits)" } else { "" })]
    NotCanonical {
        /// The address.
        address: u64,
        /// The paging it was checked against.
        paging: Paging,
    },
}

impl AddressError {
    /// A short name for the kind of error, as the shared test vectors and the
    /// page name it.
    pub fn kind(&self) -> &'static str {
        match self {
            AddressError::Unparsable { .. } => "unparsable",
            AddressError::TooWide { .. } => "too_wide",
            AddressError::NotCanonical { .. } => "not_canonical",
        }
    }
}

/// Whether the bits above `paging`'s translated ones all copy the top translated bit.
pub fn is_canonical(address: u64, paging: Paging) -> bool {
    let shift = paging.address_bits() - 1;
    let high = address >> shift;
    high == 0 || high == u64::MAX >> shift
}

// ANCHOR: split
/// Takes `address` apart for `paging`, down to a page of `page` size: each
/// level's 9-bit index from the root down, then the offset.
pub fn walk(
    address: u64,
    paging: Paging, // 4- or 5-level
    page: PageSize, // where the walk stops: a 4 KiB or a 2 MiB page
) -> Result<Walk, AddressError> {
    if !is_canonical(address, paging) {
        return Err(AddressError::NotCanonical { address, paging });
    }
    let names = paging.names();
    // A 2 MiB page ends the walk at the PMD: no PTE level.
    let depth = match page {
        PageSize::Small => names.len(),
        PageSize::Huge => names.len() - 1,
    };
    let levels = names[..depth]
        .iter()
        .enumerate()
        .map(|(i, name)| {
            let shift = 12 + 9 * (names.len() - 1 - i) as u32;
            Level {
                name: name.to_string(),
                index: (address >> shift) & 0x1ff,
                shift,
            }
        })
        .collect();
    let offset_bits = page.offset_bits();
    Ok(Walk {
        address,
        paging,
        page,
        levels,
        offset: address & ((1 << offset_bits) - 1),
        offset_bits,
    })
}
// ANCHOR_END: split

/// Parses `0x...` hex or decimal (underscores allowed as separators).
pub fn parse_address(text: &str) -> Result<u64, AddressError> {
    let t = text.trim().replace('_', "");
    let (digits, radix) = match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        Some(hex) => (hex, 16),
        None => (t.as_str(), 10),
    };
    if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
        return Err(AddressError::Unparsable {
            text: text.to_string(),
        });
    }
    u64::from_str_radix(digits, radix).map_err(|_| AddressError::TooWide {
        text: text.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_articles_address_needs_57_bits() {
        // 0x0000f2705af953c0 = 0000000000000000 111100100 111000001 011010111 110010101 001111000000:
        // bit 47 is set but bits 63..48 are not, so 48-bit paging refuses it.
        let refused = walk(0x0000_f270_5af9_53c0, Paging::FourLevel, PageSize::Small);
        assert_eq!(refused.unwrap_err().kind(), "not_canonical");
        let walk = walk(0x0000_f270_5af9_53c0, Paging::FiveLevel, PageSize::Small).unwrap();
        let indices: Vec<u64> = walk.levels.iter().map(|l| l.index).collect();
        assert_eq!(
            indices,
            [0, 0b111100100, 0b111000001, 0b011010111, 0b110010101]
        );
        assert_eq!(walk.offset, 0x3c0);
        let back = walk
            .levels
            .iter()
            .fold(walk.offset, |acc, l| acc | (l.index << l.shift));
        assert_eq!(back, walk.address);
    }

    #[test]
    fn a_huge_page_walk_stops_at_the_pmd() {
        let walk = walk(0x0000_7f70_5af9_53c0, Paging::FourLevel, PageSize::Huge).unwrap();
        let names: Vec<&str> = walk.levels.iter().map(|l| l.name.as_str()).collect();
        assert_eq!(names, ["PGD", "PUD", "PMD"]);
        assert_eq!(walk.offset, 0x0000_7f70_5af9_53c0 & 0x1f_ffff);
        assert_eq!(walk.offset_bits, 21);
    }

    #[test]
    fn canonical_means_the_top_bits_copy_the_highest_translated_bit() {
        assert!(is_canonical(0x0000_7fff_ffff_ffff, Paging::FourLevel));
        assert!(is_canonical(0xffff_8000_0000_0000, Paging::FourLevel));
        assert!(!is_canonical(0x0000_8000_0000_0000, Paging::FourLevel));
        assert!(is_canonical(0x0000_8000_0000_0000, Paging::FiveLevel));
        assert!(!is_canonical(0x0100_0000_0000_0000, Paging::FiveLevel));
        let err = walk(0x0000_8000_0000_0000, Paging::FourLevel, PageSize::Small).unwrap_err();
        assert_eq!(err.kind(), "not_canonical");
        let message = err.to_string();
        assert!(
            message.contains("0x0000800000000000") && message.contains("bits 63..48"),
            "{message}"
        );
    }

    #[test]
    fn addresses_parse_in_hex_and_decimal() {
        assert_eq!(parse_address("0x0000f2705af953c0"), Ok(0xf2705af953c0));
        assert_eq!(parse_address("4096"), Ok(4096));
        assert_eq!(parse_address("0xzz").unwrap_err().kind(), "unparsable");
        assert_eq!(parse_address("").unwrap_err().kind(), "unparsable");
        assert_eq!(
            parse_address("0x1_0000_0000_0000_0000").unwrap_err().kind(),
            "too_wide"
        );
    }
}
