//! `export --format html`: one self-contained file. The stylesheet inline, no script, nothing
//! loaded from anywhere (its own Content-Security-Policy says so to the browser), the entries
//! as serve's session page draws them, long ones folded under `<details>` (nothing is left
//! out of the file).

use super::fold::Mode;
use super::html::{self, View};
use super::{format, STYLE};
use maud::{html, PreEscaped, DOCTYPE};
use sessiondb::discovery::SessionInfo;
use sessiondb::tree::Row;

/// What the file's page may do: its inline style, `data:` images; nothing else.
pub const CSP: &str = "default-src 'none'; style-src 'unsafe-inline'; img-src data:";

/// The document of the branch `rows` (root first) of session `info`.
pub fn page(info: &SessionInfo, rows: &[Row], thinking: bool) -> String {
    let title = format::short(info.name.as_deref().unwrap_or(&info.first_message), 80);
    let none = |_: &str| String::new();
    let view = View { fold: Mode::Closed, thinking, full: &none };
    let leaf = rows.last().and_then(|r| r.id.as_deref());
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta http-equiv="Content-Security-Policy" content=(CSP);
                meta name="viewport" content="width=device-width, initial-scale=1";
                meta name="referrer" content="no-referrer";
                title { (title) " · sessiondb" }
                // Our own stylesheet, not the session's: nothing in it comes from the session.
                style { (PreEscaped(STYLE)) }
            }
            body {
                main.export {
                    div.session-head {
                        h1 { (title) }
                        dl.facts {
                            dt { "Project" } dd { (info.cwd) }
                            dt { "Session" } dd.mono #session-id { (info.id) }
                            dt { "Created" } dd { (format::time(info.created_ms)) " UTC" }
                            dt { "Last activity" } dd { (format::time(info.modified_ms)) " UTC" }
                            dt { "Entries" } dd { (format::int(rows.len() as i64)) " on this branch" }
                        }
                    }
                    section.transcript #transcript data-leaf=[leaf] {
                        h2 { "Branch to " @if let Some(id) = leaf { code { (id) } } @else { "(empty)" } }
                        @if rows.is_empty() { p { "This session has no entries." } }
                        @for row in rows { (html::entry(row, view)) }
                    }
                }
            }
        }
    }
    .into_string()
}
