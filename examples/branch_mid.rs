//! Times createBranchedSession at the middle of the largest session's path (a profiling aid).
use sessiondb::{NewSessionOptions, SessionManager};
use std::path::Path;

fn main() -> sessiondb::Result<()> {
    let _ = NewSessionOptions::default();
    let args: Vec<String> = std::env::args().collect();
    let db = Path::new(&args[1]);
    let source = &args[2];
    let runs: usize = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(5);
    let mid = {
        let conn = sessiondb::internals::open_pooled(db)?;
        let sid = conn.store().sid_by_path(source)?.expect("imported");
        let t = sessiondb::tree::SessionTree::open(&conn, sid)?;
        let leaf = t.last_entry()?.and_then(|r| r.id).expect("leaf");
        let steps = t.branch_keys(&leaf)?;
        eprintln!("path {} entries", steps.len());
        let key = steps[steps.len() / 2].key;
        t.entry_at(key)?.and_then(|r| r.id).expect("id")
    };
    // CPU ms of this process and of its main thread (clock ticks of 10 ms).
    let cpu = |path: String| -> f64 {
        let s = std::fs::read_to_string(path).unwrap_or_default();
        let f: Vec<&str> = s.rsplit(')').next().unwrap_or("").split_whitespace().collect();
        (f[11].parse::<f64>().unwrap_or(0.0) + f[12].parse::<f64>().unwrap_or(0.0)) * 10.0
    };
    let pid = std::process::id();
    let proc_cpu = || cpu("/proc/self/stat".into());
    let main_cpu = || cpu(format!("/proc/self/task/{pid}/stat"));
    for _ in 0..runs {
        let mut m = SessionManager::open(db, source, None, None)?;
        let (p0, m0) = (proc_cpu(), main_cpu());
        let t = std::time::Instant::now();
        m.create_branched_session(Some(&mid))?;
        let wall = t.elapsed().as_secs_f64() * 1e3;
        println!("wall {wall:.3} ms, cpu {:.0} ms, main thread cpu {:.0} ms", proc_cpu() - p0, main_cpu() - m0);
    }
    Ok(())
}
