//! The memory profiler on a real process tree: a child this test spawns
//! (this binary run again), which starts a grandchild and, when told,
//! allocates and touches 64 MiB. Host memory is checked against
//! `/proc/meminfo`.
#![cfg(target_os = "linux")]

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::time::{Duration, Instant};

use nemo_lens::instruments::gym::{GymServer, MemoryProfiler};
use nemo_lens::testing::Capture;

const CHILD: &str = "NEMO_LENS_MEMORY_CHILD";
const GROWTH: usize = 64 << 20;
const INTERVAL: Duration = Duration::from_millis(20);

/// The child, driven through its stdin and answering on stderr.
struct Tree {
    child: Child,
    stdin: Option<ChildStdin>,
    answers: BufReader<std::process::ChildStderr>,
}

impl Tree {
    fn spawn() -> Tree {
        let mut child = Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "memory_profiler::memory_child",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(CHILD, "1")
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("the child starts");
        let stdin = child.stdin.take();
        let answers = BufReader::new(child.stderr.take().unwrap());
        let mut tree = Tree {
            child,
            stdin,
            answers,
        };
        tree.expect("ready");
        tree
    }

    fn say(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().unwrap();
        writeln!(stdin, "{line}").unwrap();
        stdin.flush().unwrap();
    }

    /// Reads the child's stderr up to the answer `word`.
    fn expect(&mut self, word: &str) {
        let mut line = String::new();
        loop {
            line.clear();
            let read = self.answers.read_line(&mut line).unwrap();
            assert!(read > 0, "the child ended before saying {word}");
            if line.trim() == format!("child: {word}") {
                return;
            }
        }
    }

    /// Closes stdin: the child ends its grandchild and exits.
    fn end(mut self) {
        drop(self.stdin.take());
        let status = self.child.wait().unwrap();
        assert!(status.success(), "{status}");
    }
}

/// Waits, bounded, until `check` holds of the capture.
fn eventually(what: &str, mut check: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !check() {
        assert!(Instant::now() < deadline, "{what} within 10 s");
        std::thread::sleep(INTERVAL);
    }
}

#[test]
fn a_tree_is_sampled_as_it_grows_and_ends_cleanly() {
    let capture = Capture::new();
    let tree = Tree::spawn();
    let pid = tree.child.id();
    let mut tree = tree;
    let profiler = MemoryProfiler::start(
        capture.meter(),
        [GymServer::new("math_env", "resources_servers", pid)],
        INTERVAL,
    );
    let pid_label = pid.to_string();
    let server = |memory_type: Option<&'static str>| {
        let mut attributes = vec![
            ("nemo.gym.server.name", "math_env"),
            ("nemo.gym.server.type", "resources_servers"),
            ("process.pid", pid_label.as_str()),
        ];
        attributes.extend(memory_type.map(|t| ("memory.type", t)));
        attributes
    };
    let gauge = |name: &str, memory_type| capture.last_value(name, &server(memory_type));

    // The first sample is taken at start: the child and its grandchild.
    assert_eq!(gauge("gym.server.processes", None), Some(2.0));
    let before = gauge("gym.server.memory.usage", Some("rss")).expect("rss");
    assert!(before > 0.0);
    assert!(
        gauge("gym.server.memory.usage", Some("pss")).is_some(),
        "this kernel has smaps_rollup"
    );

    tree.say("grow");
    tree.expect("grown");
    let grown = before + GROWTH as f64 * 0.9;
    eventually("RSS up by the 64 MiB touched", || {
        gauge("gym.server.memory.usage", Some("rss")).is_some_and(|rss| rss >= grown)
    });
    assert!(gauge("gym.server.memory.sampled_peak", Some("rss")).unwrap() >= grown);

    tree.say("shrink");
    tree.expect("shrunk");
    eventually("RSS down again", || {
        gauge("gym.server.memory.usage", Some("rss")).is_some_and(|rss| rss < grown)
    });
    assert!(
        gauge("gym.server.memory.sampled_peak", Some("rss")).unwrap() >= grown,
        "the peak stays"
    );

    tree.end();
    eventually("no process left", || {
        gauge("gym.server.processes", None) == Some(0.0)
    });
    profiler.stop();
}

#[test]
fn host_memory_agrees_with_proc_meminfo() {
    let capture = Capture::new();
    let profiler = MemoryProfiler::start(capture.meter(), [], Duration::from_secs(3600));
    let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap();
    let kb = |name: &str| {
        meminfo
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(|kb| kb.parse::<f64>().ok())
            .map(|kb| kb * 1024.0)
            .unwrap()
    };
    let value = |name: &str| capture.last_value(name, &[]).expect(name);
    let total = value("gym.host.memory.total");
    let available = value("gym.host.memory.available");
    assert_eq!(total, kb("MemTotal:"));
    // Read a moment apart: within 5% of the machine.
    assert!(
        (available - kb("MemAvailable:")).abs() < total * 0.05,
        "{available} vs {}",
        kb("MemAvailable:")
    );
    assert_eq!(value("gym.host.memory.usage"), total - available);
    assert_eq!(value("gym.host.memory.sampled_peak"), total - available);
    profiler.stop();
}

/// The child: starts a grandchild, then answers `grow` (64 MiB allocated
/// and touched) and `shrink` (freed) until its stdin closes. Does nothing
/// when run as an ordinary test.
#[test]
fn memory_child() {
    if std::env::var_os(CHILD).is_none() {
        return;
    }
    let mut grandchild = Command::new("sleep")
        .arg("60")
        .spawn()
        .expect("sleep starts");
    eprintln!("child: ready");
    let mut held: Option<Vec<u8>> = None;
    for line in std::io::stdin().lines() {
        match line.unwrap().as_str() {
            "grow" => {
                let mut memory = vec![0u8; GROWTH];
                // One write per page makes every page resident.
                for page in memory.iter_mut().step_by(4096) {
                    *page = 1;
                }
                held = Some(std::hint::black_box(memory));
                eprintln!("child: grown");
            }
            "shrink" => {
                held = None;
                eprintln!("child: shrunk");
            }
            _ => {}
        }
    }
    drop(held);
    let _ = grandchild.kill();
    let _ = grandchild.wait();
}
