//! CPU time and resident memory of a server process, read from Linux's
//! `/proc/<pid>/stat` and `/proc/<pid>/status`.

use std::time::Duration;

/// Clock ticks per second of the CPU times in `/proc/<pid>/stat`. Linux fixes
/// this `USER_HZ` at 100 for user space on every architecture (it is part of
/// the ABI, unlike the kernel's own tick rate), so no `sysconf` call is needed.
const USER_HZ: u64 = 100;

/// One reading of a process.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sample {
    /// User plus system CPU time of all its threads so far.
    pub cpu: Duration,
    /// Resident set size, bytes.
    pub rss_bytes: u64,
}

/// Why a process could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ProcessError {
    #[error("cannot read /proc/{pid}: {source} (is the server running with this pid?)")]
    Read { pid: u32, source: std::io::Error },
    #[error("/proc/{pid}/{file} has an unexpected format")]
    Format { pid: u32, file: &'static str },
}

/// Reads `pid` now.
///
/// # Errors
/// A [`ProcessError`] when the process does not exist or `/proc` is not Linux's.
pub fn sample(pid: u32) -> Result<Sample, ProcessError> {
    let read = |file: &'static str| {
        std::fs::read_to_string(format!("/proc/{pid}/{file}"))
            .map_err(|source| ProcessError::Read { pid, source })
    };
    let cpu = cpu_time(&read("stat")?).ok_or(ProcessError::Format { pid, file: "stat" })?;
    let rss_bytes = rss_bytes(&read("status")?).ok_or(ProcessError::Format {
        pid,
        file: "status",
    })?;
    Ok(Sample { cpu, rss_bytes })
}

/// `utime + stime` from the text of `/proc/<pid>/stat`.
fn cpu_time(stat: &str) -> Option<Duration> {
    // The command name (field 2) is in parentheses and may hold spaces or
    // parentheses itself: the fields are counted after its last `)`.
    let (_, after_name) = stat.rsplit_once(')')?;
    let mut fields = after_name.split_whitespace();
    // After the name: state is field 3, utime field 14, stime field 15.
    let utime: u64 = fields.nth(11)?.parse().ok()?;
    let stime: u64 = fields.next()?.parse().ok()?;
    let ticks = utime.checked_add(stime)?;
    Some(Duration::from_millis(ticks.checked_mul(1_000 / USER_HZ)?))
}

/// `VmRSS` in bytes from the text of `/proc/<pid>/status`.
fn rss_bytes(status: &str) -> Option<u64> {
    let line = status.lines().find(|line| line.starts_with("VmRSS:"))?;
    let mut parts = line["VmRSS:".len()..].split_whitespace();
    let kib: u64 = parts.next()?.parse().ok()?;
    (parts.next()? == "kB").then_some(kib * 1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_time_adds_user_and_system_ticks_after_the_name() {
        // A name with a space and a parenthesis, as `comm` allows.
        let stat = "4242 (chess (srv) x) S 1 4242 4242 0 -1 4194560 1234 0 0 0 \
                    250 125 0 0 20 0 9 0 123456 987654321 5000 18446744073709551615";
        assert_eq!(cpu_time(stat), Some(Duration::from_millis(3_750)));
        assert_eq!(cpu_time("4242 (truncated"), None);
        assert_eq!(cpu_time("4242 (x) S 1 2"), None);
    }

    #[test]
    fn rss_is_read_in_kib_from_the_status_file() {
        let status =
            "Name:\tchess-server\nVmPeak:\t  900000 kB\nVmRSS:\t   51200 kB\nThreads:\t9\n";
        assert_eq!(rss_bytes(status), Some(51_200 * 1024));
        assert_eq!(rss_bytes("Name:\tkthreadd\n"), None);
        assert_eq!(rss_bytes("VmRSS:\t12 pages\n"), None);
    }

    #[test]
    fn this_process_can_be_sampled() {
        let own = sample(std::process::id()).expect("/proc/self exists on Linux");
        assert!(own.rss_bytes > 0);
        assert!(matches!(
            sample(u32::MAX),
            Err(ProcessError::Read { pid: u32::MAX, .. })
        ));
    }
}
