//! Per-line compression study for sessiondb (issue 29): zstd levels 1/3/6, with and without a
//! dictionary trained from a sample of the lines, and zlib 6 for reference. Sizes, and
//! compress / decompress throughput in thread CPU time (the machine is shared).
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

fn cpu() -> Duration {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            files(&p, out);
        } else if p.extension().is_some_and(|x| x == "jsonl") {
            out.push(p);
        }
    }
}

/// xorshift
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

struct Row {
    name: String,
    stored: u64,
    raw_kept: u64,
    comp_s: f64,
    decomp_s: f64,
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let dir = PathBuf::from(&args[1]);
    let label = &args[2];
    let sample_mb: usize = args.get(3).map_or(16, |s| s.parse().unwrap());
    let mut fs = Vec::new();
    files(&dir, &mut fs);
    fs.sort();
    let mut lines: Vec<Vec<u8>> = Vec::new();
    let mut file_bytes = 0u64;
    for f in &fs {
        file_bytes += std::fs::metadata(f).unwrap().len();
        let r = std::io::BufReader::new(std::fs::File::open(f).unwrap());
        for l in r.split(b'\n') {
            let l = l.unwrap();
            if !l.is_empty() {
                lines.push(l);
            }
        }
    }
    let raw: u64 = lines.iter().map(|l| l.len() as u64).sum();
    let mut sizes: Vec<usize> = lines.iter().map(|l| l.len()).collect();
    sizes.sort_unstable();
    let pct = |p: f64| sizes[((sizes.len() - 1) as f64 * p) as usize];
    let small: u64 = lines.iter().filter(|l| l.len() < 128).map(|l| l.len() as u64).sum();
    println!(
        "# {label}: {} files, {} lines, {:.1} MB in files, {:.1} MB of lines",
        fs.len(),
        lines.len(),
        file_bytes as f64 / 1e6,
        raw as f64 / 1e6
    );
    println!(
        "line sizes: p10 {} p50 {} p90 {} p99 {} max {}; lines under 128 B hold {:.2}% of the bytes",
        pct(0.1),
        pct(0.5),
        pct(0.9),
        pct(0.99),
        sizes.last().unwrap(),
        small as f64 * 100.0 / raw as f64
    );

    // The dictionary's training sample: random lines up to sample_mb MB, each cut to 128 KiB
    // (zstd trains on the start of samples).
    let mut rng = Rng(0x9e3779b97f4a7c15);
    let mut samples: Vec<&[u8]> = Vec::new();
    let mut sampled = 0usize;
    while sampled < sample_mb << 20 && samples.len() < lines.len() {
        let l = &lines[(rng.next() % lines.len() as u64) as usize];
        let s = &l[..l.len().min(128 << 10)];
        sampled += s.len();
        samples.push(s);
    }
    let mut results: Vec<Row> = Vec::new();
    for dict_size in [0usize, 112_640] {
        let dict = if dict_size > 0 {
            let t = cpu();
            let d = zstd::dict::from_samples(&samples, dict_size).unwrap();
            println!(
                "dictionary: {} B trained from {} lines ({:.1} MB) in {:.1} s CPU",
                d.len(),
                samples.len(),
                sampled as f64 / 1e6,
                (cpu() - t).as_secs_f64()
            );
            d
        } else {
            Vec::new()
        };
        for level in [1, 3, 6] {
            let mut c = zstd::bulk::Compressor::with_dictionary(level, &dict).unwrap();
            c.set_parameter(zstd::zstd_safe::CParameter::ChecksumFlag(false)).unwrap();
            c.set_parameter(zstd::zstd_safe::CParameter::DictIdFlag(false)).unwrap();
            c.set_parameter(zstd::zstd_safe::CParameter::ContentSizeFlag(true)).unwrap();
            let t = cpu();
            let mut out: Vec<Vec<u8>> = Vec::with_capacity(lines.len());
            for l in &lines {
                out.push(c.compress(l).unwrap());
            }
            let comp_s = (cpu() - t).as_secs_f64();
            // Stored: the frame, or the line itself where the frame is not smaller (a flag).
            let stored: u64 = out.iter().zip(&lines).map(|(o, l)| o.len().min(l.len()) as u64).sum();
            let raw_kept = out.iter().zip(&lines).filter(|(o, l)| o.len() >= l.len()).count() as u64;
            let mut d = zstd::bulk::Decompressor::with_dictionary(&dict).unwrap();
            let t = cpu();
            let mut check = 0u64;
            for (o, l) in out.iter().zip(&lines) {
                let back = d.decompress(o, l.len()).unwrap();
                check += back.len() as u64;
            }
            let decomp_s = (cpu() - t).as_secs_f64();
            assert_eq!(check, raw);
            let name = format!("zstd {level}{}", if dict_size > 0 { " + dict" } else { "" });
            results.push(Row { name, stored, raw_kept, comp_s, decomp_s });
        }
    }
    {
        let t = cpu();
        let mut out = Vec::with_capacity(lines.len());
        for l in &lines {
            let mut e = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::new(6));
            e.write_all(l).unwrap();
            out.push(e.finish().unwrap());
        }
        let comp_s = (cpu() - t).as_secs_f64();
        let stored: u64 = out.iter().zip(&lines).map(|(o, l)| o.len().min(l.len()) as u64).sum();
        let raw_kept = out.iter().zip(&lines).filter(|(o, l)| o.len() >= l.len()).count() as u64;
        let t = cpu();
        for o in &out {
            let mut d = flate2::read::ZlibDecoder::new(&o[..]);
            let mut v = Vec::new();
            std::io::Read::read_to_end(&mut d, &mut v).unwrap();
        }
        let decomp_s = (cpu() - t).as_secs_f64();
        results.push(Row { name: "zlib 6".into(), stored, raw_kept, comp_s, decomp_s });
    }
    // Whole files, for reference (what a file-level codec would reach).
    let t = cpu();
    let mut whole = 0u64;
    for f in &fs {
        whole += zstd::bulk::compress(&std::fs::read(f).unwrap(), 3).unwrap().len() as u64;
    }
    let whole_s = (cpu() - t).as_secs_f64();
    // Held out: a dictionary trained on the older half of the files (by the time in their
    // names) compresses the newer half, as a store's dictionary meets lines written after it.
    {
        let mut order: Vec<usize> = (0..fs.len()).collect();
        order.sort_by_key(|&i| fs[i].file_name().unwrap().to_owned());
        let cut = fs.len().div_ceil(2);
        let old: std::collections::HashSet<usize> = order[..cut].iter().copied().collect();
        let (mut old_lines, mut new_lines): (Vec<Vec<u8>>, Vec<Vec<u8>>) = (Vec::new(), Vec::new());
        for (i, f) in fs.iter().enumerate() {
            let text = std::fs::read(f).unwrap();
            for l in text.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
                if old.contains(&i) || fs.len() == 1 {
                    old_lines.push(l.to_vec())
                } else {
                    new_lines.push(l.to_vec())
                }
            }
        }
        if fs.len() == 1 {
            // One session: its first half of lines trains, its second half is measured.
            let half = old_lines.len() / 2;
            new_lines = old_lines.split_off(half);
        }
        let mut samples: Vec<&[u8]> = Vec::new();
        let mut sampled = 0usize;
        while sampled < sample_mb << 20 && samples.len() < old_lines.len() {
            let l = &old_lines[(rng.next() % old_lines.len() as u64) as usize];
            let s = &l[..l.len().min(128 << 10)];
            sampled += s.len();
            samples.push(s);
        }
        let dict = zstd::dict::from_samples(&samples, 112_640).unwrap();
        let new_raw: u64 = new_lines.iter().map(|l| l.len() as u64).sum();
        for (name, d) in [("no dict", &Vec::new()), ("dict of the older half", &dict)] {
            let mut c = zstd::bulk::Compressor::with_dictionary(3, d).unwrap();
            c.set_parameter(zstd::zstd_safe::CParameter::ChecksumFlag(false)).unwrap();
            c.set_parameter(zstd::zstd_safe::CParameter::DictIdFlag(false)).unwrap();
            let stored: u64 = new_lines.iter().map(|l| c.compress(l).unwrap().len().min(l.len()) as u64).sum();
            println!(
                "held out: zstd 3, {name}, on the newer half ({:.1} MB): ratio {:.3}",
                new_raw as f64 / 1e6,
                stored as f64 / new_raw as f64
            );
        }
    }
    println!();
    println!("| codec | stored MB | ratio | lines kept raw | compress MB/s | decompress MB/s |");
    println!("|---|---:|---:|---:|---:|---:|");
    for r in &results {
        println!(
            "| {} | {:.1} | {:.3} | {:.1}% | {:.0} | {:.0} |",
            r.name,
            r.stored as f64 / 1e6,
            r.stored as f64 / raw as f64,
            r.raw_kept as f64 * 100.0 / lines.len() as f64,
            raw as f64 / 1e6 / r.comp_s,
            raw as f64 / 1e6 / r.decomp_s
        );
    }
    println!(
        "| zstd 3, whole files | {:.1} | {:.3} | - | {:.0} | - |",
        whole as f64 / 1e6,
        whole as f64 / raw as f64,
        file_bytes as f64 / 1e6 / whole_s
    );
}
