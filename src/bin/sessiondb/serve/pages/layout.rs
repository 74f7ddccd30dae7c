//! The page shell (head with the embedded stylesheet and script, the navigation bar) and the
//! error pages.

use super::super::http::Response;
use maud::{html, Markup, DOCTYPE};

/// Which section of the navigation is current.
#[derive(PartialEq, Eq, Clone, Copy)]
pub enum Section {
    Sessions,
    Usage,
    None,
}

/// A whole page around `body`.
pub fn page(title: &str, section: Section, search: Option<&str>, body: Markup) -> Markup {
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                meta name="referrer" content="no-referrer";
                title { (title) " · sessiondb" }
                link rel="stylesheet" href="/assets/style.css";
                script src="/assets/app.js" defer {}
            }
            body {
                header.top {
                    a.brand href="/" { "sessiondb" }
                    nav {
                        a href="/" class=[(section == Section::Sessions).then_some("current")] { "Sessions" }
                        a href="/usage" class=[(section == Section::Usage).then_some("current")] { "Usage" }
                    }
                    form.search action="/" method="get" role="search" {
                        input type="search" name="q" placeholder="Search every session" value=[search] aria-label="Search";
                        button type="submit" { "Search" }
                    }
                }
                main { (body) }
            }
        }
    }
}

pub fn refused(why: &str) -> Markup {
    page("Refused", Section::None, None, html! { h1 { "Refused" } p { (why) } })
}

pub fn error_page(status: u16, message: &str) -> Response {
    Response::html(
        status,
        page("Error", Section::None, None, html! { h1 { "Something went wrong" } pre.error { (message) } }),
    )
}

pub fn not_found() -> Response {
    Response::html(
        404,
        page("Not found", Section::None, None, html! { h1 { "Not found" } p { a href="/" { "All sessions" } } }),
    )
}
