//! The kernel's page sizes: the base page, and the transparent huge page one
//! page-table entry of the middle level maps. Below every layer that allocates or
//! counts pages (the ends' buffers, the kernel's counts of huge-page allocations).

use std::path::Path;
use std::sync::OnceLock;

/// The kernel's page size, asked at run time: 4 KiB on x86-64, and 4, 16 or 64 KiB
/// on arm64 depending on how its kernel was built.
pub fn page_size() -> usize {
    rustix::param::page_size()
}

/// Where the kernel says how large a transparent huge page is.
pub const HPAGE_PMD_SIZE: &str = "/sys/kernel/mm/transparent_hugepage/hpage_pmd_size";

/// The size of a transparent huge page (2 MiB on x86-64, 32 MiB with 16 KiB pages,
/// 512 MiB with 64 KiB ones): the kernel's `hpage_pmd_size`, or, where it does not
/// say (THP compiled out), what one middle-level page-table entry maps.
pub fn huge_page_size() -> usize {
    static SIZE: OnceLock<usize> = OnceLock::new();
    *SIZE.get_or_init(|| {
        std::fs::read_to_string(Path::new(HPAGE_PMD_SIZE))
            .ok()
            .and_then(|text| parse_hpage_pmd_size(&text))
            .unwrap_or_else(|| pmd_size(page_size()))
    })
}

/// The bytes one PMD entry maps with pages of `page_size`: a page-table page holds
/// `page_size / 8` eight-byte entries, each mapping one page.
pub fn pmd_size(page_size: usize) -> usize {
    page_size / 8 * page_size
}

/// `hpage_pmd_size`'s text as a number of bytes.
fn parse_hpage_pmd_size(text: &str) -> Option<usize> {
    text.trim()
        .parse()
        .ok()
        .filter(|&n: &usize| n.is_power_of_two())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Page sizes Linux runs with: x86-64 and most arm64 (4 KiB), Apple silicon and
    /// some arm64 distributions (16 KiB), RHEL-style arm64 and POWER (64 KiB).
    const PAGE_SIZES: [usize; 3] = [4096, 16384, 65536];

    #[test]
    fn a_huge_page_is_what_one_pmd_entry_maps() {
        let expected = [2 << 20, 32 << 20, 512 << 20];
        for (page, huge) in PAGE_SIZES.into_iter().zip(expected) {
            assert_eq!(pmd_size(page), huge, "{page}-byte pages");
        }
    }

    #[test]
    fn the_kernel_says_the_huge_page_size() {
        assert_eq!(parse_hpage_pmd_size("2097152\n"), Some(2 << 20));
        assert_eq!(parse_hpage_pmd_size("536870912"), Some(512 << 20));
        assert_eq!(parse_hpage_pmd_size("0"), None);
        assert_eq!(parse_hpage_pmd_size("nonsense"), None);
        // On this machine: the file if the kernel has it, a power of two either way.
        let here = huge_page_size();
        assert!(here.is_power_of_two() && here > page_size(), "{here}");
        if let Ok(text) = std::fs::read_to_string(HPAGE_PMD_SIZE) {
            assert_eq!(Some(here), parse_hpage_pmd_size(&text));
        }
    }
}
