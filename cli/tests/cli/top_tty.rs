//! `nemo-lens top` on a real terminal: a pseudo-terminal from Python's
//! `pty` module (Python 3 is on every machine this builds on) runs the
//! binary, presses keys, and reads the screen: the serving view, the
//! detail view on `enter`, the gym view on `g`, and `q` exits 0 and leaves
//! the alternate screen (the terminal restored).

use std::io::{Read, Write};
use std::net::TcpListener;
use std::process::Command;

/// Serves an SGLang exposition on 127.0.0.1 for a bounded number of reads.
fn serve() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap();
    let body = "# TYPE sglang:num_running_reqs gauge\n\
                sglang:num_running_reqs{model_name=\"m\"} 3.0\n\
                # TYPE sglang:num_queue_reqs gauge\n\
                sglang:num_queue_reqs{model_name=\"m\"} 1.0\n";
    std::thread::spawn(move || {
        for stream in listener.incoming().take(200) {
            let Ok(mut stream) = stream else { continue };
            let mut request = [0_u8; 2048];
            let _ = stream.read(&mut request);
            let _ = write!(
                stream,
                "HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\nContent-Length: {}\r\n\r\n{body}",
                body.len()
            );
        }
    });
    format!("http://{address}/metrics")
}

const DRIVER: &str = r#"
import os, pty, re, select, struct, sys, time, fcntl, termios
binary, url = sys.argv[1], sys.argv[2]
pid, fd = pty.fork()
if pid == 0:
    os.execv(binary, [binary, "top", "--interval", "1", url])
fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 150, 0, 0))
out = b""
def pump(seconds):
    global out
    end = time.time() + seconds
    while time.time() < end:
        ready, _, _ = select.select([fd], [], [], 0.1)
        if ready:
            try:
                out += os.read(fd, 65536)
            except OSError:
                return
def screen():
    return re.sub(rb"\x1b\[[0-9;?]*[a-zA-Z]", b" ", out).decode("utf-8", "replace")
pump(5)
serving = screen()
os.write(fd, b"\r")
pump(3)
detail = screen()[len(serving):]
os.write(fd, b"g")
pump(3)
gym = screen()[len(serving) + len(detail):]
os.write(fd, b"q")
pump(3)
deadline = time.time() + 10
status = None
while time.time() < deadline:
    done, status = os.waitpid(pid, os.WNOHANG)
    if done:
        break
    time.sleep(0.1)
else:
    os.kill(pid, 9)
    print("did not exit on q")
    sys.exit(1)
print("exit", os.WEXITSTATUS(status))
print("serving", "serving" in serving and "1/1 endpoints up" in serving)
print("detail", "running: 3" in detail and "sglang" in detail)
print("gym", "Gym servers" in gym)
print("restored", b"\x1b[?1049l" in out)
"#;

#[test]
fn keys_switch_views_and_q_restores_the_terminal() {
    let url = serve();
    let output = Command::new("python3")
        .args(["-c", DRIVER, env!("CARGO_BIN_EXE_nemo-lens"), &url])
        .output()
        .expect("python3 runs the pseudo-terminal");
    let said = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{said}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    for line in [
        "exit 0",
        "serving True",
        "detail True",
        "gym True",
        "restored True",
    ] {
        assert!(said.lines().any(|l| l == line), "{line} in\n{said}");
    }
}
