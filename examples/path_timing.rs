//! Times the read behind the Node binding's getBranch of a long session, every entry's links
//! and the path (a profiling aid): `path_timing DB SESSION_FILE [RUNS]`.
use sessiondb::SessionManager;
use std::path::Path;

fn main() -> sessiondb::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let (Some(db), Some(file)) = (args.get(1), args.get(2)) else {
        eprintln!("usage: path_timing DB SESSION_FILE [RUNS]");
        std::process::exit(2);
    };
    let runs: usize = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(20);
    let m = SessionManager::open(Path::new(db), file, None, None)?;
    let mut ms = Vec::with_capacity(runs);
    let mut len = 0;
    for _ in 0..runs {
        let t = std::time::Instant::now();
        len = m.entries_and_path(None)?.map_or(0, |(_, path)| path.len());
        ms.push(t.elapsed().as_secs_f64() * 1e3);
    }
    let first = ms[0];
    ms.sort_by(f64::total_cmp);
    println!(
        "entries and path ({len} steps): first {first:.2} ms (a new process's one read), then median {:.2} ms (min {:.2}, {runs} runs)",
        ms[runs / 2],
        ms[0]
    );
    Ok(())
}
