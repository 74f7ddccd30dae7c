//! Times what the Node binding's `assistantRows` does for pi's `/tree` on a long session (a
//! profiling aid): reading every assistant line, then scanning each for its content.
//! `assistant_scan_timing DB SESSION_FILE`.
use sessiondb::json;
use sessiondb::SessionManager;
use std::path::Path;
use std::time::Instant;

fn main() -> sessiondb::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let (Some(db), Some(file)) = (args.get(1), args.get(2)) else {
        eprintln!("usage: assistant_scan_timing DB SESSION_FILE");
        std::process::exit(2);
    };
    let m = SessionManager::open(Path::new(db), file, None, None)?;
    let links = m.entry_steps(None)?;
    let keys: Vec<_> =
        links.iter().filter(|l| l.kind == Some("message") && l.role == Some("assistant")).map(|l| l.key).collect();
    let t = Instant::now();
    let mut bytes = 0;
    m.lines_at(&keys, &mut |_, line| bytes += line.len())?;
    let read = t.elapsed();
    let t = Instant::now();
    let mut blocks = 0;
    m.lines_at(&keys, &mut |_, line| {
        let Ok(Some(entry)) = json::scan_object(line) else { return };
        let Some(message) = entry.raw("message").and_then(|m| json::scan_object(m).ok().flatten()) else { return };
        if let Some(content) = message.raw("content") {
            if let Ok(json::Value::Array(a)) = json::parse(content) {
                blocks += a.len();
            }
        }
    })?;
    let scanned = t.elapsed();
    println!(
        "{} assistants, {:.1} MB: read {:.0} ms; read, scanned and content parsed {:.0} ms ({blocks} blocks)",
        keys.len(),
        bytes as f64 / 1e6,
        read.as_secs_f64() * 1e3,
        scanned.as_secs_f64() * 1e3
    );
    Ok(())
}
