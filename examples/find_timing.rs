//! Times pi's findById in a session's folder on an open database (a profiling aid):
//! `find_timing DB SESSION_FILE [RUNS]`. Prints the median of batches of 1,000 lookups.
use sessiondb::discovery;
use sessiondb::internals::open_pooled;
use std::path::Path;

fn main() -> sessiondb::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let (Some(db), Some(file)) = (args.get(1), args.get(2)) else {
        eprintln!("usage: find_timing DB SESSION_FILE [RUNS]");
        std::process::exit(2);
    };
    let runs: usize = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(200);
    let conn = open_pooled(Path::new(db))?;
    let dir = Path::new(file).parent().map(|d| d.to_string_lossy().into_owned()).unwrap_or_default();
    let Some(id) = Path::new(file).file_stem().and_then(|s| s.to_str()).and_then(|s| s.rsplit('_').next()) else {
        eprintln!("{file} is not named as pi names session files");
        std::process::exit(2);
    };
    let mut us = Vec::with_capacity(runs);
    for _ in 0..runs {
        let t = std::time::Instant::now();
        for _ in 0..1000 {
            discovery::find_in_dir(&conn, id, &dir, None)?;
        }
        us.push(t.elapsed().as_secs_f64() * 1e3);
    }
    us.sort_by(f64::total_cmp);
    println!("find by id median {:.3} µs (min {:.3}, {runs} batches of 1,000)", us[runs / 2], us[0]);
    Ok(())
}
