//! Times listing every session, with and without their joined texts (a profiling aid).
fn main() -> anyhow::Result<()> {
    let path = std::env::args().nth(1).ok_or_else(|| anyhow::anyhow!("usage: list_timing DB"))?;
    let db = sessiondb::db::open(std::path::Path::new(&path))?;
    for _ in 0..10 {
        let t = std::time::Instant::now();
        let mut infos = sessiondb::discovery::list_everything(&db)?;
        let a = t.elapsed();
        sessiondb::discovery::fill_all_text(&db, &mut infos)?;
        let b = t.elapsed();
        println!("{} sessions: infos {:?}, with texts {:?}", infos.len(), a, b);
    }
    Ok(())
}
