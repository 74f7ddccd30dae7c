//! The `sessiondb` command: parses arguments, calls the library, prints.

mod bench;
mod cli;

fn main() {
    std::process::exit(cli::run());
}
