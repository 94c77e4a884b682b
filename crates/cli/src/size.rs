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
    Ok((n * mul as f64).round() as u64)
}

/// Formats bytes as MiB with one decimal.
pub fn mib(bytes: u64) -> String {
    format!("{:.1}", bytes as f64 / (1u64 << 20) as f64)
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
        assert!(
            super::parse("5 parsecs")
                .expect_err("unit")
                .contains("parsecs")
        );
    }
}
