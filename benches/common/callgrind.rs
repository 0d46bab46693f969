//! Shared by the benches that count instructions: this bench binary re-run
//! with `args` under callgrind, counting only inside the engine's event loop
//! (`--toggle-collect` on `Sim::run`), so setup, process start and exit are
//! left out. Deterministic for a given build, unlike wall time on a shared VM.

use std::process::Command;

/// The child's last stdout line and the instructions callgrind collected,
/// or None when valgrind is missing, the run fails (its stderr printed) or
/// nothing was counted inside `Sim::run`.
pub fn count(args: &[&str]) -> Option<(String, f64)> {
    let exe = std::env::current_exe().ok()?;
    let out = Command::new("valgrind")
        .args([
            "--tool=callgrind",
            "--callgrind-out-file=/dev/null",
            "--collect-atstart=no",
            "--toggle-collect=*engine*Sim*run*",
        ])
        .arg(exe)
        .args(args)
        .output()
        .ok()?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    if !out.status.success() {
        eprintln!("callgrind {args:?} failed: {stderr}");
        return None;
    }
    let ir = stderr
        .lines()
        .find_map(|l| l.split("Collected :").nth(1))?
        .trim()
        .parse::<f64>()
        .ok()?;
    if ir == 0.0 {
        // nothing matched the toggle: a stripped binary, or Sim::run renamed
        eprintln!("callgrind {args:?}: no instructions counted inside Sim::run");
        return None;
    }
    let last = String::from_utf8_lossy(&out.stdout)
        .lines()
        .last()?
        .to_string();
    Some((last, ir))
}

/// Whether valgrind can be run.
#[allow(dead_code)]
pub fn available() -> bool {
    Command::new("valgrind").arg("--version").output().is_ok()
}
