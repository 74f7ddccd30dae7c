//! `sessiondb bench`: measures sessiondb in-process, through the library, on an existing pi
//! sessions folder or a deterministic synthetic corpus, with the figure names of bench-pi
//! (`../shared/bench-pi/`) so the results sit next to pi's own stores.

pub mod synth;
