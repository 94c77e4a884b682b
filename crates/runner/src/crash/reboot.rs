//! A simulated power cut is a reboot too: workers started after it see a
//! new boot id.

use std::path::Path;
use std::process::Command;

use anyhow::Context;
use ledgerbench_rng::Rng;

/// Makes the worker see `boot_id` as the machine's boot id, in a mount
/// namespace of its own. A real power cut is also a reboot, and MDBX tells
/// a process crash (page cache intact: recent unsynced commits may be kept)
/// from a system crash (roll back to the last synced commit) by comparing
/// the boot id in its meta pages with the machine's. A simulated cut keeps
/// the machine running, so without this MDBX would trust pages the cut threw
/// away. It must happen before exec: MDBX reads the boot id at load time.
pub(super) fn after_reboot(cmd: &mut Command, boot_id: &Path) -> anyhow::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    use std::os::unix::process::CommandExt;
    let src = std::ffi::CString::new(boot_id.as_os_str().as_bytes())?;
    let dst = c"/proc/sys/kernel/random/boot_id";
    let root = c"/";
    // SAFETY: the closure runs between fork and exec and makes only raw
    // system calls on C strings prepared before the fork.
    unsafe {
        cmd.pre_exec(move || {
            let none = std::ptr::null();
            if libc::unshare(libc::CLONE_NEWNS) != 0
                || libc::mount(
                    none,
                    root.as_ptr(),
                    none,
                    libc::MS_REC | libc::MS_PRIVATE,
                    std::ptr::null(),
                ) != 0
                || libc::mount(
                    src.as_ptr(),
                    dst.as_ptr(),
                    none,
                    libc::MS_BIND,
                    std::ptr::null(),
                ) != 0
            {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    Ok(())
}

/// Writes a fresh boot id (a random UUID, as the kernel prints one) to `path`.
pub(super) fn new_boot_id(path: &Path, rng: &mut Rng) -> anyhow::Result<()> {
    let (a, b) = (rng.next_u64(), rng.next_u64());
    let hex = format!("{a:016x}{b:016x}");
    let id = format!(
        "{}-{}-{}-{}-{}\n",
        &hex[..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..]
    );
    std::fs::write(path, id).with_context(|| format!("writing {}", path.display()))
}
