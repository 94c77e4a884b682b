//! Any bytes given to the trace reader end in operations or an error, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(mut r) = ledgerbench_trace::TraceReader::new(std::io::Cursor::new(data), "fuzz".into()) {
        while let Ok(Some(_)) = r.next_op() {}
    }
});
