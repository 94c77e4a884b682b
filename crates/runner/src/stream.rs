//! Running an operation stream (a replay or a generator) on each backend
//! with every meter: placement, one run per backend and thread count, the
//! results kept after each, the summary at the end.

use std::process::ExitCode;

use ledgerbench_driver::observe::{Fanout, Observer};
use ledgerbench_driver::ops;
use ledgerbench_driver::results::workload::{OpsConfig, WorkloadConfig};
use ledgerbench_driver::results::{ReplayResult, RunResult};
use ledgerbench_meter::loopdev::Device;
use ledgerbench_report::export::RunSummary;

use crate::harness::{self, Placement};
use crate::observe::{JsonlSink, ProgressView};
use crate::registry::BackendSpec;
use crate::replay_cmd::CommonArgs;
use crate::state_cache::Use;
use ledgerbench_workloads::synth::Initial;

/// Runs the stream on opened stores and devices with this many client
/// threads, its initial state played, alone, or given (a generator's; a
/// replay plays what it reads).
pub(crate) type Exec<'a> = dyn Fn(
        &[&dyn ledgerbench_core::KvStore],
        &[Option<&Device>],
        &mut dyn Observer,
        u64,
        Initial,
    ) -> anyhow::Result<ops::OpsOutcome>
    + 'a;

/// Runs an operation stream on each backend with every meter.
///
/// Long because a run's steps in order (specs, placement, one run per backend, results kept after each) for every op-stream workload.
pub(crate) fn run_stream(
    args: &CommonArgs,
    header: &ledgerbench_trace::Header,
    (workload, config, preset): (String, OpsConfig, Option<String>),
    default_device: u64,
    (threads, split): (&[u64], &str),
    live_bytes: Option<u64>,
    (exec, state): (&Exec<'_>, Option<&Use<'_>>),
) -> anyhow::Result<ExitCode> {
    args.output.check_build()?;
    let mut specs = harness::specs(
        &args.backends,
        &args.engine_memory,
        args.level.durability,
        &args.set.sets,
    )?;
    // A store that expires its oldest data by size (FIFO) gets a cap that
    // holds what the workload keeps alive, and an eighth for the files in
    // flight; else it would drop live data and the reads would fail.
    if let Some(live) = live_bytes {
        let cap = live.saturating_add(live / 8);
        for s in &mut specs {
            if s.evicts_oldest() && s.tune(ledgerbench_core::Tuning::EvictionCapAtLeast(cap)) {
                ledgerbench_core::note!(
                    "[{}] its size cap is kept at {} MiB or above: the workload's live data and an eighth",
                    s.name,
                    cap >> 20
                );
            }
        }
    }
    let memory_limit = args.limit.bytes()?;
    let device_size = args.place.size(default_device)?;
    let (out, rundir) = args.output.create(&workload)?;
    // A replay's trace is read during the run; generators read no file.
    let inputs = config.trace.iter().map(std::path::PathBuf::from).collect();
    let mut result = RunResult {
        header: ledgerbench_driver::env::header(
            &workload,
            header.seed,
            &out,
            Some(args.level.durability),
        ),
        preset,
        config: WorkloadConfig::Ops(config),
        runs: Vec::new(),
    };
    let place = Placement {
        memory_limit,
        // Generators of op streams have no measured budget yet: nothing is
        // added, and the results say so (no allowance recorded).
        harness_allowance: 0,
        device_size,
        read_ahead_kb: args.place.read_ahead_kb,
        keep_stores: false,
        reattach: false,
        inputs,
        seed_from: None,
        save_to: None,
    };
    let mut failed = false;
    let soaked = matches!(&result.config, WorkloadConfig::Ops(c) if c.soak.is_some());
    // A worker going on after its predecessor was ended (memory limit,
    // watchdog) keeps the runs recorded and runs the rest.
    if let Some(prev) = crate::supervise::resumed(&out) {
        failed = prev.runs.iter().any(|r| r.error.is_some());
        // The run began when its first process did, not at this resume.
        result.header.started_at = prev.header.started_at;
        result.runs = prev.runs;
    }
    // Written before the first run too, so a run killed midway has a
    // results file to be recorded in.
    crate::output::write_json(&out.join("results.json"), &result)?;
    let cells = specs
        .iter()
        .flat_map(|s| threads.iter().map(move |&n| (s, n)));
    for (spec, n) in cells {
        // One thread count keeps the plain backend label; a sweep names each.
        let label = if threads == [1] {
            spec.name.clone()
        } else {
            format!("{}@{n}t", spec.name)
        };
        if result.runs.iter().any(|r| r.label == label) {
            continue;
        }
        ledgerbench_core::note!(
            "[{label}] running {} with {n} client thread(s)...",
            result.header.workload
        );
        let mut run = harness::new_run(&label, memory_limit);
        run.design = Some(spec.name.clone());
        crate::supervise::note_current_run(
            &out,
            &label,
            0,
            memory_limit,
            crate::supervise::Keep::No,
        );
        let per_store: Vec<BackendSpec> = header.stores.iter().map(|_| spec.clone()).collect();
        // With --state-cache the initial state is loaded once and each run
        // opens a cold copy of it.
        let given = state.map(|u| {
            crate::state_cache::given(
                u,
                (spec, n, &label),
                &place,
                (&header.stores, &per_store),
                &rundir,
                &result.header.env,
                exec,
            )
        });
        let given = match given.transpose() {
            Ok(g) => g,
            Err(e) => {
                // No run without the state it was to be given.
                ledgerbench_core::note!("[{label}] failed: {e:#}");
                run.error = Some(format!("{e:#}"));
                failed = true;
                result.runs.push(run);
                crate::output::write_json(&out.join("results.json"), &result)?;
                crate::supervise::clear_current_run(&out);
                continue;
            }
        };
        let mut cell_place = place.clone();
        cell_place.seed_from = given.as_ref().map(|g| g.stores.clone());
        let initial = match &given {
            Some(_) => Initial::Given,
            None => Initial::Play,
        };
        let mut replayed = None;
        let mut jsonl = JsonlSink::append(&out.join("segments.jsonl"), &label);
        let mut view = ProgressView::new(&label);
        // A soak stops itself before its disk or memory runs out.
        let mut guard =
            soaked.then(|| crate::guard::Guard::new(device_size, rundir.path(), memory_limit));
        harness::run_on_stores(
            &cell_place,
            &label,
            (&header.stores, &per_store),
            &rundir,
            &mut result.header.env,
            &mut run,
            &mut |stores, devs| match exec(
                stores,
                devs,
                &mut Fanout(
                    [&mut jsonl as &mut dyn Observer, &mut view]
                        .into_iter()
                        .chain(guard.as_mut().map(|g| g as &mut dyn Observer))
                        .collect(),
                ),
                n,
                initial,
            ) {
                Ok(mut o) => {
                    let err = o.error.take();
                    replayed = Some(o);
                    err
                }
                Err(e) => Some(ledgerbench_driver::DriverError::Config(format!("{e:#}"))),
            },
        );
        view.finish();
        if let Some(e) = jsonl.take_error() {
            run.error.get_or_insert(e);
        }
        if let Some(o) = replayed {
            run.ingest_samples = o.samples;
            run.phases = o.phases;
            // The segments are in segments.jsonl only (a results file
            // holding them too was 15 MB for a 10x mixgraph cell); what
            // the run kept is their fold, which the summary holds.
            run.replay = Some(ReplayResult {
                segments: Vec::new(),
                summary: o.summary,
                threads: Some(n),
                split: (n > 1).then(|| split.to_string()),
                segments_file: Some("segments.jsonl".to_string()),
                initial_state: given.map(|g| g.state),
            });
        }
        if let Some(e) = &run.error {
            failed = true;
            ledgerbench_core::note!("[{label}] failed: {e}");
        }
        result.runs.push(run);
        // Rewritten after every backend so a later crash keeps the earlier runs.
        crate::output::write_json(&out.join("results.json"), &result)?;
        crate::supervise::clear_current_run(&out);
    }
    // Read back with its segments, as a report reads it.
    let summary = ledgerbench_report::doc::load(&out)
        .map(|l| RunSummary::text(&l.doc))
        .unwrap_or_else(|e| format!("the results could not be read back: {e}\n"));
    args.output.finish(&out, &summary, failed)
}
