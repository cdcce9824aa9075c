//! The classroom deployment files: docker-compose.yml as a real compose
//! implementation reads it (Debian's `docker-compose` parses and checks a file
//! without a container engine), and the Dockerfile's paths against this
//! repository. Needs `docker-compose` (`apt-get install docker-compose`; .ci/run
//! installs it): without it the test fails, it does not skip.

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("server/ has a parent")
        .to_path_buf()
}

#[test]
fn the_compose_file_validates_and_stays_local_and_unprivileged() {
    crate::setup::need("docker-compose", "docker-compose");
    let output = Command::new("docker-compose")
        .args(["-f", "docker-compose.yml", "config"])
        .current_dir(root())
        .env("PIPEBOOK_HOST", "lab.example")
        .output()
        .unwrap_or_else(|err| {
            panic!(
                "cannot run docker-compose ({err}): install it with \
                 `apt-get install -y docker-compose` (.ci/run does)"
            )
        });
    let config = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "docker-compose config refused docker-compose.yml:\n{stderr}"
    );
    // One service, published on the host's loopback only.
    assert_eq!(config.matches("\n  pipebook:\n").count(), 1, "{config}");
    let ports: Vec<&str> = config
        .lines()
        .map(str::trim)
        .filter(|l| l.starts_with("- ") && l.contains(":8000"))
        .collect();
    assert!(
        !ports.is_empty() && ports.iter().all(|p| p.starts_with("- 127.0.0.1:")),
        "ports must be bound to 127.0.0.1: {ports:?}\n{config}"
    );
    // The state folder the server is told to use is the mounted volume.
    assert!(
        config.contains("- --state-dir\n    - /home/pipebook/state"),
        "{config}"
    );
    assert!(
        config.contains("- pipebook-state:/home/pipebook/state"),
        "{config}"
    );
    assert!(
        config.contains("- lab.example"),
        "the host name is taken from PIPEBOOK_HOST"
    );
    // Extra privileges stay off unless someone turns them on by hand.
    for privilege in ["privileged", "cap_add", "security_opt", "user:", "pid:"] {
        assert!(
            !config.contains(privilege),
            "`{privilege}` must be off by default:\n{config}"
        );
    }
    // ...and the file says how to turn each on.
    let file = std::fs::read_to_string(root().join("docker-compose.yml")).unwrap();
    for needed in [
        "CAP_SYS_ADMIN",
        "pagemap",
        "perf_event_paranoid",
        "CAP_PERFMON",
        "seccomp",
    ] {
        assert!(
            file.contains(needed),
            "docker-compose.yml should explain {needed}"
        );
    }
}

/// The binaries the workspace builds, from each crate's manifest.
fn binary_names() -> Vec<String> {
    let mut names = Vec::new();
    for manifest in ["server/Cargo.toml", "bench/Cargo.toml"] {
        let text = std::fs::read_to_string(root().join(manifest)).unwrap();
        let mut in_bin = false;
        let mut package = None;
        let mut has_bin_section = false;
        for line in text.lines().map(str::trim) {
            if line.starts_with('[') {
                in_bin = line == "[[bin]]";
                has_bin_section |= in_bin;
            }
            if let Some(value) = line.strip_prefix("name = ") {
                let value = value.trim_matches('"').to_string();
                if in_bin {
                    names.push(value);
                } else if package.is_none() {
                    package = Some(value);
                }
            }
        }
        // A crate with src/main.rs and no [[bin]] section builds a binary named after it.
        if !has_bin_section
            && root()
                .join(manifest)
                .with_file_name("src/main.rs")
                .is_file()
        {
            names.extend(package);
        }
    }
    names
}

#[test]
fn the_dockerfile_copies_what_exists_and_runs_what_is_built() {
    let dockerfile = std::fs::read_to_string(root().join("Dockerfile")).unwrap();
    let bins = binary_names();
    assert!(
        bins.contains(&"pipebook".to_string()) && bins.contains(&"pipebench".to_string()),
        "{bins:?}"
    );
    let book_toml = std::fs::read_to_string(root().join("book.toml")).unwrap();
    let build_dir = book_toml
        .lines()
        .find_map(|l| l.trim().strip_prefix("build-dir = "))
        .map(|v| v.trim_matches('"').to_string())
        .expect("book.toml names its build-dir");
    let mut copies = 0;
    for line in dockerfile.lines().map(str::trim) {
        let Some(rest) = line.strip_prefix("COPY ") else {
            continue;
        };
        copies += 1;
        let words: Vec<&str> = rest.split_whitespace().collect();
        let (from_stage, words) = match words.first() {
            Some(w) if w.starts_with("--from=") => (true, &words[1..]),
            _ => (false, &words[..]),
        };
        let (sources, _dest) = words.split_at(words.len() - 1);
        for source in sources {
            // Sources from the build stage live under its WORKDIR, /src: the
            // repository, plus what the build made.
            let relative = if from_stage {
                source
                    .strip_prefix("/src/")
                    .unwrap_or_else(|| panic!("{line}: the build stage works in /src"))
            } else {
                source
            };
            if let Some(binary) = relative.strip_prefix("target/release/") {
                assert!(
                    bins.iter().any(|b| b == binary),
                    "{line}: no crate builds `{binary}` (binaries: {bins:?})"
                );
            } else if relative == build_dir || relative.starts_with(&format!("{build_dir}/")) {
                // The book, built by `pipebook build` in the build stage.
                assert!(
                    dockerfile.contains("pipebook build"),
                    "{line}: the book is copied but never built"
                );
            } else {
                assert!(
                    root().join(relative).exists(),
                    "{line}: `{relative}` does not exist in the repository"
                );
            }
        }
    }
    // One binary: `pipebook` carries the book (server/build.rs embeds its sources),
    // so nothing but the binary is copied into the runtime stage.
    let copied: Vec<&str> = dockerfile
        .lines()
        .map(str::trim)
        .filter(|l| l.starts_with("COPY --from="))
        .collect();
    assert_eq!(
        copied,
        ["COPY --from=build /src/target/release/pipebook /usr/local/bin/"],
        "the runtime stage should copy the one binary and nothing else"
    );
    assert!(copies >= 2, "the build stage copies the sources");
    // The entry point is the binary, serving the book it carries: no book root.
    let entry = dockerfile
        .lines()
        .find_map(|l| l.trim().strip_prefix("ENTRYPOINT "))
        .expect("an ENTRYPOINT");
    let entry: Vec<String> = serde_json::from_str(entry).expect("ENTRYPOINT in exec form");
    assert!(
        bins.contains(&entry[0]),
        "ENTRYPOINT runs `{}`, not a built binary",
        entry[0]
    );
    assert!(
        !entry.iter().any(|a| a == "--book-root"),
        "the image serves the book the binary carries: {entry:?}"
    );
    // The state folder docker-compose.yml mounts is made, owned by the user.
    assert!(dockerfile.contains("mkdir -p /home/pipebook/state"));
}
