//! Bar charts as inline SVG (shapes and attributes only: no script, no style attribute, so
//! the CSP needs nothing inline).

use maud::{html, Markup};

/// Horizontal bars, one per `(label, value, shown value)`, scaled to the largest.
pub fn bars(title: &str, rows: &[(String, f64, String)]) -> Markup {
    let max = rows.iter().map(|r| r.1).fold(0.0f64, f64::max);
    let (row_h, label_w, bar_w, value_w) = (18.0, 220.0, 420.0, 140.0);
    let height = row_h * rows.len() as f64 + 4.0;
    let width = label_w + bar_w + value_w;
    html! {
        figure.chart {
            figcaption { (title) }
            svg xmlns="http://www.w3.org/2000/svg" viewBox={ "0 0 " (width) " " (height) } width=(width) height=(height) role="img" aria-label=(title) {
                @for (i, (label, value, shown)) in rows.iter().enumerate() {
                    @let y = i as f64 * row_h + 2.0;
                    @let w = if max > 0.0 { (value / max * bar_w).max(if *value > 0.0 { 1.0 } else { 0.0 }) } else { 0.0 };
                    text x=(label_w - 6.0) y=(y + 13.0) text-anchor="end" class="chart-label" { (super::format::short(label, 30)) }
                    rect x=(label_w) y=(y + 2.0) width=(format!("{w:.1}")) height=(row_h - 5.0) class="bar" {}
                    text x=(label_w + w + 4.0) y=(y + 13.0) class="chart-value" { (shown) }
                }
            }
        }
    }
}
