//! Splitting a virtual address the way the x86-64 MMU does.
//!
//! With 4-level paging a 64-bit address has 16 unused (sign-extended) bits, four
//! 9-bit indices into 512-entry tables (PGD, PUD, PMD, PTE) and a 12-bit offset
//! into a 4 KiB page. A 2 MiB huge page stops one level early: the PMD entry points
//! at the page itself and the offset grows to 21 bits.

use serde::Serialize;

/// The parts of a virtual address under 4-level paging.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct AddressParts {
    /// The address itself.
    pub address: u64,
    /// Bits 63..48: must copy bit 47.
    pub sign_extension: u64,
    /// Bits 47..39: index into the page global directory.
    pub pgd: u64,
    /// Bits 38..30: index into the page upper directory.
    pub pud: u64,
    /// Bits 29..21: index into the page middle directory.
    pub pmd: u64,
    /// Bits 20..12: index into the page table.
    pub pte: u64,
    /// Bits 11..0: offset inside a 4 KiB page.
    pub offset_4k: u64,
    /// Bits 20..0: offset inside a 2 MiB huge page (PMD maps the page directly).
    pub offset_2m: u64,
}

/// Splits `address` into its page-table indices and offsets.
// ANCHOR: split
pub fn split(address: u64) -> AddressParts {
    let index = |shift: u32| (address >> shift) & 0x1ff;
    AddressParts {
        address,
        sign_extension: address >> 48,
        pgd: index(39),
        pud: index(30),
        pmd: index(21),
        pte: index(12),
        offset_4k: address & 0xfff,
        offset_2m: address & 0x1f_ffff,
    }
}
// ANCHOR_END: split

/// Parses `0x...` hex or decimal.
pub fn parse_address(text: &str) -> Option<u64> {
    let t = text.trim().replace('_', "");
    match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(hex, 16).ok(),
        None => t.parse().ok(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_articles_address_splits_into_its_indices() {
        // 0x0000f2705af953c0 = 0000000000000000 111100100 111000001 011010111 110010101 001111000000
        let parts = split(0x0000_f270_5af9_53c0);
        assert_eq!(parts.sign_extension, 0);
        assert_eq!(parts.pgd, 0b111100100);
        assert_eq!(parts.pud, 0b111000001);
        assert_eq!(parts.pmd, 0b011010111);
        assert_eq!(parts.pte, 0b110010101);
        assert_eq!(parts.offset_4k, 0x3c0);
        let back = (parts.pgd << 39)
            | (parts.pud << 30)
            | (parts.pmd << 21)
            | (parts.pte << 12)
            | parts.offset_4k;
        assert_eq!(back, parts.address);
        assert_eq!(parts.offset_2m, parts.address & ((1 << 21) - 1));
    }

    #[test]
    fn addresses_parse_in_hex_and_decimal() {
        assert_eq!(parse_address("0x0000f2705af953c0"), Some(0xf2705af953c0));
        assert_eq!(parse_address("4096"), Some(4096));
        assert_eq!(parse_address("0xzz"), None);
    }
}
