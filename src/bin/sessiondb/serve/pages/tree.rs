//! The tree beside a transcript: roots, branch points, leaves and labelled entries, indented
//! where the tree branches; each a link that shows the path to it.

use super::super::http::link;
use super::format;
use maud::{html, Markup};
use sessiondb::outline::Outline;

pub fn outline(base: &str, o: &Outline) -> Markup {
    html! {
        h2 { "Tree" }
        p.sub {
            (format::int(o.entries as i64)) " entries · " (format::int(o.leaves as i64)) " leaves · "
            (format::int(o.branch_points as i64)) " branch points · " (format::int(o.path_len as i64)) " on this path"
        }
        ol.outline {
            @for n in &o.nodes {
                @let classes = [
                    n.on_path.then_some("on-path"), n.active.then_some("active"),
                    (n.children == 0).then_some("leaf"), (n.children > 1).then_some("fork"),
                ].into_iter().flatten().collect::<Vec<_>>().join(" ");
                li class=(classes) data-depth=(n.depth.min(40)) data-entry-id=[n.id.as_deref()] {
                    @let kind = n.kind.as_ref();
                    @let what = kind.map(|k| k.role.clone().or(k.kind.clone()).unwrap_or_default()).unwrap_or_default();
                    @match &n.id {
                        Some(id) => a href=(link(base, &[("leaf", Some(id.as_str()))])) {
                            span.what { (what) } " " code { (format::short(id, 12)) }
                        },
                        None => span { span.what { (what) } " (no id)" },
                    }
                    @if n.children > 1 { " " span.badge { (n.children) " branches" } }
                    @if n.children == 0 { " " span.badge { "leaf" } }
                    @if let Some(l) = &n.label { " " span.label { (format::short(l, 40)) } }
                    @if depth_cut(n.depth) { " " span.sub { "depth " (n.depth) } }
                    " " time.sub { (format::time(kind.and_then(|k| k.ts_ms))) }
                }
            }
        }
        @if o.omitted > 0 { p.sub { (format::int(o.omitted as i64)) " more nodes not shown." } }
    }
}

fn depth_cut(depth: usize) -> bool {
    depth > 40
}
