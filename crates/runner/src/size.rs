//! Human sizes: `64MiB`, `1.5GB`, `4096`.

/// A size that could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SizeError {
    /// Not a number with a unit.
    #[error("`{0}` is not a size; write e.g. 512MiB, 4GiB or 1048576")]
    NotASize(String),
    /// A unit none of those accepted.
    #[error("unknown size unit `{unit}` in `{given}`; use B, KiB, MiB, GiB, TiB, KB, MB, GB or TB")]
    Unit {
        /// The unit as written.
        unit: String,
        /// The whole size as written.
        given: String,
    },
    /// Over [`MAX`].
    #[error("`{0}` is over the largest size ledgerbench takes, 1PiB")]
    TooLarge(String),
}

/// Parses a byte size with an optional unit (B, KiB, MiB, GiB, TiB, KB, MB, GB, TB; case-insensitive).
pub fn parse(s: &str) -> Result<u64, SizeError> {
    let t = s.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let n: f64 = num
        .parse()
        .map_err(|_| SizeError::NotASize(s.to_string()))?;
    let mul: u64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kib" => 1 << 10,
        "m" | "mib" => 1 << 20,
        "g" | "gib" => 1 << 30,
        "t" | "tib" => 1 << 40,
        "kb" => 1_000,
        "mb" => 1_000_000,
        "gb" => 1_000_000_000,
        "tb" => 1_000_000_000_000,
        u => {
            return Err(SizeError::Unit {
                unit: u.to_string(),
                given: s.to_string(),
            });
        }
    };
    let bytes = n * mul as f64;
    // A float past u64 would saturate silently; no device or memory limit
    // ledgerbench sets up comes near a pebibyte.
    if bytes > MAX as f64 {
        return Err(SizeError::TooLarge(s.to_string()));
    }
    Ok(bytes.round() as u64)
}

/// The largest size accepted: 1 PiB.
pub const MAX: u64 = 1 << 50;

/// [`parse`] for the value of `what` (a flag, or a key of a named file),
/// naming it in the error.
pub fn parse_named(what: &str, s: &str) -> anyhow::Result<u64> {
    parse(s).map_err(|e| anyhow::anyhow!("{what}: {e}"))
}

/// `--memory-limit SIZE`: the bytes, after checking cgroups are usable here.
pub fn memory_limit(arg: &str) -> anyhow::Result<u64> {
    memory_limit_of("--memory-limit", arg)
}

/// The smallest memory limit taken: under it the cgroup cannot hold
/// ledgerbench's own process beside an engine, and a run would only be
/// killed at its start (MDBX's fan-out runs at 4 MiB, its pages reclaimed
/// page cache; `crates/cli/tests/fanout.rs`).
pub const MIN_MEMORY_LIMIT: u64 = 4 << 20;

/// A memory limit given by `flag` (`--memory-limit`, `--sweep-limits`).
pub fn memory_limit_of(flag: &str, arg: &str) -> anyhow::Result<u64> {
    let b = crate::size::parse_named(flag, arg)?;
    if b < MIN_MEMORY_LIMIT {
        anyhow::bail!(
            "{flag} {arg}: under 4 MiB a memory cgroup cannot hold ledgerbench's own process beside an engine; give at least 4MiB"
        );
    }
    ledgerbench_meter::cgroup::MemoryLimit::available()
        .map_err(|e| anyhow::anyhow!("{flag}: {e}"))?;
    Ok(b)
}

#[cfg(test)]
mod tests {
    #[test]
    fn parses_units_and_refuses_garbage() {
        assert_eq!(super::parse("4096"), Ok(4096));
        assert_eq!(super::parse("64MiB"), Ok(64 << 20));
        assert_eq!(super::parse("1.5 GiB"), Ok(3 << 29));
        assert_eq!(super::parse("2GB"), Ok(2_000_000_000));
        assert!(super::parse("lots").is_err());
        assert!(super::parse("1PiB").is_err(), "no PiB unit");
        assert_eq!(super::parse("1024TiB"), Ok(super::MAX));
        let e = super::parse("99999999999TiB").expect_err("too large");
        assert!(
            matches!(&e, super::SizeError::TooLarge(_)) && e.to_string().contains("1PiB"),
            "{e}"
        );
        let e = super::parse_named("run file x.toml: engine_memory", "lots")
            .expect_err("named")
            .to_string();
        assert!(e.starts_with("run file x.toml: engine_memory: "), "{e}");
        assert_eq!(
            super::parse("5 parsecs"),
            Err(super::SizeError::Unit {
                unit: "parsecs".into(),
                given: "5 parsecs".into()
            })
        );
    }
}
