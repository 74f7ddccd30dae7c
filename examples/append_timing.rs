//! Times durable appends of a 1 KiB assistant message to a new session, as `sessiondb bench`
//! does (a profiling aid): `append_timing DB [N]`; prints p50 and p99 in µs.
use sessiondb::json::{self, Value};
use sessiondb::{NewSessionOptions, SessionManager};
use std::path::Path;

fn main() -> sessiondb::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let Some(db) = args.get(1) else {
        eprintln!("usage: append_timing DB [N]");
        std::process::exit(2);
    };
    let n: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(10_000);
    let scratch = std::env::temp_dir().join("append-timing");
    let mut m = SessionManager::create(
        Path::new(db),
        "/bench/append",
        Some(&scratch.to_string_lossy()),
        NewSessionOptions::default(),
    )?;
    let user =
        r#"{"role":"user","content":[{"type":"text","text":"Please add a benchmark."}],"timestamp":1764547199000}"#;
    m.append_message(json::parse(user.as_bytes()).unwrap_or(Value::Null))?;
    let text = "Let me read the session manager to see how entries are appended. ".repeat(14);
    let msg = format!(
        r#"{{"role":"assistant","content":[{{"type":"text","text":{}}}],"api":"anthropic-messages","provider":"anthropic","model":"claude-sonnet-4-5","usage":{{"input":12,"output":180,"cacheRead":48211,"cacheWrite":512,"totalTokens":48915,"cost":{{"input":0.000036,"output":0.0027,"cacheRead":0.0144633,"cacheWrite":0.00192,"total":0.0190293}}}},"stopReason":"toolUse","timestamp":1764547200000}}"#,
        json::quote(&text)
    );
    let msg = json::parse(msg.as_bytes()).unwrap_or(Value::Null);
    let mut samples = Vec::with_capacity(n);
    for _ in 0..n {
        let t = std::time::Instant::now();
        m.append_message(msg.clone())?;
        samples.push(t.elapsed().as_secs_f64() * 1e6);
    }
    m.settle()?;
    samples.sort_by(f64::total_cmp);
    let q = |p: f64| samples[((samples.len() - 1) as f64 * p).round() as usize];
    println!("p50 {:.2} µs, p90 {:.2} µs, p99 {:.2} µs", q(0.5), q(0.9), q(0.99));
    Ok(())
}
