//! Keeping tests of process-wide state apart inside one test binary.
//!
//! Most tests share nothing, and run in parallel threads. Two kinds do not:
//! - tests of what one pipeline owns in a process (`setup_telemetry`'s
//!   slot, the global meter provider, the cardinality limit and the list of
//!   overflowing instruments) take turns: [`exclusive`];
//! - tests that measure the whole process (a counting allocator, stderr,
//!   warnings said once per process) run in a child process of their own:
//!   [`own_process!`](crate::own_process).

use std::process::Command;
use std::sync::{Mutex, MutexGuard, PoisonError};

static TURN: Mutex<()> = Mutex::new(());

/// A turn for a test of process-wide state; the next one waits until it is
/// dropped. A test that failed in its turn does not block the others.
pub struct Exclusive(#[allow(dead_code)] MutexGuard<'static, ()>);

/// Waits for a turn (see [`Exclusive`]).
pub fn exclusive() -> Exclusive {
    Exclusive(TURN.lock().unwrap_or_else(PoisonError::into_inner))
}

/// The variable that marks a child: the name of the test it runs.
pub const CHILD: &str = "NEMO_LENS_TEST_CHILD";

/// Whether this process is the child that runs `test` (its path in the test
/// binary, `module::name`).
pub fn is_child(test: &str) -> bool {
    std::env::var(CHILD).is_ok_and(|t| t == test)
}

/// Runs `test` (a path as `module_path!()` gives it, crate first) again in
/// a child process of this binary, alone, and panics with its output if it
/// failed. Returns `true` in that child, where the test's body runs, and
/// `false` in the parent once the child passed.
pub fn own_process(test: &str) -> bool {
    // libtest names tests without the crate.
    let name = test.split_once("::").map_or(test, |(_, rest)| rest);
    if is_child(name) {
        return true;
    }
    let output = child(name).output().expect("run the test binary again");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "{name} failed in its own process:\n{stdout}{stderr}"
    );
    // What the test printed (figures, tables) goes where the parent's
    // output goes; the child harness's own lines would count the test twice.
    for line in stdout.lines().filter(|l| !is_harness_line(l)) {
        println!("{line}");
    }
    eprint!("{stderr}");
    false
}

/// A line libtest writes around a test run, not the test itself.
fn is_harness_line(line: &str) -> bool {
    line.is_empty()
        || line.starts_with("running ")
        || line.starts_with("test result: ")
        || (line.starts_with("test ") && line.ends_with(" ... ok"))
}

/// The command that runs the test `name` of this binary alone, as a child.
pub fn child(name: &str) -> Command {
    let mut command = Command::new(std::env::current_exe().expect("the test binary"));
    command
        // `#[ignore]`d tests (the e2e suites) too: the parent was asked for them.
        .args([
            "--exact",
            name,
            "--include-ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD, name);
    command
}

/// Runs the calling test in a child process of its own (see
/// [`own_process`](crate::process::own_process)): in the parent, returns
/// once the child passed.
///
/// ```ignore
/// #[test]
/// fn counts_every_allocation() {
///     nemo_lens_test_support::own_process!(counts_every_allocation);
///     // runs in the child only
/// }
/// ```
#[macro_export]
macro_rules! own_process {
    ($test:ident) => {
        if !$crate::process::own_process(concat!(module_path!(), "::", stringify!($test))) {
            return;
        }
    };
}
