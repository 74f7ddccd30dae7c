//! `sessiondb rpc`.

use sessiondb::rpc::RpcServer;
use std::io::{BufRead, Write};
use std::path::Path;

/// Serve pi's SessionManager methods as JSON lines on stdin/stdout (see README "RPC").
/// Each request `{"id", "method", "params": [...]}` gets one response line
/// `{"id", "result"}` or `{"id", "error": {"message"}}`; end of input ends the process.
#[derive(clap::Args)]
pub struct Args {}

pub fn run(db: &Path, _args: Args) -> anyhow::Result<i32> {
    let mut server = RpcServer::new(db);
    let stdin = std::io::stdin();
    let mut out = std::io::stdout().lock();
    let mut line = Vec::new();
    let mut input = stdin.lock();
    loop {
        line.clear();
        if input.read_until(b'\n', &mut line)? == 0 {
            break;
        }
        let text = String::from_utf8_lossy(&line);
        let text = text.trim_end_matches(['\n', '\r']);
        if text.trim().is_empty() {
            continue;
        }
        let response = server.handle_line(text);
        if let Err(e) = writeln!(out, "{response}").and_then(|_| out.flush()) {
            if e.kind() == std::io::ErrorKind::BrokenPipe {
                break;
            }
            return Err(e.into());
        }
    }
    Ok(0)
}
