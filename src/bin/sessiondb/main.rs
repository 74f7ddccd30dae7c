//! The `sessiondb` command: parses arguments, calls the library, prints.

mod bench;
mod cli;
#[cfg(feature = "serve")]
mod serve;
mod transcript;

fn main() {
    std::process::exit(cli::run());
}
