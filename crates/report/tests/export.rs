//! Every output goes through one exporter path: each format renders the
//! committed fixtures into documents, and `write` is what touches the disk.

use std::path::{Path, PathBuf};

use ledgerbench_report::doc::{self, Loaded};
use ledgerbench_report::export::{self, Exporter};
use ledgerbench_report::render::VerdictOptions;

fn fixture(name: &str) -> Loaded {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures/results")
        .join(name);
    doc::load(&p).expect("fixture loads")
}

fn paths(docs: &[export::Document]) -> Vec<String> {
    docs.iter().map(|d| d.path.display().to_string()).collect()
}

#[test]
fn each_format_renders_its_documents_and_only_write_touches_the_disk() {
    let docs = [fixture("stellar-smoke")];
    let v = VerdictOptions::default();
    let md = export::Markdown(v).render(&docs).expect("markdown");
    let names = paths(&md);
    assert!(names.contains(&"report.md".into()), "{names:?}");
    assert!(names.iter().any(|n| n.ends_with(".svg")), "{names:?}");
    assert!(names.iter().any(|n| n.ends_with(".csv")), "{names:?}");
    let html = export::Html(v).render(&docs).expect("html");
    assert!(paths(&html).contains(&"report.html".into()));
    // CSV and SVG are the markdown report's files of that kind, unchanged.
    for (e, ext) in [
        (&export::Csv as &dyn Exporter, "csv"),
        (&export::Svg as &dyn Exporter, "svg"),
    ] {
        let only = e.render(&docs).expect("renders");
        assert!(!only.is_empty(), "{}", e.name());
        for d in &only {
            assert_eq!(d.path.extension().and_then(|x| x.to_str()), Some(ext));
            assert!(
                md.contains(d),
                "{} differs from the report's",
                d.path.display()
            );
        }
    }
    let bmf = export::Bencher.render(&docs).expect("bencher");
    let json: serde_json::Value = serde_json::from_str(&bmf[0].text).expect("json");
    assert!(json.as_object().is_some_and(|o| !o.is_empty()));
    // The smoke run had no memory limit: no verdict, said so.
    let e = export::Verdict(v).render(&docs).expect_err("no verdict");
    assert!(e.to_string().contains("memory limit"), "{e}");
    let summary = export::RunSummary.render(&docs).expect("summary");
    assert!(
        summary[0].text.contains("## Ingestion"),
        "{}",
        summary[0].text
    );
    // Point reads have their own summary.
    let points = export::RunSummary
        .render(&[fixture("point-reads-small")])
        .expect("summary");
    assert!(!points[0].text.contains("## Ingestion"));
    // Nothing above wrote a file; `write` does, and refuses a directory
    // that holds files unless told to overwrite.
    let t = tempfile::tempdir().expect("tempdir");
    let dir: PathBuf = t.path().join("r");
    let w = export::write(&dir, &md, false).expect("fresh directory");
    assert_eq!(w.files.len(), md.len());
    assert!(dir.join("report.md").is_file());
    let e = export::write(&dir, &md, false).expect_err("not empty");
    assert!(e.to_string().contains("--overwrite"), "{e}");
    export::write(&dir, &md, true).expect("overwrite");
    for name in [
        "markdown", "html", "csv", "svg", "bencher", "verdict", "summary",
    ] {
        assert_eq!(export::by_name(name, v).expect("known").name(), name);
    }
    assert!(export::by_name("pdf", v).is_none());
}
