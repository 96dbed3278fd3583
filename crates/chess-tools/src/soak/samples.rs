//! One reading of the server every few seconds: its process from `/proc`
//! (resident memory, open descriptors, threads), its gauges from `/metrics`
//! (live games, sockets) and the latencies the players saw since the last
//! reading. Each reading is a CSV row.

use std::io::Write;
use std::time::Duration;

use crate::load::report::Percentiles;

/// The CSV header; [`Sample::csv_row`] writes the fields in this order.
pub const CSV_HEADER: &str = "elapsed_s,rss_mib,fds,threads,live_games,game_sockets,\
lobby_sockets,moves_committed,acks,ack_p50_ms,ack_p99_ms,opponent_p50_ms,opponent_p99_ms,errors,\
closed_by_client,closed_silent,closed_by_error";

/// One reading.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Sample {
    /// Seconds since the load started.
    pub elapsed_s: f64,
    pub rss_bytes: u64,
    pub fds: u64,
    pub threads: u64,
    pub live_games: u64,
    pub game_sockets: u64,
    pub lobby_sockets: u64,
    /// The server's count of committed moves so far.
    pub moves_committed: u64,
    /// Moves acknowledged since the previous reading.
    pub acks: usize,
    pub ack: Option<Percentiles>,
    pub opponent: Option<Percentiles>,
    /// Errors the players met so far, all codes together.
    pub errors: u64,
    /// The server's count of ended game sockets so far, by who ended them.
    pub closes: SocketCloses,
}

impl Sample {
    /// The row for [`CSV_HEADER`].
    pub fn csv_row(&self) -> String {
        let ms = |p: Option<Percentiles>, pick: fn(&Percentiles) -> Duration| {
            p.map_or_else(String::new, |p| {
                format!("{:.1}", pick(&p).as_secs_f64() * 1000.0)
            })
        };
        format!(
            "{:.0},{:.1},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}",
            self.elapsed_s,
            mib(self.rss_bytes),
            self.fds,
            self.threads,
            self.live_games,
            self.game_sockets,
            self.lobby_sockets,
            self.moves_committed,
            self.acks,
            ms(self.ack, |p| p.p50),
            ms(self.ack, |p| p.p99),
            ms(self.opponent, |p| p.p50),
            ms(self.opponent, |p| p.p99),
            self.errors,
            self.closes.by_client,
            self.closes.silent,
            self.closes.by_error,
        )
    }
}

/// Bytes in MiB.
pub fn mib(bytes: u64) -> f64 {
    bytes as f64 / (1024.0 * 1024.0)
}

/// The process's open descriptors and threads, from `/proc/<pid>`.
///
/// # Errors
/// The read error when the process is gone.
pub fn descriptors_and_threads(pid: u32) -> std::io::Result<(u64, u64)> {
    let fds = std::fs::read_dir(format!("/proc/{pid}/fd"))?.count();
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))?;
    let threads = status
        .lines()
        .find_map(|line| line.strip_prefix("Threads:"))
        .and_then(|count| count.trim().parse().ok())
        .unwrap_or(0);
    Ok((u64::try_from(fds).unwrap_or(u64::MAX), threads))
}

/// The server's gauges and counters read from its `/metrics`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Gauges {
    pub live_games: u64,
    pub game_sockets: u64,
    pub lobby_sockets: u64,
    pub moves_committed: u64,
    pub closes: SocketCloses,
}

/// Game sockets ended so far (`chess_game_socket_closes_total{reason}`):
/// whether the clients left, or the server dropped them as silent, or the
/// connections broke.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SocketCloses {
    pub by_client: u64,
    pub silent: u64,
    pub by_error: u64,
}

/// Reads [`Gauges`] from the metrics text of `GET /metrics`.
pub fn parse_gauges(text: &str) -> Gauges {
    let value = |name: &str| {
        text.lines()
            .find_map(|line| line.strip_prefix(name)?.strip_prefix(' '))
            .and_then(|value| value.trim().parse::<f64>().ok())
            .map_or(0, |value| value as u64)
    };
    Gauges {
        live_games: value("chess_live_games"),
        game_sockets: value("chess_game_sockets"),
        lobby_sockets: value("chess_lobby_sockets"),
        moves_committed: value("chess_moves_committed_total"),
        closes: SocketCloses {
            by_client: value(r#"chess_game_socket_closes_total{reason="client"}"#),
            silent: value(r#"chess_game_socket_closes_total{reason="silent"}"#),
            by_error: value(r#"chess_game_socket_closes_total{reason="error"}"#),
        },
    }
}

/// Scrapes `/metrics` at `address`.
///
/// # Errors
/// A message when the endpoint does not answer.
pub async fn scrape(http: &reqwest::Client, address: &str) -> Result<Gauges, String> {
    let response = http
        .get(format!("http://{address}/metrics"))
        .timeout(Duration::from_secs(5))
        .send()
        .await
        .map_err(|error| format!("GET /metrics: {error}"))?;
    let text = response
        .text()
        .await
        .map_err(|error| format!("GET /metrics: {error}"))?;
    Ok(parse_gauges(&text))
}

/// The CSV file the samples go into, one flushed row each.
#[derive(Debug)]
pub struct Csv {
    file: std::io::BufWriter<std::fs::File>,
}

impl Csv {
    /// Creates (or empties) `path` and writes the header.
    ///
    /// # Errors
    /// The file error.
    pub fn create(path: &std::path::Path) -> std::io::Result<Csv> {
        let mut file = std::io::BufWriter::new(std::fs::File::create(path)?);
        writeln!(file, "{CSV_HEADER}")?;
        Ok(Csv { file })
    }

    /// Appends `sample` (flushed, so a run that dies keeps its rows).
    ///
    /// # Errors
    /// The file error.
    pub fn write(&mut self, sample: &Sample) -> std::io::Result<()> {
        writeln!(self.file, "{}", sample.csv_row())?;
        self.file.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gauges_are_read_by_their_exact_names() {
        let text = "# TYPE chess_live_games gauge\nchess_live_games 12\n\
                    chess_game_sockets 24\nchess_lobby_sockets 3\n\
                    chess_moves_committed_total 4567\n\
                    chess_game_socket_closes_total{reason=\"client\"} 7\n\
                    chess_game_socket_closes_total{reason=\"silent\"} 2\n\
                    chess_game_socket_closes_total{reason=\"error\"} 1\n# EOF\n";
        assert_eq!(
            parse_gauges(text),
            Gauges {
                live_games: 12,
                game_sockets: 24,
                lobby_sockets: 3,
                moves_committed: 4567,
                closes: SocketCloses {
                    by_client: 7,
                    silent: 2,
                    by_error: 1,
                },
            }
        );
        assert_eq!(
            parse_gauges("chess_live_games_other 5\n"),
            Gauges::default()
        );
    }

    #[test]
    fn a_row_has_one_field_per_header_column() {
        let row = Sample::default().csv_row();
        assert_eq!(row.split(',').count(), CSV_HEADER.split(',').count());
    }
}
