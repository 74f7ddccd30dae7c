//! `sync --stdin`, driven as a host that syncs after every turn drives it.

use std::io::Write;
use std::path::Path;

/// A `--stdin` process answering one request at a time.
pub struct Requests {
    child: std::process::Child,
    answers: std::io::Lines<std::io::BufReader<std::process::ChildStdout>>,
}

impl Requests {
    pub fn start(db: &str, root: &Path) -> Requests {
        use std::io::BufRead;
        let mut child = super::bin()
            .args(["--db", db, "sync", "--stdin", "--sessions-dir", root.to_str().unwrap()])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let answers = std::io::BufReader::new(child.stdout.take().unwrap()).lines();
        Requests { child, answers }
    }

    /// Sends one line and reads its answer (before the input ends: a host waits for it).
    pub fn ask(&mut self, line: &str) -> serde_json::Value {
        let stdin = self.child.stdin.as_mut().unwrap();
        writeln!(stdin, "{line}").unwrap();
        stdin.flush().unwrap();
        let answer = self.answers.next().expect("an answer").unwrap();
        serde_json::from_str(&answer).unwrap()
    }

    pub fn files(&mut self, files: &[&Path]) -> serde_json::Value {
        self.ask(&serde_json::to_string(files).unwrap())
    }

    /// Ends the input: the process exits 0.
    pub fn finish(mut self) {
        drop(self.child.stdin.take());
        assert!(self.child.wait().unwrap().success());
    }
}

/// The named counts of a sync summary.
pub fn count_of(s: &serde_json::Value, keys: &[&str]) -> Vec<Option<u64>> {
    keys.iter().map(|k| s[*k].as_u64()).collect()
}
