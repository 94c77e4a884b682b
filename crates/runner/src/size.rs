//! Human sizes: `64MiB`, `1.5GB`, `4096`.

/// Parses a byte size with an optional unit (B, KiB, MiB, GiB, TiB, KB, MB, GB, TB; case-insensitive).
pub fn parse(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let n: f64 = num
        .parse()
        .map_err(|_| format!("`{s}` is not a size; write e.g. 512MiB, 4GiB or 1048576"))?;
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
            return Err(format!(
                "unknown size unit `{u}` in `{s}`; use B, KiB, MiB, GiB, TiB, KB, MB, GB or TB"
            ));
        }
    };
    let bytes = n * mul as f64;
    // A float past u64 would saturate silently; no device or memory limit
    // ledgerbench sets up comes near a pebibyte.
    if bytes > MAX as f64 {
        return Err(format!(
            "`{s}` is over the largest size ledgerbench takes, 1PiB"
        ));
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
        assert!(e.contains("1PiB"), "{e}");
        let e = super::parse_named("run file x.toml: engine_memory", "lots")
            .expect_err("named")
            .to_string();
        assert!(e.starts_with("run file x.toml: engine_memory: "), "{e}");
        assert!(
            super::parse("5 parsecs")
                .expect_err("unit")
                .contains("parsecs")
        );
    }
}
