//! What a folder is on: its file system's type and its free space. The run
//! folders and the IPC lab both decide on these (O_DIRECT means nothing on
//! tmpfs; a run refuses a folder with too little room).

use std::ffi::CString;
use std::path::Path;

const TMPFS_MAGIC: i64 = 0x0102_1994;

/// The file system type of `dir`, by statfs magic.
pub fn filesystem(dir: &Path) -> Option<String> {
    let c = CString::new(dir.as_os_str().as_encoded_bytes()).ok()?;
    // SAFETY: statfs fills the zeroed struct we pass.
    let magic = unsafe {
        let mut st: libc::statfs = std::mem::zeroed();
        if libc::statfs(c.as_ptr(), &mut st) != 0 {
            return None;
        }
        st.f_type as i64
    };
    Some(
        match magic {
            0xEF53 => "ext4",
            0x5846_5342 => "xfs",
            0x9123_683E => "btrfs",
            TMPFS_MAGIC => "tmpfs",
            0x794C_7630 => "overlayfs",
            0x6969 => "nfs",
            0x0102_1997 => "9p",
            0x6573_5546 => "fuse",
            0x858458F6 => "ramfs",
            _ => return Some(format!("fs magic {magic:#x}")),
        }
        .to_string(),
    )
}

/// Bytes free for an unprivileged writer in the file system of `dir`.
pub fn free_bytes(dir: &Path) -> Option<u64> {
    let c = CString::new(dir.as_os_str().as_encoded_bytes()).ok()?;
    // SAFETY: statvfs fills the zeroed struct we pass.
    unsafe {
        let mut st: libc::statvfs = std::mem::zeroed();
        if libc::statvfs(c.as_ptr(), &mut st) != 0 {
            return None;
        }
        Some(st.f_bavail as u64 * st.f_frsize as u64)
    }
}
