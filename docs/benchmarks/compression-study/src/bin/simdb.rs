//! What a database would weigh with compressed texts: a copy of a sessiondb database whose
//! entry bodies (and, with `all`, list texts) are replaced by zstd frames, then VACUUMed.
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (db, level, what) = (&args[1], args[2].parse::<i32>().unwrap(), args.get(3).map_or("bodies", |s| s.as_str()));
    let conn = rusqlite::Connection::open(db).unwrap();
    conn.pragma_update(None, "journal_mode", "OFF").unwrap();
    conn.pragma_update(None, "synchronous", "OFF").unwrap();
    let n: i64 = conn.query_row("SELECT max(key) FROM entries", [], |r| r.get(0)).unwrap();
    let count: i64 = conn.query_row("SELECT count(*) FROM entries", [], |r| r.get(0)).unwrap();
    // A sample of about 16 MB of bodies, by every k-th row.
    let step = (count / 12_000).max(1);
    let mut samples: Vec<Vec<u8>> = Vec::new();
    {
        let mut st = conn.prepare("SELECT CAST(body AS BLOB) FROM entries WHERE rowid % ?1 = 0").unwrap();
        let mut rows = st.query([step]).unwrap();
        let mut total = 0;
        while let Some(r) = rows.next().unwrap() {
            let b: Vec<u8> = r.get(0).unwrap();
            total += b.len().min(128 << 10);
            samples.push(b[..b.len().min(128 << 10)].to_vec());
            if total > 16 << 20 {
                break;
            }
        }
    }
    let t = Instant::now();
    let dict = if what == "nodict" { Vec::new() } else { zstd::dict::from_samples(&samples, 112_640).unwrap() };
    eprintln!(
        "dict {} B from {} bodies in {:.1} s (max key {n})",
        dict.len(),
        samples.len(),
        t.elapsed().as_secs_f64()
    );
    let mut c = zstd::bulk::Compressor::with_dictionary(level, &dict).unwrap();
    c.set_parameter(zstd::zstd_safe::CParameter::ChecksumFlag(false)).unwrap();
    c.set_parameter(zstd::zstd_safe::CParameter::DictIdFlag(false)).unwrap();
    let t = Instant::now();
    conn.execute_batch("BEGIN").unwrap();
    {
        let mut read = conn.prepare("SELECT key, CAST(body AS BLOB) FROM entries").unwrap();
        let mut write = conn.prepare("UPDATE entries SET body = ?2 WHERE key = ?1").unwrap();
        let rows: Vec<(i64, Vec<u8>)> =
            read.query_map([], |r| Ok((r.get(0)?, r.get(1)?))).unwrap().map(Result::unwrap).collect();
        for (k, b) in rows {
            let z = c.compress(&b).unwrap();
            write.execute(rusqlite::params![k, z]).unwrap();
        }
        if what == "all" {
            let mut read = conn.prepare("SELECT sid, CAST(text AS BLOB) FROM list_texts").unwrap();
            let mut write = conn.prepare("UPDATE list_texts SET text = ?2 WHERE sid = ?1").unwrap();
            let rows: Vec<(i64, Vec<u8>)> =
                read.query_map([], |r| Ok((r.get(0)?, r.get(1)?))).unwrap().map(Result::unwrap).collect();
            for (k, b) in rows {
                write.execute(rusqlite::params![k, c.compress(&b).unwrap()]).unwrap();
            }
            let mut read =
                conn.prepare("SELECT key, CAST(list_text AS BLOB) FROM texts WHERE list_text IS NOT NULL").unwrap();
            let mut write = conn.prepare("UPDATE texts SET list_text = ?2 WHERE key = ?1").unwrap();
            let rows: Vec<(i64, Vec<u8>)> =
                read.query_map([], |r| Ok((r.get(0)?, r.get(1)?))).unwrap().map(Result::unwrap).collect();
            for (k, b) in rows {
                write.execute(rusqlite::params![k, c.compress(&b).unwrap()]).unwrap();
            }
        }
    }
    conn.execute_batch("COMMIT").unwrap();
    eprintln!("rewritten in {:.1} s", t.elapsed().as_secs_f64());
    let t = Instant::now();
    conn.execute_batch("VACUUM").unwrap();
    eprintln!("vacuumed in {:.1} s", t.elapsed().as_secs_f64());
}
