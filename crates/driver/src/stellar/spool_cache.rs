//! Pregenerated ledgers kept for later runs of the same workload by the
//! same binary (`SpoolAt::cache`, set by `$LEDGERBENCH_SPOOL_CACHE`).
//! `ledgerbench ab` runs one small workload a hundred times; generating
//! its ledgers took longer than ingesting them (1.2 s of a 3.2 s run on
//! the 2-core VM), time that bought no rounds. The spool is never timed,
//! so reusing it changes no figure, only how many rounds an hour holds.

use std::path::Path;

use ledgerbench_workloads::stellar::StellarGen;

use super::spool::SpoolReader;
use super::{Observer, SpoolAt, StellarConfig, ingest::pregenerate};
use crate::DriverError;

/// What a spool is made from: this binary (a rebuild may generate other
/// ledgers from the same settings) and the resolved settings.
fn key(cfg: &StellarConfig) -> Result<String, DriverError> {
    let exe = std::env::current_exe()
        .and_then(|p| Ok((std::fs::metadata(&p)?, p)))
        .map(|(m, p)| {
            use std::os::unix::fs::MetadataExt;
            format!(
                "{} {} {}.{}",
                p.display(),
                m.len(),
                m.mtime(),
                m.mtime_nsec()
            )
        })
        .map_err(|e| DriverError::Generator(format!("spool cache: this binary: {e}")))?;
    let settings = serde_json::to_string(cfg)
        .map_err(|e| DriverError::Generator(format!("spool cache: settings: {e}")))?;
    Ok(format!("{exe}\n{settings}\n"))
}

/// FNV-1a, 64 bits: names a key's files (the key itself is compared).
fn fnv(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x100_0000_01b3)
    })
}

/// A reader of `cfg`'s spool in the cache directory `dir`: the kept one
/// when its key matches, else one generated now (in the cache, beside the
/// kept ones, then published under its name for the next run).
pub(super) fn cached(
    cfg: &StellarConfig,
    gen_: &StellarGen,
    (at, dir): (&SpoolAt<'_>, &Path),
    observer: &mut dyn Observer,
) -> Result<SpoolReader, DriverError> {
    let key = key(cfg)?;
    let name = format!("stellar-{:016x}", fnv(key.as_bytes()));
    let (spool, keyf) = (
        dir.join(format!("{name}.spool")),
        dir.join(format!("{name}.key")),
    );
    if std::fs::read_to_string(&keyf).is_ok_and(|k| k == key) && spool.is_file() {
        observer.phase(&format!("pregenerate: reusing {}", spool.display()));
        return SpoolReader::open(&spool, at.drop_behind, false);
    }
    let err = |what: &'static str, p: &Path| {
        let p = p.display().to_string();
        move |e: std::io::Error| DriverError::Generator(format!("spool cache {p} ({what}): {e}"))
    };
    std::fs::create_dir_all(dir).map_err(err("creating", dir))?;
    // Private names until complete, so a run reading the cache at the same
    // time never sees half a spool.
    let tmp = dir.join(format!("{name}.{}.tmp", std::process::id()));
    let mut reader = pregenerate(cfg, gen_, (&tmp, at.drop_behind), observer)?;
    let tmp_key = dir.join(format!("{name}.{}.key.tmp", std::process::id()));
    std::fs::write(&tmp_key, &key).map_err(err("writing", &tmp_key))?;
    reader.keep_as(&spool)?;
    std::fs::rename(&tmp_key, &keyf).map_err(err("keeping", &keyf))?;
    Ok(reader)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_key_names_the_settings_and_the_binary() {
        let a = StellarConfig::default();
        let mut b = a.clone();
        b.seed += 1;
        let (ka, kb) = (key(&a).expect("key"), key(&b).expect("key"));
        assert_ne!(ka, kb);
        assert_eq!(ka, key(&a).expect("key"));
        let exe = std::env::current_exe().expect("exe");
        assert!(ka.starts_with(&exe.display().to_string()), "{ka}");
        assert_ne!(fnv(ka.as_bytes()), fnv(kb.as_bytes()));
    }
}
