//! What one run of the lab creates (files with no name, a private folder, a
//! FIFO, kernel objects), owned so that dropping it removes all of it, and where
//! those files go.

use std::fs::File;
use std::os::fd::FromRawFd;
use std::path::{Path, PathBuf};

use super::{IpcError, MechanismInfo};
use crate::process::rundir::{Base, NamedObject, RunDir, RunDirError};

// ---------------------------------------------------------------------------
// Resources

/// A named thing the harness removes as soon as both ends hold it.
#[derive(Debug)]
enum Early {
    /// An entry of the run's private folder (a FIFO, a shared file).
    Entry(String),
    /// A kernel object noted in the folder (a POSIX name, a System V segment).
    Object(NamedObject),
}

impl From<RunDirError> for IpcError {
    fn from(err: RunDirError) -> Self {
        match err {
            RunDirError::Unsafe { path, why } => IpcError::UnsafeDir {
                dir: path.display().to_string(),
                why,
            },
            RunDirError::Io { what, path, source } => IpcError::Setup {
                what: format!("{what} {}", path.display()),
                source,
            },
        }
    }
}

/// Everything one run created; dropping it removes all of it.
#[derive(Debug)]
pub(crate) struct Resources {
    /// Where the run's folder and unnamed files go.
    base: Base,
    /// The run's private folder, made when something needs a name.
    run: Option<RunDir>,
    /// Removed once both ends hold them (or when the run ends).
    early: Vec<Early>,
    /// Removed when the run ends: message queues.
    late: Vec<NamedObject>,
}

impl Resources {
    pub(crate) fn new(base: Base) -> Resources {
        Resources {
            base,
            run: None,
            early: Vec::new(),
            late: Vec::new(),
        }
    }

    /// The run's private folder, made on first use.
    pub(crate) fn run_dir(&mut self) -> Result<&RunDir, IpcError> {
        if self.run.is_none() {
            self.run = Some(RunDir::create(&self.base)?);
        }
        Ok(self.run.as_ref().expect("made above"))
    }

    /// A file with no name on the base's file system: O_TMPFILE, or, where the
    /// file system has none, made in the private folder and unlinked at once.
    pub(crate) fn unnamed_file(&mut self, what: &str) -> Result<File, IpcError> {
        if let Some(file) = self.base.unnamed_file()? {
            return Ok(file);
        }
        let run = self.run_dir()?;
        let file = run.create_file(what)?;
        run.remove(what)?;
        Ok(file)
    }

    /// A FIFO in the private folder, unlinked once both ends have opened it.
    pub(crate) fn fifo(&mut self, name: &str) -> Result<PathBuf, IpcError> {
        let path = self.run_dir()?.create_fifo(name)?;
        self.early.push(Early::Entry(name.to_string()));
        Ok(path)
    }

    /// A file of `size` bytes in the private folder, which both ends open by
    /// path; unlinked once both have.
    pub(crate) fn shared_file(&mut self, name: &str, size: u64) -> Result<PathBuf, IpcError> {
        let run = self.run_dir()?;
        let path = run.path().join(name);
        let file = run.create_file(name)?;
        self.early.push(Early::Entry(name.to_string()));
        file.set_len(size)
            .map_err(setup_err(format!("size {}", path.display())))?;
        Ok(path)
    }

    /// A POSIX shared memory object of `size` bytes under a fresh random name,
    /// noted in the private folder before it exists; returns the name.
    pub(crate) fn posix_shm(&mut self, size: u64) -> Result<String, IpcError> {
        let run = self.run_dir()?;
        loop {
            let record = NamedObject::posix_shm();
            run.record(&record)?;
            let name = record.shm_name().expect("a POSIX record");
            // SAFETY: shm_open reads the NUL-terminated name; glibc adds
            // O_NOFOLLOW and O_CLOEXEC.
            let fd = unsafe {
                libc::shm_open(
                    name.as_ptr(),
                    libc::O_CREAT | libc::O_EXCL | libc::O_RDWR,
                    0o600,
                )
            };
            if fd < 0 {
                let source = std::io::Error::last_os_error();
                run.forget(&record);
                // Someone holds this name: ours are random, so take another.
                if source.raw_os_error() == Some(libc::EEXIST) {
                    continue;
                }
                return Err(IpcError::Setup {
                    what: format!("create the POSIX shared memory object {name:?}"),
                    source,
                });
            }
            // SAFETY: a fresh descriptor nobody else owns.
            let file = unsafe { File::from_raw_fd(fd) };
            self.early.push(Early::Object(record));
            file.set_len(size)
                .map_err(setup_err("size the POSIX shared memory object"))?;
            return Ok(name.into_string().expect("ASCII"));
        }
    }

    /// Takes charge of a System V object the harness just made: noted in the
    /// private folder, and removed early (a segment, once both ends are
    /// attached) or late (a queue, when the run ends).
    pub(crate) fn sysv(
        &mut self,
        record: std::io::Result<NamedObject>,
        id: i32,
        early: bool,
    ) -> Result<(), IpcError> {
        let record = match record {
            Ok(record) => record,
            Err(source) => {
                remove_sysv_id(id, early);
                return Err(IpcError::Setup {
                    what: "read the new System V object's creation time".into(),
                    source,
                });
            }
        };
        if let Err(err) = self.run_dir().and_then(|run| Ok(run.record(&record)?)) {
            record.remove();
            return Err(err);
        }
        if early {
            self.early.push(Early::Object(record));
        } else {
            self.late.push(record);
        }
        Ok(())
    }

    /// Removes what only had to exist until both ends held it, and the private
    /// folder itself if nothing else is noted there.
    pub(crate) fn release_early(&mut self) {
        if self.early.is_empty() {
            return;
        }
        for item in self.early.drain(..) {
            match item {
                Early::Entry(name) => {
                    if let Some(run) = &self.run {
                        let _ = run.remove(&name);
                    }
                }
                Early::Object(record) => {
                    record.remove();
                    if let Some(run) = &self.run {
                        run.forget(&record);
                    }
                }
            }
        }
        if self.run.as_ref().is_some_and(RunDir::is_empty) {
            self.run = None;
        }
    }
}

/// Removes System V object `id` (a segment if `segment`, else a queue).
fn remove_sysv_id(id: i32, segment: bool) {
    // SAFETY: IPC_RMID with a null buffer only removes the object.
    unsafe {
        if segment {
            libc::shmctl(id, libc::IPC_RMID, std::ptr::null_mut());
        } else {
            libc::msgctl(id, libc::IPC_RMID, std::ptr::null_mut());
        }
    }
}

impl Drop for Resources {
    fn drop(&mut self) {
        self.release_early();
        for record in self.late.drain(..) {
            record.remove();
        }
        // Then the folder, with its notes.
        self.run = None;
    }
}

// ---------------------------------------------------------------------------
// Where files go

/// The default folder in which a run of a file mechanism makes its private
/// folder and unnamed files: the system temp dir unless it is tmpfs (where
/// O_DIRECT means nothing), else `target/` under the current directory.
pub fn default_dir() -> PathBuf {
    crate::process::rundir::disk_default()
}

/// Where a run of `mechanism` keeps its files and private folder: `dir` when the
/// caller chose one, else a disk for file mechanisms, else the per-user runtime
/// folder (or the temp dir).
pub(crate) fn base_for(mechanism: &MechanismInfo, dir: Option<&Path>) -> Result<Base, IpcError> {
    Ok(match dir {
        Some(dir) => Base::chosen(dir)?,
        None if mechanism.uses_files => Base::disk()?,
        None => Base::runtime()?,
    })
}

pub(crate) fn setup_err(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> IpcError {
    let what = what.into();
    move |source| IpcError::Setup { what, source }
}
