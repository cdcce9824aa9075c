//! Append-only JSON-lines files shared by several servers: one exclusive
//! `flock` per write, `O_APPEND`, one `write_all`, fsync (and the directory's
//! fsync when the file is new). A save that died mid-line leaves a torn last
//! line; the next append ends it with a newline first, and readers skip a last
//! line without its newline. A save that fails (a full disk) is cut back to
//! where it started, so it leaves no torn line behind. The results history and
//! the lab records use it; every file is opened through [`crate::store::statefile`]
//! (no symbolic links, regular files of the server's own user only, 0600).
//!
//! A file may be replaced while someone waits for its lock (the history rotates
//! its file by renaming a shorter one over it): [`open_locked`] checks, once it
//! holds the lock, that the path still names the file it locked, and otherwise
//! starts again on the new one, so no line goes to a file nobody reads.

use std::fs::File;
use std::io::Write;
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::Path;

use rustix::fs::{flock, FlockOperation};

use crate::store::statefile::{self, io, StateError};

/// `path` opened for appending (and reading its last byte), under an exclusive
/// lock released when the file is closed; always the file `path` names once the
/// lock is held, even if it was replaced meanwhile.
pub(crate) fn open_locked(path: &Path) -> Result<File, StateError> {
    loop {
        let file = statefile::open_append(path)?;
        flock(&file, FlockOperation::LockExclusive)
            .map_err(|errno| io("cannot lock", path)(errno.into()))?;
        let locked = file.metadata().map_err(io("cannot inspect", path))?;
        match statefile::identity(path) {
            Ok(now) if now == (locked.dev(), locked.ino()) => return Ok(file),
            // Replaced (or removed) while we waited: lock what the path names now.
            Ok(_) => continue,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => continue,
            Err(err) => return Err(io("cannot inspect", path)(err)),
        }
    }
}

/// Appends complete lines to `dir/name` under the lock, after ending a torn
/// last line, and makes them durable.
pub(crate) fn append(dir: &Path, name: &str, lines: &[u8]) -> Result<(), StateError> {
    let file = open_locked(&dir.join(name))?;
    append_locked(&file, dir, name, lines)
}

/// [`append`] to `file`, which the caller opened with [`open_locked`] for
/// `dir/name` and keeps locked for what it does next.
pub(crate) fn append_locked(
    file: &File,
    dir: &Path,
    name: &str,
    lines: &[u8],
) -> Result<(), StateError> {
    let path = dir.join(name);
    let len = file.metadata().map_err(io("cannot inspect", &path))?.len();
    let mut last = [b'\n'];
    if len > 0 {
        file.read_exact_at(&mut last, len - 1)
            .map_err(io("cannot read", &path))?;
    }
    let mut bytes = Vec::with_capacity(lines.len() + 1);
    if last[0] != b'\n' {
        // A save died mid-line: end that line so it cannot swallow this one.
        bytes.push(b'\n');
    }
    bytes.extend_from_slice(lines);
    let mut writer = file;
    let written = writer
        .write_all(&bytes)
        .map_err(io("cannot append to", &path))
        .and_then(|()| file.sync_all().map_err(io("cannot sync", &path)));
    if let Err(err) = written {
        // A full disk may take part of the line: cut it back (we hold the
        // lock), so the file does not end in a torn line of this failed save.
        if let Err(cut) = file.set_len(len) {
            tracing::warn!(
                "cannot cut {} back after a failed save: {cut}",
                path.display()
            );
        }
        return Err(err);
    }
    if len == 0 {
        // A new file lives in the directory: sync it, or a power cut may lose it.
        sync_dir(dir)?;
    }
    Ok(())
}

/// Syncs a directory's entries.
pub(crate) fn sync_dir(dir: &Path) -> Result<(), StateError> {
    statefile::sync_dir(dir)
}

/// The complete lines of `bytes` (a file's content) and whether a torn line
/// without its newline follows them.
pub(crate) fn complete_lines(bytes: &[u8]) -> (impl Iterator<Item = &[u8]>, bool) {
    let complete = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    let lines = bytes[..complete]
        .split(|&b| b == b'\n')
        .filter(|line| !line.iter().all(u8::is_ascii_whitespace));
    (lines, complete < bytes.len())
}

/// Now, in Unix ms: the time stamp every state file's lines and names carry.
pub(crate) fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}
