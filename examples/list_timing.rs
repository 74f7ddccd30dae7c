//! Times listing every session (or the sessions of folder DIR), with and without their joined
//! texts: a profiling aid (`list_timing DB [DIR]`).
fn main() -> anyhow::Result<()> {
    let mut args = std::env::args().skip(1);
    let path = args.next().ok_or_else(|| anyhow::anyhow!("usage: list_timing DB [DIR]"))?;
    let dir = args.next();
    let db = sessiondb::db::open(std::path::Path::new(&path))?;
    for _ in 0..10 {
        let t = std::time::Instant::now();
        let mut infos = match &dir {
            Some(d) => sessiondb::discovery::list_dir(&db, d, None)?,
            None => sessiondb::discovery::list_everything(&db)?,
        };
        let a = t.elapsed();
        sessiondb::discovery::fill_all_text(&db, &mut infos)?;
        let b = t.elapsed();
        println!("{} sessions: infos {:?}, with texts {:?}", infos.len(), a, b);
    }
    Ok(())
}
