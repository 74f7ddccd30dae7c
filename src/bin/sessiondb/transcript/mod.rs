//! A session's transcript for people: the HTML of its entries (serve's session page and
//! `export --format html` draw them with the same code and the same stylesheet), the
//! self-contained HTML document and the Markdown of `export`, and the folding of long
//! messages. Everything from the session is escaped wherever it is written.

pub mod document;
pub mod fold;
pub mod format;
pub mod html;
pub mod markdown;

/// The one stylesheet: serve sends it as `/assets/style.css`, an HTML export inlines it.
pub const STYLE: &str = include_str!("style.css");
