//! The Go engines' shared library (`libledgerbenchgo.so`, built from `go/`
//! as `-buildmode=c-shared`), loaded into this process the first time a Go
//! store opens. Loaded, not linked: the Go runtime starts threads and
//! takes a few MiB when it is loaded, so a run of other engines carries
//! none of it. Never unloaded (a Go runtime cannot be).

use std::ffi::{CStr, CString, c_char, c_int, c_void};
use std::path::PathBuf;
use std::sync::OnceLock;

type OpenFn = unsafe extern "C" fn(
    *const c_char,
    usize,
    *const c_char,
    usize,
    *const c_char,
    usize,
    *mut usize,
) -> *mut c_char;
type HandleFn = unsafe extern "C" fn(usize) -> *mut c_char;
type GetFn =
    unsafe extern "C" fn(usize, *const c_char, usize, *mut c_char, usize, *mut i64) -> *mut c_char;
type WriteFn = unsafe extern "C" fn(usize, *const c_char, usize) -> *mut c_char;
type ScanFn = unsafe extern "C" fn(
    usize,
    *const c_char,
    usize,
    usize,
    *mut c_char,
    usize,
    *mut usize,
    *mut usize,
    *mut c_int,
) -> *mut c_char;
type StatsFn = unsafe extern "C" fn(usize, *mut c_char, usize, *mut usize) -> *mut c_char;

/// The C ABI of `go/capi.go`.
pub(crate) struct GoLib {
    pub open: OpenFn,
    pub close: HandleFn,
    pub get: GetFn,
    pub write: WriteFn,
    pub scan: ScanFn,
    pub flush: HandleFn,
    pub compact: HandleFn,
    pub stats: StatsFn,
}

/// Why the Go engines cannot load when [`library_path`] finds nothing.
pub(crate) const MISSING: &str = "libledgerbenchgo.so is not beside the ledgerbench binary and the one this build made is gone: copy it from the build (target/release/build/ledgerbench-gokv-*/out/) beside the binary or name it with LEDGERBENCH_GO_LIB (when that is set, only the file it names is tried), or rebuild (cargo build --release --workspace)";

/// Where the library is: `$LEDGERBENCH_GO_LIB`, else `libledgerbenchgo.so`
/// beside the running program (an installed ledgerbench), else the one
/// this crate's build made.
pub fn library_path() -> Option<PathBuf> {
    // A path the user names is the only one tried.
    if let Some(p) = std::env::var_os("LEDGERBENCH_GO_LIB") {
        return Some(PathBuf::from(p)).filter(|p| p.is_file());
    }
    let beside = std::env::current_exe()
        .ok()
        .and_then(|exe| exe.parent().map(|d| d.join("libledgerbenchgo.so")));
    if let Some(p) = beside.filter(|p| p.is_file()) {
        return Some(p);
    }
    option_env!("LEDGERBENCH_GO_LIB_BUILT")
        .map(PathBuf::from)
        .filter(|p| p.is_file())
}

/// The loaded library, or why it cannot be loaded.
pub(crate) fn lib() -> Result<&'static GoLib, String> {
    static LIB: OnceLock<Result<GoLib, String>> = OnceLock::new();
    LIB.get_or_init(load).as_ref().map_err(Clone::clone)
}

fn dl_error() -> String {
    // SAFETY: dlerror returns NULL or a NUL-terminated message.
    let e = unsafe { libc::dlerror() };
    if e.is_null() {
        return "unknown error".into();
    }
    // SAFETY: non-null, NUL-terminated.
    unsafe { CStr::from_ptr(e) }.to_string_lossy().into_owned()
}

fn load() -> Result<GoLib, String> {
    let path = library_path().ok_or_else(|| MISSING.to_string())?;
    let c = CString::new(path.as_os_str().as_encoded_bytes())
        .map_err(|_| format!("{}: a path with a NUL byte", path.display()))?;
    // SAFETY: a NUL-terminated path; the library's constructors start the
    // Go runtime, which keeps the signal handlers already installed.
    let h = unsafe { libc::dlopen(c.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
    if h.is_null() {
        return Err(format!("loading {}: {}", path.display(), dl_error()));
    }
    let sym = |name: &str| -> Result<*mut c_void, String> {
        let n = CString::new(name).map_err(|e| e.to_string())?;
        // SAFETY: a live handle and a NUL-terminated name.
        let p = unsafe { libc::dlsym(h, n.as_ptr()) };
        if p.is_null() {
            return Err(format!(
                "{}: no symbol {name} ({})",
                path.display(),
                dl_error()
            ));
        }
        Ok(p)
    };
    // SAFETY: each symbol is the exported Go function of that name, whose C
    // signature (go/capi.go) is the field's type.
    unsafe {
        Ok(GoLib {
            open: std::mem::transmute::<*mut c_void, OpenFn>(sym("lbgo_open")?),
            close: std::mem::transmute::<*mut c_void, HandleFn>(sym("lbgo_close")?),
            get: std::mem::transmute::<*mut c_void, GetFn>(sym("lbgo_get")?),
            write: std::mem::transmute::<*mut c_void, WriteFn>(sym("lbgo_write")?),
            scan: std::mem::transmute::<*mut c_void, ScanFn>(sym("lbgo_scan")?),
            flush: std::mem::transmute::<*mut c_void, HandleFn>(sym("lbgo_flush")?),
            compact: std::mem::transmute::<*mut c_void, HandleFn>(sym("lbgo_compact")?),
            stats: std::mem::transmute::<*mut c_void, StatsFn>(sym("lbgo_stats")?),
        })
    }
}
