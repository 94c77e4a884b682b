//! A small mutational fuzzer that runs on stable Rust inside `cargo test`.
//!
//! `cargo fuzz` needs a nightly toolchain and this project's machines have
//! only stable, so the parsers of user input (run files, `--set` values,
//! results files, traces, Stellar ledger files) are fuzzed here instead:
//! seeded inputs from real files are mutated (bit flips, interesting bytes
//! and numbers, cuts, splices, repeats), each is handed to the target, and
//! a panic is a failure that prints the input and the seed to reproduce it.
//! There is no coverage feedback; the seeds and the text-aware mutations
//! (numbers at their limits, broken quoting) do what it would find first.
//!
//! The budget comes from the environment, so CI and a one-off long run use
//! the same tests: `LEDGERBENCH_FUZZ_INPUTS=N` runs exactly N inputs per target,
//! else `LEDGERBENCH_FUZZ_SECS=S` (default 5) runs for S seconds.
//! `LEDGERBENCH_FUZZ_SAVE=DIR` writes each input to `DIR/TARGET.current` before
//! running it, to catch one that kills the process rather than panics.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::time::{Duration, Instant};

use ledgerbench_rng::Rng;

/// How much to fuzz a target.
#[derive(Debug, Clone, Copy)]
pub enum Budget {
    /// Exactly this many inputs.
    Inputs(u64),
    /// As many inputs as fit in this time.
    Time(Duration),
}

impl Budget {
    /// From `LEDGERBENCH_FUZZ_INPUTS` or `LEDGERBENCH_FUZZ_SECS` (default 5 s).
    pub fn from_env() -> Self {
        let var = |n: &str| {
            std::env::var(n)
                .ok()
                .and_then(|v| v.trim().parse::<u64>().ok())
        };
        match (var("LEDGERBENCH_FUZZ_INPUTS"), var("LEDGERBENCH_FUZZ_SECS")) {
            (Some(n), _) => Budget::Inputs(n),
            (None, Some(s)) => Budget::Time(Duration::from_secs(s)),
            (None, None) => Budget::Time(Duration::from_secs(5)),
        }
    }
}

/// What a fuzzing run did.
#[derive(Debug, Clone)]
pub struct Report {
    /// The target's name.
    pub target: String,
    /// Inputs run.
    pub inputs: u64,
    /// Inputs the target accepted (returned `true`), to show the mutations
    /// reach past the first check.
    pub accepted: u64,
    /// Wall time.
    pub secs: f64,
}

impl std::fmt::Display for Report {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "fuzz {}: {} inputs in {:.1} s ({:.0}/s), {} accepted, 0 panics",
            self.target,
            self.inputs,
            self.secs,
            self.inputs as f64 / self.secs.max(1e-9),
            self.accepted
        )
    }
}

/// Numbers at the edges of what parsers and arithmetic handle.
const NUMBERS: &[&str] = &[
    "0",
    "-1",
    "1",
    "255",
    "256",
    "4294967295",
    "4294967296",
    "9223372036854775807",
    "9223372036854775808",
    "18446744073709551615",
    "18446744073709551616",
    "99999999999999999999999",
    "-9223372036854775809",
    "1e308",
    "1e309",
    "-1e309",
    "nan",
    "inf",
    "-inf",
    "0.0",
    "-0.0",
    "1.5",
    "5e-324",
];

/// Bytes that break framing and quoting.
const BYTES: &[u8] = &[
    0, 0xff, 0x7f, 0x80, b'"', b'\'', b'\\', b'\n', b'[', b']', b'{', b'}', b'=', b',', b'.',
];

/// Runs `target` on mutations of `seeds` within `budget`; panics (failing
/// the test) with the input and how to reproduce it when the target panics.
/// `target` returns whether it accepted the input.
pub fn fuzz(
    name: &str,
    seeds: &[Vec<u8>],
    budget: Budget,
    target: impl Fn(&[u8]) -> bool,
) -> Report {
    assert!(!seeds.is_empty(), "fuzz {name}: no seed inputs");
    let started = Instant::now();
    let mut rng = Rng::new(ledgerbench_rng::stream(
        0xf022,
        name.len() as u64,
        seeds.len() as u64,
    ));
    let (mut inputs, mut accepted) = (0u64, 0u64);
    let save = std::env::var_os("LEDGERBENCH_FUZZ_SAVE").map(std::path::PathBuf::from);
    // The seeds themselves first: they must not panic either.
    let mut queue: Vec<Vec<u8>> = seeds.to_vec();
    loop {
        let done = match budget {
            Budget::Inputs(n) => inputs >= n,
            Budget::Time(t) => started.elapsed() >= t,
        };
        if done {
            break;
        }
        let input = match queue.pop() {
            Some(i) => i,
            None => mutate(&mut rng, seeds),
        };
        // An input that ends the process (an abort, the OOM killer) leaves
        // no panic to report: with LEDGERBENCH_FUZZ_SAVE=DIR each input is
        // written there first, so the last one is the culprit.
        if let Some(dir) = &save {
            let _ = std::fs::write(dir.join(format!("{name}.current")), &input);
        }
        let outcome = catch_unwind(AssertUnwindSafe(|| target(&input)));
        match outcome {
            Ok(ok) => accepted += u64::from(ok),
            Err(p) => {
                let why = p
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_default();
                panic!(
                    "fuzz {name}: input {inputs} panicked: {why}\ninput ({} bytes): {:?}",
                    input.len(),
                    String::from_utf8_lossy(&input)
                );
            }
        }
        inputs += 1;
    }
    Report {
        target: name.to_string(),
        inputs,
        accepted,
        secs: started.elapsed().as_secs_f64(),
    }
}

/// One to four mutations of a random seed.
pub fn mutate(rng: &mut Rng, seeds: &[Vec<u8>]) -> Vec<u8> {
    let mut v = seeds[rng.below(seeds.len() as u64) as usize].clone();
    for _ in 0..=rng.below(4) {
        mutate_once(rng, &mut v, seeds);
    }
    v
}

fn mutate_once(rng: &mut Rng, v: &mut Vec<u8>, seeds: &[Vec<u8>]) {
    let len = v.len() as u64;
    let at = |rng: &mut Rng| rng.below(len.max(1)) as usize;
    match rng.below(9) {
        // Flip a bit.
        0 if !v.is_empty() => {
            let i = at(rng);
            v[i] ^= 1 << rng.below(8);
        }
        // An interesting byte over one.
        1 if !v.is_empty() => {
            let i = at(rng);
            v[i] = BYTES[rng.below(BYTES.len() as u64) as usize];
        }
        // Cut the tail or a slice out.
        2 if !v.is_empty() => {
            let i = at(rng);
            let j = (i + 1 + rng.below(64) as usize).min(v.len());
            if rng.below(2) == 0 {
                v.truncate(i);
            } else {
                v.drain(i..j);
            }
        }
        // Repeat a slice.
        3 if !v.is_empty() => {
            let i = at(rng);
            let j = (i + 1 + rng.below(32) as usize).min(v.len());
            let piece = v[i..j].to_vec();
            v.splice(i..i, piece);
        }
        // Splice in a slice of another seed.
        4 => {
            let other = &seeds[rng.below(seeds.len() as u64) as usize];
            if !other.is_empty() {
                let i = rng.below(other.len() as u64) as usize;
                let j = (i + 1 + rng.below(64) as usize).min(other.len());
                let k = if v.is_empty() { 0 } else { at(rng) };
                v.splice(k..k, other[i..j].iter().copied());
            }
        }
        // Replace a run of digits (a number in text) with an edge number.
        5 => replace_number(rng, v),
        // Random bytes inserted.
        6 => {
            let k = if v.is_empty() { 0 } else { at(rng) };
            let mut r = Vec::new();
            let n = 1 + rng.below(8) as usize;
            rng.fill(&mut r, n);
            v.splice(k..k, r);
        }
        // A little-endian integer field set to an edge value.
        7 if v.len() >= 4 => {
            let i = rng.below(len - 3) as usize;
            let edge =
                [0u32, 1, 0x7fff_ffff, 0x8000_0000, u32::MAX, 1 << 24][rng.below(6) as usize];
            v[i..i + 4].copy_from_slice(&edge.to_le_bytes());
        }
        _ => replace_number(rng, v),
    }
}

fn replace_number(rng: &mut Rng, v: &mut Vec<u8>) {
    let starts: Vec<usize> = (0..v.len())
        .filter(|&i| v[i].is_ascii_digit() && (i == 0 || !v[i - 1].is_ascii_digit()))
        .collect();
    let n = NUMBERS[rng.below(NUMBERS.len() as u64) as usize].as_bytes();
    if starts.is_empty() {
        let k = rng.below(v.len() as u64 + 1) as usize;
        v.splice(k..k, n.iter().copied());
        return;
    }
    let i = starts[rng.below(starts.len() as u64) as usize];
    let mut j = i;
    while j < v.len() && (v[j].is_ascii_digit() || v[j] == b'.') {
        j += 1;
    }
    v.splice(i..j, n.iter().copied());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panicking_target_fails_with_its_input() {
        let r = catch_unwind(|| {
            fuzz(
                "demo",
                &[b"ledgers = 10".to_vec()],
                Budget::Inputs(10_000),
                |b| {
                    assert!(!b.windows(2).any(|w| w == b"-1"), "found -1");
                    true
                },
            )
        });
        let msg = r.expect_err("the fuzzer finds -1");
        let text = msg.downcast_ref::<String>().cloned().unwrap_or_default();
        assert!(
            text.contains("fuzz demo") && text.contains("found -1"),
            "{text}"
        );
    }

    #[test]
    fn mutations_are_seeded_and_varied() {
        let seeds = [b"records = 100\nworkload = \"a\"".to_vec()];
        let run = |seed| {
            let mut rng = Rng::new(seed);
            (0..200)
                .map(|_| mutate(&mut rng, &seeds))
                .collect::<Vec<_>>()
        };
        assert_eq!(run(1), run(1), "same seed, same inputs");
        let distinct: std::collections::BTreeSet<_> = run(1).into_iter().collect();
        assert!(distinct.len() > 150, "{} distinct of 200", distinct.len());
    }

    #[test]
    fn an_input_budget_runs_exactly_that_many() {
        let r = fuzz("count", &[b"x".to_vec()], Budget::Inputs(1234), |_| false);
        assert_eq!(r.inputs, 1234);
        assert_eq!(r.accepted, 0);
    }
}
