//! The stylesheet and the script, embedded in the binary (nothing is fetched from elsewhere).

use super::http::Response;

/// The transcript's stylesheet, which an HTML export inlines (one copy of the look).
const STYLE: &str = crate::transcript::STYLE;
const SCRIPT: &str = include_str!("assets/app.js");

/// `/assets/NAME`.
pub fn serve(name: &str) -> Response {
    let (content_type, body) = match name {
        "style.css" => ("text/css; charset=utf-8", STYLE),
        "app.js" => ("text/javascript; charset=utf-8", SCRIPT),
        _ => return Response::text(404, "no such asset\n"),
    };
    let mut r = Response::text(200, body).with("Cache-Control", "public, max-age=3600");
    r.content_type = content_type;
    r
}
