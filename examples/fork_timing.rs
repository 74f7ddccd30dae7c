//! Times forkFrom of a session into another folder (a profiling aid): `fork_timing DB SOURCE [RUNS]`.
use sessiondb::{NewSessionOptions, SessionManager};
use std::path::Path;

fn main() -> sessiondb::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let (Some(db), Some(source)) = (args.get(1), args.get(2)) else {
        eprintln!("usage: fork_timing DB SOURCE [RUNS]");
        std::process::exit(2);
    };
    let runs: usize = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(5);
    let scratch = std::env::temp_dir().join("fork-timing");
    for _ in 0..runs {
        let t = std::time::Instant::now();
        let m = SessionManager::fork_from(
            Path::new(db),
            source,
            "/bench/fork-target",
            Some(&scratch.to_string_lossy()),
            NewSessionOptions::default(),
        )?;
        drop(m);
        println!("fork {:.3} ms", t.elapsed().as_secs_f64() * 1e3);
    }
    Ok(())
}
