//! The CSV series of a report, written by the `csv` crate so that labels
//! with commas (a hybrid run's `ledgers=...,txdata=...`) are quoted.

use ledgerbench_results::BackendRun;

fn o(v: Option<f64>) -> String {
    v.map_or(String::new(), |x| x.to_string())
}

fn u(v: Option<u64>) -> String {
    v.map_or(String::new(), |x| x.to_string())
}

/// `batches.csv` (one row per batch and store) and `samples.csv` (one row
/// per second of ingestion) of labelled runs. Absent figures are empty cells.
///
/// Long because the two files' columns are listed in full, then filled a row per store and batch and per sample.
pub fn series(runs: &[(String, &BackendRun)]) -> Result<(String, String), csv::Error> {
    let mut b = csv::Writer::from_writer(Vec::new());
    b.write_record([
        "run",
        "batch",
        "first_ledger",
        "ledgers",
        "txs",
        "total_secs",
        "writer_wait_secs",
        "store",
        "entries",
        "logical_bytes",
        "raw_bytes",
        "write_secs",
        "flush_secs",
        "compact_secs",
        "engine_write_bytes",
        "device_write_bytes",
        "device_read_bytes",
        "disk_allocated_bytes",
    ])?;
    let mut s = csv::Writer::from_writer(Vec::new());
    s.write_record([
        "run",
        "t",
        "ledgers",
        "lookups",
        "bytes",
        "stall_micros",
        "pending_compaction_bytes",
        "running_compactions",
        "write_stopped",
    ])?;
    for (l, r) in runs {
        for rec in &r.batches {
            for st in &rec.stores {
                b.write_record([
                    l.clone(),
                    rec.batch.to_string(),
                    rec.first_ledger.to_string(),
                    rec.ledgers.to_string(),
                    rec.txs.to_string(),
                    rec.total_secs.to_string(),
                    rec.writer_wait_secs.to_string(),
                    st.store.clone(),
                    st.entries.to_string(),
                    st.logical_bytes.to_string(),
                    st.raw_bytes.to_string(),
                    st.write_secs.to_string(),
                    st.flush_secs.to_string(),
                    o(st.compact_secs),
                    u(st.engine_write_bytes),
                    u(st.device_write_bytes),
                    u(st.device_read_bytes),
                    st.disk.allocated_bytes.to_string(),
                ])?;
            }
        }
        for x in &r.ingest_samples {
            s.write_record([
                l.clone(),
                x.t.to_string(),
                u(x.ledgers),
                x.lookups.to_string(),
                x.bytes.to_string(),
                u(x.stall_micros),
                u(x.pending_compaction_bytes),
                u(x.running_compactions),
                x.write_stopped.map_or(String::new(), |w| w.to_string()),
            ])?;
        }
    }
    let text = |w: csv::Writer<Vec<u8>>| -> Result<String, csv::Error> {
        let bytes = w
            .into_inner()
            .map_err(|e| csv::Error::from(e.into_error()))?;
        Ok(String::from_utf8_lossy(&bytes).into_owned())
    };
    Ok((text(b)?, text(s)?))
}

#[cfg(test)]
mod tests {
    use ledgerbench_results::RunResult;

    use super::series;

    #[test]
    fn a_hybrid_label_with_commas_keeps_every_column() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../fixtures/results/stellar-smoke/results.json"
        );
        let r: RunResult =
            serde_json::from_slice(&std::fs::read(path).expect("fixture")).expect("results");
        let label = "ledgers=rocksdb-leveled,txdata=mdbx,txindex=lmdb".to_string();
        let (b, s) = series(&[(label.clone(), &r.runs[0])]).expect("csv");
        for text in [b, s] {
            let mut rd = csv::Reader::from_reader(text.as_bytes());
            let width = rd.headers().expect("header").len();
            let mut rows = 0;
            for rec in rd.records() {
                let rec = rec.expect("row");
                assert_eq!(rec.len(), width, "{text}");
                assert_eq!(&rec[0], label);
                rows += 1;
            }
            // The fixture predates per-second samples: only batches must have rows.
            assert!(rows > 0 || text.starts_with("run,t,"), "{text}");
        }
    }
}
