//! What the tests need from outside the workspace, set up by the tests themselves
//! where they can, so README's one test command works on a fresh clone.
//!
//! - npm packages (axe-core, Lighthouse, pinned by `book/tests/package-lock.json`):
//!   [`npm_tools`] runs `npm ci` in `book/tests` once, when `node_modules` is
//!   missing or was installed from another lockfile. It holds an exclusive `flock`
//!   on the `book/tests` folder meanwhile, so parallel test threads and test
//!   binaries install once and never see a half-written `node_modules`.
//! - system packages (Chromium, ChromeDriver, Node.js, npm, docker-compose): a test
//!   cannot install them (that needs root and apt), so [`need`] fails it with one
//!   line naming the `apt-get install` to run (`.ci/run` installs them all).

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::Instant;

/// Where `npm ci` writes the lockfile it installed from, after it succeeded: the
/// next run compares it with `package-lock.json` to know whether it is stale.
/// (`npm ci` empties `node_modules` first, so a failed or older install has none.)
const STAMP: &str = ".pipebook-installed-from-package-lock.json";

/// The workspace's root folder.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("server/ has a parent")
        .to_path_buf()
}

/// Whether `program` is a file in one of `PATH`'s folders (or a path to a file).
fn on_path(program: &str) -> bool {
    if program.contains('/') {
        return Path::new(program).is_file();
    }
    std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|dir| dir.join(program).is_file()))
}

/// One line saying what to install when `program` is not installed (`apt_package`
/// is Debian's package that has it); `None` when it is.
fn missing(program: &str, apt_package: &str) -> Option<String> {
    (!on_path(program)).then(|| {
        format!(
            "{program} is not installed: run `apt-get install -y {apt_package}` \
             (or `.ci/run`, which installs everything the tests need)"
        )
    })
}

/// Fails the test, in one line, when `program` is not installed: `apt_package`
/// is Debian's package that has it.
pub(crate) fn need(program: &str, apt_package: &str) {
    if let Some(line) = missing(program, apt_package) {
        panic!("{line}");
    }
}

/// One line saying what to install unless Debian's Chromium and ChromeDriver are.
pub(crate) fn missing_chromium() -> Option<String> {
    missing("/usr/bin/chromium", "chromium")
        .or_else(|| missing("/usr/bin/chromedriver", "chromium-driver"))
}

/// `book/tests/node_modules`, installed by `npm ci` from `package-lock.json` if it
/// was not yet (see the module's doc). Panics, in one line, with what to do when
/// it cannot.
pub(crate) fn npm_tools() -> PathBuf {
    static INSTALLED: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    INSTALLED
        .get_or_init(install)
        .clone()
        .unwrap_or_else(|e| panic!("{e}"))
}

/// Runs `npm ci` in `book/tests` under the folder's lock, unless its stamp matches.
fn install() -> Result<PathBuf, String> {
    let tests = root().join("book/tests");
    let modules = tests.join("node_modules");
    let lockfile = std::fs::read(tests.join("package-lock.json"))
        .map_err(|e| format!("reading book/tests/package-lock.json: {e}"))?;
    let current =
        |modules: &Path| std::fs::read(modules.join(STAMP)).ok().as_deref() == Some(&lockfile[..]);
    if current(&modules) {
        return Ok(modules);
    }
    // The lock is on the folder itself: nothing is created to hold it, and it is
    // released when the descriptor closes, even if the test binary is killed.
    let folder = File::open(&tests).map_err(|e| format!("opening {}: {e}", tests.display()))?;
    rustix::fs::flock(&folder, rustix::fs::FlockOperation::LockExclusive)
        .map_err(|e| format!("locking {}: {e}", tests.display()))?;
    if current(&modules) {
        return Ok(modules); // another thread or binary installed it meanwhile
    }
    need("node", "nodejs");
    need("npm", "npm");
    eprintln!(
        "setting up the tests: `npm ci` in book/tests (axe-core and Lighthouse, \
         once per lockfile; needs the npm registry)..."
    );
    let started = Instant::now();
    let status = Command::new("npm")
        .args(["ci", "--no-audit", "--no-fund", "--loglevel=error"])
        .current_dir(&tests)
        .stdin(Stdio::null())
        .stdout(Stdio::inherit())
        .stderr(Stdio::inherit())
        .status()
        .map_err(|e| format!("running npm ci in book/tests: {e}"))?;
    if !status.success() {
        return Err(format!(
            "`npm ci` in book/tests failed ({status}, its output is above): the \
             accessibility and Lighthouse tests need axe-core and Lighthouse from the \
             npm registry; fix what npm said and run the tests again"
        ));
    }
    std::fs::write(modules.join(STAMP), &lockfile)
        .map_err(|e| format!("writing {}: {e}", modules.join(STAMP).display()))?;
    eprintln!(
        "setting up the tests: npm ci done in {:.0} s",
        started.elapsed().as_secs_f64()
    );
    Ok(modules)
}

#[test]
fn the_npm_tools_are_installed_from_the_lockfile_and_stamped_with_it() {
    let modules = npm_tools();
    assert!(modules.join("axe-core/axe.min.js").is_file());
    assert!(modules.join("lighthouse/package.json").is_file());
    let lockfile = std::fs::read(root().join("book/tests/package-lock.json")).unwrap();
    assert_eq!(std::fs::read(modules.join(STAMP)).unwrap(), lockfile);
    // A second call (as every later audit makes) finds it current and installs nothing.
    assert_eq!(install().unwrap(), modules);
}

#[test]
fn a_missing_system_package_is_named_with_the_command_that_installs_it() {
    let line = missing("/nonexistent/pipebook-tool", "pipebook-tool").unwrap();
    assert!(line.contains("apt-get install -y pipebook-tool"), "{line}");
    assert!(!line.contains('\n'), "{line}");
    assert_eq!(missing("sh", "dash"), None);
}
