//! Private run folders: the one place where a run keeps what needs a name.
//!
//! The machine may be shared and the runner may be root, so nothing a run makes
//! may sit at a name another user can guess or plant first. A run that needs a
//! named file, a FIFO, perf data or a note of a kernel object makes one folder of
//! its own with [`RunDir::create`]: `pipebook-run-` and 32 random hex digits,
//! made by mkdir (which fails if the name exists: a folder is never reused),
//! mode 0700, in a [`Base`] that no other user can rearrange. Everything inside
//! is made relative to the folder's descriptor with O_CREAT|O_EXCL|O_NOFOLLOW.
//!
//! Liveness: the process that made a folder holds an exclusive `flock` on the
//! folder itself until it removes it. A pid can be reused; a lock dies with its
//! process. [`remove_dead`] therefore removes exactly the folders that carry our prefix,
//! are real directories (not symlinks) owned by our effective uid, and whose lock
//! it can take; and with each, the named kernel objects that dead run noted in it
//! ([`NamedObject`]), each checked again against its owner and creation time first.
//! Never by name alone.

use std::ffi::{CStr, CString};
use std::fs::File;
use std::io;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};

use rustix::fs::{AtFlags, FileType, FlockOperation, Mode, OFlags};

/// The prefix of every run folder's name.
pub const PREFIX: &str = "pipebook-run-";

/// The prefix of every POSIX shared memory name (`/pipebook-<hex>`).
pub(crate) const SHM_PREFIX: &str = "pipebook-";

/// How often [`RunDir::create`] tries a fresh name before giving up. A clash of
/// 128 random bits does not happen; another process removing dead folders taking a half-made one can,
/// rarely, and then the next name is made.
const ATTEMPTS: usize = 16;

/// Why a folder cannot hold private files.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unsafe {
    /// It (or a folder on its path) is not a directory.
    NotADirectory,
    /// It is a symbolic link: what is made there would land where it points.
    Link,
    /// It (or a folder on its path) belongs to another user than us or root,
    /// who could rename what we make there.
    OwnedByOther {
        /// The owner's uid.
        uid: u32,
    },
    /// It (or a folder on its path) is writable by others without the sticky
    /// bit, so they could rename or replace what we make there.
    WritableByOthers {
        /// Its permission bits.
        mode: u32,
    },
}

impl std::fmt::Display for Unsafe {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Unsafe::NotADirectory => write!(f, "not a directory"),
            Unsafe::Link => write!(
                f,
                "a symbolic link, which would lead what is made there somewhere else"
            ),
            Unsafe::OwnedByOther { uid } => {
                write!(f, "owned by uid {uid}, who could rename what is made there")
            }
            Unsafe::WritableByOthers { mode } => write!(
                f,
                "mode {mode:04o}: others may write there and the sticky bit is not set"
            ),
        }
    }
}

/// Why a run folder could not be made or used.
#[derive(Debug, thiserror::Error)]
pub enum RunDirError {
    /// The base (or a folder on its path) is not safe for private files.
    #[error("{} cannot hold private run files: {why}", path.display())]
    Unsafe {
        /// The folder at fault.
        path: PathBuf,
        /// What is wrong with it.
        why: Unsafe,
    },
    /// A system call failed.
    #[error("cannot {what} {}: {source}", path.display())]
    Io {
        /// What was being done.
        what: &'static str,
        /// On what.
        path: PathBuf,
        /// The error.
        #[source]
        source: io::Error,
    },
}

fn io_err(what: &'static str, path: &Path) -> impl FnOnce(rustix::io::Errno) -> RunDirError {
    let path = path.to_path_buf();
    move |e| RunDirError::Io {
        what,
        path,
        source: e.into(),
    }
}

fn euid() -> u32 {
    rustix::process::geteuid().as_raw()
}

/// A folder in which run folders are made: checked to be one no other user can
/// rearrange (every folder on its path a real directory owned by us or root, and
/// writable by others only with the sticky bit, as `/tmp` is).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Base {
    path: PathBuf,
}

impl Base {
    /// `path` as a base, if it is safe (symlinks on the way are resolved first,
    /// and what they lead to is checked).
    pub fn at(path: &Path) -> Result<Base, RunDirError> {
        let real = path.canonicalize().map_err(|source| RunDirError::Io {
            what: "find",
            path: path.to_path_buf(),
            source,
        })?;
        for dir in real.ancestors() {
            check_folder(dir)?;
        }
        Ok(Base { path: real })
    }

    /// A base the caller chose (`pipebench ipc --dir`): made if missing, then
    /// checked like any other.
    pub fn chosen(path: &Path) -> Result<Base, RunDirError> {
        std::fs::create_dir_all(path).map_err(|source| RunDirError::Io {
            what: "create",
            path: path.to_path_buf(),
            source,
        })?;
        Base::at(path)
    }

    /// Where a run's private folder goes when its file system does not matter:
    /// `$XDG_RUNTIME_DIR` when set and ours (a per-user folder no one else can
    /// enter), else the temporary folder (`$TMPDIR`, or `/tmp`).
    pub fn runtime() -> Result<Base, RunDirError> {
        if let Some(base) = xdg_runtime_dir() {
            return Ok(base);
        }
        Base::at(&std::env::temp_dir())
    }

    /// Where a run whose files must be on a disk goes by default (the IPC lab's
    /// file mechanisms: O_DIRECT and the page cache mean nothing on tmpfs): the
    /// temporary folder unless it is tmpfs, else `target/` under the current
    /// directory.
    pub fn disk() -> Result<Base, RunDirError> {
        Base::chosen(&disk_default())
    }

    /// The folder's path (symlinks resolved).
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn open(&self) -> Result<OwnedFd, RunDirError> {
        rustix::fs::open(
            &self.path,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(io_err("open", &self.path))
    }

    /// A new file with no name at all (O_TMPFILE) on this base's file system,
    /// readable and writable; `None` where the file system cannot make one.
    pub(crate) fn unnamed_file(&self) -> Result<Option<File>, RunDirError> {
        match rustix::fs::open(
            &self.path,
            OFlags::TMPFILE | OFlags::RDWR | OFlags::CLOEXEC,
            Mode::RUSR | Mode::WUSR,
        ) {
            Ok(fd) => Ok(Some(File::from(fd))),
            // Not supported by this file system (EOPNOTSUPP), or by this kernel
            // (EISDIR before 3.11; EINVAL where the flag is not known).
            Err(
                rustix::io::Errno::OPNOTSUPP | rustix::io::Errno::ISDIR | rustix::io::Errno::INVAL,
            ) => Ok(None),
            Err(e) => Err(io_err("create an unnamed file in", &self.path)(e)),
        }
    }
}

fn check_folder(dir: &Path) -> Result<(), RunDirError> {
    let st = rustix::fs::lstat(dir).map_err(io_err("inspect", dir))?;
    let at = |why| RunDirError::Unsafe {
        path: dir.to_path_buf(),
        why,
    };
    if FileType::from_raw_mode(st.st_mode) != FileType::Directory {
        return Err(at(Unsafe::NotADirectory));
    }
    if st.st_uid != euid() && st.st_uid != 0 {
        return Err(at(Unsafe::OwnedByOther { uid: st.st_uid }));
    }
    let mode = st.st_mode & 0o7777;
    if mode & 0o022 != 0 && mode & 0o1000 == 0 {
        return Err(at(Unsafe::WritableByOthers { mode }));
    }
    Ok(())
}

/// `$XDG_RUNTIME_DIR`, when it is set, safe, and ours (not merely root's).
fn xdg_runtime_dir() -> Option<Base> {
    let dir = std::env::var_os("XDG_RUNTIME_DIR").filter(|d| !d.is_empty())?;
    let base = Base::at(Path::new(&dir)).ok()?;
    let st = rustix::fs::stat(base.path()).ok()?;
    (st.st_uid == euid()).then_some(base)
}

/// The temporary folder unless it is tmpfs, else `target/` under the current
/// directory.
pub(crate) fn disk_default() -> PathBuf {
    let temp = std::env::temp_dir();
    if crate::process::filesystem::filesystem(&temp).as_deref() != Some("tmpfs") {
        return temp;
    }
    std::env::current_dir()
        .map(|d| d.join("target"))
        .unwrap_or(temp)
}

/// A run's private folder; dropping it removes the folder and all it holds.
#[derive(Debug)]
pub struct RunDir {
    base: OwnedFd,
    name: String,
    path: PathBuf,
    /// The folder, open and locked (exclusive flock) for as long as it lives.
    dir: OwnedFd,
    /// Put in place under another name ([`RunDir::publish`]): kept, not removed.
    published: bool,
}

fn random_hex() -> String {
    format!("{:032x}", rand::random::<u128>())
}

impl RunDir {
    /// Makes a fresh private folder in `base`.
    pub fn create(base: &Base) -> Result<RunDir, RunDirError> {
        let base_fd = base.open()?;
        for _ in 0..ATTEMPTS {
            let name = format!("{PREFIX}{}", random_hex());
            let path = base.path.join(&name);
            match rustix::fs::mkdirat(&base_fd, name.as_str(), Mode::RWXU) {
                Ok(()) => {}
                Err(rustix::io::Errno::EXIST) => continue,
                Err(e) => return Err(io_err("create a folder in", &base.path)(e)),
            }
            let dir = match rustix::fs::openat(
                &base_fd,
                name.as_str(),
                OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
                Mode::empty(),
            ) {
                Ok(dir) => dir,
                // Another process removing dead folders took it between mkdir and open: make another.
                Err(rustix::io::Errno::NOENT | rustix::io::Errno::LOOP) => continue,
                Err(e) => return Err(io_err("open", &path)(e)),
            };
            match rustix::fs::flock(&dir, FlockOperation::NonBlockingLockExclusive) {
                Ok(()) => {}
                // Another process removing dead folders holds it (and will remove it): make another.
                Err(rustix::io::Errno::WOULDBLOCK) => continue,
                Err(e) => return Err(io_err("lock", &path)(e)),
            }
            let st = rustix::fs::fstat(&dir).map_err(io_err("inspect", &path))?;
            // Removed as dead by another process before our lock: the folder is gone.
            if st.st_nlink == 0 {
                continue;
            }
            if st.st_uid != euid() {
                return Err(RunDirError::Unsafe {
                    path,
                    why: Unsafe::OwnedByOther { uid: st.st_uid },
                });
            }
            // The umask may have taken bits away; none may be added.
            rustix::fs::fchmod(&dir, Mode::RWXU).map_err(io_err("set the mode of", &path))?;
            return Ok(RunDir {
                base: base_fd,
                name,
                path,
                dir,
                published: false,
            });
        }
        Err(RunDirError::Io {
            what: "make a private folder in",
            path: base.path.clone(),
            source: io::Error::from(io::ErrorKind::AlreadyExists),
        })
    }

    /// The folder's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Creates the file `name` in the folder (exclusively, never through a
    /// symlink, mode 0600), open for reading and writing.
    pub(crate) fn create_file(&self, name: &str) -> Result<File, RunDirError> {
        rustix::fs::openat(
            &self.dir,
            name,
            OFlags::RDWR | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::RUSR | Mode::WUSR,
        )
        .map(File::from)
        .map_err(io_err("create", &self.path.join(name)))
    }

    /// Makes a FIFO `name` in the folder (mode 0600) and returns its path.
    pub(crate) fn create_fifo(&self, name: &str) -> Result<PathBuf, RunDirError> {
        let path = self.path.join(name);
        rustix::fs::mknodat(&self.dir, name, FileType::Fifo, Mode::RUSR | Mode::WUSR, 0)
            .map_err(io_err("create the FIFO", &path))?;
        Ok(path)
    }

    /// Removes the entry `name` (never what a symlink points to).
    pub fn remove(&self, name: &str) -> Result<(), RunDirError> {
        rustix::fs::unlinkat(&self.dir, name, AtFlags::empty())
            .map_err(io_err("remove", &self.path.join(name)))
    }

    /// Notes a named kernel object in the folder, so that a later removal of dead runs can remove it
    /// if this process dies before it does.
    pub(crate) fn record(&self, record: &NamedObject) -> Result<(), RunDirError> {
        self.create_file(&record.file_name()).map(drop)
    }

    /// Forgets a note made with [`RunDir::record`] (the object is gone).
    pub(crate) fn forget(&self, record: &NamedObject) {
        let _ = self.remove(&record.file_name());
    }

    /// How many entries the folder holds.
    pub fn len(&self) -> usize {
        names(&self.dir).len()
    }

    /// Whether the folder is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl RunDir {
    /// Puts the folder in place as `name` in its base, whole, in one rename (a
    /// build made privately, then published): an existing `name` must be a real
    /// directory of ours (a link or another user's entry is refused, never
    /// followed); it is swapped out atomically (RENAME_EXCHANGE) and removed by
    /// descriptor, links inside removed and never followed. The folder keeps
    /// its mode 0700. Returns the published path.
    pub fn publish(mut self, name: &str) -> Result<PathBuf, RunDirError> {
        let parent = self.path.parent().unwrap_or(Path::new("/")).to_path_buf();
        let target = parent.join(name);
        let unsafe_at = |why| RunDirError::Unsafe {
            path: target.clone(),
            why,
        };
        let flags = match rustix::fs::statat(&self.base, name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(st) => {
                match FileType::from_raw_mode(st.st_mode) {
                    FileType::Directory => {}
                    FileType::Symlink => return Err(unsafe_at(Unsafe::Link)),
                    _ => return Err(unsafe_at(Unsafe::NotADirectory)),
                }
                if st.st_uid != euid() {
                    return Err(unsafe_at(Unsafe::OwnedByOther { uid: st.st_uid }));
                }
                rustix::fs::RenameFlags::EXCHANGE
            }
            Err(rustix::io::Errno::NOENT) => rustix::fs::RenameFlags::NOREPLACE,
            Err(e) => return Err(io_err("inspect", &target)(e)),
        };
        rustix::fs::renameat_with(&self.base, self.name.as_str(), &self.base, name, flags)
            .map_err(io_err("put in place", &target))?;
        self.published = true;
        if flags == rustix::fs::RenameFlags::EXCHANGE {
            // The old folder now has our private name: remove it if it is
            // still the real directory of ours just checked.
            if let Ok(old) = rustix::fs::openat(
                &self.base,
                self.name.as_str(),
                OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
                Mode::empty(),
            ) {
                if rustix::fs::fstat(&old).is_ok_and(|st| st.st_uid == euid()) {
                    clear(&old);
                    let _ =
                        rustix::fs::unlinkat(&self.base, self.name.as_str(), AtFlags::REMOVEDIR);
                }
            }
        }
        Ok(target)
    }
}

impl Drop for RunDir {
    fn drop(&mut self) {
        if self.published {
            return;
        }
        clear(&self.dir);
        let _ = rustix::fs::unlinkat(&self.base, self.name.as_str(), AtFlags::REMOVEDIR);
        // Closing `dir` (after this) releases the lock.
    }
}

/// The names in the folder open at `dir`, without `.` and `..`.
fn names(dir: &OwnedFd) -> Vec<CString> {
    let Ok(mut entries) = rustix::fs::Dir::read_from(dir) else {
        return Vec::new();
    };
    let mut found = Vec::new();
    while let Some(Ok(entry)) = entries.read() {
        let name = entry.file_name();
        if name != c"." && name != c".." {
            found.push(name.to_owned());
        }
    }
    found
}

/// Removes everything in the folder open at `dir`, depth first, by descriptor:
/// a symlink is removed, never followed.
fn clear(dir: &OwnedFd) {
    for name in names(dir) {
        let is_dir = rustix::fs::statat(dir, name.as_c_str(), AtFlags::SYMLINK_NOFOLLOW)
            .is_ok_and(|st| FileType::from_raw_mode(st.st_mode) == FileType::Directory);
        if is_dir {
            if let Ok(sub) = rustix::fs::openat(
                dir,
                name.as_c_str(),
                OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
                Mode::empty(),
            ) {
                clear(&sub);
            }
            let _ = rustix::fs::unlinkat(dir, name.as_c_str(), AtFlags::REMOVEDIR);
        } else {
            let _ = rustix::fs::unlinkat(dir, name.as_c_str(), AtFlags::empty());
        }
    }
}

// ---------------------------------------------------------------------------
// Records of named kernel objects

/// A named kernel object a run made, noted in its folder by the note's name
/// alone (an empty file): a System V queue or segment (IPC_PRIVATE, by id and
/// creation time), or a POSIX shared memory name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum NamedObject {
    /// A System V message queue.
    MsgQueue {
        /// msgget's id.
        id: i32,
        /// Its msg_ctime at creation.
        ctime: i64,
    },
    /// A System V shared memory segment.
    SysvShm {
        /// shmget's id.
        id: i32,
        /// Its shm_ctime at creation.
        ctime: i64,
    },
    /// A POSIX shared memory object, `/pipebook-<32 hex digits>`.
    PosixShm {
        /// The 32 hex digits.
        hex: String,
    },
}

/// What IPC_STAT says of a System V object: who made it, who owns it, under
/// which key, and when it was created (or last changed with IPC_SET).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct SysvStat {
    key: i32,
    uid: u32,
    cuid: u32,
    ctime: i64,
}

fn msg_stat(id: i32) -> Option<SysvStat> {
    // SAFETY: msgctl fills the zeroed struct we own.
    unsafe {
        let mut ds: libc::msqid_ds = std::mem::zeroed();
        if libc::msgctl(id, libc::IPC_STAT, &mut ds) != 0 {
            return None;
        }
        Some(SysvStat {
            key: ds.msg_perm.__key,
            uid: ds.msg_perm.uid,
            cuid: ds.msg_perm.cuid,
            ctime: ds.msg_ctime,
        })
    }
}

fn shm_stat(id: i32) -> Option<SysvStat> {
    // SAFETY: shmctl fills the zeroed struct we own.
    unsafe {
        let mut ds: libc::shmid_ds = std::mem::zeroed();
        if libc::shmctl(id, libc::IPC_STAT, &mut ds) != 0 {
            return None;
        }
        Some(SysvStat {
            key: ds.shm_perm.__key,
            uid: ds.shm_perm.uid,
            cuid: ds.shm_perm.cuid,
            ctime: ds.shm_ctime,
        })
    }
}

impl NamedObject {
    /// The record of queue `id`, which this process just created.
    pub(crate) fn msg_queue(id: i32) -> io::Result<NamedObject> {
        let st = msg_stat(id).ok_or_else(io::Error::last_os_error)?;
        Ok(NamedObject::MsgQueue {
            id,
            ctime: st.ctime,
        })
    }

    /// The record of segment `id`, which this process just created.
    pub(crate) fn sysv_shm(id: i32) -> io::Result<NamedObject> {
        let st = shm_stat(id).ok_or_else(io::Error::last_os_error)?;
        Ok(NamedObject::SysvShm {
            id,
            ctime: st.ctime,
        })
    }

    /// A fresh random POSIX shared memory name.
    pub(crate) fn posix_shm() -> NamedObject {
        NamedObject::PosixShm { hex: random_hex() }
    }

    /// The POSIX name (`/pipebook-<hex>`), for a [`NamedObject::PosixShm`].
    pub(crate) fn shm_name(&self) -> Option<CString> {
        match self {
            NamedObject::PosixShm { hex } => {
                Some(CString::new(format!("/{SHM_PREFIX}{hex}")).expect("no NUL"))
            }
            _ => None,
        }
    }

    fn file_name(&self) -> String {
        match self {
            NamedObject::MsgQueue { id, ctime } => format!("msg.{id}.{ctime}"),
            NamedObject::SysvShm { id, ctime } => format!("shm.{id}.{ctime}"),
            NamedObject::PosixShm { hex } => format!("posix.{hex}"),
        }
    }

    fn parse(name: &CStr) -> Option<NamedObject> {
        let name = name.to_str().ok()?;
        let (kind, rest) = name.split_once('.')?;
        let sysv = || -> Option<(i32, i64)> {
            let (id, ctime) = rest.split_once('.')?;
            Some((id.parse().ok()?, ctime.parse().ok()?))
        };
        match kind {
            "msg" => sysv().map(|(id, ctime)| NamedObject::MsgQueue { id, ctime }),
            "shm" => sysv().map(|(id, ctime)| NamedObject::SysvShm { id, ctime }),
            "posix"
                if rest.len() == 32
                    && rest
                        .bytes()
                        .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)) =>
            {
                Some(NamedObject::PosixShm {
                    hex: rest.to_string(),
                })
            }
            _ => None,
        }
    }

    /// Removes the object now, as its maker (no checks: the caller made it).
    pub(crate) fn remove(&self) {
        // SAFETY: IPC_RMID with a null buffer, and shm_unlink of a C string, only
        // remove the object.
        unsafe {
            match self {
                NamedObject::MsgQueue { id, .. } => {
                    libc::msgctl(*id, libc::IPC_RMID, std::ptr::null_mut());
                }
                NamedObject::SysvShm { id, .. } => {
                    libc::shmctl(*id, libc::IPC_RMID, std::ptr::null_mut());
                }
                NamedObject::PosixShm { .. } => {
                    let name = self.shm_name().expect("a POSIX record");
                    libc::shm_unlink(name.as_ptr());
                }
            }
        }
    }

    /// Whether the object still exists and is provably the one recorded: ours
    /// (owner and creator are our effective uid), and for System V, private
    /// (no key) and created at the recorded time.
    fn is_ours(&self) -> bool {
        let me = euid();
        let sysv_ok = |st: Option<SysvStat>, ctime: i64| {
            st.is_some_and(|st| {
                st.key == libc::IPC_PRIVATE && st.uid == me && st.cuid == me && st.ctime == ctime
            })
        };
        match self {
            NamedObject::MsgQueue { id, ctime } => sysv_ok(msg_stat(*id), *ctime),
            NamedObject::SysvShm { id, ctime } => sysv_ok(shm_stat(*id), *ctime),
            NamedObject::PosixShm { hex } => {
                let path = Path::new("/dev/shm").join(format!("{SHM_PREFIX}{hex}"));
                rustix::fs::lstat(&path).is_ok_and(|st| {
                    FileType::from_raw_mode(st.st_mode) == FileType::RegularFile && st.st_uid == me
                })
            }
        }
    }
}

// ---------------------------------------------------------------------------
// Removing what dead runs left

/// What a [`remove_dead`] removed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Removed {
    /// Run folders of dead runs.
    pub folders: usize,
    /// Kernel objects those runs had noted.
    pub objects: usize,
}

/// Removes what dead runs of this user left: in each of the usual bases
/// (`$XDG_RUNTIME_DIR` when ours, the temporary folder, the disk default) and
/// each of `extra`, every run folder that is ours and unlocked, with the kernel
/// objects noted in it that are provably ours. A base that is not safe is
/// skipped (no run folder is ever made there either).
pub fn remove_dead(extra: &[&Path]) -> Removed {
    let mut bases: Vec<Base> = Vec::new();
    let mut candidates: Vec<PathBuf> = vec![std::env::temp_dir(), disk_default()];
    candidates.extend(extra.iter().map(|p| p.to_path_buf()));
    bases.extend(xdg_runtime_dir());
    for path in candidates {
        if let Ok(base) = Base::at(&path) {
            if !bases.contains(&base) {
                bases.push(base);
            }
        }
    }
    let mut removed = Removed::default();
    for base in &bases {
        let one = remove_dead_in(base);
        removed.folders += one.folders;
        removed.objects += one.objects;
    }
    removed
}

/// [`remove_dead`] of one base.
pub fn remove_dead_in(base: &Base) -> Removed {
    let mut removed = Removed::default();
    let Ok(base_fd) = base.open() else {
        return removed;
    };
    let me = euid();
    for name in names(&base_fd) {
        if !name.to_bytes().starts_with(PREFIX.as_bytes()) {
            continue;
        }
        // A real directory of ours: never a symlink, never another user's.
        let Ok(seen) = rustix::fs::statat(&base_fd, name.as_c_str(), AtFlags::SYMLINK_NOFOLLOW)
        else {
            continue;
        };
        if FileType::from_raw_mode(seen.st_mode) != FileType::Directory || seen.st_uid != me {
            continue;
        }
        let Ok(dir) = rustix::fs::openat(
            &base_fd,
            name.as_c_str(),
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::empty(),
        ) else {
            continue;
        };
        let Ok(opened) = rustix::fs::fstat(&dir) else {
            continue;
        };
        if (opened.st_dev, opened.st_ino) != (seen.st_dev, seen.st_ino) || opened.st_uid != me {
            continue;
        }
        // Held: its run is alive. Taken: its run is dead (or this removal beat a
        // maker between mkdir and lock, which then makes another).
        if rustix::fs::flock(&dir, FlockOperation::NonBlockingLockExclusive).is_err() {
            continue;
        }
        for entry in names(&dir) {
            if let Some(record) = NamedObject::parse(&entry) {
                if record.is_ours() {
                    record.remove();
                    removed.objects += 1;
                }
            }
        }
        clear(&dir);
        if rustix::fs::unlinkat(&base_fd, name.as_c_str(), AtFlags::REMOVEDIR).is_ok() {
            removed.folders += 1;
        }
    }
    removed
}

#[cfg(test)]
mod tests;
