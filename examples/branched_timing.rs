//! Times createBranchedSession at the middle of a session's path (a profiling aid):
//! `branched_timing DB SOURCE [RUNS]`. Prints the median and each run.
use sessiondb::SessionManager;
use std::path::Path;

fn main() -> sessiondb::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let (Some(db), Some(source)) = (args.get(1), args.get(2)) else {
        eprintln!("usage: branched_timing DB SOURCE [RUNS]");
        std::process::exit(2);
    };
    let runs: usize = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(50);
    let db = Path::new(db);
    let branch = SessionManager::open(db, source, None, None)?.get_branch(None)?;
    let Some(mid) = branch.get(branch.len() / 2).and_then(|e| e.as_object()?.get("id")?.as_str().map(str::to_owned))
    else {
        eprintln!("{source} has no path");
        std::process::exit(2);
    };
    let mut ms = Vec::with_capacity(runs);
    for _ in 0..runs {
        let mut m = SessionManager::open(db, source, None, None)?;
        let t = std::time::Instant::now();
        m.create_branched_session(Some(&mid))?;
        ms.push(t.elapsed().as_secs_f64() * 1e3);
    }
    ms.sort_by(f64::total_cmp);
    println!("branched median {:.3} ms (min {:.3}, max {:.3}, {runs} runs)", ms[runs / 2], ms[0], ms[runs - 1]);
    Ok(())
}
