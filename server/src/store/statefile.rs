//! The state folder and the files in it (`results.jsonl`, `labs.jsonl`, the
//! rejected lines, the archives), opened so that nobody else's file can stand
//! in for them.
//!
//! The folder may be shared (a lab machine, a checkout several users can
//! write to), and the server may run as root. So the folder itself must be a
//! real folder owned by the server's effective user, every file is opened with
//! `O_NOFOLLOW` (a planted symbolic link is refused, never followed) and
//! `O_NONBLOCK` (a planted FIFO cannot hang the server), then `fstat`ed: only a
//! regular file owned by the server's effective user is used. Files the server
//! creates are 0600, so a copy of its lines (the rejected lines, an archive) is
//! never more readable than what it came from. Reads are capped.
//!
//! The folder is checked once and then held: [`prepare_dir`] opens it
//! `O_DIRECTORY | O_NOFOLLOW`, checks the descriptor's owner, and keeps it for
//! the life of the process; every file under it is then opened, created,
//! renamed, linked and removed relative to that descriptor (`openat`,
//! `renameat`, ...), never by a path walked again. A folder renamed away and
//! replaced by a link after start therefore redirects nothing: the server goes
//! on using the folder it checked.
//!
//! A save that fails is typed ([`SaveError`], from the errno, never from an
//! error's wording) for the page, and [`SaveStatus`] remembers whether saving
//! works, for `/api/health` and the log.

use std::fs::{File, OpenOptions};
use std::io::Read;
use std::os::fd::OwnedFd;
use std::os::unix::fs::{DirBuilderExt, FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use rustix::fs::{AtFlags, Mode, OFlags};

use serde::Serialize;

/// Most bytes read from one state file at once: the history is rotated long
/// before this, so a bigger file was not written by pipebook.
pub(crate) const MAX_STATE_READ: u64 = 256 << 20;

/// Mode of every file the server creates in its state folder.
const FILE_MODE: u32 = 0o600;

/// Mode of a state folder the server creates.
const FOLDER_MODE: u32 = 0o700;

/// Why a state file or the state folder cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum StateError {
    /// The state folder is a symbolic link.
    #[error(
        "the state folder {} is a symbolic link: another user could point it anywhere; \
         give the real folder with --state-dir",
        path.display()
    )]
    FolderIsLink {
        /// The folder.
        path: PathBuf,
    },
    /// The state folder's path names something else than a folder.
    #[error(
        "the state folder {} is not a folder: choose another --state-dir",
        path.display()
    )]
    FolderNotDir {
        /// The path.
        path: PathBuf,
    },
    /// The state folder belongs to another user.
    #[error(
        "the state folder {} belongs to uid {owner}, not to this server's user (uid {euid}): \
         its owner could replace the files in it; choose a folder of your own with --state-dir",
        path.display()
    )]
    FolderForeign {
        /// The folder.
        path: PathBuf,
        /// Its owner.
        owner: u32,
        /// This server's effective user.
        euid: u32,
    },
    /// A state file is a symbolic link.
    #[error(
        "{} is a symbolic link: pipebook keeps its state only in regular files of its own, \
         so it does not follow it; remove the link, or choose another --state-dir",
        path.display()
    )]
    FileIsLink {
        /// The file.
        path: PathBuf,
    },
    /// A state file is a folder, FIFO, socket or device.
    #[error(
        "{} is a {what}, not a regular file: move it away, or choose another --state-dir",
        path.display()
    )]
    NotRegular {
        /// The path.
        path: PathBuf,
        /// What it is.
        what: &'static str,
    },
    /// A state file belongs to another user.
    #[error(
        "{} belongs to uid {owner}, not to this server's user (uid {euid}): pipebook did not \
         write it; move it away, or choose another --state-dir",
        path.display()
    )]
    Foreign {
        /// The file.
        path: PathBuf,
        /// Its owner.
        owner: u32,
        /// This server's effective user.
        euid: u32,
    },
    /// A state file is larger than pipebook ever writes one.
    #[error(
        "{} is larger than {} MiB, more than pipebook writes: move it aside",
        path.display(),
        limit >> 20
    )]
    TooLarge {
        /// The file.
        path: PathBuf,
        /// The cap, bytes.
        limit: u64,
    },
    /// A file operation failed.
    #[error("{action} {}", path.display())]
    Io {
        /// What was being done.
        action: &'static str,
        /// On which path.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
}

impl StateError {
    /// Whether this refuses a file or folder someone else may have put there
    /// (as opposed to an I/O failure).
    pub(crate) fn is_refusal(&self) -> bool {
        !matches!(self, StateError::Io { .. })
    }
}

/// A closure turning an I/O error into [`StateError::Io`] about `path`.
pub(crate) fn io(action: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> StateError {
    let path = path.to_path_buf();
    move |source| StateError::Io {
        action,
        path,
        source,
    }
}

fn euid() -> u32 {
    rustix::process::geteuid().as_raw()
}

/// The state folders this process checked, each held open for its life (a
/// few per process: one per server, or per test's server).
static HELD: Mutex<Vec<(PathBuf, Arc<OwnedFd>)>> = Mutex::new(Vec::new());

/// The held descriptor of `dir`, if [`prepare_dir`] checked it.
fn held(dir: &Path) -> Option<Arc<OwnedFd>> {
    let held = HELD.lock().unwrap_or_else(|e| e.into_inner());
    held.iter()
        .find(|(path, _)| path == dir)
        .map(|(_, fd)| Arc::clone(fd))
}

/// A state file as its held folder and its name, when its folder is held.
fn split(path: &Path) -> Option<(Arc<OwnedFd>, &std::ffi::OsStr)> {
    let (dir, name) = (path.parent()?, path.file_name()?);
    Some((held(dir)?, name))
}

/// Opens `dir` without following a link, checks the descriptor is a folder
/// of ours, and holds it (once: the first check stands).
fn hold(dir: &Path) -> Result<(), StateError> {
    if held(dir).is_some() {
        return Ok(());
    }
    let fd = rustix::fs::open(
        dir,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(|errno| match errno {
        rustix::io::Errno::LOOP => StateError::FolderIsLink {
            path: dir.to_path_buf(),
        },
        rustix::io::Errno::NOTDIR => StateError::FolderNotDir {
            path: dir.to_path_buf(),
        },
        errno => io("cannot open", dir)(errno.into()),
    })?;
    let st = rustix::fs::fstat(&fd).map_err(|e| io("cannot inspect", dir)(e.into()))?;
    if st.st_uid != euid() {
        return Err(StateError::FolderForeign {
            path: dir.to_path_buf(),
            owner: st.st_uid,
            euid: euid(),
        });
    }
    let mut held = HELD.lock().unwrap_or_else(|e| e.into_inner());
    held.push((dir.to_path_buf(), Arc::new(fd)));
    Ok(())
}

/// Creates the state folder (0700) if it is missing, then checks it is a real
/// folder owned by this process's effective user, and holds it open: from
/// then on its files are reached through that descriptor only. Once held, it
/// is not walked again (a path swapped for a link later changes nothing).
pub(crate) fn prepare_dir(dir: &Path) -> Result<(), StateError> {
    if held(dir).is_some() {
        return Ok(());
    }
    match std::fs::symlink_metadata(dir) {
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(FOLDER_MODE)
                .create(dir)
                .map_err(io("cannot create", dir))?;
        }
        Err(err) => return Err(io("cannot inspect", dir)(err)),
        Ok(_) => {}
    }
    let meta = std::fs::symlink_metadata(dir).map_err(io("cannot inspect", dir))?;
    let path = dir.to_path_buf();
    if meta.file_type().is_symlink() {
        return Err(StateError::FolderIsLink { path });
    }
    if !meta.is_dir() {
        return Err(StateError::FolderNotDir { path });
    }
    if meta.uid() != euid() {
        return Err(StateError::FolderForeign {
            path,
            owner: meta.uid(),
            euid: euid(),
        });
    }
    hold(dir)
}

/// What a file that is not regular is, in words.
pub(crate) fn kind_of(file_type: std::fs::FileType) -> &'static str {
    if file_type.is_dir() {
        "folder"
    } else if file_type.is_fifo() {
        "FIFO"
    } else if file_type.is_socket() {
        "socket"
    } else if file_type.is_char_device() {
        "character device"
    } else if file_type.is_block_device() {
        "block device"
    } else if file_type.is_symlink() {
        "symbolic link"
    } else {
        "special file"
    }
}

/// Refuses what is not a regular file owned by this process's effective user.
fn check_meta(meta: &std::fs::Metadata, path: &Path) -> Result<(), StateError> {
    let file_type = meta.file_type();
    if file_type.is_symlink() {
        return Err(StateError::FileIsLink {
            path: path.to_path_buf(),
        });
    }
    if !file_type.is_file() {
        return Err(StateError::NotRegular {
            path: path.to_path_buf(),
            what: kind_of(file_type),
        });
    }
    if meta.uid() != euid() {
        return Err(StateError::Foreign {
            path: path.to_path_buf(),
            owner: meta.uid(),
            euid: euid(),
        });
    }
    Ok(())
}

/// Checks an open file (fstat: what was opened, not what the path names now).
fn check_open(file: &File, path: &Path) -> Result<(), StateError> {
    let meta = file.metadata().map_err(io("cannot inspect", path))?;
    check_meta(&meta, path)
}

/// Checks, without opening it, that `path` is absent or one of ours.
pub(crate) fn check_existing(path: &Path) -> Result<(), StateError> {
    if let Some((dir, name)) = split(path) {
        // Through the held folder: a regular file of ours, or nothing.
        return match rustix::fs::openat(&*dir, name, open_flags(OFlags::RDONLY), Mode::empty()) {
            Ok(fd) => check_open(&File::from(fd), path),
            Err(rustix::io::Errno::NOENT) => Ok(()),
            Err(rustix::io::Errno::LOOP) => Err(StateError::FileIsLink {
                path: path.to_path_buf(),
            }),
            Err(e) => Err(io("cannot inspect", path)(e.into())),
        };
    }
    match std::fs::symlink_metadata(path) {
        Ok(meta) => check_meta(&meta, path),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(err) => Err(io("cannot inspect", path)(err)),
    }
}

/// The flags every state file is opened with: a symbolic link fails (ELOOP)
/// instead of being followed, and opening a FIFO does not wait for a writer.
fn flags() -> i32 {
    libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC
}

/// [`flags`] with the access bits of one kind of open, for `openat`.
fn open_flags(access: OFlags) -> OFlags {
    access | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC
}

fn open_with(
    options: &mut OpenOptions,
    at: OFlags,
    action: &'static str,
    path: &Path,
) -> Result<File, StateError> {
    let opened = match split(path) {
        Some((dir, name)) => {
            rustix::fs::openat(&*dir, name, open_flags(at), Mode::from_raw_mode(FILE_MODE))
                .map(File::from)
                .map_err(std::io::Error::from)
        }
        None => options.custom_flags(flags()).open(path),
    };
    match opened {
        Ok(file) => {
            check_open(&file, path)?;
            Ok(file)
        }
        Err(err) if err.raw_os_error() == Some(libc::ELOOP) => Err(StateError::FileIsLink {
            path: path.to_path_buf(),
        }),
        Err(err) => Err(io(action, path)(err)),
    }
}

/// Removes the state file `path` (the name only: a link there is not followed).
pub(crate) fn remove(path: &Path) -> std::io::Result<()> {
    match split(path) {
        Some((dir, name)) => {
            rustix::fs::unlinkat(&*dir, name, AtFlags::empty()).map_err(Into::into)
        }
        None => std::fs::remove_file(path),
    }
}

/// Renames the state file `from` to `to`, both in one held folder.
pub(crate) fn rename(from: &Path, to: &Path) -> std::io::Result<()> {
    match (split(from), split(to)) {
        (Some((dir, a)), Some((_, b))) => {
            rustix::fs::renameat(&*dir, a, &*dir, b).map_err(Into::into)
        }
        _ => std::fs::rename(from, to),
    }
}

/// Gives the state file `from` a second name `to` (never following a link).
pub(crate) fn hard_link(from: &Path, to: &Path) -> std::io::Result<()> {
    match (split(from), split(to)) {
        (Some((dir, a)), Some((_, b))) => {
            rustix::fs::linkat(&*dir, a, &*dir, b, AtFlags::empty()).map_err(Into::into)
        }
        _ => std::fs::hard_link(from, to),
    }
}

/// The device and inode the name `path` stands for now (a link itself, not
/// what it points to), looked up through the held folder.
pub(crate) fn identity(path: &Path) -> std::io::Result<(u64, u64)> {
    match split(path) {
        Some((dir, name)) => rustix::fs::statat(&*dir, name, AtFlags::SYMLINK_NOFOLLOW)
            .map(|st| (st.st_dev, st.st_ino))
            .map_err(Into::into),
        None => std::fs::symlink_metadata(path).map(|m| (m.dev(), m.ino())),
    }
}

/// Syncs the state folder's entries (the held folder itself, when held).
pub(crate) fn sync_dir(dir: &Path) -> Result<(), StateError> {
    match held(dir) {
        Some(fd) => rustix::fs::fsync(&*fd).map_err(|e| io("cannot sync", dir)(e.into())),
        None => File::open(dir)
            .and_then(|d| d.sync_all())
            .map_err(io("cannot sync", dir)),
    }
}

/// `path` opened for appending and reading, created 0600 if missing.
pub(crate) fn open_append(path: &Path) -> Result<File, StateError> {
    open_with(
        OpenOptions::new()
            .read(true)
            .append(true)
            .create(true)
            .mode(FILE_MODE),
        OFlags::RDWR | OFlags::APPEND | OFlags::CREATE,
        "cannot open",
        path,
    )
}

/// `path` opened for reading, or `None` if there is no such file.
pub(crate) fn open_read(path: &Path) -> Result<Option<File>, StateError> {
    match open_with(
        OpenOptions::new().read(true),
        OFlags::RDONLY,
        "cannot read",
        path,
    ) {
        Ok(file) => Ok(Some(file)),
        Err(StateError::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
            Ok(None)
        }
        Err(err) => Err(err),
    }
}

/// A new file at `path` (0600), which must not exist yet, not even as a link.
pub(crate) fn create_new(path: &Path) -> Result<File, StateError> {
    open_with(
        OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(FILE_MODE),
        OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL,
        "cannot create",
        path,
    )
}

/// The rest of `file` from where it stands, at most [`MAX_STATE_READ`] bytes.
pub(crate) fn read_capped(file: &File, path: &Path) -> Result<Vec<u8>, StateError> {
    let mut bytes = Vec::new();
    file.take(MAX_STATE_READ + 1)
        .read_to_end(&mut bytes)
        .map_err(io("cannot read", path))?;
    if bytes.len() as u64 > MAX_STATE_READ {
        return Err(StateError::TooLarge {
            path: path.to_path_buf(),
            limit: MAX_STATE_READ,
        });
    }
    Ok(bytes)
}

/// The whole of `path` (empty if there is none), checked and capped.
pub(crate) fn read_all(path: &Path) -> Result<Vec<u8>, StateError> {
    match open_read(path)? {
        Some(file) => read_capped(&file, path),
        None => Ok(Vec::new()),
    }
}

/// Why a result or lab record is not on disk, typed for the page.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum SaveErrorKind {
    /// Not meant for the history (a profiled run: its ends were paused).
    NotKept,
    /// The disk is full (ENOSPC).
    NoSpace,
    /// The user's disk quota is used up (EDQUOT).
    Quota,
    /// The state folder or file cannot be written (EROFS, EACCES, EPERM).
    ReadOnly,
    /// A state file or the folder is not one the server may use (a symbolic
    /// link, another user's file, not a regular file).
    UnsafeFile,
    /// Anything else.
    Failed,
    /// A search's best this runner refuses to run (the planner said no): not
    /// offered, so not kept either.
    NotRunnable,
}

/// Why something was not saved: its kind, and a sentence for the page.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct SaveError {
    /// What kind of failure.
    pub(crate) kind: SaveErrorKind,
    /// What happened, with the path and the system's reason.
    pub(crate) message: String,
}

impl SaveError {
    /// A failed save, typed by its state error (a refusal, or the errno of
    /// an I/O failure); `what` opens the sentence, e.g. "the result was not
    /// saved".
    pub(crate) fn from_error(what: &str, err: &StateError) -> SaveError {
        let kind = match err {
            refused if refused.is_refusal() => SaveErrorKind::UnsafeFile,
            StateError::Io { source, .. } => match source.raw_os_error() {
                Some(libc::ENOSPC) => SaveErrorKind::NoSpace,
                Some(libc::EDQUOT) => SaveErrorKind::Quota,
                Some(libc::EROFS | libc::EACCES | libc::EPERM) => SaveErrorKind::ReadOnly,
                _ => SaveErrorKind::Failed,
            },
            _ => SaveErrorKind::Failed,
        };
        SaveError {
            kind,
            message: format!("{what}: {}", crate::error_chain(err)),
        }
    }
}

/// Whether saving works, as the latest save (or the start-up probe) found.
#[derive(Debug, Default)]
pub(crate) struct SaveStatus {
    problem: Mutex<Option<SaveError>>,
}

impl SaveStatus {
    /// Records a save's outcome; says so in the log when saving stops or
    /// starts working again.
    pub(crate) fn record(&self, outcome: Result<(), &SaveError>) {
        let mut problem = self.problem.lock().unwrap_or_else(|e| e.into_inner());
        match (problem.as_ref(), outcome) {
            (Some(_), Ok(())) => {
                tracing::info!("saving works again: results and lab records are kept");
                *problem = None;
            }
            (None, Ok(())) => {}
            (before, Err(err)) => {
                if before != Some(err) {
                    tracing::warn!("saving is off: {}", err.message);
                }
                *problem = Some(err.clone());
            }
        }
    }

    /// Why saving does not work now, if it does not.
    pub(crate) fn problem(&self) -> Option<SaveError> {
        self.problem
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A full disk and a read-only folder are tested on real file systems
    /// (`tests/it/state_files.rs`); a quota needs one mounted with quotas and
    /// limits set, so its errno is checked here, beside the others.
    #[test]
    fn a_failed_save_is_typed_by_its_errno() {
        let io = |errno: i32| StateError::Io {
            action: "cannot write",
            path: PathBuf::from("results.jsonl"),
            source: std::io::Error::from_raw_os_error(errno),
        };
        for (errno, kind) in [
            (libc::ENOSPC, SaveErrorKind::NoSpace),
            (libc::EDQUOT, SaveErrorKind::Quota),
            (libc::EROFS, SaveErrorKind::ReadOnly),
            (libc::EACCES, SaveErrorKind::ReadOnly),
            (libc::EIO, SaveErrorKind::Failed),
        ] {
            let err = SaveError::from_error("the result was not saved", &io(errno));
            assert_eq!(err.kind, kind, "errno {errno}");
            assert!(
                err.message.starts_with("the result was not saved: "),
                "{}",
                err.message
            );
        }
    }

    #[test]
    fn links_fifos_and_folders_are_refused_and_new_files_are_private() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("target");
        std::fs::write(&target, b"secret\n").unwrap();
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        assert!(matches!(
            open_append(&link),
            Err(StateError::FileIsLink { .. })
        ));
        assert!(matches!(
            open_read(&link),
            Err(StateError::FileIsLink { .. })
        ));
        assert_eq!(std::fs::read(&target).unwrap(), b"secret\n");
        let fifo = dir.path().join("fifo");
        rustix::fs::mkfifoat(
            rustix::fs::CWD,
            &fifo,
            rustix::fs::Mode::from_raw_mode(0o600),
        )
        .unwrap();
        // Refused at once: opening does not wait for a writer.
        assert!(matches!(
            open_read(&fifo),
            Err(StateError::NotRegular { what: "FIFO", .. })
        ));
        assert!(matches!(
            open_append(dir.path()),
            Err(StateError::Io { .. }) | Err(StateError::NotRegular { .. })
        ));
        let fresh = dir.path().join("fresh");
        let file = open_append(&fresh).unwrap();
        assert_eq!(file.metadata().unwrap().mode() & 0o777, FILE_MODE);
        assert!(matches!(create_new(&fresh), Err(StateError::Io { .. })));
        assert!(open_read(&dir.path().join("absent")).unwrap().is_none());
    }

    #[test]
    fn save_errors_are_typed_by_errno() {
        let err = io("cannot append to", Path::new("/x"))(std::io::Error::from_raw_os_error(
            libc::ENOSPC,
        ));
        assert_eq!(
            SaveError::from_error("x", &err).kind,
            SaveErrorKind::NoSpace
        );
        let err =
            io("cannot open", Path::new("/x"))(std::io::Error::from_raw_os_error(libc::EROFS));
        assert_eq!(
            SaveError::from_error("x", &err).kind,
            SaveErrorKind::ReadOnly
        );
        let err = StateError::FileIsLink { path: "/x".into() };
        let saved = SaveError::from_error("not saved", &err);
        assert_eq!(saved.kind, SaveErrorKind::UnsafeFile);
        assert!(
            saved
                .message
                .starts_with("not saved: /x is a symbolic link"),
            "{}",
            saved.message
        );
    }
}
