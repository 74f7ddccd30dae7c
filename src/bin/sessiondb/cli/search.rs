//! `sessiondb search` and `index`.

use super::output;
use super::output::outln;
use sessiondb::search::{self, SearchFilter};
use std::io::Write;
use std::path::Path;

/// Search the text of every session: user and assistant messages, thinking, tool calls and
/// results, custom messages, summaries, session names. Every word of QUERY (or "phrase in
/// quotes") must occur, as a case-insensitive substring, in any script. Best matches first.
#[derive(clap::Args)]
pub struct SearchArgs {
    /// Text to find.
    query: String,
    /// Only sessions whose header cwd is DIR.
    #[arg(long, value_name = "DIR")]
    cwd: Option<String>,
    /// Only this role or entry type (user, assistant, toolResult, custom, compaction, branch_summary, session_info).
    #[arg(long)]
    role: Option<String>,
    /// Only entries since DATE (ISO date or time, or a relative age like 7d, 12h).
    #[arg(long, value_name = "DATE")]
    since: Option<String>,
    /// Show at most N hits.
    #[arg(long, value_name = "N", default_value_t = 20)]
    limit: i64,
    /// One line per matching session: its best hit and how many entries match (LIMIT counts sessions).
    #[arg(long)]
    sessions: bool,
    /// Print hits as JSON.
    #[arg(long)]
    json: bool,
}

/// Bring the search index up to date (import, sync and search do this themselves: this is
/// for repairs), and fold messages appended since a session was written into the joined
/// text `list` reads.
#[derive(clap::Args)]
pub struct IndexArgs {
    /// Empty the index and index every entry again.
    #[arg(long)]
    rebuild: bool,
    /// Print a JSON summary.
    #[arg(long)]
    json: bool,
}

/// Parses an ISO date/time or a relative age (`7d`, `12h`, `30m`) into Unix ms.
pub fn parse_when(s: &str) -> anyhow::Result<i64> {
    if let Some(ms) = sessiondb::internals::jstime::parse_ms(s) {
        return Ok(ms);
    }
    let unreadable =
        || anyhow::anyhow!("cannot read {s:?} as a date (use 2025-01-31, 2025-01-31T12:00:00Z, 7d, 12h or 30m)");
    // The unit is the last character (which may be any character: split on a char boundary).
    let split = s.char_indices().last().map_or(0, |(i, _)| i);
    let (num, unit) = s.split_at(split);
    let n: i64 = num.parse().map_err(|_| unreadable())?;
    let unit_ms: i64 = match unit {
        "d" => 86_400_000,
        "h" => 3_600_000,
        "m" => 60_000,
        _ => return Err(unreadable()),
    };
    n.checked_mul(unit_ms)
        .and_then(|age| chrono::Utc::now().timestamp_millis().checked_sub(age))
        .ok_or_else(|| anyhow::anyhow!("{s:?} is too far back"))
}

/// Brings the search index up to date; `progress_json`: `--progress-json` (phase "index").
pub(super) fn catch_up(conn: &mut sessiondb::db::Db, progress_json: bool) -> anyhow::Result<i64> {
    let mut progress = output::Progress::new("index", progress_json, 50_000);
    let n = search::catch_up(conn, |done, total| progress.update(done as u64, total as u64))?;
    progress.finish();
    Ok(n)
}

pub fn run_search(db: &Path, a: SearchArgs) -> anyhow::Result<i32> {
    let mut conn = sessiondb::db::open_existing(db)?;
    catch_up(&mut conn, false)?;
    let filter = SearchFilter {
        cwd: a.cwd.map(|c| sessiondb::internals::layout::resolve_path(&c).to_string_lossy().into_owned()),
        role: a.role,
        since_ms: a.since.as_deref().map(parse_when).transpose()?,
        limit: a.limit,
    };
    if a.sessions {
        let found = search::search_sessions(&conn, &a.query, &filter)?;
        if a.json {
            output::print_json(&found)?;
        } else {
            let mut out = std::io::stdout().lock();
            for s in &found {
                let h = &s.best;
                let when = h.timestamp.map(sessiondb::internals::jstime::iso_from_ms).unwrap_or_default();
                let more = if s.more_hits { "+" } else { "" };
                let hits = if s.hits == 1 { "1 hit".to_string() } else { format!("{}{more} hits", s.hits) };
                writeln!(
                    out,
                    "{}  {hits}  {}  {}  {}\n    {}",
                    s.session_id,
                    h.entry_id.as_deref().unwrap_or("-"),
                    h.role,
                    when,
                    crate::cli::render::one_line(&h.snippet, 200)
                )?;
            }
        }
        if found.is_empty() {
            eprintln!("no match for {:?}", a.query);
        }
        return Ok(if found.is_empty() { 1 } else { 0 });
    }
    let hits = search::search(&conn, &a.query, &filter)?;
    if a.json {
        output::print_json(&hits)?;
    } else {
        let mut out = std::io::stdout().lock();
        for h in &hits {
            let when = h.timestamp.map(sessiondb::internals::jstime::iso_from_ms).unwrap_or_default();
            writeln!(
                out,
                "{}  {}  {}  {}\n    {}",
                &h.session_id,
                h.entry_id.as_deref().unwrap_or("-"),
                h.role,
                when,
                crate::cli::render::one_line(&h.snippet, 200)
            )?;
        }
        if hits.is_empty() {
            eprintln!("no match for {:?}", a.query);
        }
    }
    Ok(if hits.is_empty() { 1 } else { 0 })
}

pub fn run_index(db: &Path, a: IndexArgs) -> anyhow::Result<i32> {
    let mut conn = sessiondb::db::open_existing(db)?;
    let started = std::time::Instant::now();
    if a.rebuild {
        search::reset(&mut conn)?;
    }
    let n = catch_up(&mut conn, false)?;
    let refreshed = sessiondb::discovery::refresh_list_texts(&mut conn)?;
    let secs = started.elapsed().as_secs_f64();
    let (rows, batches) = search::index_shape(&conn)?;
    if a.json {
        output::print_json(&serde_json::json!({
            "indexed": n, "listTextsRefreshed": refreshed, "seconds": secs,
            "postingRows": rows, "postingBatches": batches,
        }))?;
    } else {
        outln!("indexed {n} texts and refreshed {refreshed} sessions' list text in {secs:.1} s")?;
        outln!("the index holds {rows} postings rows in {batches} batches")?;
    }
    Ok(0)
}
