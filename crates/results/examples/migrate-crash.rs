//! Rewrites crash results files whose stored summaries were counted by an
//! older rule (see `ledgerbench_results::crash::SUMMARY_RULE`): every run's
//! summary is recounted from its cycles and the file records the rule.
//!
//! `cargo run --release -p ledgerbench-results --example migrate-crash -- FILE...`

use std::process::ExitCode;

use ledgerbench_results::crash::CrashResults;

fn main() -> ExitCode {
    let files: Vec<String> = std::env::args().skip(1).collect();
    if files.is_empty() {
        eprintln!("usage: migrate-crash RESULTS.json...");
        return ExitCode::from(2);
    }
    for f in files {
        let migrated = std::fs::read(&f)
            .map_err(|e| e.to_string())
            .and_then(|b| serde_json::from_slice::<CrashResults>(&b).map_err(|e| e.to_string()))
            .and_then(|mut r| {
                let changed = r.migrate();
                let text = serde_json::to_vec_pretty(&r).map_err(|e| e.to_string())?;
                let tmp = format!("{f}.tmp");
                std::fs::write(&tmp, text)
                    .and_then(|()| std::fs::rename(&tmp, &f))
                    .map_err(|e| e.to_string())?;
                Ok(changed)
            });
        match migrated {
            Ok(n) => eprintln!("{f}: {n} summaries recounted"),
            Err(e) => {
                eprintln!("{f}: {e}");
                return ExitCode::from(2);
            }
        }
    }
    ExitCode::SUCCESS
}
