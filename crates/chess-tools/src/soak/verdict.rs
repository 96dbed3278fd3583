//! Whether the server's resources stayed bounded: the growth rate of memory
//! and descriptors over the second half of the load (the first half holds the
//! warm-up: pools filling, allocator arenas growing), and the descriptors and
//! sockets coming back to the idle level once the load is gone.

use crate::soak::samples::{Sample, mib};

/// Descriptors the server may keep above its idle level after the load: the
/// database pool's connections stay open (SQLite: up to 8 connections with
/// the file, its log and its shared memory; Postgres: up to 16 sockets).
pub const IDLE_FD_SLACK: u64 = 32;

/// Least-squares slope of `points` (x, y) in y per x; `None` for fewer than
/// two distinct x.
pub fn slope(points: &[(f64, f64)]) -> Option<f64> {
    let n = points.len() as f64;
    if points.len() < 2 {
        return None;
    }
    let mean_x = points.iter().map(|p| p.0).sum::<f64>() / n;
    let mean_y = points.iter().map(|p| p.1).sum::<f64>() / n;
    let spread: f64 = points.iter().map(|p| (p.0 - mean_x).powi(2)).sum();
    if spread == 0.0 {
        return None;
    }
    let covariance: f64 = points.iter().map(|p| (p.0 - mean_x) * (p.1 - mean_y)).sum();
    Some(covariance / spread)
}

/// What the samples say.
#[derive(Clone, Debug, PartialEq)]
pub struct Growth {
    /// Samples in the second half of the load.
    pub samples: usize,
    pub rss_mib_per_hour: f64,
    pub fds_per_hour: f64,
}

/// The growth over the second half of the samples taken under load
/// (`elapsed_s` up to `load_s`); `None` with fewer than four of them.
pub fn growth(samples: &[Sample], load_s: f64) -> Option<Growth> {
    let loaded: Vec<&Sample> = samples.iter().filter(|s| s.elapsed_s <= load_s).collect();
    if loaded.len() < 4 {
        return None;
    }
    let second_half = &loaded[loaded.len() / 2..];
    let per_hour = |value: fn(&Sample) -> f64| {
        let points: Vec<(f64, f64)> = second_half
            .iter()
            .map(|s| (s.elapsed_s / 3_600.0, value(s)))
            .collect();
        slope(&points).unwrap_or(0.0)
    };
    Some(Growth {
        samples: second_half.len(),
        rss_mib_per_hour: per_hour(|s| mib(s.rss_bytes)),
        fds_per_hour: per_hour(|s| s.fds as f64),
    })
}

/// The findings of a soak: empty when the server stayed bounded.
pub fn findings(
    growth: Option<&Growth>,
    max_rss_mib_per_hour: f64,
    max_fds_per_hour: f64,
    idle_before: &Sample,
    idle_after: Option<&Sample>,
) -> Vec<String> {
    let mut findings = Vec::new();
    match growth {
        None => findings.push("too few samples under load to measure growth".to_owned()),
        Some(growth) => {
            if growth.rss_mib_per_hour > max_rss_mib_per_hour {
                findings.push(format!(
                    "memory grew {:.1} MiB/h over the second half (limit {max_rss_mib_per_hour} MiB/h)",
                    growth.rss_mib_per_hour
                ));
            }
            if growth.fds_per_hour > max_fds_per_hour {
                findings.push(format!(
                    "descriptors grew {:.1}/h over the second half (limit {max_fds_per_hour}/h)",
                    growth.fds_per_hour
                ));
            }
        }
    }
    match idle_after {
        None => findings.push(
            "after the load the server did not come back to idle (sockets still open or descriptors \
             above the idle level)"
                .to_owned(),
        ),
        Some(after) if !is_idle(idle_before, after) => findings.push(format!(
            "after the load: {} descriptors (idle before: {}), {} game and {} lobby sockets",
            after.fds, idle_before.fds, after.game_sockets, after.lobby_sockets
        )),
        Some(_) => {}
    }
    findings
}

/// Whether `now` is back at the idle level of `before`: no socket open and
/// no more descriptors than before plus [`IDLE_FD_SLACK`].
pub fn is_idle(before: &Sample, now: &Sample) -> bool {
    now.game_sockets == 0 && now.lobby_sockets == 0 && now.fds <= before.fds + IDLE_FD_SLACK
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(elapsed_s: f64, rss_mib: f64, fds: u64) -> Sample {
        Sample {
            elapsed_s,
            rss_bytes: (rss_mib * 1024.0 * 1024.0) as u64,
            fds,
            ..Sample::default()
        }
    }

    #[test]
    fn slope_is_least_squares() {
        assert_eq!(slope(&[(0.0, 1.0), (1.0, 3.0), (2.0, 5.0)]), Some(2.0));
        assert_eq!(slope(&[(1.0, 1.0)]), None);
        assert_eq!(slope(&[(1.0, 1.0), (1.0, 2.0)]), None);
    }

    #[test]
    fn only_the_second_half_of_the_load_counts() {
        // A warm-up climb of 100 MiB in the first half, flat after it, and
        // a sample after the load that must be ignored.
        let mut samples: Vec<Sample> = (0..10)
            .map(|i| at(f64::from(i) * 360.0, f64::from(i.min(4)) * 25.0, 200))
            .collect();
        samples.push(at(4_000.0, 500.0, 10));
        let growth = growth(&samples, 3_600.0).expect("enough samples");
        assert_eq!(growth.samples, 5);
        assert!(growth.rss_mib_per_hour.abs() < 1e-6, "{growth:?}");
        assert!(growth.fds_per_hour.abs() < 1e-6, "{growth:?}");
    }

    #[test]
    fn a_steady_climb_is_a_finding() {
        // 10 MiB and 5 descriptors more every 6 minutes: 100 MiB/h, 50/h.
        let samples: Vec<Sample> = (0..10)
            .map(|i| {
                at(
                    f64::from(i) * 360.0,
                    100.0 + f64::from(i) * 10.0,
                    100 + 5 * i as u64,
                )
            })
            .collect();
        let growth = growth(&samples, 3_600.0).expect("enough samples");
        assert!((growth.rss_mib_per_hour - 100.0).abs() < 1e-6, "{growth:?}");
        assert!((growth.fds_per_hour - 50.0).abs() < 1e-6, "{growth:?}");
        let idle = at(0.0, 50.0, 20);
        assert_eq!(
            findings(Some(&growth), 64.0, 100.0, &idle, Some(&idle)).len(),
            1
        );
        assert_eq!(
            findings(Some(&growth), 64.0, 10.0, &idle, Some(&idle)).len(),
            2
        );
        assert!(findings(Some(&growth), 200.0, 100.0, &idle, Some(&idle)).is_empty());
    }

    #[test]
    fn descriptors_left_open_after_the_load_are_a_finding() {
        let before = at(0.0, 50.0, 20);
        assert!(is_idle(&before, &at(0.0, 60.0, 20 + IDLE_FD_SLACK)));
        assert!(!is_idle(&before, &at(0.0, 60.0, 21 + IDLE_FD_SLACK)));
        let mut socket_open = at(0.0, 60.0, 20);
        socket_open.game_sockets = 1;
        assert!(!is_idle(&before, &socket_open));
        let growth = Growth {
            samples: 5,
            rss_mib_per_hour: 0.0,
            fds_per_hour: 0.0,
        };
        assert_eq!(findings(Some(&growth), 64.0, 100.0, &before, None).len(), 1);
    }
}
