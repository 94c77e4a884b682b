//! A simulated power cut is a reboot too: workers started after it see a
//! new boot id.

use std::path::PathBuf;
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
///
/// MDBX takes the id only from procfs, or from tmpfs inside an LXC
/// container (an `lxcfs` mount under `/proc/`); on Linux it finds none
/// otherwise (then it rolls back on every unclean open, reboot or not). So
/// the file bound over the kernel's is written into a tmpfs named `lxcfs`,
/// as a container's is: a plain file bound there goes unseen.
pub(super) fn after_reboot(cmd: &mut Command, boot: &Boot) -> anyhow::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    use std::os::unix::process::CommandExt;
    let id = boot.id.clone().into_bytes();
    // An empty directory to mount the tmpfs on, in the worker's namespace
    // only; the spawner removes it once the worker runs.
    let scratch = &boot.scratch;
    std::fs::create_dir_all(scratch).with_context(|| format!("creating {}", scratch.display()))?;
    let dir = std::ffi::CString::new(scratch.as_os_str().as_bytes())?;
    let file = std::ffi::CString::new(scratch.join("boot_id").as_os_str().as_bytes())?;
    let dst = c"/proc/sys/kernel/random/boot_id";
    // SAFETY: the closure runs between fork and exec and makes only raw
    // system calls on buffers prepared before the fork.
    unsafe {
        cmd.pre_exec(move || {
            let none = std::ptr::null();
            let fail = || Err(std::io::Error::last_os_error());
            if libc::unshare(libc::CLONE_NEWNS) != 0
                || libc::mount(
                    none,
                    c"/".as_ptr(),
                    none,
                    libc::MS_REC | libc::MS_PRIVATE,
                    none.cast(),
                ) != 0
                || libc::mount(
                    c"lxcfs".as_ptr(),
                    dir.as_ptr(),
                    c"tmpfs".as_ptr(),
                    libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
                    c"size=16k".as_ptr().cast(),
                ) != 0
            {
                return fail();
            }
            let fd = libc::open(
                file.as_ptr(),
                libc::O_CREAT | libc::O_WRONLY | libc::O_CLOEXEC,
                0o444,
            );
            if fd < 0 {
                return fail();
            }
            let wrote = libc::write(fd, id.as_ptr().cast(), id.len());
            libc::close(fd);
            if wrote != id.len() as isize
                || libc::mount(file.as_ptr(), dst.as_ptr(), none, libc::MS_BIND, none.cast()) != 0
                // The bind keeps the tmpfs alive; its first mount point goes.
                || libc::umount2(dir.as_ptr(), libc::MNT_DETACH) != 0
            {
                return fail();
            }
            Ok(())
        });
    }
    Ok(())
}

/// A simulated reboot: the boot id workers see after it, and the empty
/// directory its tmpfs is first mounted on while a worker starts.
pub(super) struct Boot {
    id: String,
    /// Made for each worker's start and removed after it.
    pub(super) scratch: PathBuf,
}

impl Boot {
    /// A fresh boot id (a random UUID, as the kernel prints one).
    pub(super) fn new(scratch: PathBuf, rng: &mut Rng) -> Self {
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
        Boot { id, scratch }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Set in the copy of this test binary that only prints what MDBX saw.
    const CHILD: &str = "LEDGERBENCH_TEST_PRINT_MDBX_BOOT_ID";

    /// The boot id MDBX read in a fresh copy of this test binary, started
    /// after a simulated reboot to `boot` when given.
    fn seen_by_mdbx(boot: Option<&Boot>) -> String {
        let mut cmd = Command::new(std::env::current_exe().expect("test binary"));
        cmd.args([
            "--exact",
            "crash::reboot::tests::mdbx_sees_the_boot_id_of_each_simulated_reboot",
            "--include-ignored",
            "--nocapture",
        ])
        .env(CHILD, "1");
        if let Some(b) = boot {
            after_reboot(&mut cmd, b).expect("reboot");
        }
        let o = cmd.output().expect("run the test binary");
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let out = String::from_utf8_lossy(&o.stdout).into_owned();
        out.lines()
            .find_map(|l| l.strip_prefix("mdbx-boot-id="))
            .unwrap_or_else(|| panic!("no boot id printed:\n{out}"))
            .to_string()
    }

    #[test]
    #[ignore = "privileged: needs root (loop devices, cgroups or a tmpfs); scripts/test.sh runs it as root"]
    fn mdbx_sees_the_boot_id_of_each_simulated_reboot() {
        if std::env::var_os(CHILD).is_some() {
            println!("mdbx-boot-id={:?}", ledgerbench_mdbx::boot_id());
            return;
        }
        if !ledgerbench_testkit::can_run(ledgerbench_testkit::root()) {
            return;
        }
        let t = tempfile::tempdir().expect("tempdir");
        let mut rng = Rng::new(7);
        let a = Boot::new(t.path().join("a"), &mut rng);
        let b = Boot::new(t.path().join("b"), &mut rng);
        let machine = seen_by_mdbx(None);
        let after_a = seen_by_mdbx(Some(&a));
        assert_ne!(machine, "None", "MDBX found no boot id on this machine");
        assert_ne!(after_a, machine, "MDBX did not see the reboot");
        assert_eq!(seen_by_mdbx(Some(&a)), after_a, "one boot, one id");
        assert_ne!(seen_by_mdbx(Some(&b)), after_a, "a second reboot");
    }
}
