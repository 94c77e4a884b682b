//! Workload models: what a trace's operations look like per store (the
//! mix, sizes, insert order, access skew, temporal locality, lifetimes,
//! commits), fitted in one pass of bounded memory over any trace
//! ledgerbench reads (`ledgerbench fit`), written as TOML with a comment
//! per field that a person can also write by hand, and played at any scale
//! by `ledgerbench run synth`.
//!
//! The distributions are db_bench `mixgraph`'s (a Generalized Pareto of
//! value sizes, a power law of key access, two exponentials of key-range
//! hotness), so a fit can be checked against the parameters db_bench was
//! given; the fits themselves are in `ledgerbench-stats`, held to scipy.

pub mod finish;
pub mod model;
pub mod sample;
pub mod survey;
pub mod text;

pub use finish::finish;
pub use model::Workload;
pub use survey::{Options, survey};
pub use text::{ModelError, parse, write};
